"""Reading one chat completion into a judge result: label probabilities or a sampled answer.

Shared by live calls (:class:`~judge.backends.openai_compat.OpenAIBackend`) and batch output
files (:mod:`judge.batch`), so an answer reads the same whichever way it came.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from judge.backends.base import GenerateResult, LabelResult
from judge.backends.openai_compat.logprobs import label_probs_from_top
from judge.backends.openai_compat.replies import (
    Malformed,
    field_of,
    logprob_entries,
    read_choices,
    token_logprob,
    usage_counts,
)

logger = logging.getLogger("judge.backends.openai_compat")


@dataclass
class OpenAILabelResult(LabelResult):
    """:class:`LabelResult` plus what the server sent, so the run store can keep it."""

    raw: str | None = None  # JSON: the answer token and the top logprobs
    n_prompt_tokens: int | None = None
    n_completion_tokens: int | None = None


def label_result(resp, labels: Sequence[str], *, where: str, model: str) -> OpenAILabelResult:
    """The label probabilities in a chat completion ``resp`` (first-token top logprobs).

    A refusal, a filtered answer or no label among the top tokens is an answer error; no
    logprobs at all is ``no-logprobs`` (a failure). Raises :class:`Malformed` for a reply that
    is not a chat completion.
    """
    choice = read_choices(resp)[0]
    counts = usage_counts(resp, 1)
    content = logprob_entries(choice)
    if not content:
        refusal = field_of(field_of(choice, "message"), "refusal")
        if refusal:
            return OpenAILabelResult(error=f"refusal: {refusal}", **counts)
        if field_of(choice, "finish_reason") == "content_filter":
            return OpenAILabelResult(error="content_filter: the answer was filtered", **counts)
        return OpenAILabelResult(
            error=f"no-logprobs: {where} returned no logprobs for {model!r}", **counts
        )
    first = content[0]
    entries = list(field_of(first, "top_logprobs") or [])
    entries.append(first)
    top = [token_logprob(t) for t in entries]
    raw = json.dumps({"token": top[-1][0], "top": top}, ensure_ascii=False)
    probs, lps, bounded = label_probs_from_top(top, labels)
    if not probs:
        shown = ", ".join(repr(t) for t, _ in top[:5])
        return OpenAILabelResult(
            error=(
                f"no-label: none of {', '.join(labels)} among the top "
                f"{len(top)} first tokens ({shown}); ask for a one-word answer or sample"
            ),
            raw=raw,
            **counts,
        )
    if bounded:
        logger.debug("labels %s outside the top logprobs; bounded", bounded)
    return OpenAILabelResult(probs=probs, logprobs=lps, raw=raw, **counts)


def choice_result(choice, counts: dict) -> GenerateResult:
    """A sampled answer from one choice (refusal, filtered and empty answers are errors)."""
    n_prompt, n_completion = counts["n_prompt_tokens"], counts["n_completion_tokens"]
    message = field_of(choice, "message")
    refusal = field_of(message, "refusal")
    text = field_of(message, "content")
    if text is not None and not isinstance(text, str):
        raise Malformed(f"bad-response: the answer text is a {type(text).__name__}")
    if refusal:
        return GenerateResult(None, f"refusal: {refusal}", n_prompt, n_completion)
    if field_of(choice, "finish_reason") == "content_filter":
        return GenerateResult(
            None, "content_filter: the answer was filtered", n_prompt, n_completion
        )
    if not text or not text.strip():
        return GenerateResult(
            None, "empty: the model answered with nothing", n_prompt, n_completion
        )
    return GenerateResult(text, None, n_prompt, n_completion)


__all__ = ["OpenAILabelResult", "choice_result", "label_result"]
