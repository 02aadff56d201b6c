"""Timing of the benchmark loaders: first (uncached) load and cached load, per benchmark.

    .venv/bin/python benchmarks/bench_load_benchmarks.py [--repeats 3] [--names hanna ...]

Per benchmark it prints the median wall and CPU time of a first load (the in-memory cache
cleared before each repeat; includes parsing the published judge answers and validation)
and the median of a cached load (file stat + shallow copies). Target: a few seconds for a
first load, milliseconds for a cached one. No other library loads these sets, so the peer
is the floor: reading the same files' bytes from disk (``read bytes``), with the ratio.
The one-off import of the package is timed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _timed(fn) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--names", nargs="*", default=None)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    import data.benchmarks as b

    print(f"import data.benchmarks: {time.perf_counter() - t0:.2f} s (one-off)")
    names = args.names or [info.name for info in b.list_benchmarks()]
    print(
        f"{'benchmark':22s} {'first wall':>10s} {'first cpu':>10s} {'cached':>9s} "
        f"{'read bytes':>10s} {'first/read':>10s}"
    )
    for name in names:
        files = b.benchmark_files(name)
        firsts, cpus, cached, reads = [], [], [], []
        for _ in range(args.repeats):
            reads.append(_timed(lambda files=files: [p.read_bytes() for p in files.values()])[0])
            b.clear_cache()
            wall, cpu = _timed(lambda name=name: b.load_benchmark(name))
            firsts.append(wall)
            cpus.append(cpu)
            cached.append(_timed(lambda name=name: b.load_benchmark(name))[0])
        first, read = statistics.median(firsts), statistics.median(reads)
        print(
            f"{name:22s} {first:9.2f}s {statistics.median(cpus):9.2f}s "
            f"{statistics.median(cached) * 1e3:7.1f}ms {read * 1e3:8.1f}ms {first / read:9.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
