"""Transformers backend: seq2seq (FlanT5-style) and causal (Llama-style) judges on CPU or GPU.

Label probabilities come from one forward pass per prompt: the next-token distribution after
the prompt (causal) or after the primed decoder (seq2seq), read at the label words' tokens.
Prompts are batched longest first, padded, and answered in input order; a batch that runs out
of memory is halved and retried.

Shared prefixes (causal models only). Pairwise prompts of one context repeat the same long
beginning (instructions, the context, often the first candidate). Requests with a non-empty
``LabelRequest.prefix`` take part in sharing: their full token sequences are sorted into a
prefix tree (a node wherever at least ``MIN_SHARED_TOKENS`` more tokens are common), each
node's tokens are run once on top of its parent's key/value cache, and each request's
remaining tokens on top of its deepest node. A 16-candidate context thus costs one context
pass, 16 short first-candidate passes and 240 short continuations instead of 240 full
prompts, whether the runner's prefix is the context alone or the context and the first
candidate. Nodes, and the continuations, are batched across siblings.

What is shared is found on the *full* tokenisations, so the tokens fed with sharing are
exactly those fed without it (a prefix that ends inside a BPE merge simply shares a little
less; such prefixes are counted in ``stats``). Padding is on the left throughout, with the
attention mask carrying the holes and positions computed from the mask, so results equal the
unshared, unbatched ones up to float rounding.

torch and transformers are imported only when a backend is constructed.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judge.backends._batching import run_batched
from judge.backends.base import (
    BackendError,
    GenerateRequest,
    GenerateResult,
    LabelRequest,
    LabelResult,
    Progress,
)

#: a prefix-tree node must share at least this many more tokens than its parent
MIN_SHARED_TOKENS = 8
#: characters at the end of a context used to see how a label word tokenises after it
_LABEL_PROBE_CHARS = 64

_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


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


@dataclass
class _Prepared:
    """One label request, tokenised, with its label token ids resolved."""

    ids: list[int]  # causal: the whole prompt; seq2seq: encoder input
    dec: list[int] | None  # seq2seq: decoder input (start token + decoder prefix)
    label_ids: tuple[int, ...]
    labels: tuple[str, ...]
    text: str  # causal: rendered prompt (for the prefix-boundary check)
    prefix_end: int | None  # causal: character offset where the request's prefix ends


class HFBackend:
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
        use_chat_template: bool | str = "auto",
        share_prefix: bool = True,
        max_length: int | None = None,
        answer_prefix: str = "",
    ):
        if kind not in ("auto", "seq2seq", "causal"):
            raise ValueError(f"kind must be 'auto', 'seq2seq' or 'causal', got {kind!r}")
        _check_settings(batch_size, use_chat_template, max_length)

        import torch

        self._torch = torch
        self.name = str(model_name_or_path)
        self.device = torch.device(self._pick_device(device))
        self.dtype = self._pick_dtype(dtype)
        config = self._load_config()
        if kind == "auto":
            kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
        self.kind = kind
        model = self._load_model(config)
        tokenizer = self._load_tokenizer()
        self._setup(
            model, tokenizer, batch_size, use_chat_template, share_prefix, max_length, answer_prefix
        )

    @classmethod
    def from_model(
        cls,
        model,
        tokenizer,
        *,
        name: str | None = None,
        batch_size: int = 16,
        use_chat_template: bool | str = "auto",
        share_prefix: bool = True,
        max_length: int | None = None,
        answer_prefix: str = "",
    ) -> HFBackend:
        """Wrap a model already in memory (a cached app resource, a benchmark's random model).

        The model stays on its device and dtype; ``name`` defaults to the config's
        ``_name_or_path``. Other parameters as in :class:`HFBackend`.
        """
        _check_settings(batch_size, use_chat_template, max_length)
        import torch

        self = cls.__new__(cls)
        self._torch = torch
        self.name = str(name or getattr(model.config, "_name_or_path", "") or type(model).__name__)
        first = next(model.parameters())
        self.device, self.dtype = first.device, first.dtype
        self.kind = "seq2seq" if getattr(model.config, "is_encoder_decoder", False) else "causal"
        model.eval()
        self._setup(
            model, tokenizer, batch_size, use_chat_template, share_prefix, max_length, answer_prefix
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
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.batch_size = int(batch_size)
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
        self._eos_ids = self._eos_token_ids()
        try:
            import inspect

            params = inspect.signature(model.forward).parameters
            self._keep_last = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        except (TypeError, ValueError):
            self._keep_last = {}
        self._can_share = self.kind == "causal"
        self.model_id = self._short_name()

    # ------------------------------------------------------------------ loading
    def _pick_device(self, device: str) -> str:
        if device != "auto":
            return device
        return "cuda" if self._torch.cuda.is_available() else "cpu"

    def _pick_dtype(self, dtype):
        torch = self._torch
        if isinstance(dtype, torch.dtype):
            return dtype
        if dtype == "auto":
            if self.device.type == "cuda":
                return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            return torch.float32
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be 'auto' or one of {sorted(_DTYPES)}, got {dtype!r}")
        return getattr(torch, _DTYPES[dtype])

    def _cannot_load(self, what: str, exc: BaseException) -> BackendError:
        name = self.name
        looks_local = name.startswith(("/", "./", "../", "~"))
        if looks_local and not os.path.isdir(os.path.expanduser(name)):
            return BackendError(
                f"cannot load model {name!r}: there is no folder at that path. Give an existing "
                "folder saved with save_pretrained, or a Hugging Face model id."
            )
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
        hint = (
            "Offline mode (HF_HUB_OFFLINE) is on: only models already downloaded or saved in "
            "a local folder can be used."
            if offline
            else "Check the model id (or local folder) and the network connection."
        )
        return BackendError(
            f"cannot load the {what} of model {name!r}: {first.rstrip('.')}. {hint}"
        )

    def _load_config(self):
        from transformers import AutoConfig

        try:
            return AutoConfig.from_pretrained(self.name)
        except (OSError, ValueError, KeyError) as exc:
            raise self._cannot_load("configuration", exc) from exc

    def _load_model(self, config):
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

        auto = AutoModelForSeq2SeqLM if self.kind == "seq2seq" else AutoModelForCausalLM
        try:
            model = auto.from_pretrained(self.name, config=config, dtype=self.dtype)
        except ValueError as exc:
            if "Unrecognized configuration class" in str(exc):
                raise BackendError(
                    f"{self.name!r} (model type {getattr(config, 'model_type', '?')!r}) is not a "
                    f"{self.kind} language model that transformers can load; the judge needs a "
                    "causal LM (Llama-style) or a seq2seq LM (T5-style). Check `kind`."
                ) from exc
            raise self._cannot_load("weights", exc) from exc
        except OSError as exc:
            raise self._cannot_load("weights", exc) from exc
        model.to(self.device)
        model.eval()
        return model

    def _load_tokenizer(self):
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.name)
        except (OSError, ValueError, KeyError) as exc:
            raise self._cannot_load("tokenizer", exc) from exc

    def _short_name(self) -> str:
        path = self.name.rstrip("/\\")
        return os.path.basename(path) if os.path.isdir(path) else path

    def _eos_token_ids(self) -> set[int]:
        ids: set[int] = set()
        gen = getattr(self.model, "generation_config", None)
        eos = getattr(gen, "eos_token_id", None) if gen is not None else None
        for value in (eos, self.tokenizer.eos_token_id):
            if isinstance(value, int):
                ids.add(value)
            elif value is not None:
                ids.update(int(v) for v in value)
        return ids

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

    def _prepare_labels(self, requests: Sequence[LabelRequest]) -> list[_Prepared]:
        """Tokenise every request and resolve its labels (errors before any forward pass)."""
        prepared: list[_Prepared] = []
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
                    _Prepared(
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
                _Prepared(
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
        return results  # type: ignore[return-value]

    def _label_result(self, lp_rows, batch: list[_Prepared]) -> list[LabelResult]:
        """Pick the label columns of a (B, V) log-prob tensor and normalise them."""
        torch = self._torch
        columns = sorted({i for item in batch for i in item.label_ids})
        pos = {c: j for j, c in enumerate(columns)}
        picked = lp_rows[:, torch.as_tensor(columns, device=lp_rows.device)].double().cpu()
        out = []
        for b, item in enumerate(batch):
            lps = picked[b, [pos[c] for c in item.label_ids]]
            # -inf for some labels is a legitimate zero; NaN or all -inf is a broken model output
            if bool(torch.isnan(lps).any()) or not bool(torch.isfinite(lps).any()):
                out.append(LabelResult(error=f"invalid label log-probabilities {lps.tolist()}"))
                continue
            probs = torch.softmax(lps, dim=0)
            out.append(
                LabelResult(
                    probs=dict(zip(item.labels, probs.tolist(), strict=True)),
                    logprobs=dict(zip(item.labels, lps.tolist(), strict=True)),
                )
            )
        return out

    def _run_plain(self, prepared, indices, results, progress, batch_fn) -> None:
        if not indices:
            return

        def fn(batch_idx):
            return batch_fn([prepared[indices[j]] for j in batch_idx])

        out, self.batch_size = run_batched(
            [len(prepared[i].ids) for i in indices],
            fn,
            batch_size=self.batch_size,
            error_result=lambda msg: LabelResult(error=msg),
            progress=progress,
            on_oom=self._count_oom,
        )
        for i, res in zip(indices, out, strict=True):
            results[i] = res

    def _count_oom(self, old: int, new: int) -> None:
        self.stats["n_oom_backoffs"] += 1

    def _causal_batch(self, batch: list[_Prepared]) -> list[LabelResult]:
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
        return ids.to(self.device), mask.to(self.device)

    def _seq2seq_batch(self, batch: list[_Prepared]) -> list[LabelResult]:
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
        last = torch.as_tensor([len(item.dec) - 1 for item in batch], device=out.logits.device)
        logits = out.logits[torch.arange(len(batch), device=last.device), last]
        self.stats["n_forward"] += 1
        self.stats["n_encoder_tokens"] += sum(len(item.ids) for item in batch)
        self.stats["n_decoder_tokens"] += sum(len(item.dec) for item in batch)
        self.stats["n_tokens_computed"] += sum(len(item.ids) + len(item.dec) for item in batch)
        return self._label_result(logits.float().log_softmax(-1), batch)

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

    def _check_boundary(self, item: _Prepared) -> None:
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

    # ------------------------------------------------------------------ generation
    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """Sample one answer per request (temperature / top-p / seed from its ``decoding``).

        Each request draws from its own random generator seeded by (seed, sample index,
        prompt), so a result depends only on its request, not on the batch it ran in or the
        other requests. ``temperature == 0`` decodes greedily. ``seed=None`` draws fresh
        randomness. Causal models: the chat template and answer prefix apply as in
        :meth:`label_probs` (the returned text is what follows the answer prefix).
        """
        requests = list(requests)
        if not requests:
            return []
        torch = self._torch
        if self.kind == "causal":
            rendered = [
                self._render(r.prompt, system=r.system, answer_prefix=self._answer_prefix_of(r))
                for r in requests
            ]
            ids = [self._encode_many([t], add_special)[0] for t, add_special, _ in rendered]
        else:
            ids = self._encode_many(
                [r.prompt if not r.system else f"{r.system}\n\n{r.prompt}" for r in requests],
                True,
            )
        results: list[GenerateResult | None] = [None] * len(requests)
        runnable = []
        for i, seq in enumerate(ids):
            if self.max_length is not None and len(seq) > self.max_length:
                results[i] = GenerateResult(
                    text=None,
                    error=f"prompt has {len(seq)} tokens, more than max_length={self.max_length}",
                    n_prompt_tokens=len(seq),
                )
            else:
                runnable.append(i)

        def fn(batch_idx):
            batch = [runnable[j] for j in batch_idx]
            return self._generate_batch([ids[i] for i in batch], [requests[i] for i in batch])

        with torch.inference_mode():
            out, self.batch_size = run_batched(
                [len(ids[i]) for i in runnable],
                fn,
                batch_size=self.batch_size,
                error_result=lambda msg: GenerateResult(text=None, error=msg),
                progress=progress,
                on_oom=self._count_oom,
            )
        for i, res in zip(runnable, out, strict=True):
            results[i] = res
        return results  # type: ignore[return-value]

    def _generator(self, req: GenerateRequest):
        torch = self._torch
        gen = torch.Generator(device="cpu")
        seed = req.decoding.seed
        if seed is None:
            gen.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        else:
            key = f"{seed}\x00{req.sample}\x00{req.system or ''}\x00{req.prompt}".encode()
            gen.manual_seed(int.from_bytes(hashlib.sha256(key).digest()[:8], "little") >> 1)
        return gen

    def _sample_token(self, logits_row, req: GenerateRequest, gen) -> int:
        """Temperature and nucleus (top-p) sampling of one token on CPU, in float64."""
        torch = self._torch
        temperature, top_p = req.decoding.temperature, req.decoding.top_p
        logits_row = logits_row.double()
        if temperature <= 0:
            return int(torch.argmax(logits_row))
        probs = torch.softmax(logits_row / temperature, dim=-1)
        if top_p < 1.0:
            sorted_p, order = torch.sort(probs, descending=True)
            # keep the smallest head whose mass reaches top_p (always at least one token)
            keep = (torch.cumsum(sorted_p, 0) - sorted_p) < top_p
            sorted_p = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
            choice = torch.multinomial(sorted_p, 1, generator=gen)
            return int(order[choice])
        return int(torch.multinomial(probs, 1, generator=gen))

    def _generate_batch(self, seqs: list[list[int]], reqs: list[GenerateRequest]):
        torch = self._torch
        n = len(seqs)
        gens = [self._generator(r) for r in reqs]
        limits = [max(0, int(r.decoding.max_new_tokens)) for r in reqs]
        dev = self.device
        if self.kind == "causal":
            ids, mask = self._pad(seqs, left=True)
            position_ids = (mask.cumsum(-1) - 1).clamp_(min=0)
            out = self.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=position_ids,
                use_cache=True,
                **self._keep_last,
            )
            next_pos = position_ids[:, -1:] + 1
        else:
            enc, mask = self._pad(seqs, left=False)
            encoder_outputs = self.model.get_encoder()(input_ids=enc, attention_mask=mask)
            start = self.model.config.decoder_start_token_id
            start = self._pad_id if start is None else int(start)
            dec = torch.full((n, 1), start, dtype=torch.long, device=dev)
            out = self.model(
                encoder_outputs=encoder_outputs,
                attention_mask=mask,
                decoder_input_ids=dec,
                use_cache=True,
            )
        self.stats["n_forward"] += 1
        produced: list[list[int]] = [[] for _ in range(n)]
        done = [limit == 0 for limit in limits]
        for _ in range(max(limits, default=0)):
            logits = out.logits[:, -1, :].float().cpu()
            next_ids = []
            for b in range(n):
                if done[b]:
                    next_ids.append(self._pad_id)
                    continue
                tok = self._sample_token(logits[b], reqs[b], gens[b])
                produced[b].append(tok)
                done[b] = tok in self._eos_ids or len(produced[b]) >= limits[b]
                next_ids.append(tok)
            if all(done):
                break
            step = torch.as_tensor(next_ids, dtype=torch.long, device=dev)[:, None]
            if self.kind == "causal":
                mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=dev)], dim=1)
                out = self.model(
                    input_ids=step,
                    attention_mask=mask,
                    position_ids=next_pos,
                    past_key_values=out.past_key_values,
                    use_cache=True,
                    **self._keep_last,
                )
                next_pos = next_pos + 1
            else:
                out = self.model(
                    encoder_outputs=encoder_outputs,
                    attention_mask=mask,
                    decoder_input_ids=step,
                    past_key_values=out.past_key_values,
                    use_cache=True,
                )
            self.stats["n_forward"] += 1
        return [
            GenerateResult(
                text=self.tokenizer.decode(p, skip_special_tokens=True),
                n_prompt_tokens=len(s),
                n_completion_tokens=len(p),
            )
            for p, s in zip(produced, seqs, strict=True)
        ]


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


def _check_settings(batch_size, use_chat_template, max_length) -> None:
    if use_chat_template not in ("auto", True, False):
        raise ValueError(
            f"use_chat_template must be 'auto', True or False, got {use_chat_template!r}"
        )
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if max_length is not None and int(max_length) < 1:
        raise ValueError(f"max_length must be a positive number of tokens, got {max_length}")


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
