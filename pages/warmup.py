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
machine and the server stays responsive.

Once the cache is filled the workers find everything compiled and end within seconds; with
``JUDGESCOPE_WARMUP=0`` in the environment nothing is started.

    python -m pages.warmup [page ...]     # compile what those pages need, now, and report
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose first visit compiles numba kernels, split over the workers; each worker
#: visits its pages in this order (most visited first).
WORKERS = (
    ("pages/rankings.py", "pages/agreement.py", "pages/leaderboard.py"),
    ("pages/position_bias.py", "pages/budgets.py", "pages/prompts.py"),
)
#: Set in the workers' environment, so the app they open does not start workers itself.
WORKER_ENV = "JUDGESCOPE_WARMUP_WORKER"
#: ``0`` disables the warm-up (tests that time or count compilation themselves).
SWITCH_ENV = "JUDGESCOPE_WARMUP"

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


def start(workers=WORKERS) -> bool:
    """Start the background compilation once per process; later calls do nothing.

    Returns True when this call started it. Never raises: a warm-up that cannot start only
    means pages compile on their first visit, as they would without it.
    """
    with _lock:
        if _state["started"] or not enabled():
            return False
        _state["started"] = True
    thread = threading.Thread(target=_supervise, args=(workers,), name="numba-warmup", daemon=True)
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


def _supervise(workers) -> None:
    env = {**os.environ, WORKER_ENV: "1", "PYTHONUNBUFFERED": "1"}
    procs = []
    for pages in workers:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "pages.warmup", *pages],
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
    readers = [threading.Thread(target=_read, args=(p,), daemon=True) for p in procs]
    for r in readers:
        r.start()
    for r in readers:
        r.join()


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


def visit(pages, timeout: float = 600.0) -> dict:
    """Open ``pages`` (paths like ``pages/rankings.py``) one after another on the demo, in
    this process; return {page: seconds or error message}. Prints ``done <page> <s>`` or
    ``failed <page> <message>`` per page as it goes (read by :func:`start`'s supervisor)."""
    from streamlit.testing.v1 import AppTest

    out: dict = {}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    try:
        at.run()
    except Exception as err:  # noqa: BLE001 - reported, never raised into the server
        for page in pages:
            out[page] = f"the app did not open: {err}"
            print(f"failed {page} {out[page]}", flush=True)
        return out
    for page in pages:
        t0 = time.perf_counter()
        try:
            at.switch_page(page).run()
            errors = [str(e.value).splitlines()[0][:200] for e in at.exception]
        except Exception as err:  # noqa: BLE001
            errors = [f"{type(err).__name__}: {err}"]
        if errors:
            out[page] = errors[0]
            print(f"failed {page} {errors[0]}", flush=True)
        else:
            out[page] = time.perf_counter() - t0
            print(f"done {page} {out[page]:.2f}", flush=True)
    return out


if __name__ == "__main__":
    os.environ[WORKER_ENV] = "1"
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    targets = sys.argv[1:] or [p for group in WORKERS for p in group]
    visit(targets)
    sys.stdout.flush()
    os._exit(0)
