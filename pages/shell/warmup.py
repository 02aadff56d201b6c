"""Compile the numba kernels in the background as soon as the app starts (issue 11, item 11).

A fresh install has no compiled code on disk: the first visit of Rankings compiled for about
30 s, Comparison budgets 15 s. :func:`start` (called at the top of ``app.py``; it acts once
per server process) launches background worker processes, each of which opens the app's
pages on the offline demo, in the order users usually visit them, so that numba compiles
every kernel the pages use, with exactly the argument types the pages pass, and writes it to
its on-disk cache (``cache=True``: ``__pycache__`` beside the sources, or ``NUMBA_CACHE_DIR``).
A page visited afterwards loads the compiled code in a fraction of a second instead of
compiling. Processes, not threads: numba compiles under the GIL and one global lock, so a
thread would compile on one core and stall the server; two workers use both cores of a small
machine. They run at a lower priority (``nice`` + :data:`NICE`): a page the user opens while
they work compiles what it still lacks at full speed instead of sharing the cores three ways
(measured: a Rankings visit 10 s after start took 38 s beside two equal-priority workers).
A page that waits for its worker instead (:data:`WAITED_FOR`) is opened first, at a priority
between the pages and the other worker (:data:`WAITED_NICE`); that worker lowers its priority
after it.

The order serves the first visit best (:data:`WORKERS`): Comparison budgets, whose curves'
kernels take about 20 s to compile, first in one worker (its page waits for them, see
:func:`pending`); Rankings then Leaderboard, which share the Bradley–Terry and Elo kernels,
first in the other; then the lighter pages. Last, each worker compiles the parallel twins of
the batch kernels it met (:class:`ranking._core.jit.BatchKernel`; pages run the serial ones
on small batches), so a big benchmark's first visit finds them ready.

Once the cache is filled the workers find everything compiled and end within seconds; with
``JUDGESCOPE_WARMUP=0`` in the environment nothing is started.

    python -m pages.shell.warmup [--parallel] [page ...]   # compile what those pages need, now
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose first visit compiles numba kernels, split over the workers, and kernel
#: steps (:data:`KERNEL_STEPS`); each worker takes its items in this order. Comparison budgets
#: compiles the most (about 20 s of its curves' kernels, which pay: issue 26) and opens first
#: in one worker; its page waits for that worker rather than compiling beside it
#: (:func:`pending`). Before it, Knight's Kendall (2 s, before the app opens): no demo page
#: needs it, but it is all HANNA's Reproduce compiles. Rankings, whose kernels are now mostly
#: numpy, opens first in the other, then its bootstrap choices, then Leaderboard, which shares
#: its Bradley–Terry and Elo kernels, then the lighter pages.
WORKERS = (
    ("kernel:long-kendall", "pages/budgets/page.py", "pages/judge_bias/page.py"),
    (
        "pages/rankings/page.py",
        "kernel:bootstrap",
        "pages/leaderboard/page.py",
        "pages/position_bias/page.py",
        "pages/agreement/page.py",
        "pages/prompts/page.py",
    ),
)
#: Reported as done (or failed) by each worker after its pages: the parallel twins compiled.
PARALLEL_STEP = "parallel-kernels"
#: Set in the workers' environment, so the app they open does not start workers itself.
WORKER_ENV = "JUDGESCOPE_WARMUP_WORKER"
#: ``0`` disables the warm-up (tests that time or count compilation themselves).
SWITCH_ENV = "JUDGESCOPE_WARMUP"
#: How much the workers lower their priority (``os.nice``; ignored where unsupported).
NICE = 10
#: Pages that wait for the warm-up instead of compiling on their first visit (see
#: :func:`pending`): a worker that opens one first does so at :data:`WAITED_NICE`, and lowers
#: its priority to :data:`NICE` afterwards.
WAITED_FOR = ("pages/budgets/page.py",)
#: The priority of a worker while it opens a waited-for page: ahead of the other worker
#: (:data:`NICE`), behind the pages the user opens. At normal priority it halved the speed of
#: a page that computes much (HANNA's Reproduce 10 s after start: 6.6 s beside it, 3.9 s
#: without the warm-up).
WAITED_NICE = 5

_lock = threading.Lock()
_state: dict = {"started": False, "done": {}, "failed": {}, "procs": []}


def enabled() -> bool:
    """Whether :func:`start` launches workers in this process: not inside a worker, not
    switched off by ``JUDGESCOPE_WARMUP=0``, and under pytest only with
    ``JUDGESCOPE_WARMUP=1`` (a test process compiles what it uses; parallel test runs would
    each start two more processes)."""
    if os.environ.get(WORKER_ENV) == "1":
        return False
    switch = os.environ.get(SWITCH_ENV, "")
    if switch == "0":
        return False
    return switch == "1" or "pytest" not in sys.modules


def start(workers=WORKERS, parallel_kernels: bool = True) -> bool:
    """Start the background compilation once per process; later calls do nothing.

    ``parallel_kernels``: each worker ends by compiling the parallel twins of the batch
    kernels its pages ran (reported as ``PARALLEL_STEP`` in :func:`status`).

    Returns True when this call started it. Never raises: a warm-up that cannot start only
    means pages compile on their first visit, as they would without it.
    """
    with _lock:
        if _state["started"] or not enabled():
            return False
        _state["started"] = True
    thread = threading.Thread(
        target=_supervise, args=(workers, parallel_kernels), name="numba-warmup", daemon=True
    )
    thread.start()
    return True


def stop() -> None:
    """End the workers this process started (at exit, and for scripts that time pages)."""
    with _lock:
        procs = list(_state["procs"])
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def status() -> dict:
    """{"started": bool, "done": {page: seconds}, "failed": {page: message},
    "procs_started": int, "running": int} (workers launched, workers still running)."""
    with _lock:
        running = sum(p.poll() is None for p in _state["procs"])
        return {
            "started": _state["started"],
            "done": dict(_state["done"]),
            "failed": dict(_state["failed"]),
            "procs_started": len(_state["procs"]),
            "running": running,
        }


def pending(page: str) -> bool:
    """Whether this process's warm-up is still on its way to ``page`` (a path like
    ``pages/budgets/page.py``): started, workers running (or starting), and ``page`` not yet
    reported done or failed. A page whose first visit would compile for long can wait for
    it instead of compiling the same kernels beside it."""
    with _lock:
        if not _state["started"] or page in _state["done"] or page in _state["failed"]:
            return False
        procs = _state["procs"]
        return not procs or any(p.poll() is None for p in procs)


def _supervise(workers, parallel_kernels: bool = True) -> None:
    env = {**os.environ, WORKER_ENV: "1", "PYTHONUNBUFFERED": "1"}
    procs = []
    flag = ["--parallel"] if parallel_kernels else []
    for pages in workers:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "pages.shell.warmup", *flag, *pages],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError as err:  # no interpreter to start: pages compile on first visit
            with _lock:
                for page in pages:
                    _state["failed"][page] = str(err)
            continue
        procs.append(proc)
    with _lock:
        _state["procs"] = procs
    atexit.register(stop)
    _numba_target()
    readers = [threading.Thread(target=_read, args=(p,), daemon=True) for p in procs]
    for r in readers:
        r.start()
    for r in readers:
        r.join()


def _one(x):
    return x


def _numba_target() -> None:
    """Set up numba's CPU target in this (the server's) process: about 0.5 s, once per
    process, that the first page calling a kernel (even one on disk) otherwise pays. Done in
    the supervisor thread once the workers are launched, while the user reads the first page.
    Never raises."""
    try:
        import numba

        numba.njit(cache=False)(_one)(0)
    except Exception:  # noqa: BLE001 - only a missed head start
        pass


def _read(proc: subprocess.Popen) -> None:
    for line in proc.stdout:
        kind, _, rest = line.strip().partition(" ")
        page, _, detail = rest.partition(" ")
        with _lock:
            if kind == "done":
                _state["done"][page] = float(detail or "nan")
            elif kind == "failed":
                _state["failed"][page] = detail
    proc.wait()


# ------------------------------------------------------------------------------ worker


def visit(pages, timeout: float = 600.0, after=None) -> dict:
    """Open ``pages`` (paths like ``pages/rankings/page.py``) one after another on the demo, in
    this process, and run the kernel steps among them (:data:`KERNEL_STEPS`, e.g.
    ``kernel:bootstrap``); return {page or step: seconds or error message}. Prints ``done
    <page> <s>`` or ``failed <page> <message>`` per item as it goes (read by :func:`start`'s
    supervisor). The app opens at the first page, so kernel steps before it run at once.
    ``after``: called with each item once it is reported."""
    from streamlit.testing.v1 import AppTest

    out: dict = {}
    at = None
    for page in pages:
        t0 = time.perf_counter()
        try:
            if page in KERNEL_STEPS:
                KERNEL_STEPS[page]()
                errors = []
            else:
                if at is None:
                    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
                    at.run()
                at.switch_page(page).run()
                errors = [str(e.value).splitlines()[0][:200] for e in at.exception]
        except Exception as err:  # noqa: BLE001 - reported, never raised into the server
            errors = [f"{type(err).__name__}: {err}"]
        if errors:
            out[page] = errors[0]
            print(f"failed {page} {errors[0]}", flush=True)
        else:
            out[page] = time.perf_counter() - t0
            print(f"done {page} {out[page]:.2f}", flush=True)
        if after is not None:
            after(page)
    return out


def _bootstrap_kernels() -> None:
    """Compile the bootstrap refits the Rankings page's interval choices use (comparisons and
    contexts resampled) on a few made-up comparisons."""
    import numpy as np

    from ranking import bradley_terry

    # repeated pairs, so that the fit takes the aggregated path real data takes
    first, second = np.tile([0, 1, 2, 0, 1, 2], 20), np.tile([1, 2, 0, 2, 0, 1], 20)
    outcome = np.tile([1.0, 0.5, 0.0, 1.0, 0.0, 0.5, 0.0, 1.0, 1.0, 0.5], 12)
    for groups in (None, np.repeat(np.arange(12), 10)):
        bradley_terry(
            first=first, second=second, outcome=outcome, intervals="bootstrap", n_boot=4,
            groups=groups, random_state=0,
        )  # fmt: skip


def _long_kendall_kernel() -> None:
    """Compile the one kernel of Kendall's tau for long segments in big calls
    (``ranking.agreement.segments``: Knight's count, where numba pays), which the demo never
    reaches but HANNA's pooled correlations do (Reproduce, Human agreement): 2 s on a fresh
    install. One segment of 1,500 made-up items takes that path."""
    import numpy as np

    from ranking.agreement.segments import _kendall_segments

    rng = np.random.default_rng(0)
    x, y = rng.random(1500), rng.random(1500)
    _kendall_segments(x, y, np.array([0]), np.array([1500]))


#: Worker steps that compile kernels no demo page reaches (or reaches late), by name.
KERNEL_STEPS = {
    "kernel:long-kendall": _long_kendall_kernel,
    "kernel:bootstrap": _bootstrap_kernels,
}


def compile_parallel() -> float:
    """Compile the parallel twins of every batch kernel this process ran serially, with the
    same argument types (numba's disk cache keeps them); prints ``done parallel-kernels <s>``
    or ``failed parallel-kernels <message>``. Returns the seconds taken."""
    t0 = time.perf_counter()
    try:
        from ranking._core import jit

        for kernel in list(jit.BATCH_KERNELS):
            kernel.compile_parallel()
    except Exception as err:  # noqa: BLE001 - reported, never raised into the server
        print(f"failed {PARALLEL_STEP} {type(err).__name__}: {err}"[:300], flush=True)
        return time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    print(f"done {PARALLEL_STEP} {seconds:.2f}", flush=True)
    return seconds


def main(argv: list[str]) -> None:
    """A worker: open ``argv``'s pages (all of :data:`WORKERS` when none), then with
    ``--parallel`` compile the parallel twins. Returns normally (it never exits the process
    itself: the module is importable, and a server must never be stopped by it)."""
    os.environ[WORKER_ENV] = "1"
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    parallel = "--parallel" in argv
    targets = [a for a in argv if a != "--parallel"] or [p for group in WORKERS for p in group]
    niceness = [0]

    def lower(level: int) -> None:
        if level <= niceness[0]:
            return
        try:
            os.nice(level - niceness[0])
        except (AttributeError, OSError):  # no os.nice (Windows) or not allowed: same priority
            pass
        niceness[0] = level

    pages = [t for t in targets if t not in KERNEL_STEPS]
    lower(WAITED_NICE if pages and pages[0] in WAITED_FOR else NICE)
    visit(targets, after=lambda item: None if item in KERNEL_STEPS else lower(NICE))
    if parallel:
        compile_parallel()
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
