"""The run store: every model answer kept in SQLite so that runs resume and can be re-parsed.

One row per model call result, keyed by :func:`make_key` — a sha256 over the backend's
identity (kind, model, endpoint; never the API key), the template (id, version and content
hash), the decoding settings, the full prompt, the label set and the sample index. Timeouts,
batch sizes and concurrency are not in the key, so changing them does not re-run anything.

Rows keep the raw output (answer text, or the top log-probabilities as JSON), the label
probabilities and log-probabilities, the error if any, token counts and timestamps.
``status`` says what a row is worth:

- ``ok``: an answer;
- ``answer-error``: the model did answer but without a usable result (a refusal, a filtered
  or empty answer, no label among its top tokens) — kept, not asked again;
- ``failed``: the call itself failed (server error after retries, timeout, bad request, a
  reply that is not a chat completion, no choices) — kept with its reason for inspection and
  asked again on the next run.

Runs are recorded too (settings and the list of items: context, candidates, sample, key), so
a run's table can be rebuilt from the stored raw outputs with another parsing rule, without
calling the model (:meth:`RunStore.export_comparisons`, :meth:`RunStore.export_ratings`).

The database is in WAL mode and results are committed in small transactions as they arrive,
so a run killed at any moment loses at most the answers still in flight.

Runs sharing a store (two processes, two app sessions) never ask for the same call at once:
a runner registers itself (``runners``: host, pid, a lease renewed while it works) and claims
the keys it is about to ask (``claims``) in the same transaction that checks they have no
answer yet; storing a result removes its claim in the same transaction. Other runners skip
claimed keys and wait for their results. The claims of a runner that ends are removed; those
of a runner that died go when its lease runs out, or at once when it ran on this host and its
process is gone (:mod:`judge.leases`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from uuid import uuid4

import numpy as np
import pandas as pd

from data.paths import user_cache_dir

STORE_FILE = "runs.sqlite"
#: error codes (text before the first ":") that are the model's own answer, not a failure;
#: every other code ("http-503", "timeout", "connection", "bad-response", "no-choices",
#: "no-logprobs", "exception", ...) is a failure asked again on the next run
ANSWER_ERROR_CODES = ("refusal", "content_filter", "empty", "no-label")
_SCHEMA_VERSION = 2
# errors older versions stored as the model's answer although they are server faults
_FAULTS_ONCE_ANSWERS = (
    "empty: the server returned no choices%",
    "empty: the backend returned no text%",
)
# describe() entries that must never reach a key even if a backend lists them
_NOT_IN_KEY = {"timeout", "batch_size", "max_concurrency", "max_retries", "api_key", "progress"}


def default_store_path() -> Path:
    """``runs.sqlite`` in the per-user cache folder (``JUDGESCOPE_CACHE`` overrides it)."""
    return user_cache_dir() / STORE_FILE


def prompt_hash(
    prompt: str, *, prefix: str = "", system: str | None = None, decoder_prefix: str = ""
) -> str:
    """sha256 of everything the model reads: system message, prefix + prompt, decoder priming.

    ``prefix + prompt`` is hashed as one text, so where a prompt is split does not matter.
    """
    h = hashlib.sha256()
    for part in (system, decoder_prefix):
        # length-prefixed so that no two different (system, decoder_prefix, prompt) collide
        data = b"\xff" if part is None else part.encode()
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    h.update(prefix.encode())
    h.update(prompt.encode())
    return h.hexdigest()


def key_base(
    *,
    backend: Mapping,
    template: Mapping,
    kind: str,
    labels: Sequence[str] | None = None,
    decoding: Mapping | None = None,
) -> str:
    """The part of a key shared by every call of a run (see :func:`make_key`)."""
    ident = {k: v for k, v in dict(backend).items() if k not in _NOT_IN_KEY}
    material = {
        "backend": ident,
        "template": dict(template),
        "kind": kind,
        "labels": list(labels) if labels is not None else None,
        "decoding": dict(decoding) if decoding is not None else None,
    }
    return json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)


def key_from_base(base: str, prompt_sha: str, sample: int = 0) -> str:
    """:func:`make_key` from a precomputed :func:`key_base` (fast path for many prompts)."""
    return hashlib.sha256(f"{base}\x1f{prompt_sha}\x1f{int(sample)}".encode()).hexdigest()


def make_key(
    *,
    backend: Mapping,
    template: Mapping,
    kind: str,
    prompt_sha: str,
    labels: Sequence[str] | None = None,
    decoding: Mapping | None = None,
    sample: int = 0,
) -> str:
    """The run-store key of one model call.

    Parameters
    ----------
    backend : mapping
        ``backend.describe()``: kind, model, endpoint and settings that change answers.
        Secrets and throughput settings (timeout, batch size, concurrency) are dropped.
    template : mapping
        ``{"id": ..., "version": ..., "key": template.key()}``.
    kind : {"label", "generate"}
    prompt_sha : str
        :func:`prompt_hash` of the full prompt.
    labels : sequence of str, optional
        Label words whose probabilities are read (label requests).
    decoding : mapping, optional
        Sampling settings (generate requests); label requests read logprobs and have none.
    sample : int
        Index of a repeated draw.
    """
    base = key_base(backend=backend, template=template, kind=kind, labels=labels, decoding=decoding)
    return key_from_base(base, prompt_sha, sample)


def status_of(error: str | None) -> str:
    """``ok``, ``answer-error`` or ``failed`` from a backend error text (see module doc)."""
    if error is None:
        return "ok"
    code = error.split(":", 1)[0].strip()
    return "answer-error" if code in ANSWER_ERROR_CODES else "failed"


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
_CHUNK = 500  # keys per SELECT ... IN (...)


@dataclass
class Claim:
    """What :meth:`RunStore.claim` found for the keys asked about (each key in one list)."""

    mine: list[str]  # claimed for the caller now: ask for these
    done: list[str]  # answered already (or failed since the caller started): nothing to do
    held: list[str]  # another live runner is asking for these


def _dumps(d) -> str | None:
    return None if d is None else json.dumps(d, ensure_ascii=False)


def _loads(s):
    return None if s is None else json.loads(s)


class RunStore:
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
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for pattern in _FAULTS_ONCE_ANSWERS:
                self._conn.execute(
                    "UPDATE results SET status = 'failed' WHERE status = 'answer-error' "
                    "AND error LIKE ?",
                    (pattern,),
                )
            self._conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

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
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
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
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(sql, values)
                self._conn.executemany(
                    "DELETE FROM claims WHERE key = ?", [(v[0],) for v in values]
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return len(values)

    def count(self, status: str | None = None) -> int:
        """Number of stored results (of one ``status`` if given)."""
        with self._lock:
            if status is None:
                return self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            return self._conn.execute(
                "SELECT COUNT(*) FROM results WHERE status = ?", (status,)
            ).fetchone()[0]

    # -- runners and claims: no call asked twice at once -----------------------------------
    def register_runner(
        self, lease_s: float, *, owner: str | None = None, now: float | None = None
    ) -> str:
        """Record a runner of this process; returns its owner id for :meth:`claim`.

        Its claims live while :meth:`renew_runner` keeps ``expires_at`` in the future. Give
        ``owner`` to register an owner again whose lease was dropped.
        """
        from judge.leases import HOST, process_id

        owner = owner or uuid4().hex
        now = time.time() if now is None else now
        pid, proc = process_id()
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO runners (owner, host, pid, proc, started_at, expires_at) "
                "VALUES (?,?,?,?,?,?)",
                (owner, HOST, pid, proc, now, now + float(lease_s)),
            )
        return owner

    def renew_runner(self, owner: str, lease_s: float, *, now: float | None = None) -> bool:
        """Push the lease of ``owner`` to ``now + lease_s``; False when it had been dropped
        (it expired and another runner released its claims)."""
        now = time.time() if now is None else now
        with self._lock:
            cur = self._conn.execute(
                "UPDATE runners SET expires_at = ? WHERE owner = ?", (now + float(lease_s), owner)
            )
            return cur.rowcount > 0

    def end_runner(self, owner: str) -> None:
        """Remove ``owner`` and release every claim it still holds."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))
                self._conn.execute("DELETE FROM runners WHERE owner = ?", (owner,))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def release(self, owner: str, keys: Iterable[str]) -> None:
        """Give back ``owner``'s claims on ``keys`` (calls it will not make after all)."""
        pairs = [(k, owner) for k in dict.fromkeys(keys)]
        if not pairs:
            return
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", pairs)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def claim(
        self,
        keys: Iterable[str],
        owner: str,
        *,
        since: float,
        now: float | None = None,
    ) -> Claim:
        """Claim the keys of ``keys`` that still need a call, for ``owner``.

        In one transaction: drop runners whose lease ran out or whose process is gone
        (same host) with their claims; sort the keys into ``done`` (an answer is stored, or
        a failure recorded at or after ``since`` — the caller's start, so a failure another
        runner met meanwhile is not asked again at once), ``held`` (claimed by another live
        runner) and ``mine`` (unclaimed or already the caller's, now claimed by it).
        """
        keys = list(dict.fromkeys(keys))
        now = time.time() if now is None else now
        mine: list[str] = []
        done: list[str] = []
        held: list[str] = []
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._drop_stale_runners(owner, now)
                for start in range(0, len(keys), _CHUNK):
                    chunk = keys[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    finished = {
                        k
                        for k, status, updated in self._conn.execute(
                            f"SELECT key, status, updated_at FROM results WHERE key IN ({marks})",
                            chunk,
                        )
                        if status != "failed" or updated >= since
                    }
                    open_keys = [k for k in chunk if k not in finished]
                    self._conn.executemany(
                        "INSERT OR IGNORE INTO claims (key, owner, claimed_at) VALUES (?,?,?)",
                        [(k, owner, now) for k in open_keys],
                    )
                    holders = dict(
                        self._conn.execute(
                            f"SELECT key, owner FROM claims WHERE key IN ({marks})", chunk
                        ).fetchall()
                    )
                    for k in chunk:
                        if k in finished:
                            done.append(k)
                        elif holders.get(k) == owner:
                            mine.append(k)
                        else:
                            held.append(k)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return Claim(mine, done, held)

    def _drop_stale_runners(self, owner: str, now: float) -> None:
        """(Inside a write transaction.) Forget dead runners and every orphaned claim."""
        from judge.leases import HOST, process_alive

        stale = [
            (o,)
            for o, host, pid, proc, expires in self._conn.execute(
                "SELECT owner, host, pid, proc, expires_at FROM runners"
            )
            if o != owner
            and (expires < now or (host == HOST and process_alive(pid, proc) is False))
        ]
        if stale:
            self._conn.executemany("DELETE FROM runners WHERE owner = ?", stale)
        self._conn.execute(
            "DELETE FROM claims WHERE owner != ? AND owner NOT IN (SELECT owner FROM runners)",
            (owner,),
        )

    def in_progress(self) -> pd.DataFrame:
        """Runners registered in this store and how many calls each has claimed.

        Columns owner, host, pid, started_at, expires_at, n_claimed (stale runners included
        until the next :meth:`claim` drops them).
        """
        sql = (
            "SELECT r.owner, r.host, r.pid, r.started_at, r.expires_at, COUNT(c.key) "
            "FROM runners r LEFT JOIN claims c ON c.owner = r.owner GROUP BY r.owner "
            "ORDER BY r.started_at"
        )
        with self._lock:
            rows = self._conn.execute(sql).fetchall()
        cols = ["owner", "host", "pid", "started_at", "expires_at", "n_claimed"]
        return pd.DataFrame(rows, columns=cols)

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
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
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
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

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


# ---------------------------------------------------------------------------------------
# stored rows -> canonical tables
# ---------------------------------------------------------------------------------------
def _no_answer_text(row: StoredResult) -> str:
    """What the raw column shows when there is no answer text (error kept visible)."""
    code = (row.error or "").split(":", 1)[0].strip() or "error"
    tag = code if row.status == "answer-error" else "error"
    return f"[{tag}] {row.error}"


def comparisons_from_rows(
    items: Sequence[RunItem], rows: Mapping[str, StoredResult], settings: Mapping
) -> pd.DataFrame:
    """Canonical comparisons table from planned items and their stored results.

    ``settings``: ``judge``, ``attribute``, ``mode`` ("probs" or "samples"), ``labels``,
    ``tie_labels`` and optional ``aliases``. In probs mode p_first = P(A) + P(tie) / 2 over
    the normalised label probabilities, sample 0, verdict missing. In samples mode each sample
    is a row with p_first 1 (A), 0 (B), 0.5 (tie) or NaN (unparsed) and its verdict; the mean
    over a pair's samples (what ``data.arrays`` averages) is the share of A, ties half.
    Items without a stored result (a cancelled run) are left out; failed calls are rows with
    NaN p_first and the error in ``raw``.
    """
    from data.parsing import parse_verdict

    labels = list(settings.get("labels") or ("A", "B"))
    tie_labels = list(settings.get("tie_labels") or ())
    aliases = settings.get("aliases")
    mode = settings["mode"]
    cols: dict[str, list] = {
        c: []
        for c in ("context_id", "first_id", "second_id", "p_first", "verdict", "sample", "raw")
    }
    for it in items:
        row = rows.get(it.key)
        if row is None:
            continue
        p, verdict, raw = math.nan, None, None
        if mode == "probs":
            if row.probs:
                p = float(row.probs.get(labels[0], 0.0))
                p += 0.5 * sum(float(row.probs.get(t, 0.0)) for t in tie_labels)
            else:
                raw = _no_answer_text(row)
        elif mode == "samples":
            if row.raw is not None and row.kind == "generate" and row.error is None:
                raw = row.raw
                verdict = parse_verdict(
                    row.raw, labels=labels[:2], tie_labels=tie_labels, aliases=aliases
                ).value
                p = {"A": 1.0, "B": 0.0, "tie": 0.5}.get(verdict, math.nan)
            else:
                raw = _no_answer_text(row)
        else:
            raise ValueError(f"mode must be 'probs' or 'samples', got {mode!r}")
        cols["context_id"].append(it.context_id)
        cols["first_id"].append(it.first_id)
        cols["second_id"].append(it.second_id)
        cols["p_first"].append(p)
        cols["verdict"].append(verdict)
        cols["sample"].append(int(it.sample))
        cols["raw"].append(raw)
    n = len(cols["context_id"])
    df = pd.DataFrame(
        {
            "context_id": pd.Series(cols["context_id"], dtype=object),
            "attribute": pd.Series([settings["attribute"]] * n, dtype=object),
            "judge": pd.Series([settings["judge"]] * n, dtype=object),
            "first_id": pd.Series(cols["first_id"], dtype=object),
            "second_id": pd.Series(cols["second_id"], dtype=object),
            "p_first": np.asarray(cols["p_first"], dtype=np.float64),
            "verdict": pd.Series(cols["verdict"], dtype=object),
            "sample": np.asarray(cols["sample"], dtype=np.int64),
            "raw": pd.Series(cols["raw"], dtype=object),
        }
    )
    return df


def ratings_from_rows(
    items: Sequence[RunItem], rows: Mapping[str, StoredResult], settings: Mapping
) -> pd.DataFrame:
    """Canonical ratings table from planned items and their stored results.

    ``settings``: ``judge``, ``attribute``, ``prompt_id``, ``mode`` ("samples" or
    "expected"), ``scale`` and, for samples, ``parse_rule`` and optional ``drop``. Samples
    are parsed with ``data.parsing.parse_likert`` (NaN when unparsed, raw text kept);
    expected = sum over s of s * P(s) over the score tokens (G-Eval), sample 0.
    """
    from data.parsing import expected_score, parse_likert

    mode = settings["mode"]
    scale = tuple(settings["scale"])
    rule = settings.get("parse_rule") or "chiang_lee"
    drop = tuple(settings.get("drop") or ())
    cols: dict[str, list] = {
        c: [] for c in ("context_id", "candidate_id", "sample", "score", "raw")
    }
    for it in items:
        row = rows.get(it.key)
        if row is None:
            continue
        score, raw = math.nan, None
        if mode == "samples":
            if row.raw is not None and row.kind == "generate" and row.error is None:
                raw = row.raw
                value = parse_likert(row.raw, scale=scale, rule=rule, drop=drop).value
                score = math.nan if value is None else float(value)
            else:
                raw = _no_answer_text(row)
        elif mode == "expected":
            if row.probs:
                score = float(expected_score({float(k): v for k, v in row.probs.items()}))
                raw = json.dumps({k: round(v, 6) for k, v in row.probs.items()})
            else:
                raw = _no_answer_text(row)
        else:
            raise ValueError(f"mode must be 'samples' or 'expected', got {mode!r}")
        cols["context_id"].append(it.context_id)
        cols["candidate_id"].append(it.candidate_id)
        cols["sample"].append(int(it.sample))
        cols["score"].append(score)
        cols["raw"].append(raw)
    n = len(cols["context_id"])
    return pd.DataFrame(
        {
            "context_id": pd.Series(cols["context_id"], dtype=object),
            "candidate_id": pd.Series(cols["candidate_id"], dtype=object),
            "attribute": pd.Series([settings["attribute"]] * n, dtype=object),
            "judge": pd.Series([settings["judge"]] * n, dtype=object),
            "prompt_id": pd.Series([settings["prompt_id"]] * n, dtype=object),
            "sample": np.asarray(cols["sample"], dtype=np.int64),
            "score": np.asarray(cols["score"], dtype=np.float64),
            "raw": pd.Series(cols["raw"], dtype=object),
        }
    )


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
    "Claim",
    "RunItem",
    "RunStore",
    "StoredResult",
    "comparisons_from_rows",
    "default_store_path",
    "key_base",
    "key_from_base",
    "make_key",
    "prompt_hash",
    "ratings_from_rows",
    "result_row",
    "status_of",
]
