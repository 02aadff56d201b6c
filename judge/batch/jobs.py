"""Batch runs of a judge plan: write the JSONL, submit, poll, import into the run store.

The calls of a plan (:mod:`judge.runs.plan`) that the run store has no answer for, and that no
open batch asks already, become one batch; its answers are imported with the keys, reading
and accounting of a live run (:mod:`judge.runs.execute`), so a run, a batch and a run again share
their answers and never pay twice for one. What a batch does not bring back (expired,
cancelled, failed requests, lines that cannot be read) stays pending for the next batch or
run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.backends.base import BackendError
from judge.backends.openai_compat.batch_api import (
    TERMINAL,
    BatchService,
    batch_status,
    request_body,
    request_line,
)
from judge.batch.reading import failure_reasons, read_files
from judge.runs.plan import Plan, backend_identity
from judge.store import RunStore, comparisons_from_rows, ratings_from_rows
from judge.store.batches import (
    BatchRecord,
    keys_in_open_batches,
    list_batches,
    load_batch,
    new_batch_id,
    save_batch,
)

#: metadata entry that names the local batch at the endpoint (finds a batch whose
#: submission was interrupted before its id was recorded)
META_KEY = "judgescope_batch"
#: the OpenAI Batch API's limits per batch: 50,000 requests, a 200 MB input file
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000


class BatchError(ValueError):
    """A batch cannot be written, submitted or imported; the text says what to do."""


@dataclass
class BatchWrite:
    """A written batch: its record and the JSONL, with what was left out and why."""

    record: BatchRecord | None
    jsonl: str
    n_calls: int  # distinct calls of the plan
    n_cached: int  # answered in the store already
    n_in_open_batches: int  # asked by another open batch
    n_left: int = 0  # pending calls beyond this batch's limits: the next batch

    @property
    def n_lines(self) -> int:
        return 0 if self.record is None else self.record.n_requests


@dataclass
class BatchImport:
    """What importing a batch's output did, counted as a live run counts its calls."""

    batch_id: str
    n_lines: int = 0
    n_answered: int = 0  # stored as ok
    n_answer_errors: int = 0  # refusals, filtered, empty, no label: kept, not asked again
    failures: dict[str, int] = field(default_factory=dict)  # stored failed, asked again
    n_not_run: int = 0  # expired / cancelled: pending
    n_missing: int = 0  # requests with no line at all: pending
    n_prompt_tokens: int = 0
    n_completion_tokens: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        return sum(self.failures.values())

    @property
    def n_pending(self) -> int:
        """Requests of the batch left for the next batch or run (failed ones included)."""
        return self.n_failed + self.n_not_run + self.n_missing

    def summary(self) -> dict:
        return {
            "batch_id": self.batch_id,
            "n_lines": self.n_lines,
            "n_answered": self.n_answered,
            "n_answer_errors": self.n_answer_errors,
            "n_failed": self.n_failed,
            "failures": dict(self.failures),
            "n_not_run": self.n_not_run,
            "n_missing": self.n_missing,
            "n_pending": self.n_pending,
            "n_prompt_tokens": self.n_prompt_tokens,
            "n_completion_tokens": self.n_completion_tokens,
            "problems": list(self.problems),
        }


def _check_backend(backend) -> None:
    if getattr(backend, "kind", None) != "openai" or not hasattr(backend, "_base_params"):
        raise BatchError(
            "batch runs need an OpenAI-compatible backend (judge.backends.openai_compat."
            f"OpenAIBackend); got {type(backend).__name__}"
        )


def write_batch(
    plan: Plan,
    backend,
    store: RunStore,
    *,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> BatchWrite:
    """The batch JSONL of the calls of ``plan`` still to make, recorded in ``store``.

    Left out: calls answered in the store (failures are asked again) and calls of open
    batches. ``custom_id`` is the run-store key; the body is the request a live run sends.
    The run is recorded (``store.start_run``) so its table can be exported later. Returns a
    :class:`BatchWrite` whose ``record`` is None when nothing is left to ask. A batch holds
    at most ``max_requests`` lines and ``max_bytes`` of JSONL (the Batch API's limits); the
    calls beyond them go into the next batch (``n_left``).
    """
    _check_backend(backend)
    keys = list(plan.requests)
    answered = store.get_many(keys)
    busy = keys_in_open_batches(store) - set(answered)
    todo = [k for k in keys if k not in answered and k not in busy]
    store.start_run(plan.run_id, plan.settings, plan.items)
    out = BatchWrite(None, "", len(keys), len(answered), len(busy & set(keys)))
    if not todo:
        return out
    groups: dict[tuple | None, list[str]] = {}
    lines: list[str] = []
    size = 0
    for key in todo:
        req = plan.requests[key]
        line = request_line(key, request_body(backend, req))
        size += len(line.encode("utf-8")) + 1
        if lines and (len(lines) >= max_requests or size > max_bytes):
            break
        labels = tuple(req.labels) if plan.request_kind == "label" else None
        groups.setdefault(labels, []).append(key)
        lines.append(line)
    out.n_left = len(todo) - len(lines)
    rec = BatchRecord(
        batch_id=new_batch_id(),
        run_id=plan.run_id,
        model=backend_identity(backend)[1],
        base_url=backend.base_url,
        request_kind=plan.request_kind,
        groups=[[list(lb) if lb is not None else None, ks] for lb, ks in groups.items()],
        n_requests=len(lines),
    )
    out.record = save_batch(store, rec)
    out.jsonl = "\n".join(lines) + "\n"
    return out


def submit_batch(written: BatchWrite, backend, store: RunStore) -> BatchRecord:
    """Upload the written JSONL and create the batch at ``backend``'s endpoint.

    The record says "submitting" before anything is sent, and carries the endpoint's batch
    id as soon as it is known; a submission cut short is found again by :func:`poll_batch`
    through the batch's metadata, so it is never submitted twice.
    """
    rec = written.record
    if rec is None:
        raise BatchError("nothing to submit: every call is answered or in an open batch")
    if rec.status != "written":
        raise BatchError(f"batch {rec.batch_id} was submitted already ({rec.status})")
    service = BatchService(backend)
    rec.status = "submitting"
    save_batch(store, rec)
    rec.input_file_id = service.upload(written.jsonl, f"{rec.batch_id}.jsonl")
    save_batch(store, rec)
    remote = service.create(rec.input_file_id, {META_KEY: rec.batch_id, "run_id": rec.run_id})
    return _update(store, rec, remote)


def _update(store, rec: BatchRecord, remote) -> BatchRecord:
    st = batch_status(remote)
    rec.remote_id = st["remote_id"]
    rec.status = st["status"]
    rec.counts = {k: st[k] for k in ("total", "completed", "failed")}
    rec.output_file_id = st["output_file_id"]
    rec.error_file_id = st["error_file_id"]
    rec.message = st["message"] or None
    return save_batch(store, rec)


def poll_batch(batch_id: str, backend, store: RunStore) -> BatchRecord:
    """The batch's status and request counts from the endpoint, recorded in ``store``."""
    rec = load_batch(store, batch_id)
    if not rec.is_open or rec.status == "written":
        return rec
    service = BatchService(backend)
    if rec.remote_id is None:  # cut short while submitting: did the endpoint get it?
        remote = service.find(META_KEY, rec.batch_id)
        if remote is None:
            rec.status, rec.is_open = "written", False
            rec.message = "the submission was interrupted before the endpoint had it"
            return save_batch(store, rec)
        return _update(store, rec, remote)
    return _update(store, rec, service.retrieve(rec.remote_id))


def collect_batch(batch_id: str, backend, store: RunStore) -> BatchImport | None:
    """Poll; once the batch has ended, download its output and error files and import them.

    None while the batch is still running.
    """
    rec = poll_batch(batch_id, backend, store)
    if not rec.is_open:
        raise BatchError(f"batch {rec.batch_id} is closed ({rec.status}); write a new one")
    if rec.status not in TERMINAL:
        return None
    service = BatchService(backend)
    files = []
    if rec.output_file_id:
        files.append(("output", service.content(rec.output_file_id)))
    if rec.error_file_id:
        files.append(("errors", service.content(rec.error_file_id)))
    return import_batch(batch_id, store, files, allow_empty=True)


def import_batch(
    batch_id: str, store: RunStore, files, *, allow_empty: bool = False
) -> BatchImport:
    """Import output (and error) files ``[(name, text), ...]`` of a batch into ``store``.

    Lines that cannot be read are listed in ``problems`` (file and line named) and their
    requests stay pending. When no line of a non-empty upload can be read, nothing is
    stored and :class:`BatchError` says why (the batch stays open: import the right file).
    """
    rec = load_batch(store, batch_id)
    if not rec.is_open:
        raise BatchError(f"batch {rec.batch_id} was imported or given up already ({rec.status})")
    if isinstance(files, str):
        files = [("output", files)]
    parsed = read_files(
        list(files), rec.labels_of(), rec.request_kind, where=rec.base_url, model=rec.model
    )
    if parsed.n_lines and not parsed.rows and not parsed.not_run:
        shown = "; ".join(parsed.problems[:3])
        more = f" (and {len(parsed.problems) - 3} more)" if len(parsed.problems) > 3 else ""
        raise BatchError(f"no line of the file could be imported: {shown}{more}")
    if not parsed.n_lines and not allow_empty:
        raise BatchError("the file is empty: no batch output lines to import")
    # a failure never replaces an answer another run or batch stored meanwhile
    have = store.get_many(list(parsed.rows))
    rows = [r for k, r in parsed.rows.items() if not (r.status == "failed" and k in have)]
    store.put_many(rows)
    out = BatchImport(rec.batch_id, n_lines=parsed.n_lines, problems=list(parsed.problems))
    out.n_answered = sum(r.status == "ok" for r in rows)
    out.n_answer_errors = sum(r.status == "answer-error" for r in rows)
    out.failures = failure_reasons(rows)
    out.n_not_run = len(parsed.not_run)
    out.n_missing = len(set(rec.keys) - set(parsed.rows) - parsed.not_run)
    out.n_prompt_tokens = sum(r.n_prompt_tokens or 0 for r in rows)
    out.n_completion_tokens = sum(r.n_completion_tokens or 0 for r in rows)
    rec.is_open = False
    rec.status = "imported" if rec.status in ("written", "completed") else rec.status
    rec.message = "; ".join(parsed.problems[:3]) or rec.message
    save_batch(store, rec)
    return out


def give_up_batch(batch_id: str, store: RunStore, backend=None) -> BatchRecord:
    """Close a batch without importing it (cancelled at the endpoint when ``backend`` is
    given and it was submitted); its unanswered calls are pending again."""
    rec = load_batch(store, batch_id)
    if backend is not None and rec.remote_id and rec.status not in TERMINAL:
        _update(store, rec, BatchService(backend).cancel(rec.remote_id))
    rec.is_open = False
    rec.message = "given up"
    return save_batch(store, rec)


def run_table(plan: Plan, store: RunStore):
    """The plan's canonical table from the store (what a live run of the plan returns)."""
    rows = store.get_many([it.key for it in plan.items], include_failed=True)
    to_table = comparisons_from_rows if plan.kind == "pairwise" else ratings_from_rows
    return to_table(plan.items, rows, plan.settings)


def pending_count(plan: Plan, store: RunStore) -> dict:
    """Calls of ``plan``: answered, in open batches, still to ask."""
    keys = set(plan.requests)
    answered = set(store.get_many(list(keys)))
    busy = (keys_in_open_batches(store) & keys) - answered
    return {
        "n_calls": len(keys),
        "n_answered": len(answered),
        "n_in_open_batches": len(busy),
        "n_to_ask": len(keys - answered - busy),
    }


__all__ = [
    "META_KEY",
    "BackendError",
    "BatchError",
    "BatchImport",
    "BatchRecord",
    "BatchWrite",
    "collect_batch",
    "give_up_batch",
    "import_batch",
    "list_batches",
    "load_batch",
    "pending_count",
    "poll_batch",
    "run_table",
    "submit_batch",
    "write_batch",
]
