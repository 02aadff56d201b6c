"""A label request made ready for the model: what the backend's label-probability passes
(:mod:`judge.backends.hf.backend`) and the prefix-KV cache (:mod:`judge.backends.hf.prefix_cache`)
both read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Prepared:
    """One label request, tokenised, with its label token ids resolved."""

    ids: list[int]  # causal: the whole prompt; seq2seq: encoder input
    dec: list[int] | None  # seq2seq: decoder input (start token + decoder prefix)
    label_ids: tuple[int, ...]
    labels: tuple[str, ...]
    text: str  # causal: rendered prompt (for the prefix-boundary check)
    prefix_end: int | None  # causal: character offset where the request's prefix ends
