"""Timing loops the benchmark scripts share (each script still prints its own lines).

A script run as ``python benchmarks/bench_x.py`` has ``benchmarks/`` first on ``sys.path``,
so ``from _timing import median_ms`` finds this file.
"""

from __future__ import annotations

import statistics
import time


def median_ms(fn, repeats, warm_up=True):
    """Median wall time of ``repeats`` calls of ``fn``, in milliseconds; with ``warm_up`` one
    call first that is not counted (numba compile or cache load, first allocations)."""
    if warm_up:
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def wall_and_cpu(fn, repeats):
    """The wall times and the CPU times (all threads of the process) of ``repeats`` calls of
    ``fn``, in seconds. On a shared machine the CPU time shows what the work costs when the
    cores are busy with others; on a quiet machine wall time is about CPU time / threads."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus
