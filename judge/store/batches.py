"""Batch jobs recorded in the run store, so that no call is ever in two open batches.

A batch (:class:`BatchRecord`) holds the keys of the calls it asks, grouped with the label
words of each (what reading a label answer needs), and what is known of it remotely: the
batch id at the endpoint, its status and request counts, its output and error files. A batch
is *open* until its output has been imported or it is given up; the keys of open batches are
left out of new batches, the keys of closed ones are pending again when unanswered. The
table lives beside the results in the same SQLite file (created on first use).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field

from judge.store._sql import transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT NOT NULL,
    request_kind TEXT NOT NULL,
    groups TEXT NOT NULL,
    n_requests INTEGER NOT NULL,
    status TEXT NOT NULL,
    remote_id TEXT,
    counts TEXT,
    input_file_id TEXT,
    output_file_id TEXT,
    error_file_id TEXT,
    message TEXT,
    is_open INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
"""
_COLUMNS = (
    "batch_id",
    "run_id",
    "model",
    "base_url",
    "request_kind",
    "groups",
    "n_requests",
    "status",
    "remote_id",
    "counts",
    "input_file_id",
    "output_file_id",
    "error_file_id",
    "message",
    "is_open",
    "created_at",
    "updated_at",
)


@dataclass
class BatchRecord:
    """One batch job of a run. ``status``: "written" (a file to run elsewhere),
    "submitting", the endpoint's status ("validating", "in_progress", "finalizing",
    "completed", "failed", "expired", "cancelling", "cancelled"), or "imported"."""

    batch_id: str
    run_id: str
    model: str
    base_url: str
    request_kind: str  # "label" or "generate"
    groups: list = field(default_factory=list, repr=False)  # [[labels or None, [keys]], ...]
    n_requests: int = 0
    status: str = "written"
    remote_id: str | None = None
    counts: dict = field(default_factory=dict)  # total, completed, failed
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    message: str | None = None
    is_open: bool = True
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def keys(self) -> list[str]:
        return [k for _labels, keys in self.groups for k in keys]

    def labels_of(self) -> dict[str, tuple | None]:
        """key -> label words (None for sampled answers)."""
        return {
            k: (tuple(labels) if labels is not None else None)
            for labels, keys in self.groups
            for k in keys
        }


def new_batch_id() -> str:
    return "jsb-" + uuid.uuid4().hex[:16]


def _ready(store) -> None:
    if getattr(store, "_batches_ready", False):
        return
    with store._lock:
        store._conn.executescript(_SCHEMA)
    store._batches_ready = True


def save_batch(store, rec: BatchRecord) -> BatchRecord:
    """Insert or update ``rec`` (its ``updated_at`` set now)."""
    _ready(store)
    now = time.time()
    rec.created_at = rec.created_at or now
    rec.updated_at = now
    values = [getattr(rec, c) for c in _COLUMNS]
    values[_COLUMNS.index("groups")] = json.dumps(rec.groups, ensure_ascii=False)
    values[_COLUMNS.index("counts")] = json.dumps(rec.counts)
    values[_COLUMNS.index("is_open")] = int(bool(rec.is_open))
    marks = ",".join("?" * len(_COLUMNS))
    with store._lock, transaction(store._conn):
        store._conn.execute(f"INSERT OR REPLACE INTO batches VALUES ({marks})", values)
    return rec


def _record(row) -> BatchRecord:
    rec = dict(zip(_COLUMNS, row, strict=True))
    rec["groups"] = json.loads(rec["groups"])
    rec["counts"] = json.loads(rec["counts"] or "{}")
    rec["is_open"] = bool(rec["is_open"])
    return BatchRecord(**rec)


def load_batch(store, batch_id: str) -> BatchRecord:
    """The batch ``batch_id`` (local id, or the endpoint's id); KeyError naming it if unknown."""
    _ready(store)
    with store._lock:
        row = store._conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM batches WHERE batch_id = ? OR remote_id = ?",
            (batch_id, batch_id),
        ).fetchone()
    if row is None:
        raise KeyError(f"no batch {batch_id!r} in the run store {store.path}")
    return _record(row)


def list_batches(store, run_id: str | None = None, *, open_only: bool = False) -> list[BatchRecord]:
    """Batches recorded in ``store`` (of one run if given), oldest first."""
    _ready(store)
    sql = f"SELECT {', '.join(_COLUMNS)} FROM batches WHERE 1=1"
    args: list = []
    if run_id is not None:
        sql += " AND run_id = ?"
        args.append(run_id)
    if open_only:
        sql += " AND is_open = 1"
    with store._lock:
        rows = store._conn.execute(sql + " ORDER BY created_at", args).fetchall()
    return [_record(r) for r in rows]


def keys_in_open_batches(store) -> set[str]:
    """Keys asked by a batch that is still open (never put into another batch)."""
    return {k for rec in list_batches(store, open_only=True) for k in rec.keys}


__all__ = [
    "BatchRecord",
    "keys_in_open_batches",
    "list_batches",
    "load_batch",
    "new_batch_id",
    "save_batch",
]
