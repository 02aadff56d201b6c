"""Run-store keys: one sha256 per model call, over everything that changes its answer.

A key covers the backend's identity (kind, model, endpoint; never the API key), the template
(id, version and content hash), the decoding settings, the full prompt, the label set and the
sample index. Timeouts, batch sizes and concurrency are not in the key, so changing them does
not re-run anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

# describe() entries that must never reach a key even if a backend lists them
_NOT_IN_KEY = {"timeout", "batch_size", "max_concurrency", "max_retries", "api_key", "progress"}


def prompt_hash(
    prompt: str, *, prefix: str = "", system: str | None = None, decoder_prefix: str = ""
) -> str:
    """sha256 of everything the model reads: system message, prefix + prompt, decoder priming.

    ``prefix + prompt`` is hashed as one text, so where a prompt is split does not matter.
    """
    h = hashlib.sha256()
    for part in (system, decoder_prefix):
        # length-prefixed so that no two different (system, decoder_prefix, prompt) collide
        data = b"\xff" if part is None else part.encode()
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    h.update(prefix.encode())
    h.update(prompt.encode())
    return h.hexdigest()


def key_base(
    *,
    backend: Mapping,
    template: Mapping,
    kind: str,
    labels: Sequence[str] | None = None,
    decoding: Mapping | None = None,
) -> str:
    """The part of a key shared by every call of a run (see :func:`make_key`)."""
    ident = {k: v for k, v in dict(backend).items() if k not in _NOT_IN_KEY}
    material = {
        "backend": ident,
        "template": dict(template),
        "kind": kind,
        "labels": list(labels) if labels is not None else None,
        "decoding": dict(decoding) if decoding is not None else None,
    }
    return json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)


def key_from_base(base: str, prompt_sha: str, sample: int = 0) -> str:
    """:func:`make_key` from a precomputed :func:`key_base` (fast path for many prompts)."""
    return hashlib.sha256(f"{base}\x1f{prompt_sha}\x1f{int(sample)}".encode()).hexdigest()


def make_key(
    *,
    backend: Mapping,
    template: Mapping,
    kind: str,
    prompt_sha: str,
    labels: Sequence[str] | None = None,
    decoding: Mapping | None = None,
    sample: int = 0,
) -> str:
    """The run-store key of one model call.

    Parameters
    ----------
    backend : mapping
        ``backend.describe()``: kind, model, endpoint and settings that change answers.
        Secrets and throughput settings (timeout, batch size, concurrency) are dropped.
    template : mapping
        ``{"id": ..., "version": ..., "key": template.key()}``.
    kind : {"label", "generate"}
    prompt_sha : str
        :func:`prompt_hash` of the full prompt.
    labels : sequence of str, optional
        Label words whose probabilities are read (label requests).
    decoding : mapping, optional
        Sampling settings (generate requests); label requests read logprobs and have none.
    sample : int
        Index of a repeated draw.
    """
    base = key_base(backend=backend, template=template, kind=kind, labels=labels, decoding=decoding)
    return key_from_base(base, prompt_sha, sample)


__all__ = ["key_base", "key_from_base", "make_key", "prompt_hash"]
