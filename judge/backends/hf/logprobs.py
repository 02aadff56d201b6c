"""The log-probability pass: per-token log-probabilities of given texts under a causal model.

Every text is scored after a beginning: its prefix (when given) or the model's prefix token
alone (``bos_token``, else ``eos_token``, the convention of lm-evaluation-harness's rolling
log-likelihood). The tokens are ``head + tokens(prefix) + tokens(text)``, each part tokenised
on its own without special tokens, so a text has the same tokens, and as many log-probs, with
or without a prefix. Log-probabilities are full log-softmax values over the vocabulary, read
at each token of the text (the prefix's own tokens are excluded).

Texts sharing one prefix of at least ``MIN_SHARED_TOKENS`` tokens run on its key/value cache:
the prefix is computed once (prefixes batched together, ``batch_size`` at a time) and the texts
continue on top of it, left-padded with positions taken from the attention mask, exactly as the
judging pass of :mod:`judge.backends.hf.prefix_cache`. Other texts run whole, right-padded.
Batches are longest first and halved on out-of-memory.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judge.backends._batching import run_batched
from judge.backends.base import BackendError, Progress
from judge.backends.hf.prefix_cache import MIN_SHARED_TOKENS


def head_tokens(backend) -> list[int]:
    """The token every text (or its prefix) starts after: BOS, else EOS, else none."""
    tok = backend.tokenizer
    for token_id in (tok.bos_token_id, tok.eos_token_id):
        if token_id is not None:
            return [int(token_id)]
    return []


def text_logprobs(
    backend,
    texts: Sequence[str],
    prefixes: Sequence[str] | None,
    batch_size: int,
    progress: Progress | None = None,
) -> tuple[list[np.ndarray], int]:
    """Per-token log-probabilities of ``texts``; returns them and the batch size in force."""
    n = len(texts)
    head = head_tokens(backend)
    text_ids = backend._encode_many(list(texts), False)
    prefix_of: dict[str, list[int]] = {}
    for p in set(prefixes or []):
        prefix_of[p] = head + (backend._encode_many([p], False)[0] if p else [])
    starts = [prefix_of[prefixes[i]] if prefixes else head for i in range(n)]
    for i in range(n):
        total = len(starts[i]) + len(text_ids[i])
        if backend.max_length is not None and total > backend.max_length:
            raise BackendError(
                f"text {i} has {total} tokens with its prefix, more than "
                f"max_length={backend.max_length}; shorten it or raise max_length"
            )
    out: list[np.ndarray | None] = [None] * n
    todo = [i for i in range(n) if text_ids[i]]
    for i in range(n):
        if not text_ids[i]:
            out[i] = np.empty(0, dtype=np.float64)
    if progress is not None and len(todo) < n:
        progress(n - len(todo))

    groups: dict[tuple[int, ...], list[int]] = {}
    for i in todo:
        groups.setdefault(tuple(starts[i]), []).append(i)
    shared = [
        (list(key), members)
        for key, members in groups.items()
        if len(members) >= 2 and len(key) >= MIN_SHARED_TOKENS
    ]
    torch = backend._torch
    with torch.inference_mode():
        if shared and backend.share_prefix and backend._can_share and backend._probe_shareable():
            done = set()
            for pos in range(0, len(shared), batch_size):
                chunk = shared[pos : pos + batch_size]
                batch_size = _run_prefix_chunk(backend, chunk, text_ids, out, batch_size, progress)
                done.update(i for _, members in chunk for i in members)
            todo = [i for i in todo if i not in done]
        if todo:
            batch_size = _run_whole(backend, todo, starts, text_ids, out, batch_size, progress)
    return out, batch_size  # type: ignore[return-value]


def _raise_failed(i: int, message: str):
    raise BackendError(f"text {i} could not be scored: {message}")


def _token_logprobs(torch, logits, targets):
    """log-softmax(logits) read at ``targets``: (B, T, V) and (B, T) -> (B, T) float64."""
    logits = logits.float()
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (picked - torch.logsumexp(logits, dim=-1)).double().cpu().numpy()


def _run_whole(backend, indices, starts, text_ids, out, batch_size, progress) -> int:
    """Head/prefix and text in one right-padded pass per batch."""
    torch = backend._torch

    def fn(idx):
        items = [indices[j] for j in idx]
        seqs = [starts[i] + text_ids[i] for i in items]
        ids, mask = backend._pad(seqs, left=False)
        position_ids = (mask.cumsum(-1) - 1).clamp_(min=0)
        logits = backend.model(
            input_ids=ids, attention_mask=mask, position_ids=position_ids, use_cache=False
        ).logits
        backend.stats["n_forward"] += 1
        backend.stats["n_tokens_computed"] += sum(len(s) for s in seqs)
        # logits at column t predict the token at column t + 1
        lp = _token_logprobs(torch, logits[:, :-1], ids[:, 1:])
        rows = []
        for b, i in enumerate(items):
            k, m = len(starts[i]), len(text_ids[i])
            if k:
                rows.append(lp[b, k - 1 : k - 1 + m])
            else:  # nothing before the first token: it has no log-probability
                rows.append(np.concatenate([[np.nan], lp[b, : m - 1]]))
        return rows

    results, batch_size = run_batched(
        [len(starts[i]) + len(text_ids[i]) for i in indices],
        fn,
        batch_size=batch_size,
        error_result=lambda msg: msg,
        progress=progress,
        on_oom=backend._count_oom,
    )
    for i, res in zip(indices, results, strict=True):
        if isinstance(res, str):
            _raise_failed(i, res)
        out[i] = res
    return batch_size


def _run_prefix_chunk(backend, chunk, text_ids, out, batch_size, progress) -> int:
    """A few distinct prefixes computed once, then each of their texts on top of its cache."""
    torch = backend._torch
    prefixes = [key for key, _ in chunk]

    def prefix_fn(idx):
        lp, past = backend._forward([prefixes[j] for j in idx], want_cache=True)
        backend.stats["n_shared_nodes"] += len(idx)
        return [(past, b, lp[b]) for b in range(len(idx))]

    sources, batch_size = run_batched(
        [len(p) for p in prefixes],
        prefix_fn,
        batch_size=batch_size,
        error_result=lambda msg: msg,
        on_oom=backend._count_oom,
    )
    pools: dict[int, tuple] = {}
    for (_, members), src in zip(chunk, sources, strict=True):
        if isinstance(src, str):
            _raise_failed(members[0], f"its prefix: {src}")
        past, row, last = src
        pools.setdefault(id(past), (past, []))[1].extend((i, row, last) for i in members)

    for past, group in pools.values():

        def fn(idx, past=past, group=group):
            batch = [group[j] for j in idx]
            seqs = [text_ids[i] for i, _, _ in batch]
            out, ids, _ = backend._cached_pass(seqs, past, [row for _, row, _ in batch], True)
            t_new = ids.shape[1]
            backend.stats["n_shared_requests"] += len(batch)
            lp = _token_logprobs(torch, out.logits[:, :-1], ids[:, 1:])
            rows = []
            for b, (i, _, last) in enumerate(batch):
                m = len(text_ids[i])
                first = float(last[text_ids[i][0]])  # the prefix's last position
                rows.append(np.concatenate([[first], lp[b, t_new - m : t_new - 1]]))
            return rows

        results, batch_size = run_batched(
            [len(text_ids[i]) for i, _, _ in group],
            fn,
            batch_size=batch_size,
            error_result=lambda msg: msg,
            progress=progress,
            on_oom=backend._count_oom,
        )
        for (i, _, _), res in zip(group, results, strict=True):
            if isinstance(res, str):
                _raise_failed(i, res)
            out[i] = res
    return batch_size
