"""The OpenAI-compatible judge backend: label probabilities from first-token logprobs, and
sampled answers (several per call with ``n`` where the server supports it)."""

from __future__ import annotations

import difflib
import logging
import os
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence

from judge.backends.base import (
    BackendError,
    GenerateRequest,
    GenerateResult,
    LabelRequest,
    Progress,
    Sink,
    exception_text,
    scrub_secrets,
)
from judge.backends.openai_compat.answers import OpenAILabelResult, choice_result, label_result
from judge.backends.openai_compat.client import ChatClient, collect, status_message
from judge.backends.openai_compat.endpoint import (
    DEFAULT_BASE_URL,
    NO_KEY,
    approx_tokens,
    openai_describe,
    public_url,
    resolve_api_key,
)
from judge.backends.openai_compat.replies import (
    Malformed,
    logprob_entries,
    read_choices,
    token_logprob,
    usage_counts,
)

logger = logging.getLogger("judge.backends.openai_compat")

PROBE_PROMPT = "Reply with the single letter A. (judgescope-probe)"
_PROBE_ATTEMPTS = 3  # malformed replies to the one-token probe before check() gives up
#: request fields vLLM accepts that the ``openai`` client does not know: sent in ``extra_body``
#: by live calls, top-level in batch files (vLLM's ChatCompletionRequest reads both the same)
VLLM_FIELDS = ("logprob_token_ids",)
# Error texts start with a code: "refusal", "content_filter", "empty" and "no-label" are
# answers the model really gave (kept, not asked again); "http-NNN", "timeout",
# "connection", "bad-response" (a reply that is no chat completion), "no-choices",
# "no-logprobs" and "exception" are failures asked again on the next run
# (judge.store.ANSWER_ERROR_CODES); "cancelled" marks a request stopped by a cancel before
# it had an answer (not stored).


class OpenAIBackend(ChatClient):
    """Judge through an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    model : str
        Model name as the server knows it (``gpt-4o-mini``, ``meta-llama/Llama-3.1-8B-Instruct``).
    base_url : str, optional
        Endpoint, e.g. ``http://localhost:8000/v1`` for vLLM; default OpenAI (or the
        ``OPENAI_BASE_URL`` environment variable).
    api_key : str, optional
        Default: ``OPENAI_API_KEY`` (the app passes its Streamlit secret here). Never stored outside the client.
    max_concurrency : int
        Requests in flight at once.
    timeout : float
        Seconds per request before it counts as timed out (and is retried).
    max_retries : int
        Retries after the first attempt for 429 / 408 / 409 / 5xx / timeouts / connection
        errors; the wait doubles each time (``backoff_base`` * 2**attempt, capped at
        ``backoff_max``, times a random jitter in [0.5, 1.5)) unless the server sends
        Retry-After.
    logprobs : True, False or "auto"
        Whether to ask for logprobs. "auto" finds out (see :meth:`check`); True makes a
        server without logprobs an error; False disables :meth:`label_probs`.
    top_logprobs : int
        How many alternatives to request for the first token (OpenAI allows up to 20).
    use_n : True, False or "auto"
        Ask for several samples in one call with ``n``; "auto" falls back to one call per
        sample when the server returns fewer choices than asked.
    system : str, optional
        System message sent with every request that does not bring its own.
    label_token_ids : mapping of str to int, optional
        vLLM servers only: the served tokenizer's token id of each label word as the answer's
        first token (e.g. ``{"A": 32, "B": 33}``). Label requests then also send vLLM's
        ``logprob_token_ids`` (the ids of that request's labels), and the server returns the
        log-probabilities of exactly those tokens (plus the answer token) instead of the top
        ``top_logprobs``: no label is missing from the list. A server that does not know the
        field ignores it and the top ``top_logprobs`` are read as usual. Part of
        :meth:`describe` (answers are stored apart from top-k ones).
    random_state : int, optional
        Seeds the backoff jitter (tests).
    """

    kind = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 6,
        logprobs: bool | str = "auto",
        top_logprobs: int = 20,
        use_n: bool | str = "auto",
        system: str | None = None,
        label_token_ids: Mapping[str, int] | None = None,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        random_state: int | None = None,
    ):
        if not model or not isinstance(model, str):
            raise BackendError("OpenAIBackend needs a model name, e.g. model='gpt-4o-mini'")
        if logprobs not in (True, False, "auto"):
            raise ValueError(f"logprobs must be True, False or 'auto'; got {logprobs!r}")
        if use_n not in (True, False, "auto"):
            raise ValueError(f"use_n must be True, False or 'auto'; got {use_n!r}")
        if int(max_concurrency) < 1:
            raise ValueError(f"max_concurrency must be at least 1; got {max_concurrency}")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a hard requirement
            raise BackendError("the 'openai' package is not installed: pip install openai") from exc
        self._openai = openai
        self.model = model
        self.model_id = model
        self.max_concurrency = int(max_concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.logprobs = logprobs
        self.top_logprobs = int(top_logprobs)
        self.use_n = use_n
        self.system = system
        self.label_token_ids = _check_label_token_ids(label_token_ids)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self._rng = random.Random(random_state)
        self._rng_lock = threading.Lock()
        # backoff waits: None waits on the run's stop event (a cancel ends it); tests record them
        self._sleep: Callable[[float], None] | None = None
        self._token_param = "max_tokens"
        #: None until known; False when the server gives no logprobs
        self.supports_logprobs: bool | None = False if logprobs is False else None
        self.supports_n: bool | None = False if use_n is False else None
        explicit_url = base_url or os.environ.get("OPENAI_BASE_URL")
        key = resolve_api_key(api_key, explicit_url)
        # The key is kept by the client only; a closure over a local keeps it off ``self``.
        secret = None if key == NO_KEY else key
        self._scrub_key = lambda text, _k=secret: scrub_secrets(text, _k)
        del secret
        self._client = openai.OpenAI(
            api_key=key,
            base_url=explicit_url or DEFAULT_BASE_URL,
            timeout=self.timeout,
            max_retries=0,  # retries are ours: counted, jittered, Retry-After honoured
        )
        del key
        self.base_url = public_url(str(self._client.base_url))
        self.n_retries = 0  # total retries made (for reports)
        self.n_timeouts = 0  # calls that got no answer within ``timeout`` (each may be billed)
        self.slowest_reply = 0.0  # seconds of the slowest answered call
        self._timeout_warned = False

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    # -- interface -----------------------------------------------------------------------
    def describe(self) -> dict:
        """Identity for cache keys: kind, model and endpoint (never the key, never timeouts),
        and the label token ids when answers are restricted to them."""
        described = openai_describe(self.model, self.base_url)
        if self.label_token_ids:
            described["label_token_ids"] = dict(sorted(self.label_token_ids.items()))
        return described

    def count_tokens(self, text: str) -> int:
        """Approximate token count (about 4 characters a token for English BPE vocabularies)."""
        return approx_tokens(text)

    def _key_refused(self, exc) -> BackendError:
        return BackendError(
            f"the endpoint {self.base_url} refused the API key (401: "
            f"{self._scrub_key(status_message(exc))}); check OPENAI_API_KEY"
        )

    def check(self) -> None:
        """Fail fast, before any work, when the endpoint or the model is not usable.

        Lists the server's models (when it offers the list) and sends one 1-token request;
        with ``logprobs="auto"`` that request also finds out whether logprobs are offered
        (``supports_logprobs``). Raises :class:`BackendError` with a readable message.
        """
        openai = self._openai
        client = self._client.with_options(timeout=min(self.timeout, 15.0), max_retries=1)
        where = self.base_url
        try:
            names = [m.id for m in client.models.list()]
        except openai.APIConnectionError as exc:
            raise BackendError(
                f"cannot reach the endpoint {where} ({type(exc).__name__}: "
                f"{self._scrub_key(str(exc.__cause__ or exc))}); is the server running and "
                "does the URL end in /v1?"
            ) from None
        except openai.AuthenticationError as exc:
            raise self._key_refused(exc) from None
        except openai.APIStatusError as exc:
            # Some servers have no model list (404/405); the probe below still checks.
            logger.debug("model list unavailable at %s: %s", where, exc.status_code)
            names = None
        except Exception as exc:  # a list the client could not read: the probe still checks
            logger.debug("unreadable model list at %s: %s", where, exception_text(exc))
            names = None
        if names is not None and self.model not in names:
            close = difflib.get_close_matches(self.model, names, n=5, cutoff=0.3) or names[:10]
            raise BackendError(
                f"model {self.model!r} is not served at {where}; "
                f"available: {', '.join(close) or '(none)'}"
                + (f" (and {len(names) - len(close)} more)" if len(names) > len(close) else "")
            )
        params = self._base_params(PROBE_PROMPT, None)
        params[self._token_param] = 1
        if self.logprobs is not False:
            params.update(logprobs=True, top_logprobs=min(self.top_logprobs, 5))
        problem = ""
        for _attempt in range(_PROBE_ATTEMPTS):
            try:
                resp = self._create(client, params)
            except openai.APIConnectionError as exc:
                raise BackendError(
                    f"cannot reach the endpoint {where} ({self._scrub_key(str(exc.__cause__ or exc))})"
                ) from None
            except openai.NotFoundError as exc:
                raise BackendError(
                    f"model {self.model!r} is unknown at {where} (404: "
                    f"{self._scrub_key(status_message(exc))})"
                ) from None
            except openai.AuthenticationError as exc:
                raise self._key_refused(exc) from None
            except openai.BadRequestError as exc:
                message = self._scrub_key(status_message(exc))
                if self.logprobs is not False and "logprob" in message.lower():
                    if self.logprobs is True:
                        raise BackendError(
                            f"{where} does not offer logprobs for {self.model!r} ({message}); use "
                            "logprobs='auto' or sampling"
                        ) from None
                    self.supports_logprobs = False
                    return
                raise BackendError(
                    f"{where} rejected a test request for {self.model!r}: {message}"
                ) from None
            except openai.APIStatusError as exc:
                raise BackendError(
                    f"{where} answered a test request with HTTP {exc.status_code}: "
                    f"{self._scrub_key(status_message(exc))}"
                ) from None
            except openai.APITimeoutError:
                raise BackendError(
                    f"{where} did not answer a 1-token test request in time"
                ) from None
            except Exception as exc:  # a 200 the client could not decode
                problem = self._scrub_key(exception_text(exc))
                continue
            try:
                content = logprob_entries(read_choices(resp)[0])
                if content:
                    token_logprob(content[0])
            except Exception as exc:
                problem = self._scrub_key(
                    str(exc) if isinstance(exc, Malformed) else exception_text(exc)
                )
                continue
            break
        else:
            raise BackendError(
                f"{where} answered {_PROBE_ATTEMPTS} one-token test requests with replies that "
                f"are not chat completions ({problem}); is it an OpenAI-compatible "
                "chat-completions endpoint (a URL ending in /v1)?"
            )
        if self.logprobs is not False:
            has = bool(content)
            if not has and self.logprobs is True:
                raise BackendError(
                    f"{where} returned no logprobs for {self.model!r}; use logprobs='auto' "
                    "(the runners then sample answers instead)"
                )
            self.supports_logprobs = has

    def label_probs(
        self, requests: Sequence[LabelRequest], progress: Progress | None = None
    ) -> list[OpenAILabelResult]:
        """First-token probabilities of each request's labels, in request order.

        Each request is sent as one user message (``prefix + prompt``) with ``max_tokens=1``,
        ``logprobs=True`` and ``top_logprobs``. ``decoder_prefix`` does not apply to chat
        endpoints and is ignored. Raises :class:`BackendError` when logprobs are switched off
        or the server is known not to offer them.
        """
        return collect(self.iter_label_probs(requests), len(requests), progress)

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """One sampled answer per request, in request order (see :meth:`iter_generate`)."""
        return collect(self.iter_generate(requests), len(requests), progress)

    # -- streaming variants: results as they arrive, so a run store can save each at once ----
    def iter_label_probs(
        self,
        requests: Sequence[LabelRequest],
        cancel: threading.Event | None = None,
        *,
        sink: Sink | None = None,
    ) -> Iterator[tuple[int, OpenAILabelResult]]:
        """Yield ``(request index, result)`` as answers arrive (any order).

        When ``cancel`` is set, requests not yet sent are dropped (not yielded) and failed
        requests are not retried (they come back with a ``cancelled:`` error); answers in
        flight are still yielded (they are paid for). ``sink(index, result)`` is called in
        the thread that read the answer, before it is yielded — a run store keeps each answer
        there, so a slow or killed consumer loses nothing that arrived. When the consumer
        stops early (an exception, ``close()``), requests in flight are waited for (up to the
        timeout) and go to ``sink``.
        """
        if self.logprobs is False or self.supports_logprobs is False:
            raise BackendError(
                f"{self.base_url} gives no logprobs for {self.model!r} (or they are switched "
                "off), so label probabilities cannot be read; sample answers instead"
            )
        if self.label_token_ids:
            for i, req in enumerate(requests):  # every label has an id, before any call
                self._label_ids(req, f"request {i}")
        units = [([i], req) for i, req in enumerate(requests)]
        failed = lambda error: OpenAILabelResult(error=error)  # noqa: E731
        yield from self._run_units(units, self._label_unit, cancel, sink, failed)

    def iter_generate(
        self,
        requests: Sequence[GenerateRequest],
        cancel: threading.Event | None = None,
        *,
        sink: Sink | None = None,
    ) -> Iterator[tuple[int, GenerateResult]]:
        """Yield ``(request index, result)`` as answers arrive (any order).

        Requests that differ only in ``sample`` share one call with ``n`` when the server
        supports it; otherwise each sample is its own call with seed ``decoding.seed + sample``.
        ``cancel`` and ``sink`` as in :meth:`iter_label_probs`.
        """
        groups: dict[tuple, list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault((req.prompt, req.system, req.decoding), []).append(i)
        units = []
        for indices in groups.values():
            indices = sorted(indices, key=lambda i: requests[i].sample)
            if self.supports_n is False or len(indices) == 1:
                units.extend(([i], requests[i]) for i in indices)
            else:
                units.append((indices, [requests[i] for i in indices]))
        failed = lambda error: GenerateResult(None, error)  # noqa: E731
        yield from self._run_units(units, self._generate_unit, cancel, sink, failed)

    def label_params(self, req: LabelRequest) -> dict:
        """The request body for ``req``'s label probabilities (live calls and batch files):
        one token, logprobs with ``top_logprobs``; with ``label_token_ids`` also vLLM's
        ``logprob_token_ids`` (the ids of the request's labels)."""
        params = self._base_params(req.prefix + req.prompt, req.system)
        params.update({self._token_param: 1, "logprobs": True, "top_logprobs": self.top_logprobs})
        if self.label_token_ids:
            params["logprob_token_ids"] = self._label_ids(req)
        return params

    def _label_ids(self, req: LabelRequest, where: str = "a request") -> list[int]:
        ids = self.label_token_ids or {}
        missing = [lab for lab in req.labels if lab not in ids]
        if missing:
            raise BackendError(
                f"{where}: label(s) {missing} have no token id in label_token_ids "
                f"({sorted(ids)}); add them or leave label_token_ids out"
            )
        return [ids[lab] for lab in req.labels]

    def _label_unit(self, req: LabelRequest, stop=None) -> OpenAILabelResult:
        params = self.label_params(req)
        extra = {k: params.pop(k) for k in VLLM_FIELDS if k in params}
        if extra:
            params["extra_body"] = extra
        result, error = self._call(params, lambda resp: self._label_result(resp, req), stop)
        return OpenAILabelResult(error=error) if error is not None else result

    def _label_result(self, resp, req: LabelRequest) -> OpenAILabelResult:
        result = label_result(resp, req.labels, where=self.base_url, model=self.model)
        if self.logprobs == "auto" and (result.error or "").startswith("no-logprobs"):
            self.supports_logprobs = False
        return result

    def _sampling_params(self, req: GenerateRequest, n: int) -> dict:
        params = self._base_params(req.prompt, req.system)
        dec = req.decoding
        params.update(
            {
                self._token_param: int(dec.max_new_tokens),
                "temperature": float(dec.temperature),
                "top_p": float(dec.top_p),
            }
        )
        if dec.seed is not None:
            params["seed"] = int(dec.seed) + int(req.sample)
        if n > 1:
            params["n"] = n
        return params

    def _choice_result(self, choice, counts: dict) -> GenerateResult:
        return choice_result(choice, counts)

    def _generate_one(self, req: GenerateRequest, stop=None) -> GenerateResult:
        def read(resp):
            return self._choice_result(read_choices(resp)[0], usage_counts(resp, 1))

        result, error = self._call(self._sampling_params(req, 1), read, stop)
        return GenerateResult(None, error) if error is not None else result

    def _generate_unit(self, payload, stop=None) -> GenerateResult | list[GenerateResult]:
        if isinstance(payload, GenerateRequest):
            return self._generate_one(payload, stop)
        reqs: list[GenerateRequest] = payload
        if self.supports_n is False:
            return [self._generate_one(r, stop) for r in reqs]

        def read(resp):
            choices = read_choices(resp)
            counts = usage_counts(resp, len(choices))
            return [self._choice_result(c, counts) for c in choices[: len(reqs)]]

        # one call for all samples; its seed is that of the lowest sample index
        out, error = self._call(self._sampling_params(reqs[0], len(reqs)), read, stop)
        if error is not None:
            return [GenerateResult(None, error) for _ in reqs]
        if len(out) < len(reqs):
            if self.use_n is True:
                logger.warning("%s returned %d of %d choices", self.base_url, len(out), len(reqs))
            self.supports_n = False
        else:
            self.supports_n = True
        # the server ignored n: ask for the missing samples one by one
        out.extend(self._generate_one(r, stop) for r in reqs[len(out) :])
        return out


def _check_label_token_ids(ids) -> dict[str, int] | None:
    """``ids`` as a dict of label word to token id, or None; ValueError naming a bad entry."""
    if ids is None:
        return None
    if not isinstance(ids, Mapping) or not ids:
        raise ValueError(
            "label_token_ids must be a non-empty mapping of label word to token id, e.g. "
            f"{{'A': 32, 'B': 33}}; got {ids!r}"
        )
    for label, tid in ids.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"label_token_ids: label {label!r} is not a non-empty string")
        if isinstance(tid, bool) or not isinstance(tid, int) or tid < 0:
            raise ValueError(f"label_token_ids: token id {tid!r} of {label!r} is not an int >= 0")
    return dict(ids)


__all__ = ["PROBE_PROMPT", "VLLM_FIELDS", "OpenAIBackend", "OpenAILabelResult"]
