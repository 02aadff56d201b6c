"""Carrying out a run's plan against a run store: every call made at most once, nothing lost.

:func:`execute` is what :func:`judge.runs.runners.run_pairwise` and ``run_absolute`` do once
their plan is made. What it guarantees:

- **Answers are kept before anything else happens.** A streaming backend hands each result to
  the store from the thread that read it (``sink``), one transaction per answer, before the
  run goes on; a killed run loses only requests still in flight, an interrupted or failing
  one (Ctrl-C, SIGTERM in the CLI, an exception) first waits for those and stores them.
- **A failed request is a result, not an exception.** Anything one request raises — inside
  the backend or from the backend to the runner — is stored as a ``failed`` result with its
  reason, asked again on the next run, and counted (``n_failed``, ``failures``). Only
  :class:`~judge.backends.base.BackendError` (the backend cannot work at all) and run-store
  errors end a run early.
- **No call is asked twice at once.** Keys are claimed in the store before they are asked
  (:mod:`judge.store.leases`); a second run on the same store skips what the first has claimed
  and waits for its answers (or takes over the claims of a run that stopped or died), so it ends
  with the full table without paying again.
"""

from __future__ import annotations

import inspect
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping

from judge.backends.base import (
    BackendError,
    GenerateResult,
    LabelResult,
    exception_text,
    scrub_secrets,
)
from judge.store import RunStore, StoredResult, error_code, result_row
from judge.store.leases import Lease

logger = logging.getLogger(__name__)

#: first and longest wait (seconds) between looks at calls another run is making
POLL_S = (0.05, 1.0)


def _exception_text(exc: BaseException) -> str:
    return scrub_secrets(exception_text(exc))


def _failed(kind: str, error: str):
    return LabelResult(error=error) if kind == "label" else GenerateResult(None, error)


def _accepts(fn: Callable, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _cancelled(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


class _Tally:
    """Calls resolved so far (cached, answered here or by another run) and the progress hook."""

    def __init__(self, n_total: int, progress: Callable[[int, int], None] | None):
        self.n_total = n_total
        self.n_done = 0
        self.progress = progress

    def add(self, n: int, *, report: bool = True) -> None:
        self.n_done += n
        if report and self.progress is not None:
            self.progress(self.n_done, self.n_total)


class _Asker:
    """Asks the backend for a list of claimed keys and stores each result as it comes."""

    def __init__(self, plan, backend, store: RunStore, lease: Lease, model_id: str):
        self.plan = plan
        self.backend = backend
        self.store = store
        self.lease = lease
        self.model_id = model_id
        self.kind = plan.request_kind

    def row(self, key: str, result) -> StoredResult:
        return result_row(key, self.kind, result, self.model_id)

    def ask(self, keys, cancel, chunk_size: int, tally: _Tally) -> int:
        """Results stored for ``keys`` (answers and failures); the rest stay unasked."""
        name = "iter_label_probs" if self.kind == "label" else "iter_generate"
        stream = getattr(self.backend, name, None)
        if stream is not None:
            return self._streamed(stream, keys, cancel, tally)
        return self._chunked(keys, cancel, chunk_size, tally)

    def _streamed(self, stream, keys, cancel, tally: _Tally) -> int:
        reqs = [self.plan.requests[k] for k in keys]
        stored: set[int] = set()
        lock = threading.Lock()

        def keep(i: int, result) -> None:
            if error_code(getattr(result, "error", None)) == "cancelled":
                self.lease.release([keys[i]])  # stopped before an answer: not a result
                return
            self.store.put_many([self.row(keys[i], result)])
            with lock:
                stored.add(i)

        takes_sink = _accepts(stream, "sink")
        results = stream(reqs, cancel, sink=keep) if takes_sink else stream(reqs, cancel)
        n = 0
        try:
            answers = iter(results)
            while True:
                try:
                    i, result = next(answers)
                except StopIteration:
                    break
                except (BackendError, sqlite3.Error):
                    raise
                except Exception as exc:
                    # the backend broke off: what it did not answer fails, asked again next run
                    error = f"exception: {_exception_text(exc)}"
                    logger.warning("the backend stopped answering (%s); the rest fail", error)
                    missing = [i for i in range(len(keys)) if i not in stored]
                    self.store.put_many(
                        self.row(keys[i], _failed(self.kind, error)) for i in missing
                    )
                    n += len(missing)
                    tally.add(len(missing))
                    break
                if not takes_sink:
                    keep(i, result)
                if i in stored:
                    n += 1
                    tally.add(1)  # the progress hook may raise: the answers are stored already
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # a generator waits for its requests in flight and stores them
        return n

    def _chunked(self, keys, cancel, chunk_size: int, tally: _Tally) -> int:
        call = self.backend.label_probs if self.kind == "label" else self.backend.generate
        n = 0
        for start in range(0, len(keys), chunk_size):
            if _cancelled(cancel):
                break
            chunk = keys[start : start + chunk_size]
            results = self._call_chunk(call, [self.plan.requests[k] for k in chunk])
            self.store.put_many(self.row(k, r) for k, r in zip(chunk, results, strict=True))
            n += len(chunk)
            tally.add(len(chunk))
        return n

    def _call_chunk(self, call, reqs) -> list:
        """``call(reqs)``; when it raises, each request alone, so one bad request fails alone."""
        try:
            results = list(call(reqs))
            if len(results) != len(reqs):
                raise RuntimeError(f"{len(results)} results for {len(reqs)} requests")
            return results
        except BackendError:
            raise
        except Exception as exc:
            if len(reqs) == 1:
                return [_failed(self.kind, f"exception: {_exception_text(exc)}")]
            logger.warning(
                "a batch of %d requests failed (%s); asking them one at a time",
                len(reqs),
                _exception_text(exc),
            )
            return [self._call_chunk(call, [r])[0] for r in reqs]


def execute(
    plan,
    backend,
    store: RunStore,
    *,
    model_id: str,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    chunk_size: int = 256,
    lease_s: float | None = None,
) -> dict:
    """Ask ``backend`` for every key of ``plan`` that ``store`` has no answer for.

    Keys another run on the same store is asking are waited for, not asked again; failures
    recorded before this call started are asked again, once. Returns the counts: n_calls,
    n_cached (answered before), n_called (results got here, failures included),
    n_by_others (answered meanwhile by another run), n_in_progress (still claimed by another
    run when a cancel stopped the wait) and cancelled.
    """
    keys = list(plan.requests)
    since = time.time()
    tally = _Tally(len(keys), progress)
    stats = {"n_calls": len(keys), "n_cached": 0, "n_called": 0, "n_by_others": 0}
    stats["n_in_progress"] = 0
    with Lease(store, lease_s) as lease:
        asker = _Asker(plan, backend, store, lease, model_id)
        claim = lease.claim(keys, since)
        stats["n_cached"] = len(claim.done)
        tally.add(len(claim.done))
        delay, told = POLL_S[0], False
        while True:
            if claim.mine:
                stats["n_called"] += asker.ask(claim.mine, cancel, chunk_size, tally)
            if not claim.held or _cancelled(cancel):
                break
            if not claim.mine:
                if not told:
                    told = True
                    logger.warning(
                        "%d of these calls are being made by another run on %s; waiting for "
                        "its answers instead of paying for them twice",
                        len(claim.held),
                        store.path,
                    )
                if cancel is not None:
                    cancel.wait(delay)
                else:
                    time.sleep(delay)
                delay = min(delay * 1.5, POLL_S[1])
                if _cancelled(cancel):
                    break
            claim = lease.claim(claim.held, since)
            if claim.done:
                stats["n_by_others"] += len(claim.done)
                tally.add(len(claim.done))
                delay = POLL_S[0]
        if _cancelled(cancel):
            stats["n_in_progress"] = len(claim.held)
    stats["cancelled"] = _cancelled(cancel) and tally.n_done < tally.n_total
    return stats


def failure_counts(keys, rows: Mapping[str, StoredResult]) -> Counter:
    """Failed calls among ``keys`` by error code (``http-503``, ``bad-response``, ...)."""
    counts: Counter = Counter()
    for key in dict.fromkeys(keys):
        row = rows.get(key)
        if row is not None and row.status == "failed":
            counts[error_code(row.error) or "error"] += 1
    return counts


__all__ = ["POLL_S", "execute", "failure_counts"]
