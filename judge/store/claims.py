"""Runners and claims in the run store: no call asked twice at once.

Runs sharing a store (two processes, two app sessions) never ask for the same call at once:
a runner registers itself (``runners``: host, pid, a lease renewed while it works) and claims
the keys it is about to ask (``claims``) in the same transaction that checks they have no
answer yet; storing a result removes its claim in the same transaction
(:meth:`judge.store.RunStore.put_many`). Other runners skip claimed keys and wait for their
results. The claims of a runner that ends are removed; those of a runner that died go when
its lease runs out, or at once when it ran on this host and its process is gone
(:mod:`judge.store.leases`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import uuid4

import pandas as pd

from judge.store._sql import chunks, transaction


@dataclass
class Claim:
    """What :meth:`RunStore.claim` found for the keys asked about (each key in one list)."""

    mine: list[str]  # claimed for the caller now: ask for these
    done: list[str]  # answered already (or failed since the caller started): nothing to do
    held: list[str]  # another live runner is asking for these


class RunnerClaims:
    """The runner and claim methods of :class:`judge.store.RunStore` (which provides the
    connection ``_conn`` and its lock ``_lock``)."""

    # -- runners and claims: no call asked twice at once -----------------------------------
    def register_runner(
        self, lease_s: float, *, owner: str | None = None, now: float | None = None
    ) -> str:
        """Record a runner of this process; returns its owner id for :meth:`claim`.

        Its claims live while :meth:`renew_runner` keeps ``expires_at`` in the future. Give
        ``owner`` to register an owner again whose lease was dropped.
        """
        from judge.store.leases import HOST, process_id

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
        with self._lock, transaction(self._conn):
            self._conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))
            self._conn.execute("DELETE FROM runners WHERE owner = ?", (owner,))

    def release(self, owner: str, keys: Iterable[str]) -> None:
        """Give back ``owner``'s claims on ``keys`` (calls it will not make after all)."""
        pairs = [(k, owner) for k in dict.fromkeys(keys)]
        if not pairs:
            return
        with self._lock, transaction(self._conn):
            self._conn.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", pairs)

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
        with self._lock, transaction(self._conn):
            self._drop_stale_runners(owner, now)
            for chunk, marks in chunks(keys):
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
        return Claim(mine, done, held)

    def _drop_stale_runners(self, owner: str, now: float) -> None:
        """(Inside a write transaction.) Forget dead runners and every orphaned claim."""
        from judge.store.leases import HOST, process_alive

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


__all__ = ["Claim", "RunnerClaims"]
