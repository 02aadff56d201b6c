"""What the run store keeps per call (:class:`StoredResult`) and per run (:class:`RunItem`),
and what a stored row is worth (:func:`status_of`):

- ``ok``: an answer;
- ``answer-error``: the model did answer but without a usable result (a refusal, a filtered
  or empty answer, no label among its top tokens) — kept, not asked again;
- ``failed``: the call itself failed (server error after retries, timeout, bad request, a
  reply that is not a chat completion, no choices) — kept with its reason for inspection and
  asked again on the next run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: error codes (text before the first ":") that are the model's own answer, not a failure;
#: every other code ("http-503", "timeout", "connection", "bad-response", "no-choices",
#: "no-logprobs", "exception", ...) is a failure asked again on the next run
ANSWER_ERROR_CODES = ("refusal", "content_filter", "empty", "no-label")


def error_code(error: str | None) -> str:
    """The code an error text starts with (``"http-503: ..."`` -> ``"http-503"``); "" if none."""
    return (error or "").split(":", 1)[0].strip()


def status_of(error: str | None) -> str:
    """``ok``, ``answer-error`` or ``failed`` from a backend error text (see module doc)."""
    if error is None:
        return "ok"
    return "answer-error" if error_code(error) in ANSWER_ERROR_CODES else "failed"


@dataclass
class StoredResult:
    """One stored model call result."""

    key: str
    kind: str  # "label" or "generate"
    status: str = "ok"
    raw: str | None = None
    probs: dict[str, float] | None = None
    logprobs: dict[str, float] | None = None
    error: str | None = None
    n_prompt_tokens: int | None = None
    n_completion_tokens: int | None = None
    model_id: str | None = None
    created_at: float | None = None
    updated_at: float | None = None


@dataclass
class RunItem:
    """One planned model call of a run and what it judges (pairwise or absolute)."""

    key: str
    context_id: str
    sample: int = 0
    first_id: str = ""
    second_id: str = ""
    candidate_id: str = ""
    request: object = field(default=None, repr=False, compare=False)  # not stored


def result_row(key: str, kind: str, result, model_id: str | None = None) -> StoredResult:
    """A :class:`StoredResult` from a backend ``LabelResult`` / ``GenerateResult``."""
    error = getattr(result, "error", None)
    if kind == "label":
        return StoredResult(
            key=key,
            kind=kind,
            status=status_of(error),
            raw=getattr(result, "raw", None),
            probs=dict(result.probs) or None,
            logprobs=dict(result.logprobs) or None,
            error=error,
            n_prompt_tokens=getattr(result, "n_prompt_tokens", None),
            n_completion_tokens=getattr(result, "n_completion_tokens", None),
            model_id=model_id,
        )
    text = result.text
    if error is None and text is None:  # a backend fault, not the model's answer
        error = "bad-response: the backend returned neither text nor an error"
    return StoredResult(
        key=key,
        kind=kind,
        status=status_of(error),
        raw=text,
        error=error,
        n_prompt_tokens=result.n_prompt_tokens,
        n_completion_tokens=result.n_completion_tokens,
        model_id=model_id,
    )


__all__ = [
    "ANSWER_ERROR_CODES",
    "RunItem",
    "StoredResult",
    "error_code",
    "result_row",
    "status_of",
]
