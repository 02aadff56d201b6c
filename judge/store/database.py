"""The SQLite run store: every model answer kept so that runs resume and can be re-parsed.

One row per model call result (:class:`~judge.store.rows.StoredResult`), keyed by
:func:`~judge.store.keys.make_key`. Rows keep the raw output (answer text, or the top
log-probabilities as JSON), the label probabilities and log-probabilities, the error if any,
token counts and timestamps, and a status (:func:`~judge.store.rows.status_of`).

Runs are recorded too (settings and the list of items: context, candidates, sample, key), so
a run's table can be rebuilt from the stored raw outputs with another parsing rule, without
calling the model (:meth:`RunStore.export_comparisons`, :meth:`RunStore.export_ratings`).

The database is in WAL mode and results are committed in small transactions as they arrive,
so a run killed at any moment loses at most the answers still in flight. Runners and claims
(no call asked twice at once) are :mod:`judge.store.claims`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from data.paths import user_cache_dir
from judge.store._sql import chunks, transaction
from judge.store.claims import RunnerClaims
from judge.store.rows import RunItem, StoredResult
from judge.store.tables import comparisons_from_rows, ratings_from_rows

STORE_FILE = "runs.sqlite"
_SCHEMA_VERSION = 2
# errors older versions stored as the model's answer although they are server faults
_FAULTS_ONCE_ANSWERS = (
    "empty: the server returned no choices%",
    "empty: the backend returned no text%",
)


def default_store_path() -> Path:
    """``runs.sqlite`` in the per-user cache folder (``JUDGESCOPE_CACHE`` overrides it)."""
    return user_cache_dir() / STORE_FILE


_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    model_id TEXT,
    raw TEXT,
    probs TEXT,
    logprobs TEXT,
    error TEXT,
    n_prompt_tokens INTEGER,
    n_completion_tokens INTEGER,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    judge TEXT NOT NULL,
    attribute TEXT NOT NULL,
    settings TEXT NOT NULL,
    n_items INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS run_items (
    run_id TEXT NOT NULL,
    item INTEGER NOT NULL,
    key TEXT NOT NULL,
    context_id TEXT NOT NULL,
    first_id TEXT NOT NULL,
    second_id TEXT NOT NULL,
    candidate_id TEXT NOT NULL,
    sample INTEGER NOT NULL,
    PRIMARY KEY (run_id, item)
);
CREATE INDEX IF NOT EXISTS run_items_key ON run_items (key);
CREATE TABLE IF NOT EXISTS runners (
    owner TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    proc TEXT,
    started_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    claimed_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_owner ON claims (owner);
"""
_COLUMNS = (
    "key",
    "kind",
    "status",
    "model_id",
    "raw",
    "probs",
    "logprobs",
    "error",
    "n_prompt_tokens",
    "n_completion_tokens",
    "created_at",
    "updated_at",
)


def _dumps(d) -> str | None:
    return None if d is None else json.dumps(d, ensure_ascii=False)


def _loads(s):
    return None if s is None else json.loads(s)


class RunStore(RunnerClaims):
    """SQLite store of model answers and runs (see the module docstring).

    Parameters
    ----------
    path : str or Path, optional
        Database file; default :func:`default_store_path`. ``":memory:"`` keeps everything in
        memory (nothing resumes).

    The object can be shared between threads (one connection behind a lock). Use it as a
    context manager or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        if path is None:
            path = default_store_path()
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, timeout=30.0, check_same_thread=False, isolation_level=None
        )  # explicit transactions below
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives a killed process (not a power cut), cheaply
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.executescript(_SCHEMA)
            self._migrate()

    def _migrate(self) -> None:
        """Bring a store written by an older version up to date (idempotent, once per file)."""
        if self._conn.execute("PRAGMA user_version").fetchone()[0] >= _SCHEMA_VERSION:
            return
        with transaction(self._conn):
            for pattern in _FAULTS_ONCE_ANSWERS:
                self._conn.execute(
                    "UPDATE results SET status = 'failed' WHERE status = 'answer-error' "
                    "AND error LIKE ?",
                    (pattern,),
                )
            self._conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self.path!r})"

    # -- results -------------------------------------------------------------------------
    def get_many(
        self, keys: Iterable[str], *, include_failed: bool = False
    ) -> dict[str, StoredResult]:
        """Stored results for ``keys`` (missing keys are simply absent).

        ``failed`` rows are left out unless ``include_failed``: a runner asks for them again.
        """
        keys = list(dict.fromkeys(keys))
        out: dict[str, StoredResult] = {}
        cols = ", ".join(_COLUMNS)
        with self._lock:
            for chunk, marks in chunks(keys):
                sql = f"SELECT {cols} FROM results WHERE key IN ({marks})"
                if not include_failed:
                    sql += " AND status != 'failed'"
                for row in self._conn.execute(sql, chunk):
                    rec = dict(zip(_COLUMNS, row, strict=True))
                    rec["probs"] = _loads(rec["probs"])
                    rec["logprobs"] = _loads(rec["logprobs"])
                    out[rec["key"]] = StoredResult(**rec)
        return out

    def put_many(self, rows: Iterable[StoredResult]) -> int:
        """Insert or replace ``rows`` in one transaction; returns how many were written.

        The claims on their keys (:meth:`claim`) go in the same transaction.
        """
        now = time.time()
        values = []
        for r in rows:
            if r.kind not in ("label", "generate"):
                raise ValueError(f"StoredResult.kind must be 'label' or 'generate', got {r.kind!r}")
            if r.status not in ("ok", "answer-error", "failed"):
                raise ValueError(
                    f"StoredResult.status must be ok/answer-error/failed, got {r.status!r}"
                )
            values.append(
                (
                    r.key,
                    r.kind,
                    r.status,
                    r.model_id,
                    r.raw,
                    _dumps(r.probs),
                    _dumps(r.logprobs),
                    r.error,
                    r.n_prompt_tokens,
                    r.n_completion_tokens,
                    r.created_at or now,
                    now,
                )
            )
        if not values:
            return 0
        sql = (
            f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({','.join('?' * len(_COLUMNS))}) "
            "ON CONFLICT(key) DO UPDATE SET kind=excluded.kind, status=excluded.status, "
            "model_id=excluded.model_id, raw=excluded.raw, probs=excluded.probs, "
            "logprobs=excluded.logprobs, error=excluded.error, "
            "n_prompt_tokens=excluded.n_prompt_tokens, "
            "n_completion_tokens=excluded.n_completion_tokens, updated_at=excluded.updated_at"
        )
        with self._lock, transaction(self._conn):
            self._conn.executemany(sql, values)
            self._conn.executemany("DELETE FROM claims WHERE key = ?", [(v[0],) for v in values])
        return len(values)

    def count(self, status: str | None = None) -> int:
        """Number of stored results (of one ``status`` if given)."""
        with self._lock:
            if status is None:
                return self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            return self._conn.execute(
                "SELECT COUNT(*) FROM results WHERE status = ?", (status,)
            ).fetchone()[0]

    # -- runs ----------------------------------------------------------------------------
    def start_run(self, run_id: str, settings: Mapping, items: Sequence[RunItem]) -> None:
        """Record a run's settings and planned items (idempotent: a resumed run rewrites them)."""
        kind = settings["kind"]
        if kind not in ("pairwise", "absolute"):
            raise ValueError(f"run kind must be 'pairwise' or 'absolute', got {kind!r}")
        now = time.time()
        rows = [
            (
                run_id,
                n,
                it.key,
                str(it.context_id),
                str(it.first_id),
                str(it.second_id),
                str(it.candidate_id),
                int(it.sample),
            )
            for n, it in enumerate(items)
        ]
        with self._lock, transaction(self._conn):
            self._conn.execute(
                "INSERT INTO runs (run_id, kind, judge, attribute, settings, n_items, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(run_id) DO "
                "UPDATE SET settings=excluded.settings, n_items=excluded.n_items, "
                "judge=excluded.judge, updated_at=excluded.updated_at",
                (
                    run_id,
                    kind,
                    settings["judge"],
                    settings["attribute"],
                    json.dumps(dict(settings), ensure_ascii=False, default=str),
                    len(rows),
                    now,
                    now,
                ),
            )
            self._conn.execute("DELETE FROM run_items WHERE run_id = ?", (run_id,))
            self._conn.executemany("INSERT INTO run_items VALUES (?,?,?,?,?,?,?,?)", rows)

    def runs(self) -> pd.DataFrame:
        """Every recorded run: run_id, kind, judge, attribute, n_items, n_done, timestamps."""
        sql = (
            "SELECT r.run_id, r.kind, r.judge, r.attribute, r.n_items, "
            "SUM(CASE WHEN res.status IN ('ok', 'answer-error') THEN 1 ELSE 0 END) AS n_done, "
            "r.created_at, r.updated_at FROM runs r LEFT JOIN run_items i ON i.run_id = r.run_id "
            "LEFT JOIN results res ON res.key = i.key GROUP BY r.run_id ORDER BY r.updated_at"
        )
        with self._lock:
            rows = self._conn.execute(sql).fetchall()
        cols = [
            "run_id",
            "kind",
            "judge",
            "attribute",
            "n_items",
            "n_done",
            "created_at",
            "updated_at",
        ]
        df = pd.DataFrame(rows, columns=cols)
        df["n_done"] = df["n_done"].fillna(0).astype("int64")
        return df

    def run_settings(self, run_id: str) -> dict:
        with self._lock:
            row = self._conn.execute(
                "SELECT settings FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        if row is None:
            raise KeyError(f"no run {run_id!r} in the store {self.path}; see RunStore.runs()")
        return json.loads(row[0])

    def run_items(self, run_id: str) -> list[RunItem]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, context_id, sample, first_id, second_id, candidate_id FROM run_items "
                "WHERE run_id = ? ORDER BY item",
                (run_id,),
            ).fetchall()
        return [
            RunItem(key=k, context_id=c, sample=s, first_id=f, second_id=sid, candidate_id=cand)
            for k, c, s, f, sid, cand in rows
        ]

    def export_comparisons(self, run_id: str, **parse_options) -> pd.DataFrame:
        """The canonical comparisons table of a pairwise run, re-parsed from stored outputs.

        ``parse_options`` override the run's own (``labels``, ``tie_labels``, ``aliases``)
        to read the same raw answers with another rule; no model is called.
        """
        return self._export(run_id, "pairwise", parse_options)

    def export_ratings(self, run_id: str, **parse_options) -> pd.DataFrame:
        """The canonical ratings table of an absolute run, re-parsed from stored outputs.

        ``parse_options`` override the run's own (``parse_rule``, ``scale``, ``drop``).
        """
        return self._export(run_id, "absolute", parse_options)

    def _export(self, run_id: str, kind: str, parse_options: dict) -> pd.DataFrame:
        settings = self.run_settings(run_id)
        if settings["kind"] != kind:
            other = "export_ratings" if kind == "pairwise" else "export_comparisons"
            raise ValueError(f"run {run_id!r} is {settings['kind']}; use {other}")
        settings.update(parse_options)
        items = self.run_items(run_id)
        rows = self.get_many([it.key for it in items], include_failed=True)
        to_table = comparisons_from_rows if kind == "pairwise" else ratings_from_rows
        return to_table(items, rows, settings)


@contextmanager
def open_store(store: RunStore | str | os.PathLike | None | bool = None) -> Iterator[RunStore]:
    """The run store ``store`` names, closed at the end when it was opened here.

    ``store``: a :class:`RunStore` (used as is, left open), a path, None (the default store,
    :func:`default_store_path`) or False (in memory: nothing is kept, nothing found).
    """
    if isinstance(store, RunStore):
        yield store
        return
    opened = RunStore(":memory:" if store is False else store)
    try:
        yield opened
    finally:
        opened.close()


__all__ = ["STORE_FILE", "RunStore", "default_store_path", "open_store"]
