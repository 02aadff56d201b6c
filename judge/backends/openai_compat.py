"""Backend for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, TGI, Ollama,
llama.cpp server), through the official ``openai`` client.

Probabilities come from ``logprobs``/``top_logprobs`` of the first answer token when the server
offers them; otherwise the runners sample text. Requests run concurrently in a thread pool
(at most ``max_concurrency`` at a time); rate limits (429), server errors (5xx), timeouts and
dropped connections are retried with exponential backoff and jitter, honouring Retry-After,
and so are 200 replies that are no chat completion (not JSON, ``text/plain``, no choices, a
null message, malformed logprobs). A request that still fails, is refused, or is answered
with nothing comes back as a result with ``error`` set — never as an exception that ends the
run, never as a made-up score.

The API key comes from the argument, the ``OPENAI_API_KEY`` environment variable or Streamlit
secrets, in that order. It lives only inside the ``openai`` client object: it is not kept on
the backend, not returned by :meth:`OpenAIBackend.describe` and scrubbed from error texts, so it
never reaches the run store, logs or exported tables.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit, urlunsplit

from judge.backends.base import (
    BackendError,
    GenerateRequest,
    GenerateResult,
    LabelRequest,
    LabelResult,
    Progress,
    Sink,
)

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PROBE_PROMPT = "Reply with the single letter A. (judgescope-probe)"
# Placeholder for local servers that ignore the key (vLLM, Ollama, llama.cpp); the openai
# client refuses to start without one.
NO_KEY = "not-needed"
_RETRY_STATUS = {408, 409, 429}  # plus every 5xx
_MAX_RETRY_AFTER_S = 300.0
_PROBE_ATTEMPTS = 3  # malformed replies to the one-token probe before check() gives up
# Error texts start with a code: "refusal", "content_filter", "empty" and "no-label" are
# answers the model really gave (kept, not asked again); "http-NNN", "timeout",
# "connection", "bad-response" (a reply that is no chat completion), "no-choices",
# "no-logprobs" and "exception" are failures asked again on the next run
# (judge.store.ANSWER_ERROR_CODES); "cancelled" marks a request stopped by a cancel before
# it had an answer (not stored).


@dataclass
class OpenAILabelResult(LabelResult):
    """:class:`LabelResult` plus what the server sent, so the run store can keep it."""

    raw: str | None = None  # JSON: the answer token and the top logprobs
    n_prompt_tokens: int | None = None
    n_completion_tokens: int | None = None


# ---------------------------------------------------------------------------------------
# API key and endpoint
# ---------------------------------------------------------------------------------------
def resolve_api_key(api_key: str | None = None, base_url: str | None = None) -> str:
    """The key to use: the argument, else ``OPENAI_API_KEY``.

    The app reads Streamlit secrets in the page layer and passes the key in. A custom ``base_url`` (a local vLLM/Ollama server) may need no key; a placeholder is
    used then. Raises :class:`BackendError` when OpenAI itself is the endpoint and no key
    is found.
    """
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url:
        return NO_KEY
    raise BackendError(
        "no OpenAI API key: set the OPENAI_API_KEY environment variable (in the app: or put "
        "OPENAI_API_KEY in .streamlit/secrets.toml), or pass api_key=...; for a local OpenAI-compatible "
        "server pass its base_url"
    )


def public_url(url: str) -> str:
    """``url`` without user:password, query or fragment (safe to store and show)."""
    parts = urlsplit(str(url))
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def openai_describe(model: str, base_url: str | None = None) -> dict:
    """What :meth:`OpenAIBackend.describe` returns for ``model`` at ``base_url``, without a client
    (estimates look up cached answers with it)."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return {"kind": "openai", "model": model, "base_url": public_url(url)}


_KEYLIKE = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}")


def _scrub(text: str, secret: str | None) -> str:
    """Remove the key (and anything that looks like one, e.g. OpenAI's masked echo)."""
    if secret and secret != NO_KEY:
        text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


def _retry_after(exc) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, then Retry-After), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            logger.debug("unreadable retry-after-ms header %r", ms)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:  # an HTTP date
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError, IndexError):
            logger.debug("unreadable Retry-After header %r", value)
            return None


def _status_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    return getattr(exc, "message", None) or str(exc)


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


# ---------------------------------------------------------------------------------------
# Backend
# ---------------------------------------------------------------------------------------
class OpenAIBackend:
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
        self._scrub_key = lambda text, _k=key: _scrub(text, _k)
        self._client = openai.OpenAI(
            api_key=key,
            base_url=explicit_url or DEFAULT_BASE_URL,
            timeout=self.timeout,
            max_retries=0,  # retries are ours: counted, jittered, Retry-After honoured
        )
        del key
        self.base_url = public_url(str(self._client.base_url))
        self.n_retries = 0  # total retries made (for reports)

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r})"

    # -- interface -----------------------------------------------------------------------
    def describe(self) -> dict:
        """Identity for cache keys: kind, model and endpoint (never the key, never timeouts)."""
        return openai_describe(self.model, self.base_url)

    def count_tokens(self, text: str) -> int:
        """Approximate token count (about 4 characters a token for English BPE vocabularies)."""
        return max(1, round(len(text) / 4))

    def _key_refused(self, exc) -> BackendError:
        return BackendError(
            f"the endpoint {self.base_url} refused the API key (401: "
            f"{self._scrub_key(_status_message(exc))}); check OPENAI_API_KEY"
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
            logger.debug("unreadable model list at %s: %s", where, _exception_text(exc))
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
                    f"{self._scrub_key(_status_message(exc))})"
                ) from None
            except openai.AuthenticationError as exc:
                raise self._key_refused(exc) from None
            except openai.BadRequestError as exc:
                message = self._scrub_key(_status_message(exc))
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
                    f"{self._scrub_key(_status_message(exc))}"
                ) from None
            except openai.APITimeoutError:
                raise BackendError(
                    f"{where} did not answer a 1-token test request in time"
                ) from None
            except Exception as exc:  # a 200 the client could not decode
                problem = self._scrub_key(_exception_text(exc))
                continue
            try:
                choice = read_choices(resp)[0]
                logprobs = _field(choice, "logprobs")
                content = _field(logprobs, "content") if logprobs is not None else None
                if content:
                    _token_logprob(content[0])
            except Exception as exc:
                problem = self._scrub_key(
                    str(exc) if isinstance(exc, Malformed) else _exception_text(exc)
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
        return _collect(self.iter_label_probs(requests), len(requests), progress)

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """One sampled answer per request, in request order (see :meth:`iter_generate`)."""
        return _collect(self.iter_generate(requests), len(requests), progress)

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

    # -- internals -----------------------------------------------------------------------
    def _run_units(self, units, fn, cancel, sink, failed) -> Iterator[tuple[int, object]]:
        """Run ``fn(payload, stop)`` for each unit in the pool; yield (index, result) pairs.

        A unit never raises: any exception becomes a failed result (``exception:``) for each
        of its requests. Results go to ``sink`` in the worker thread first.
        """
        if not units:
            return
        stop = _Stop(cancel)  # no more retries once the run is cancelled or abandoned

        def work(indices, payload):
            if stop.is_set():
                return None  # queued before a cancel: never sent, nothing to report
            try:
                results = fn(payload, stop)
                if not isinstance(results, list):
                    results = [results]
                if len(results) != len(indices):
                    raise RuntimeError(f"{len(results)} results for {len(indices)} requests")
            except Exception as exc:
                logger.warning("request to %s failed: %s", self.base_url, exc, exc_info=exc)
                error = f"exception: {self._scrub_key(_exception_text(exc))}"
                results = [failed(error) for _ in indices]
            if sink is not None:
                for index, result in zip(indices, results, strict=True):
                    sink(index, result)  # stored before anything else can happen
            return results

        pool = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="openai")
        pending: dict[Future, list[int]] = {}
        next_unit = 0
        try:
            while next_unit < len(units) or pending:
                # keep a bounded number queued so a cancel drops the rest quickly
                while (
                    next_unit < len(units)
                    and len(pending) < 2 * self.max_concurrency
                    and not (cancel is not None and cancel.is_set())
                ):
                    indices, payload = units[next_unit]
                    pending[pool.submit(work, indices, payload)] = indices
                    next_unit += 1
                if cancel is not None and cancel.is_set():
                    stop.set()
                    next_unit = len(units)
                if not pending:
                    break
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    indices = pending.pop(fut)
                    results = fut.result()
                    if results is not None:
                        yield from zip(indices, results, strict=True)
        finally:
            stop.set()
            running = [fut for fut in pending if not fut.cancel()]
            if running:
                # answers in flight are paid for: let them reach the sink (no retries now)
                wait(running, timeout=self.timeout + 5.0)
            pool.shutdown(wait=False, cancel_futures=True)

    def _base_params(self, content: str, system: str | None) -> dict:
        messages = []
        system = system if system is not None else self.system
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": content})
        return {"model": self.model, "messages": messages}

    def _create(self, client, params: dict):
        """One call; switches to ``max_completion_tokens`` once if the model demands it."""
        openai = self._openai
        try:
            return client.chat.completions.create(**params)
        except openai.BadRequestError as exc:
            if "max_completion_tokens" in _status_message(exc) and "max_tokens" in params:
                self._token_param = "max_completion_tokens"
                params = dict(params)
                params["max_completion_tokens"] = params.pop("max_tokens")
                return client.chat.completions.create(**params)
            raise

    def _pause(self, seconds: float, stop: _Stop | None) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)

    def _call(self, params: dict, read: Callable, stop: _Stop | None = None):
        """Call with retries and read the reply with ``read(response)``.

        Returns ``(read(response), None)`` or ``(None, error text)``. A reply that cannot be
        read — not JSON, not a chat completion, no choices, a null message, malformed
        logprobs: anything ``read`` raises on — is a server fault like a 5xx: retried with
        backoff, then reported (``bad-response:`` / ``no-choices:``), never taken as an answer.
        Once ``stop`` is set no retry is made (``cancelled:``).
        """
        openai = self._openai
        attempt = 0
        while True:
            wait_s = None
            try:
                resp = self._create(self._client, params)
            except openai.APIStatusError as exc:
                status = exc.status_code
                message = self._scrub_key(_status_message(exc))
                if status not in _RETRY_STATUS and status < 500:
                    return None, f"http-{status}: {message}"
                reason = f"http-{status}: {message}"
                wait_s = _retry_after(exc)
            except openai.APITimeoutError:
                reason = f"timeout: no answer within {self.timeout:g} s"
            except openai.APIConnectionError as exc:
                reason = f"connection: {self._scrub_key(str(exc.__cause__ or exc))}"
            except Exception as exc:  # a 200 the client could not decode (not JSON, bad UTF-8)
                reason = f"bad-response: {self._scrub_key(_exception_text(exc))}"
            else:
                try:
                    return read(resp), None
                except Malformed as exc:
                    reason = self._scrub_key(str(exc))
                except Exception as exc:
                    reason = f"bad-response: {self._scrub_key(_exception_text(exc))}"
            if stop is not None and stop.is_set():
                return None, f"cancelled: {reason}"
            if attempt >= self.max_retries:
                return None, f"{reason} (gave up after {attempt + 1} attempts)"
            if wait_s is None:
                with self._rng_lock:
                    jitter = 0.5 + self._rng.random()
                wait_s = min(self.backoff_max, self.backoff_base * 2.0**attempt) * jitter
            else:
                wait_s = min(wait_s, _MAX_RETRY_AFTER_S)
            logger.info("retrying %s in %.2f s (%s)", self.model, wait_s, reason)
            with self._rng_lock:
                self.n_retries += 1
            self._pause(wait_s, stop)
            if stop is not None and stop.is_set():
                return None, f"cancelled: {reason}"
            attempt += 1

    def _label_unit(self, req: LabelRequest, stop=None) -> OpenAILabelResult:
        params = self._base_params(req.prefix + req.prompt, req.system)
        params.update({self._token_param: 1, "logprobs": True, "top_logprobs": self.top_logprobs})
        result, error = self._call(params, lambda resp: self._label_result(resp, req), stop)
        return OpenAILabelResult(error=error) if error is not None else result

    def _label_result(self, resp, req: LabelRequest) -> OpenAILabelResult:
        choice = read_choices(resp)[0]
        counts = _usage_counts(resp, 1)
        logprobs = _field(choice, "logprobs")
        content = _field(logprobs, "content") if logprobs is not None else None
        if not content:
            refusal = _field(choice.message, "refusal")
            if refusal:
                return OpenAILabelResult(error=f"refusal: {refusal}", **counts)
            if _field(choice, "finish_reason") == "content_filter":
                return OpenAILabelResult(error="content_filter: the answer was filtered", **counts)
            if self.logprobs == "auto":
                self.supports_logprobs = False
            return OpenAILabelResult(
                error=f"no-logprobs: {self.base_url} returned no logprobs for {self.model!r}",
                **counts,
            )
        first = content[0]
        entries = list(_field(first, "top_logprobs") or [])
        entries.append(first)
        top = [_token_logprob(t) for t in entries]
        raw = json.dumps({"token": top[-1][0], "top": top}, ensure_ascii=False)
        probs, logprobs, bounded = label_probs_from_top(top, req.labels)
        if not probs:
            shown = ", ".join(repr(t) for t, _ in top[:5])
            return OpenAILabelResult(
                error=(
                    f"no-label: none of {', '.join(req.labels)} among the top "
                    f"{len(top)} first tokens ({shown}); ask for a one-word answer or sample"
                ),
                raw=raw,
                **counts,
            )
        if bounded:
            logger.debug("labels %s outside the top logprobs; bounded", bounded)
        return OpenAILabelResult(probs=probs, logprobs=logprobs, raw=raw, **counts)

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
        n_prompt, n_completion = counts["n_prompt_tokens"], counts["n_completion_tokens"]
        refusal = _field(choice.message, "refusal")
        text = _field(choice.message, "content")
        if text is not None and not isinstance(text, str):
            raise Malformed(f"bad-response: the answer text is a {type(text).__name__}")
        if refusal:
            return GenerateResult(None, f"refusal: {refusal}", n_prompt, n_completion)
        if _field(choice, "finish_reason") == "content_filter":
            return GenerateResult(
                None, "content_filter: the answer was filtered", n_prompt, n_completion
            )
        if not text or not text.strip():
            return GenerateResult(
                None, "empty: the model answered with nothing", n_prompt, n_completion
            )
        return GenerateResult(text, None, n_prompt, n_completion)

    def _generate_one(self, req: GenerateRequest, stop=None) -> GenerateResult:
        def read(resp):
            return self._choice_result(read_choices(resp)[0], _usage_counts(resp, 1))

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
            counts = _usage_counts(resp, len(choices))
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


class _Stop:
    """Set when a stream is abandoned, or when its caller's ``cancel`` event is set."""

    def __init__(self, cancel: threading.Event | None):
        self._own = threading.Event()
        self._cancel = cancel

    def set(self) -> None:
        self._own.set()

    def is_set(self) -> bool:
        return self._own.is_set() or (self._cancel is not None and self._cancel.is_set())

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True as soon as the stream is stopped."""
        end = time.monotonic() + seconds
        while not self.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self._own.wait(min(left, 0.1))
        return True


# ---------------------------------------------------------------------------------------
# reading replies: anything unexpected is a server fault, never an answer
# ---------------------------------------------------------------------------------------
class Malformed(ValueError):
    """A reply that is not a usable chat completion; the text starts with its error code."""


def _exception_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _field(obj, name: str):
    """``obj.name`` for the client's objects, ``obj[name]`` for plain dicts; None if absent."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def read_choices(resp) -> list:
    """The choices of a chat completion, each with a message; raises :class:`Malformed`.

    The client hands back a string for a non-JSON content type and builds objects from any
    JSON without checking it, so the shape is checked here: an object with a non-empty list
    of choices, each with a message object. Choices come back in ``index`` order when every
    choice has one.
    """
    if isinstance(resp, (str, bytes)):
        body = resp if isinstance(resp, str) else resp.decode("utf-8", "replace")
        snippet = " ".join(body.split())[:120]
        raise Malformed(f"bad-response: the reply is not a chat completion but text ({snippet!r})")
    choices = _field(resp, "choices")
    if choices is None:
        error = _field(resp, "error")
        if error:
            message = _field(error, "message") or error
            raise Malformed(f"bad-response: the server answered 200 with an error ({message})")
        raise Malformed(
            f"bad-response: the reply is not a chat completion (a {type(resp).__name__} "
            "without choices)"
        )
    if not isinstance(choices, list):
        raise Malformed(f"bad-response: choices is a {type(choices).__name__}, not a list")
    if not choices:
        raise Malformed("no-choices: the server returned no choices")
    for i, choice in enumerate(choices):
        if _field(choice, "message") is None:
            raise Malformed(f"bad-response: choice {i} has no message (null)")
    indices = [_field(choice, "index") for choice in choices]
    if all(isinstance(i, int) for i in indices):  # some servers leave the index out
        choices = [c for _, c in sorted(zip(indices, choices, strict=True), key=lambda t: t[0])]
    return choices


def _token_logprob(entry) -> tuple[str, float]:
    token, lp = _field(entry, "token"), _field(entry, "logprob")
    if not isinstance(token, str) or isinstance(lp, bool) or not isinstance(lp, (int, float)):
        raise Malformed(f"bad-response: malformed logprobs entry (token {token!r}, logprob {lp!r})")
    if math.isnan(lp) or lp > 1e-6:
        raise Malformed(
            f"bad-response: logprob {lp!r} for token {token!r} is not a log-probability"
        )
    return token, float(lp)


def _usage_counts(resp, n_choices: int) -> dict:
    usage = _field(resp, "usage")
    prompt, completion = _field(usage, "prompt_tokens"), _field(usage, "completion_tokens")
    prompt = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None
    if not isinstance(completion, int) or isinstance(completion, bool):
        completion = None
    elif n_choices > 1:
        completion = round(completion / n_choices)
    return {"n_prompt_tokens": prompt, "n_completion_tokens": completion}


def _collect(stream: Iterator[tuple[int, object]], n: int, progress: Progress | None) -> list:
    out: list = [None] * n
    for index, result in stream:
        out[index] = result
        if progress is not None:
            progress(1)
    return out
