"""The causal forward pass and the prefix-KV cache: shared beginnings computed once.

Pairwise prompts of one context repeat the same long beginning (instructions, the context,
often the first candidate). Requests with a non-empty ``LabelRequest.prefix`` take part in
sharing: their full token sequences are sorted into a prefix tree (a node wherever at least
``MIN_SHARED_TOKENS`` more tokens are common), each node's tokens are run once on top of its
parent's key/value cache, and each request's remaining tokens on top of its deepest node. A
16-candidate context thus costs one context pass, 16 short first-candidate passes and 240
short continuations instead of 240 full prompts, whether the runner's prefix is the context
alone or the context and the first candidate. Nodes, and the continuations, are batched
across siblings.

What is shared is found on the *full* tokenisations, so the tokens fed with sharing are
exactly those fed without it (a prefix that ends inside a BPE merge simply shares a little
less; such prefixes are counted in ``stats``). Padding is on the left throughout, with the
attention mask carrying the holes and positions computed from the mask, so results equal the
unshared, unbatched ones up to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judge.backends._batching import run_batched
from judge.backends.base import LabelResult
from judge.backends.hf.prepared import Prepared

#: a prefix-tree node must share at least this many more tokens than its parent
MIN_SHARED_TOKENS = 8


@dataclass
class _Past:
    """Key/value tensors of some rows plus the attention mask that goes with them.

    Kept as plain tensors (not a transformers Cache) because forward mutates the Cache it is
    given; every forward gets a fresh ``DynamicCache`` built from these.
    """

    layers: list[tuple[Any, Any]]  # per layer (keys, values): (n_rows, n_kv_heads, L, head_dim)
    mask: Any  # (n_rows, L) long, 0 where a row had left padding

    @property
    def n_rows(self) -> int:
        return int(self.mask.shape[0])

    def take(self, rows: Sequence[int], torch):
        """Layers and mask for a batch whose row b continues past row ``rows[b]``."""
        n = len(rows)
        if self.n_rows == 1 or len(set(rows)) == 1:
            # a view: DynamicLayer.update concatenates (one copy), so the stored tensors stay
            # untouched; index_select would add a second copy
            r = rows[0] if self.n_rows > 1 else 0
            layers = [
                (k[r : r + 1].expand(n, -1, -1, -1), v[r : r + 1].expand(n, -1, -1, -1))
                for k, v in self.layers
            ]
            return layers, self.mask[r : r + 1].expand(n, -1)
        idx = torch.as_tensor(list(rows), device=self.mask.device)
        layers = [(k.index_select(0, idx), v.index_select(0, idx)) for k, v in self.layers]
        return layers, self.mask.index_select(0, idx)


class _NotShareable(Exception):
    """The model's cache is not a plain per-token key/value cache (sliding window, recurrent)."""


class PrefixSharing:
    """Causal forward passes, optionally on a cached prefix, and the prefix-tree runner.

    A mixin of :class:`judge.backends.hf.HFBackend`; it uses the backend's model, tokenizer,
    ``stats``, ``batch_size``, ``share_prefix`` and its helpers ``_pad``, ``_label_result``
    and ``_count_oom``.
    """

    # ------------------------------------------------------------------ causal forward pass
    def _forward(self, seqs, past: _Past | None = None, rows=None, want_cache: bool = False):
        """Run left-padded ``seqs`` (optionally on top of ``past`` rows); last-token log-probs.

        Returns ``(logprobs (B, V) float32, _Past of the whole sequences or None)``.
        """
        torch = self._torch
        n = len(seqs)
        ids, new_mask = self._pad(seqs, left=True)
        t_new = ids.shape[1]
        cache = None
        mask = new_mask
        if past is not None:
            layers, past_mask = past.take(list(rows) if rows is not None else [0] * n, torch)
            mask = torch.cat([past_mask, new_mask], dim=1)
            cache = _fresh_cache(layers)
        # positions from the mask, so left padding and holes do not shift the real tokens
        position_ids = (mask.cumsum(-1) - 1).clamp_(min=0)[:, -t_new:]
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=bool(want_cache or cache is not None),
            **self._keep_last,
        )
        self.stats["n_forward"] += 1
        self.stats["n_tokens_computed"] += sum(len(s) for s in seqs)
        lp = out.logits[:, -1, :].float().log_softmax(-1)
        new_past = self._past_from(out.past_key_values, mask) if want_cache else None
        return lp, new_past

    def _past_from(self, cache, mask) -> _Past:
        from transformers.cache_utils import DynamicLayer

        layers = getattr(cache, "layers", None)
        if layers is None or any(type(layer) is not DynamicLayer for layer in layers):
            raise _NotShareable(type(cache).__name__)
        return _Past([(layer.keys, layer.values) for layer in layers], mask)

    # ------------------------------------------------------------------ shared prefixes
    def _share_plan(self, requests, prepared, runnable):
        """Split runnable requests into those that take part in sharing and plain ones.

        Requests with a non-empty ``prefix`` take part (the runner declares that they share
        a beginning); what is shared is found on the full token sequences, see
        :meth:`_run_shared`.
        """
        if not (self.share_prefix and self._can_share and self._probe_shareable()):
            return [], list(runnable)
        shared = [i for i in runnable if requests[i].prefix]
        plain = [i for i in runnable if not requests[i].prefix]
        by_prefix: dict[str, list[int]] = {}
        for i in shared:
            by_prefix.setdefault(requests[i].prefix, []).append(i)
        for members in by_prefix.values():
            if len(members) >= 2:
                self.stats["n_prefix_groups"] += 1
                self._check_boundary(prepared[members[0]])
        return shared, plain

    def _probe_shareable(self) -> bool:
        """Whether the model's cache is a plain per-token key/value cache (checked once)."""
        if getattr(self, "_shareable", None) is None:
            try:
                with self._torch.inference_mode():
                    self._forward([[self._pad_id, self._pad_id]], want_cache=True)
                self._shareable = True
            except _NotShareable:
                # sliding-window or recurrent caches cannot be cut and reused exactly
                self._shareable = False
            self.stats["n_forward"] -= 1
            self.stats["n_tokens_computed"] -= 2
        return self._shareable

    def _check_boundary(self, item: Prepared) -> None:
        """Count prefix groups whose prefix does not end on a token boundary of the prompt.

        Sharing stays exact either way (what is shared comes from the full tokenisations);
        this makes visible that the prefix split a token (a BPE merge across it) or that the
        chat template changed the text, in which case a little less is shared.
        """
        if item.prefix_end is None:
            self.stats["n_prefix_boundary_mismatch"] += 1
            return
        head = item.text[: item.prefix_end]
        head_ids = self.tokenizer(head, add_special_tokens=not self.use_chat_template)["input_ids"]
        if item.ids[: len(head_ids)] != list(head_ids):
            self.stats["n_prefix_boundary_mismatch"] += 1

    def _run_shared(self, indices, prepared, results, progress) -> list[int]:
        """Run requests as a prefix tree of their token sequences; return the unshared ones.

        The sequences are sorted, so requests with a common beginning are neighbours and
        ``lcp[k]`` (common length of neighbours k and k+1, each keeping at least its last
        token) describes the whole tree: a node is a range of sorted requests at a depth, its
        children are the maximal sub-ranges whose neighbours share at least
        ``MIN_SHARED_TOKENS`` more tokens. Each child's extra tokens are run once on top of
        its parent's cache (children batched together), and each request's remaining tokens
        on top of its deepest node (requests batched across sibling nodes).
        """
        order = sorted(indices, key=lambda i: prepared[i].ids)
        seqs = [prepared[i].ids for i in order]
        lcp = [
            min(_lcp2(a, b), len(a) - 1, len(b) - 1) for a, b in zip(seqs, seqs[1:], strict=False)
        ]
        leaves, children = _split_range(0, len(order), 0, lcp)
        self._solve_children(children, None, 0, order, lcp, prepared, results, progress)
        return [order[k] for k in leaves]

    def _solve_children(self, children, parent, depth, order, lcp, prepared, results, progress):
        """Run the nodes ``children`` (ranges sharing ``depth`` tokens cached in ``parent``)."""
        pos = 0
        while pos < len(children):
            # at most batch_size node caches alive per tree level
            chunk = children[pos : pos + self.batch_size]
            pos += len(chunk)
            exts = [prepared[order[s]].ids[depth:stem] for s, _, stem in chunk]
            parent_row = [0] if parent is None else [parent[1]]

            def ext_fn(idx, exts=exts, parent_row=parent_row):
                _, past = self._forward(
                    [exts[j] for j in idx],
                    past=None if parent is None else parent[0],
                    rows=parent_row * len(idx),
                    want_cache=True,
                )
                self.stats["n_shared_nodes"] += len(idx)
                return [(past, b) for b in range(len(idx))]

            sources, self.batch_size = run_batched(
                [len(e) for e in exts],
                ext_fn,
                batch_size=self.batch_size,
                error_result=lambda msg: msg,
                on_oom=self._count_oom,
            )
            leaf_items, deeper = [], []
            for (start, end, stem), src in zip(chunk, sources, strict=True):
                if isinstance(src, str):
                    failed = [order[k] for k in range(start, end)]
                    for i in failed:
                        results[i] = LabelResult(error=f"shared prefix ({stem} tokens): {src}")
                    if progress is not None:
                        progress(len(failed))
                    continue
                leaves, grandchildren = _split_range(start, end, stem, lcp)
                leaf_items += [(order[k], src, stem) for k in leaves]
                if grandchildren:
                    deeper.append((grandchildren, src, stem))
            self._run_leaves(leaf_items, prepared, results, progress)
            for grandchildren, src, stem in deeper:
                self._solve_children(
                    grandchildren, src, stem, order, lcp, prepared, results, progress
                )

    def _run_leaves(self, items, prepared, results, progress) -> None:
        """Each request's remaining tokens on top of its node's cache row, batched.

        A node row with at least half a batch of requests runs on its own: its prefix is then
        broadcast (one copy when forward appends to it) instead of gathered from several rows
        (two copies). Smaller rows are pooled so batches stay full.
        """
        pools: dict[tuple, tuple[_Past, list]] = {}
        by_row: dict[tuple, list] = {}
        for i, (past, row), depth in items:
            by_row.setdefault((id(past), row), []).append((i, past, row, depth))
        for (past_id, row), members in by_row.items():
            key = (past_id, row) if len(members) >= max(2, self.batch_size // 2) else (past_id,)
            past = members[0][1]
            pools.setdefault(key, (past, []))[1].extend((i, r, d) for i, _, r, d in members)
        for past, group in pools.values():

            def fn(idx, past=past, group=group):
                batch = [group[j] for j in idx]
                lp, _ = self._forward(
                    [prepared[i].ids[depth:] for i, _, depth in batch],
                    past=past,
                    rows=[row for _, row, _ in batch],
                )
                self.stats["n_shared_requests"] += len(batch)
                return self._label_result(lp, [prepared[i] for i, _, _ in batch])

            # pooled rows: batches follow rows (longest first within a row), so a batch
            # spans as few rows as possible
            n_max = max(len(prepared[i].ids) for i, _, _ in group) + 1
            out, self.batch_size = run_batched(
                [
                    (past.n_rows - row) * n_max + len(prepared[i].ids) - depth
                    for i, row, depth in group
                ],
                fn,
                batch_size=self.batch_size,
                error_result=lambda msg: LabelResult(error=msg),
                progress=progress,
                on_oom=self._count_oom,
            )
            for (i, _, _), res in zip(group, out, strict=True):
                results[i] = res


def _fresh_cache(layers):
    """A DynamicCache holding ``layers`` (key, value) as they are, without copying them.

    ``DynamicCache(ddp_cache_data=...)`` concatenates each tensor onto an empty one, which
    materialises an expanded (batch-broadcast) prefix once more before forward concatenates
    it again with the new tokens; on CPU that copy cost as much as a tenth of the run. Here
    each layer is initialised on the tensors directly, so forward's own concatenation is the
    only copy and the stored prefix is never written to.
    """
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    cache = DynamicCache()
    fresh = []
    for keys, values in layers:
        layer = DynamicLayer()
        layer.lazy_initialization(keys, values)
        layer.keys, layer.values = keys, values
        fresh.append(layer)
    cache.layers = fresh
    if cache.get_seq_length() != layers[0][0].shape[-2]:  # a transformers change would show here
        return DynamicCache(ddp_cache_data=layers)
    return cache


def _lcp2(a: list[int], b: list[int]) -> int:
    """Length of the common beginning of two token lists (binary search on C-speed slices)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _split_range(start: int, end: int, depth: int, lcp: list[int]):
    """Leaves and child nodes of the sorted range [start, end) that shares ``depth`` tokens.

    A child is a maximal run of neighbours whose common length (``lcp``) is at least
    ``depth + MIN_SHARED_TOKENS``; it is returned as ``(start, end, stem)`` with ``stem`` the
    tokens all its members share. Members in no such run are leaves.
    """
    leaves, children = [], []
    run_start = start
    for k in range(start, end):
        if k + 1 < end and lcp[k] >= depth + MIN_SHARED_TOKENS:
            continue
        if k > run_start:
            children.append((run_start, k + 1, min(lcp[run_start:k])))
        else:
            leaves.append(k)
        run_start = k + 1
    return leaves, children
