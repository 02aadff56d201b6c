"""Calls to a chat-completions endpoint: retries with backoff, and a bounded thread pool.

:class:`ChatClient` is the part of :class:`~judge.backends.openai_compat.OpenAIBackend` that
talks to the server: one call with retries (:meth:`ChatClient._call`: rate limits, 5xx,
timeouts, dropped connections and 200 replies that are no chat completion are retried with
exponential backoff and jitter, honouring Retry-After; others fail at once), and the pool
that runs many calls at once and hands each result to a sink in the thread that read it
(:meth:`ChatClient._run_units`). A request that still fails comes back as an error text, never
as an exception that ends the run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from email.utils import parsedate_to_datetime

from judge.backends.base import Progress, exception_text
from judge.backends.openai_compat.replies import Malformed

logger = logging.getLogger("judge.backends.openai_compat")
#: An answer slower than this share of the timeout warns: the next one may time out.
TIMEOUT_MARGIN = 0.8

_RETRY_STATUS = {408, 409, 429}  # plus every 5xx
_MAX_RETRY_AFTER_S = 300.0


def retry_after(exc) -> float | None:
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


def status_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    return getattr(exc, "message", None) or str(exc)


class Stop:
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


class ChatClient:
    """Retries and the request pool of :class:`~judge.backends.openai_compat.OpenAIBackend`.

    The backend sets what these methods read: ``model``, ``system``, ``base_url``,
    ``timeout``, ``max_retries``, ``max_concurrency``, ``backoff_base``, ``backoff_max``,
    ``_openai`` (the module), ``_client``, ``_token_param``, ``_rng`` and ``_rng_lock``,
    ``_sleep``, ``_scrub_key`` and the counter ``n_retries``.
    """

    def _run_units(self, units, fn, cancel, sink, failed) -> Iterator[tuple[int, object]]:
        """Run ``fn(payload, stop)`` for each unit in the pool; yield (index, result) pairs.

        A unit never raises: any exception becomes a failed result (``exception:``) for each
        of its requests. Results go to ``sink`` in the worker thread first.
        """
        if not units:
            return
        stop = Stop(cancel)  # no more retries once the run is cancelled or abandoned

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
                error = f"exception: {self._scrub_key(exception_text(exc))}"
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
            if "max_completion_tokens" in status_message(exc) and "max_tokens" in params:
                self._token_param = "max_completion_tokens"
                params = dict(params)
                params["max_completion_tokens"] = params.pop("max_tokens")
                return client.chat.completions.create(**params)
            raise

    def _pause(self, seconds: float, stop: Stop | None) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)

    def _note_reply(self, seconds: float | None) -> None:
        """Count a timed-out call (``seconds`` None) or the time of an answered one, and warn
        once when the timeout is below the server's reply time: a call the client gives up
        on may still be generated (and billed) by the server, and its retry is paid again."""
        with self._rng_lock:
            if seconds is None:
                self.n_timeouts += 1
            else:
                self.slowest_reply = max(self.slowest_reply, seconds)
            close = seconds is not None and seconds > TIMEOUT_MARGIN * self.timeout
            warn = (seconds is None or close) and not self._timeout_warned
            if warn:
                self._timeout_warned = True
        if warn:
            logger.warning(
                "%s: %s; the server may still generate (and bill) a call the client gave up "
                "on, and its retry is paid again. Slowest answer so far: %s. Raise the "
                "timeout (--timeout) above the server's reply time.",
                self.model,
                f"a call got no answer within the timeout of {self.timeout:g} s"
                if seconds is None
                else f"an answer took {seconds:.1f} s, close to the timeout of {self.timeout:g} s",
                f"{self.slowest_reply:.1f} s" if self.slowest_reply else "none yet",
            )

    def _call(self, params: dict, read: Callable, stop: Stop | None = None):
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
            started = time.monotonic()
            try:
                resp = self._create(self._client, params)
            except openai.APIStatusError as exc:
                status = exc.status_code
                message = self._scrub_key(status_message(exc))
                if status not in _RETRY_STATUS and status < 500:
                    return None, f"http-{status}: {message}"
                reason = f"http-{status}: {message}"
                wait_s = retry_after(exc)
            except openai.APITimeoutError:
                reason = f"timeout: no answer within {self.timeout:g} s"
                self._note_reply(None)
            except openai.APIConnectionError as exc:
                reason = f"connection: {self._scrub_key(str(exc.__cause__ or exc))}"
            except Exception as exc:  # a 200 the client could not decode (not JSON, bad UTF-8)
                reason = f"bad-response: {self._scrub_key(exception_text(exc))}"
            else:
                self._note_reply(time.monotonic() - started)
                try:
                    return read(resp), None
                except Malformed as exc:
                    reason = self._scrub_key(str(exc))
                except Exception as exc:
                    reason = f"bad-response: {self._scrub_key(exception_text(exc))}"
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


def collect(stream: Iterator[tuple[int, object]], n: int, progress: Progress | None) -> list:
    out: list = [None] * n
    for index, result in stream:
        out[index] = result
        if progress is not None:
            progress(1)
    return out


__all__ = ["ChatClient", "Stop", "collect", "retry_after", "status_message"]
