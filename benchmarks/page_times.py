"""First-visit and repeat-visit times of every page, per bundled benchmark (issue 11, item 11).

Each measurement runs in a fresh Python process (one per page and benchmark), the way a user
meets the app: ``streamlit.testing`` runs ``app.py`` (the Data page opens, the warm-up thread
starts), the benchmark is put in session state as the sidebar's loader would, then the test
switches to the page and times that run. Three kinds:

``cold``
    an empty numba cache (``NUMBA_CACHE_DIR`` is a new temporary folder), the page visited
    as soon as the app is open: what a fresh install's first visit costs.
``open10``
    the same, but the page is visited 10 s after the app's first run started (the warm-up
    workers have had 10 s to compile in the background): issue 26's "fresh clone, warm-up
    on, app open 10 s after start", the condition of its <= 5 s first visit.

``ready``: a page that waits for the warm-up instead of compiling beside it (Comparison
budgets, see :data:`WAITING`) paints its settings first; ``ready`` is the time from the
start of its first visit until a rerun (what its polling fragment triggers every 2 s) shows
the results. Otherwise ``ready`` equals ``first``.
``warm``
    the numba cache on disk is filled (by an earlier run), so a new process loads compiled
    code; the page's first visit (nothing in Streamlit's caches) and a second visit are timed.

Benchmark loading is timed apart (``load``): the sidebar's loader pays it once per server.

Usage (from the repository root)::

    python benchmarks/page_times.py --kind cold --benchmarks demo --repeats 3
    python benchmarks/page_times.py --kind warm --benchmarks all
    python benchmarks/page_times.py --kind open10 --benchmarks demo --pages rankings,budgets

``--compile-log`` prints, per page, the numba functions compiled during the visit and the
seconds each took (numba's event API), which tells what a page makes numba compile.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PAGES = {
    "data": "pages/data/page.py",
    "judge": "pages/judge/page.py",
    "rankings": "pages/rankings/page.py",
    "leaderboard": "pages/leaderboard/page.py",
    "examples": "pages/examples/page.py",
    "bias": "pages/position_bias/page.py",
    "judge-bias": "pages/judge_bias/page.py",
    "rationales": "pages/rationales/page.py",
    "budgets": "pages/budgets/page.py",
    "agreement": "pages/agreement/page.py",
    "prompts": "pages/prompts/page.py",
    "reproduce": "pages/reproduce/page.py",
    "report": "pages/report/page.py",
    "report-card": "pages/report_card/page.py",
}

#: Pages that may show their settings first and wait for the warm-up: their session flag.
WAITING = {"budgets": "budget.waiting"}


# ---------------------------------------------------------------------------------- child


def _child(page: str, benchmark: str, kind: str, compile_log: bool) -> dict:
    """Runs in the fresh process: open the app, (wait), visit ``page``; return the times."""
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    compiled: list[tuple[str, float]] = []
    if compile_log:
        from numba.core import event

        class _Listener(event.Listener):
            # a compile may trigger nested compiles (callees): keep a stack so each entry
            # records its own time without its callees' ("self" seconds), and its signature
            def __init__(self):
                self._stack = []

            def on_start(self, ev):
                self._stack.append([time.perf_counter(), 0.0])

            def on_end(self, ev):
                t_start, nested = self._stack.pop()
                total = time.perf_counter() - t_start
                if self._stack:
                    self._stack[-1][1] += total
                fn = ev.data["dispatcher"].py_func
                sig = ",".join(str(a) for a in ev.data.get("args", ()))
                compiled.append((f"{fn.__module__}.{fn.__qualname__}", total - nested, sig[:160]))

        event.register("numba:compile", _Listener())

    from streamlit.testing.v1 import AppTest

    import data

    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    ds = data.demo_dataset() if benchmark == "demo" else data.load_benchmark(benchmark)
    t_load = time.perf_counter() - t1

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    if benchmark != "demo":
        at.session_state["app.datasets"] = {"demo": data.demo_dataset(), benchmark: ds}
        at.session_state["app.active"] = benchmark
    t2 = time.perf_counter()
    at.run()
    t_open = time.perf_counter() - t2
    if kind == "open10":
        time.sleep(max(0.0, 10.0 - t_open))
    n_before = len(compiled)
    t3 = time.perf_counter()
    at.switch_page(PAGES[page]).run()
    t_first = time.perf_counter() - t3
    first_compiled = compiled[n_before:]
    errors = [str(e.value)[:300] for e in at.exception]
    # a page that waits for the warm-up (Comparison budgets on a fresh install) shows its
    # settings first: "ready" is when a rerun (what its polling fragment triggers) shows
    # the results, counted from the start of the first visit
    t_ready = t_first
    while _waiting(at, page) and time.perf_counter() - t3 < 600:
        time.sleep(1.0)
        at.run()
        t_ready = time.perf_counter() - t3
    # second visit: another page, then back
    at.switch_page(PAGES["data"] if page != "data" else PAGES["judge"]).run()
    t4 = time.perf_counter()
    at.switch_page(PAGES[page]).run()
    t_second = time.perf_counter() - t4
    from pages.shell import warmup

    warm_status = warmup.status()
    warmup.stop()  # its workers write into this run's cache folder: end them with the run
    return {
        "page": page,
        "benchmark": benchmark,
        "kind": kind,
        "warmup_done": warm_status["done"],
        "import": t_import,
        "load": t_load,
        "open": t_open,
        "first": t_first,
        "second": t_second,
        "ready": t_ready,
        "errors": errors,
        "compiled": sorted(first_compiled, key=lambda x: -x[1]),
    }


def _waiting(at, page: str) -> bool:
    """Whether ``page`` is waiting for the background warm-up (its ``<prefix>.waiting`` flag)."""
    key = WAITING.get(page)
    return bool(key and key in at.session_state and at.session_state[key])


# --------------------------------------------------------------------------------- parent


def _one(page: str, benchmark: str, kind: str, cache_dir: str | None, compile_log: bool) -> dict:
    env = dict(os.environ)
    tmp = None
    if kind in ("cold", "open10"):
        tmp = tempfile.TemporaryDirectory(prefix="numba-cold-")
        env["NUMBA_CACHE_DIR"] = tmp.name
    elif cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    cmd = [sys.executable, __file__, "--child", page, benchmark, kind]
    if compile_log:
        cmd.append("--compile-log")
    try:
        out = subprocess.run(
            cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
    for line in out.stdout.splitlines()[::-1]:
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"page": page, "benchmark": benchmark, "kind": kind, "errors": [out.stderr[-800:]]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=["cold", "open10", "warm"], default="warm")
    ap.add_argument("--pages", default="all", help="comma-separated: " + ",".join(PAGES))
    ap.add_argument("--benchmarks", default="demo", help="comma-separated names, or all")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--cache-dir",
        default=None,
        help="warm: the numba cache folder to use (default: numba's own, under __pycache__)",
    )
    ap.add_argument("--compile-log", action="store_true")
    ap.add_argument("--compile-top", type=int, default=15, help="compile-log lines per page")
    ap.add_argument("--json", default=None, help="also write every result to this file")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    import data

    pages = list(PAGES) if args.pages == "all" else args.pages.split(",")
    if args.benchmarks == "all":
        from data.paths import data_dirs

        folder = data_dirs()[0]
        names = ["demo"] + [
            b.name for b in data.list_benchmarks() if all((folder / f).is_file() for f in b.files)
        ]
    else:
        names = args.benchmarks.split(",")

    results = []
    print(f"kind={args.kind} repeats={args.repeats}  (seconds; median over repeats)")
    print(
        f"{'benchmark':<12} {'page':<10} {'first':>7} {'second':>7} {'open':>6} {'load':>6} "
        f"{'ready':>6}"
    )
    for name in names:
        for page in pages:
            runs = [
                _one(page, name, args.kind, args.cache_dir, args.compile_log)
                for _ in range(args.repeats)
            ]
            results.extend(runs)
            ok = [r for r in runs if "first" in r]
            errs = sorted({e for r in runs for e in r.get("errors", [])})
            if not ok:
                print(f"{name:<12} {page:<10} failed: {errs}")
                continue

            def med(key, ok=ok):
                return statistics.median(r[key] for r in ok)

            print(
                f"{name:<12} {page:<10} {med('first'):7.2f} {med('second'):7.2f} "
                f"{med('open'):6.2f} {med('load'):6.2f} {med('ready'):6.2f}"
                + (f"  errors: {errs}" if errs else ""),
                flush=True,
            )
            if args.compile_log:
                for fn, sec, sig in ok[0]["compiled"][: args.compile_top]:
                    print(f"      compiled {sec:6.2f} s  {fn}({sig})")
                total = sum(c[1] for c in ok[0]["compiled"])
                n_fn = len({c[0] for c in ok[0]["compiled"]})
                print(
                    f"      {len(ok[0]['compiled'])} compiles of {n_fn} functions, "
                    f"{total:.1f} s (self time, callees apart)"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        res = _child(sys.argv[2], sys.argv[3], sys.argv[4], "--compile-log" in sys.argv)
        print("RESULT " + json.dumps(res))
        sys.stdout.flush()
        os._exit(0)  # a warm-up thread may still be compiling: do not wait for it
    main()
