"""The transformers backend: seq2seq (FlanT5-style) and causal (Llama-style) judges.

Label probabilities come from one forward pass per prompt: the next-token distribution after
the prompt (causal) or after the primed decoder (seq2seq), read at the label words' tokens.
Prompts are batched longest first, padded, and answered in input order; a batch that runs out
of memory is halved and retried. Causal requests that declare a shared ``prefix`` run on a
prefix tree of key/value caches (:mod:`judge.backends.hf.prefix_cache`); free-text answers
come from :mod:`judge.backends.hf.generation`; loading and its error messages are in
:mod:`judge.backends.hf.loading`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from judge.backends._batching import run_budgeted
from judge.backends.base import BackendError, LabelRequest, LabelResult, Progress
from judge.backends.hf import loading
from judge.backends.hf.generation import Generation
from judge.backends.hf.prefix_cache import PrefixSharing
from judge.backends.hf.prepared import Prepared

#: characters at the end of a context used to see how a label word tokenises after it
_LABEL_PROBE_CHARS = 64


class HFBackend(PrefixSharing, Generation):
    """A transformers model as an LLM judge.

    Parameters
    ----------
    model_name_or_path : str
        Hub id or local folder readable by ``from_pretrained``.
    kind : {"auto", "seq2seq", "causal"}
        "auto" reads ``is_encoder_decoder`` from the model's config.
    device : str
        "auto" picks cuda when available, else cpu; any torch device string otherwise.
    dtype : str or torch.dtype
        "auto" is bfloat16 on GPU (float16 where bfloat16 is unsupported) and float32 on CPU.
    batch_size : int
        Largest number of prompts per forward pass; halved on out-of-memory (and the reduced
        size kept for later calls).
    batch_tokens : int, optional
        Largest number of padded tokens per label-probability pass (rows x the longest
        sequence run in it: the whole prompt, or the part run on a cached prefix). Short
        sequences then fill large batches and long ones make small ones; ``batch_size``
        still caps the rows (and so the prefix copies of a pass on a cache). Halved on
        out-of-memory when it is what limited the failed batch. None: rows only.
    use_chat_template : {"auto", True, False}
        Causal models only: wrap prompts in the tokenizer's chat template ("auto": when the
        tokenizer has one).
    share_prefix : bool
        Reuse the key/value cache of shared prefixes (causal models).
    max_length : int, optional
        Prompts longer than this many tokens get an error result instead of being run.
    answer_prefix : str
        Text the answer starts with ("Answer:", "Score:"). With a chat template it goes after
        the generation prompt, inside the assistant turn; without one it ends the prompt on a
        new line. A request attribute ``answer_prefix`` (if the request type has one)
        overrides it.

    Attributes
    ----------
    stats : collections.Counter
        Counts since the last ``stats.clear()``: ``n_forward`` passes, ``n_tokens_computed``
        (``n_encoder_tokens`` / ``n_decoder_tokens`` for seq2seq), ``n_prefix_groups``
        (distinct prefixes used by two or more requests), ``n_prefix_boundary_mismatch``
        (of those, prefixes not ending on a token boundary), ``n_shared_nodes`` (prefix-tree
        passes), ``n_shared_requests`` (requests run on a cache), ``n_oom_backoffs``.
    """

    def __init__(
        self,
        model_name_or_path: str,
        *,
        kind: str = "auto",
        device: str = "auto",
        dtype: Any = "auto",
        batch_size: int = 16,
        batch_tokens: int | None = None,
        use_chat_template: bool | str = "auto",
        share_prefix: bool = True,
        max_length: int | None = None,
        answer_prefix: str = "",
    ):
        if kind not in ("auto", "seq2seq", "causal"):
            raise ValueError(f"kind must be 'auto', 'seq2seq' or 'causal', got {kind!r}")
        loading.check_settings(batch_size, use_chat_template, max_length)

        import torch

        self._torch = torch
        self.name = str(model_name_or_path)
        self.device = torch.device(loading.pick_device(torch, device))
        self.dtype = loading.pick_dtype(torch, dtype, self.device)
        config = loading.load_config(self.name)
        if kind == "auto":
            kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
        self.kind = kind
        model = loading.load_model(self.name, config, kind, self.dtype, self.device)
        tokenizer = loading.load_tokenizer(self.name)
        self._setup(
            model,
            tokenizer,
            batch_size,
            use_chat_template,
            share_prefix,
            max_length,
            answer_prefix,
            batch_tokens,
        )

    @classmethod
    def from_model(
        cls,
        model,
        tokenizer,
        *,
        name: str | None = None,
        batch_size: int = 16,
        batch_tokens: int | None = None,
        use_chat_template: bool | str = "auto",
        share_prefix: bool = True,
        max_length: int | None = None,
        answer_prefix: str = "",
    ) -> HFBackend:
        """Wrap a model already in memory (a cached app resource, a benchmark's random model).

        The model stays on its device and dtype; ``name`` defaults to the config's
        ``_name_or_path``. Other parameters as in :class:`HFBackend`.
        """
        loading.check_settings(batch_size, use_chat_template, max_length)
        import torch

        self = cls.__new__(cls)
        self._torch = torch
        self.name = str(name or getattr(model.config, "_name_or_path", "") or type(model).__name__)
        first = next(model.parameters())
        self.device, self.dtype = first.device, first.dtype
        self.kind = "seq2seq" if getattr(model.config, "is_encoder_decoder", False) else "causal"
        model.eval()
        self._setup(
            model,
            tokenizer,
            batch_size,
            use_chat_template,
            share_prefix,
            max_length,
            answer_prefix,
            batch_tokens,
        )
        return self

    def _setup(
        self,
        model,
        tokenizer,
        batch_size,
        use_chat_template,
        share_prefix,
        max_length,
        answer_prefix,
        batch_tokens=None,
    ) -> None:
        if batch_tokens is not None and int(batch_tokens) < 1:
            raise ValueError(
                f"batch_tokens must be a positive number of tokens, got {batch_tokens}"
            )
        self.model, self.tokenizer = model, tokenizer
        self.batch_size = int(batch_size)
        self.batch_tokens = None if batch_tokens is None else int(batch_tokens)
        self.share_prefix = bool(share_prefix)
        self.max_length = None if max_length is None else int(max_length)
        self.answer_prefix = answer_prefix
        self.stats: Counter = Counter()
        self._label_cache: dict[tuple[str, tuple[str, ...]], tuple[int, ...]] = {}

        has_template = bool(getattr(tokenizer, "chat_template", None))
        if use_chat_template is True and (self.kind != "causal" or not has_template):
            raise BackendError(
                f"use_chat_template=True but {self.name!r} "
                + ("is a seq2seq model" if self.kind != "causal" else "has no chat template")
                + "; use use_chat_template='auto' or False"
            )
        self.use_chat_template = (
            self.kind == "causal" and has_template and use_chat_template in ("auto", True)
        )
        self._pad_id = next(
            (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id) if i is not None), 0
        )
        self._eos_ids = loading.eos_token_ids(model, tokenizer)
        self._keep_last = loading.keep_last_kwargs(model)
        self._can_share = self.kind == "causal"
        self.model_id = loading.short_name(self.name)

    # ------------------------------------------------------------------ interface
    def describe(self) -> dict:
        """Settings that change results (model, kind, dtype, prompt wrapping); no batch size."""
        return {
            "backend": "hf",
            "model": self.model_id,
            "path": os.path.abspath(self.name) if os.path.isdir(self.name) else self.name,
            "revision": getattr(self.model.config, "_commit_hash", None),
            "kind": self.kind,
            "dtype": str(self.dtype).removeprefix("torch."),
            "chat_template": self.use_chat_template,
            "answer_prefix": self.answer_prefix,
        }

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ------------------------------------------------------------------ prompts
    def _render(self, user_text: str, *, system: str | None = None, answer_prefix: str = ""):
        """Return (text, add_special_tokens, offset of user_text in text or None)."""
        if self.use_chat_template:
            messages = [{"role": "user", "content": user_text}]
            if system:
                messages.insert(0, {"role": "system", "content": system})
            from jinja2 import TemplateError  # transformers renders chat templates with jinja2

            try:
                text = self.tokenizer.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True
                )
            except TemplateError as exc:  # e.g. raise_exception('System role not supported')
                if not system:
                    raise BackendError(f"the chat template of {self.name!r} failed: {exc}") from exc
                # some templates refuse a system role: fold it into the user turn
                return self._render(f"{system}\n\n{user_text}", answer_prefix=answer_prefix)
            start = text.find(user_text)
            return text + answer_prefix, False, (start if start >= 0 else None)
        text = user_text if not system else f"{system}\n\n{user_text}"
        offset = 0 if not system else len(system) + 2
        if answer_prefix:
            sep = "" if (not text or text[-1].isspace()) else "\n"
            text = text + sep + answer_prefix
        return text, True, offset

    def _answer_prefix_of(self, request) -> str:
        """The request's own ``answer_prefix`` if its type has one, else the backend's."""
        own = getattr(request, "answer_prefix", None)
        return self.answer_prefix if own is None else own

    def _encode_many(self, texts: list[str], add_special_tokens: bool) -> list[list[int]]:
        if not texts:
            return []
        out = self.tokenizer(texts, add_special_tokens=add_special_tokens)["input_ids"]
        return [list(x) for x in out]

    def _label_token_ids(self, context: str, labels: tuple[str, ...]) -> tuple[int, ...]:
        """One token id per label word, as the model would write it right after ``context``.

        The label is tokenised in context (``context + sep + label`` against ``context``) so the
        variant the tokenizer really produces there is used: " A" after "Answer:", "A" after a
        newline or a chat generation prompt. Raises BackendError naming a label that is not a
        single known token.
        """
        tail = context[-_LABEL_PROBE_CHARS:]
        key = (tail, labels)
        if key in self._label_cache:
            return self._label_cache[key]
        tok = self.tokenizer
        sep = "" if (not tail or tail[-1].isspace()) else " "
        base = tok(tail, add_special_tokens=False)["input_ids"]
        ids = []
        for label in labels:
            if not label:
                raise BackendError("an empty string cannot be a label word")
            probe = tok(tail + sep + label, add_special_tokens=False)["input_ids"]
            if probe[: len(base)] == base:
                piece = probe[len(base) :]
            else:  # the label merged with the end of the context: judge it on its own
                piece = tok(sep + label, add_special_tokens=False)["input_ids"]
            if len(piece) != 1 or (tok.unk_token_id is not None and piece[0] == tok.unk_token_id):
                shown = tok.convert_ids_to_tokens(piece)
                hint = ""
                if len(piece) > 1 and not tok.decode(piece[:1]).strip():
                    # Llama tokenizers write " 5" as a space token then "5"
                    hint = " The first piece is a lone space: end the answer prefix with a space."
                raise BackendError(
                    f"label {label!r} is not a single known token for {self.model_id}: "
                    f"{sep + label!r} tokenises to {shown} ({len(piece)} tokens) after "
                    f"{tail[-20:]!r}. Use label words that are one token each (e.g. 'A'/'B', "
                    f"'1'..'5') or another answer prefix.{hint}"
                )
            ids.append(int(piece[0]))
        if len(set(ids)) != len(ids):
            raise BackendError(
                f"labels {labels} map to the same token(s) {tok.convert_ids_to_tokens(ids)} "
                f"for {self.model_id}; label words must be distinct tokens"
            )
        self._label_cache[key] = tuple(ids)
        return self._label_cache[key]

    def _prepare_labels(self, requests: Sequence[LabelRequest]) -> list[Prepared]:
        """Tokenise every request and resolve its labels (errors before any forward pass)."""
        prepared: list[Prepared] = []
        if self.kind == "causal":
            rendered = []
            for req in requests:
                text, add_special, offset = self._render(
                    req.prefix + req.prompt, answer_prefix=self._answer_prefix_of(req)
                )
                rendered.append((text, add_special, offset))
            ids_special = self._encode_many([t for t, a, _ in rendered if a], True)
            ids_plain = self._encode_many([t for t, a, _ in rendered if not a], False)
            it_s, it_p = iter(ids_special), iter(ids_plain)
            for req, (text, add_special, offset) in zip(requests, rendered, strict=True):
                labels = tuple(req.labels)
                prepared.append(
                    Prepared(
                        ids=next(it_s) if add_special else next(it_p),
                        dec=None,
                        label_ids=self._label_token_ids(text, labels),
                        labels=labels,
                        text=text,
                        prefix_end=None if offset is None else offset + len(req.prefix),
                    )
                )
            return prepared
        enc = self._encode_many([req.prefix + req.prompt for req in requests], True)
        start = self.model.config.decoder_start_token_id
        if start is None:
            start = self._pad_id
        dec_cache: dict[str, list[int]] = {}
        for req, ids in zip(requests, enc, strict=True):
            if req.decoder_prefix not in dec_cache:
                dec_cache[req.decoder_prefix] = [int(start)] + (
                    self.tokenizer(req.decoder_prefix, add_special_tokens=False)["input_ids"]
                    if req.decoder_prefix
                    else []
                )
            labels = tuple(req.labels)
            prepared.append(
                Prepared(
                    ids=ids,
                    dec=dec_cache[req.decoder_prefix],
                    label_ids=self._label_token_ids(req.decoder_prefix, labels),
                    labels=labels,
                    text="",
                    prefix_end=None,
                )
            )
        return prepared

    # ------------------------------------------------------------------ label probabilities
    def label_probs(
        self, requests: Sequence[LabelRequest], progress: Progress | None = None
    ) -> list[LabelResult]:
        """Normalised label probabilities and raw label log-probabilities, in request order.

        Parameters
        ----------
        requests : sequence of LabelRequest
            The full prompt is ``prefix + prompt``; requests with a non-empty ``prefix`` share
            key/value caches of their common beginnings (causal models, ``share_prefix``).
        progress : callable, optional
            Called with the number of requests finished after each batch.

        Returns
        -------
        list of LabelResult
            ``logprobs`` are log-softmax values over the whole vocabulary; ``probs`` are the
            label probabilities renormalised to sum to 1. A request that cannot be run (too
            long, out of memory alone) has an ``error`` and empty probabilities.

        Raises
        ------
        BackendError
            A label word is not a single token, before any model call.
        """
        requests = list(requests)
        if not requests:
            return []
        prepared = self._prepare_labels(requests)
        results: list[LabelResult | None] = [None] * len(requests)
        runnable = []
        for i, item in enumerate(prepared):
            n_tokens = len(item.ids)
            if self.max_length is not None and n_tokens > self.max_length:
                results[i] = LabelResult(
                    error=f"prompt has {n_tokens} tokens, more than max_length={self.max_length}"
                )
                if progress is not None:
                    progress(1)
            else:
                runnable.append(i)
        with self._torch.inference_mode():
            if self.kind == "seq2seq":
                self._run_plain(prepared, runnable, results, progress, self._seq2seq_batch)
            else:
                shared, plain = self._share_plan(requests, prepared, runnable)
                if shared:
                    plain += self._run_shared(shared, prepared, results, progress)
                self._run_plain(prepared, plain, results, progress, self._causal_batch)
        # passes queue on the device without waiting; their label columns are read here
        read: dict[int, list[LabelResult]] = {}
        for i, res in enumerate(results):
            if isinstance(res, _Pending):
                if id(res.batch) not in read:
                    read[id(res.batch)] = res.batch.read(self._torch)
                results[i] = read[id(res.batch)][res.row]
        return results  # type: ignore[return-value]

    def _label_result(self, lp_rows, batch: list[Prepared]) -> list[_Pending]:
        """The label columns of a (B, V) log-prob tensor, kept on the device until
        :meth:`label_probs` reads them all after the last pass (:class:`_PendingLabels`):
        reading them per pass would make every pass wait for the device."""
        torch = self._torch
        columns = sorted({i for item in batch for i in item.label_ids})
        cols = loading.to_device(torch.as_tensor(columns), lp_rows.device)
        pending = _PendingLabels(lp_rows[:, cols].double(), columns, batch)
        return [_Pending(pending, b) for b in range(len(batch))]

    def _run_plain(self, prepared, indices, results, progress, batch_fn) -> None:
        if not indices:
            return

        def fn(batch_idx):
            return batch_fn([prepared[indices[j]] for j in batch_idx])

        out = self._budgeted([len(prepared[i].ids) for i in indices], fn, progress=progress)
        for i, res in zip(indices, out, strict=True):
            results[i] = res

    def _budgeted(self, lengths, fn, progress=None, error_result=None) -> list:
        """:func:`run_budgeted` under this backend's row and token limits, which keep any
        out-of-memory back-off for the passes after it; an item that fails alone gets
        ``error_result(message)`` (default: a :class:`LabelResult` with the error)."""
        out, self.batch_size, self.batch_tokens = run_budgeted(
            lengths,
            fn,
            batch_size=self.batch_size,
            max_tokens=self.batch_tokens,
            error_result=error_result or (lambda msg: LabelResult(error=msg)),
            progress=progress,
            on_oom=self._count_oom,
        )
        return out

    def _count_oom(self, old: int, new: int) -> None:
        self.stats["n_oom_backoffs"] += 1

    def _causal_batch(self, batch: list[Prepared]) -> list[LabelResult]:
        lp, _ = self._forward([item.ids for item in batch])
        return self._label_result(lp, batch)

    def _pad(self, seqs, *, left: bool):
        """(token ids, attention mask) of ``seqs`` padded to the longest, on the device."""
        torch = self._torch
        n = len(seqs)
        width = max(len(s) for s in seqs)
        ids = torch.full((n, width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for b, s in enumerate(seqs):
            cols = slice(width - len(s), width) if left else slice(0, len(s))
            ids[b, cols] = torch.as_tensor(s)
            mask[b, cols] = 1
        return loading.to_device(ids, self.device), loading.to_device(mask, self.device)

    def _seq2seq_batch(self, batch: list[Prepared]) -> list[LabelResult]:
        torch = self._torch
        # right padding: T5 has relative positions, and the last real decoder position
        # is gathered below
        enc, enc_mask = self._pad([item.ids for item in batch], left=False)
        dec, dec_mask = self._pad([item.dec for item in batch], left=False)
        out = self.model(
            input_ids=enc,
            attention_mask=enc_mask,
            decoder_input_ids=dec,
            decoder_attention_mask=dec_mask,
            use_cache=False,
        )
        last = torch.as_tensor([len(item.dec) - 1 for item in batch])
        last = loading.to_device(last, out.logits.device)
        logits = out.logits[torch.arange(len(batch), device=last.device), last]
        self.stats["n_forward"] += 1
        self.stats["n_encoder_tokens"] += sum(len(item.ids) for item in batch)
        self.stats["n_decoder_tokens"] += sum(len(item.dec) for item in batch)
        self.stats["n_tokens_computed"] += sum(len(item.ids) + len(item.dec) for item in batch)
        self.stats["n_tokens_padded"] += enc.numel() + dec.numel()
        return self._label_result(logits.float().log_softmax(-1), batch)


class _PendingLabels:
    """One batch's label log-probabilities (B, label columns) still on the device."""

    def __init__(self, picked, columns: list[int], batch: list[Prepared]):
        self.picked, self.columns, self.batch = picked, columns, batch

    def read(self, torch) -> list[LabelResult]:
        """Copy to the host, check and normalise: rows with the same label tokens (usually
        the whole batch) as one block, no per-row tensor calls."""
        picked = self.picked.cpu()
        pos = {c: j for j, c in enumerate(self.columns)}
        by_labels: dict[tuple[int, ...], list[int]] = {}
        for b, item in enumerate(self.batch):
            by_labels.setdefault(item.label_ids, []).append(b)
        out: list[LabelResult] = [None] * len(self.batch)  # type: ignore[list-item]
        for label_ids, rows in by_labels.items():
            lps = picked[rows][:, [pos[c] for c in label_ids]]
            # -inf for some labels is a legitimate zero; NaN or all -inf is a broken model output
            bad = (torch.isnan(lps).any(1) | ~torch.isfinite(lps).any(1)).tolist()
            probs = torch.softmax(lps, dim=1).tolist()
            values = lps.tolist()
            for r, b in enumerate(rows):
                labels = self.batch[b].labels
                if bad[r]:
                    out[b] = LabelResult(error=f"invalid label log-probabilities {values[r]}")
                else:
                    out[b] = LabelResult(
                        probs=dict(zip(labels, probs[r], strict=True)),
                        logprobs=dict(zip(labels, values[r], strict=True)),
                    )
        return out


class _Pending(NamedTuple):
    """Row ``row`` of a :class:`_PendingLabels`: a label result not read yet."""

    batch: _PendingLabels
    row: int
