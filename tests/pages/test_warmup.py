"""pages/shell/warmup.py: the background compilation started with the app (correctness, no timing)."""

from __future__ import annotations

import time

import pytest

from pages.shell import warmup
from tests._routes import page_scripts


@pytest.fixture
def fresh(monkeypatch):
    """A clean warm-up state, allowed to start under pytest; workers ended afterwards."""
    monkeypatch.setattr(warmup, "_state", {"started": False, "done": {}, "failed": {}, "procs": []})
    monkeypatch.setenv(warmup.SWITCH_ENV, "1")
    monkeypatch.delenv(warmup.WORKER_ENV, raising=False)
    yield warmup
    warmup.stop()


def test_every_worker_page_is_a_page_of_the_app():
    items = [p for group in warmup.WORKERS for p in group]
    assert len(items) == len(set(items))
    pages = [p for p in items if p not in warmup.KERNEL_STEPS]
    assert len(pages) < len(items)  # and every other item is a kernel step
    for page in pages:
        assert page in page_scripts(), page
        assert (warmup.ROOT / page).is_file()


def test_visit_runs_the_pages_kernels_without_error(capsys):
    out = warmup.visit(["pages/position_bias/page.py", "pages/budgets/page.py"])
    assert set(out) == {"pages/position_bias/page.py", "pages/budgets/page.py"}
    assert all(isinstance(v, float) for v in out.values()), out
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in printed if line.startswith("done")] == [
        ["done", "pages/position_bias/page.py"],
        ["done", "pages/budgets/page.py"],
    ]


def test_kernel_steps_run_in_order_before_the_app_opens(monkeypatch, capsys):
    calls = []

    def broken():
        raise ValueError("no compiler")

    steps = {"kernel:a": lambda: calls.append("a"), "kernel:b": broken}
    monkeypatch.setattr(warmup, "KERNEL_STEPS", steps)
    out = warmup.visit(["kernel:a", "kernel:b"])
    assert calls == ["a"] and isinstance(out["kernel:a"], float)
    assert out["kernel:b"] == "ValueError: no compiler"  # reported, never raised
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("done kernel:a ")
    assert printed[1] == "failed kernel:b ValueError: no compiler"


def test_long_kendall_warmup_reaches_the_compiled_kernel():
    from ranking.agreement import segments

    warmup._long_kendall_kernel()
    assert segments._kendall_long.signatures


def test_visit_reports_a_broken_page_instead_of_raising(capsys):
    out = warmup.visit(["pages/no_such_page.py"])
    assert isinstance(out["pages/no_such_page.py"], str)
    assert capsys.readouterr().out.startswith("failed pages/no_such_page.py")


def test_budgets_is_compiled_first_beside_rankings():
    # Knight's Kendall before Budgets (2 s): HANNA's Reproduce, opened 10 s after start,
    # needs nothing else; Rankings then its bootstrap choices then Leaderboard in the other
    assert warmup.WORKERS[0][:2] == ("kernel:long-kendall", "pages/budgets/page.py")
    assert warmup.WORKERS[1][:3] == (
        "pages/rankings/page.py",
        "kernel:bootstrap",
        "pages/leaderboard/page.py",
    )


def test_pending_until_the_page_is_reported(fresh):
    page = "pages/position_bias/page.py"
    assert not fresh.pending(page)  # nothing started: a page never waits
    assert fresh.start(workers=((page,),), parallel_kernels=False) is True
    assert fresh.pending(page)
    _wait(fresh, 1)
    assert not fresh.pending(page)


def _wait(w, n_reports):
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        st = w.status()
        if len(st["done"]) + len(st["failed"]) >= n_reports:
            break
        if st["procs_started"] and not st["running"]:
            time.sleep(0.5)  # the reader thread may still hold the last line
            break
        time.sleep(0.5)
    return w.status()


def test_start_is_idempotent_and_workers_report(fresh, monkeypatch):
    page = ("pages/position_bias/page.py",)
    targets = []
    monkeypatch.setattr(fresh, "_numba_target", lambda: targets.append(len(fresh._state["procs"])))
    assert fresh.start(workers=(page,), parallel_kernels=False) is True
    assert fresh.start(workers=(page,), parallel_kernels=False) is False  # once per process
    st = _wait(fresh, 1)
    assert st["started"]
    assert st["failed"] == {}
    assert list(st["done"]) == ["pages/position_bias/page.py"]
    assert targets == [1]  # the server's numba target set up once, after the worker started


def test_numba_target_setup_never_raises(monkeypatch):
    import numba

    warmup._numba_target()
    monkeypatch.setattr(numba, "njit", lambda **kw: 1 / 0)
    warmup._numba_target()  # a broken numba only loses the head start


def test_worker_ends_with_the_parallel_twins(fresh):
    assert fresh.start(workers=(("pages/position_bias/page.py",),)) is True
    st = _wait(fresh, 2)
    assert st["failed"] == {}
    assert list(st["done"]) == ["pages/position_bias/page.py", warmup.PARALLEL_STEP]


def test_compile_parallel_compiles_the_twin_of_what_ran(capsys):
    import numpy as np

    from ranking.bradley_terry.dense import fit_batch

    W = np.ones((2, 3, 3))
    W[:, np.arange(3), np.arange(3)] = 0.0
    fit_batch(W, 0.0, 20, 1e-8, np.zeros((2, 3)), False)  # small: the serial one runs
    warmup.compile_parallel()
    assert capsys.readouterr().out.startswith(f"done {warmup.PARALLEL_STEP}")
    assert set(fit_batch.serial.signatures) <= set(fit_batch.parallel.signatures)


def test_nothing_starts_inside_a_worker_or_when_switched_off(fresh, monkeypatch):
    monkeypatch.setenv(warmup.WORKER_ENV, "1")
    assert not fresh.enabled() and fresh.start() is False
    monkeypatch.delenv(warmup.WORKER_ENV)
    monkeypatch.setenv(warmup.SWITCH_ENV, "0")
    assert not fresh.enabled() and fresh.start() is False
    monkeypatch.delenv(warmup.SWITCH_ENV)
    assert not fresh.enabled()  # under pytest, off unless asked for
    assert fresh.status()["started"] is False


def test_a_worker_opens_a_waited_for_page_between_pages_and_workers_then_lowers_it(
    monkeypatch,
):
    events = []
    monkeypatch.setattr(warmup.os, "nice", lambda n: events.append(("nice", n)))

    def fake_visit(pages, timeout=600.0, after=None):
        for page in pages:
            events.append(("visit", page))
            after(page)

    monkeypatch.setattr(warmup, "visit", fake_visit)
    monkeypatch.setenv(warmup.WORKER_ENV, "1")
    assert 0 < warmup.WAITED_NICE < warmup.NICE
    warmup.main(["kernel:long-kendall", "pages/budgets/page.py", "pages/judge_bias/page.py"])
    assert events == [
        ("nice", warmup.WAITED_NICE),  # behind the user's pages, ahead of the other worker
        ("visit", "kernel:long-kendall"),  # a kernel step first keeps that priority too
        ("visit", "pages/budgets/page.py"),
        ("nice", warmup.NICE - warmup.WAITED_NICE),  # os.nice adds: now at NICE
        ("visit", "pages/judge_bias/page.py"),
    ]
    events.clear()
    warmup.main(["pages/rankings/page.py", "pages/budgets/page.py"])
    assert events[0] == ("nice", warmup.NICE) and len([e for e in events if e[0] == "nice"]) == 1
