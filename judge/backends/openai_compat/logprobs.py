"""Label probabilities from the top log-probabilities of a chat completion's first token."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def label_probs_from_top(
    top: Sequence[tuple[str, float]], labels: Sequence[str]
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Probabilities of ``labels`` from first-token top logprobs.

    Tokens match a label when their stripped text equals it (" A" and "A" both count for
    "A"; their probabilities add up). A label absent from the top list gets the smallest
    listed logprob as an upper bound, which pulls its rival's probability toward 0.5
    rather than to 1 (conservative). Returns (probs, logprobs, bounded labels); probs is
    empty when no label appears.

    p(label) = exp(lp_label - logsumexp(lp over labels)).
    """
    found: dict[str, list[float]] = {}
    seen: set[str] = set()
    for token, lp in top:
        if token in seen:
            continue
        seen.add(token)
        stripped = token.strip()
        if stripped in labels:
            found.setdefault(stripped, []).append(float(lp))
    if not found:
        return {}, {}, []
    floor = min(float(lp) for _t, lp in top)
    logprobs: dict[str, float] = {}
    bounded: list[str] = []
    for label in labels:
        if label in found:
            logprobs[label] = _logsumexp(found[label])
        else:
            logprobs[label] = floor
            bounded.append(label)
    norm = _logsumexp(list(logprobs.values()))
    probs = {label: math.exp(lp - norm) for label, lp in logprobs.items()}
    return probs, logprobs, bounded


__all__ = ["label_probs_from_top"]
