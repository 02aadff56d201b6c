"""Runners and claims: two runners on one store never ask the same call at once; the claims
of a runner that ended, whose lease ran out or whose process is gone are released."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from judge.store import RunStore, StoredResult


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _set_runner(path, owner, **cols):
    conn = sqlite3.connect(path)
    sets = ", ".join(f"{c} = ?" for c in cols)
    conn.execute(f"UPDATE runners SET {sets} WHERE owner = ?", (*cols.values(), owner))
    conn.commit()
    conn.close()


def test_claims_split_keys_between_runners(tmp_path):
    keys = [f"k{i}" for i in range(5)]
    with RunStore(tmp_path / "s.sqlite") as a, RunStore(tmp_path / "s.sqlite") as b:
        a.put_many([StoredResult(key="k0", kind="generate", raw="A")])  # answered before
        first = a.register_runner(60, now=100.0)
        second = b.register_runner(60, now=100.0)
        got = a.claim(keys[:3], first, since=100.0, now=100.0)
        assert (got.mine, got.done, got.held) == (["k1", "k2"], ["k0"], [])
        # the second runner gets only what nobody holds
        got = b.claim(keys, second, since=100.0, now=101.0)
        assert (got.mine, got.done, got.held) == (["k3", "k4"], ["k0"], ["k1", "k2"])
        # claiming again is idempotent for the holder
        assert a.claim(["k1"], first, since=100.0, now=102.0).mine == ["k1"]
        # storing an answer ends its claim in the same transaction: the waiter sees it done
        a.put_many([StoredResult(key="k1", kind="generate", raw="B")])
        got = b.claim(["k1", "k2"], second, since=100.0, now=103.0)
        assert (got.mine, got.done, got.held) == ([], ["k1"], ["k2"])
        # a runner that gives a key back (cancelled before asking) lets the other take it
        a.release(first, ["k2"])
        assert b.claim(["k2"], second, since=100.0, now=104.0).mine == ["k2"]
        assert b.in_progress().set_index("owner")["n_claimed"].to_dict() == {first: 0, second: 3}
        # ending a runner releases everything it still held
        b.end_runner(second)
        assert a.claim(["k2", "k3", "k4"], first, since=100.0, now=105.0).mine == [
            "k2",
            "k3",
            "k4",
        ]
        assert list(a.in_progress()["owner"]) == [first]


def test_failures_are_asked_again_only_by_a_later_run(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        store.put_many([StoredResult(key="old", kind="generate", status="failed", error="x: y")])
        conn = sqlite3.connect(path)
        conn.execute("UPDATE results SET updated_at = 1000.0")  # failed long ago
        conn.commit()
        conn.close()
        owner = store.register_runner(60)
        since = 2000.0  # a run that started after the failure: asks it again
        assert store.claim(["old"], owner, since=since).mine == ["old"]
        store.put_many([StoredResult(key="old", kind="generate", status="failed", error="x: y")])
        # failed again during this run: not asked again by this run (nor by a twin started
        # before the failure), only by the next one
        assert store.claim(["old"], owner, since=since).done == ["old"]


def test_lease_of_a_dead_runner_expires(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        gone = store.register_runner(30, now=1000.0)
        _set_runner(path, gone, host="another-machine")  # we cannot see its process
        store.claim(["k"], gone, since=1000.0, now=1000.0)
        me = store.register_runner(30, now=1010.0)
        assert store.claim(["k"], me, since=1010.0, now=1029.0).held == ["k"]
        # renewing keeps the claim alive past the first expiry
        assert store.renew_runner(gone, 30, now=1020.0)
        assert store.claim(["k"], me, since=1010.0, now=1049.0).held == ["k"]
        # no renewal for a whole lease: the claim is released and the runner forgotten
        assert store.claim(["k"], me, since=1010.0, now=1051.0).mine == ["k"]
        assert gone not in set(store.in_progress()["owner"])
        assert not store.renew_runner(gone, 30)  # it finds out when it comes back


def test_claims_of_a_dead_process_on_this_host_are_released_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        dead = store.register_runner(3600)
        store.claim(["k1", "k2"], dead, since=0.0)
        _set_runner(path, dead, pid=_dead_pid())
        alive = store.register_runner(3600)
        store.claim(["k3"], alive, since=0.0)  # this process: alive, keeps its claim
        me = store.register_runner(3600)
        got = store.claim(["k1", "k2", "k3"], me, since=0.0)
        assert (got.mine, got.held) == (["k1", "k2"], ["k3"])
        # a recycled pid (same number, another start time) is not the runner's process
        _set_runner(path, alive, proc="not-its-start-time")
        assert store.claim(["k3"], me, since=0.0).mine == ["k3"]
