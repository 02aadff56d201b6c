"""One small batched interface that every judge backend implements.

Requests go in as a list and results come back as a list of the same length and order
(lm-evaluation-harness style). A backend imports its heavy library (torch, openai) only
when it is constructed, so importing ``judge`` stays cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


class BackendError(RuntimeError):
    """A backend cannot do what was asked (model not loadable, endpoint down, bad label word).

    Raised before any paid work is spent where that can be checked up front.
    """


@dataclass(frozen=True)
class Decoding:
    """Sampling settings; part of the run-store key."""

    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    seed: int | None = 0


@dataclass(frozen=True)
class LabelRequest:
    """Ask for the probabilities of ``labels`` as the next token after ``prompt``.

    ``prefix`` is the part of the prompt shared with other requests (the context and often
    the first candidate); backends that can reuse a key/value cache use it, others simply
    prepend it. The full prompt is ``prefix + prompt``. ``decoder_prefix`` primes the
    decoder of seq2seq models (FlanT5: "Summary"); causal models ignore it.
    """

    prompt: str
    labels: tuple[str, ...] = ("A", "B")
    prefix: str = ""
    decoder_prefix: str = ""
    #: the template's system message (None: the backend's own default)
    system: str | None = None
    #: text after the prompt before the label is read, e.g. "Answer:" for causal models
    #: (None: the backend's default; chat APIs answer in their own turn and ignore it)
    answer_prefix: str | None = None


@dataclass
class LabelResult:
    """Normalised probabilities over the labels (sum to 1) and raw log-probabilities.

    ``probs`` is empty and ``error`` says why when the backend could not score the request.
    """

    probs: dict[str, float] = field(default_factory=dict)
    logprobs: dict[str, float] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class GenerateRequest:
    """Sample one free-text answer to ``prompt`` (``sample`` indexes repeated draws)."""

    prompt: str
    decoding: Decoding = Decoding()
    sample: int = 0
    system: str | None = None


@dataclass
class GenerateResult:
    text: str | None
    error: str | None = None  # refusal, timeout, server error after retries, ...
    n_prompt_tokens: int | None = None
    n_completion_tokens: int | None = None


Progress = Callable[[int], None]  # called with the number of requests just finished
#: ``sink(index, result)``: called in the thread that read a result, before it is yielded
Sink = Callable[[int, object], None]


@runtime_checkable
class Backend(Protocol):
    """What runners need from a model. Results keep the order of the requests."""

    #: short stable identifier written into the run-store key and the ``judge`` column
    model_id: str

    def describe(self) -> dict:
        """Settings that identify this backend in a cache key (no secrets, no batch size)."""
        ...

    def label_probs(
        self, requests: Sequence[LabelRequest], progress: Progress | None = None
    ) -> list[LabelResult]: ...

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]: ...

    def count_tokens(self, text: str) -> int:
        """Token count used by the estimate (approximate for API models)."""
        ...


# Optional extras a backend may offer; the runners use them when present:
#   check() -> None                      fail fast (endpoint down, unknown model) before any work
#   iter_label_probs(requests, cancel)   yield (index, LabelResult) as each answer arrives, so the
#   iter_generate(requests, cancel)      run store keeps it at once (a kill loses nothing done);
#                                        with a keyword ``sink`` (a Sink) each result is handed to
#                                        it in the thread that read it, before it is yielded
#   supports_logprobs: bool              False when the server offers no label probabilities
#
# Failures are results, not exceptions: a request that fails comes back with ``error`` set
# (its text starts with a code, see judge.store.ANSWER_ERROR_CODES), so one bad request never
# ends a run. The runners also turn any exception a backend raises for a request (other than
# BackendError, which means the backend cannot work at all) into such a failed result.

_KEYLIKE = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}")


def exception_text(exc: BaseException) -> str:
    """``"ValueError: what it says"`` on one line, at most 300 characters of message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def scrub_secrets(text: str, secret: str | None = None) -> str:
    """``text`` without ``secret`` and anything that looks like a key (``sk-...``, an API's
    masked echo of one), so that error texts can be stored, logged and shown."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)
