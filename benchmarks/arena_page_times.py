"""Load and page times of an Arena-Hard-style upload (issue 22 item 5): 76 systems x 500
questions x 2 games by default (``benchmarks/arena_upload.py``).

Each repeat runs in a fresh Python process with the numba cache on disk already filled (the
"warm" kind of ``benchmarks/page_times.py``): the upload is read through the Data page's
reader (``data.io.read_upload_result``, the first judgment file as the upload, the rest as
its companions: ``load``), put in session state as the Data page does, then
``streamlit.testing`` opens the app and visits each page in turn (``first``: nothing in
Streamlit's caches yet; a page visited later may reuse what an earlier page cached, as a user
going from page to page does) and then each page again (``second``). Wall seconds, and the
process's CPU seconds beside them (the machine may be shared).

Usage (from the repository root)::

    python benchmarks/arena_page_times.py [--repeats 3] [--models 76] [--questions 500]
        [--pages rankings,leaderboard,bias] [--texts]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {
    "rankings": "pages/rankings/page.py",
    "leaderboard": "pages/leaderboard/page.py",
    "bias": "pages/position_bias/page.py",
}


def _child(pages: list[str], models: int, questions: int, texts: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import arena_upload

    files, _ = arena_upload.build(models, questions, texts=texts)
    from streamlit.testing.v1 import AppTest

    t0, c0 = time.perf_counter(), time.process_time()
    result = arena_upload.load(files)
    out = {"load": time.perf_counter() - t0, "load_cpu": time.process_time() - c0}
    ds = result.dataset
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.session_state["app.datasets"] = {ds.name: ds}
    at.session_state["app.active"] = ds.name
    at.run()
    errors = []
    for visit in ("first", "second"):
        for page in pages:
            t, c = time.perf_counter(), time.process_time()
            at.switch_page(PAGES[page]).run()
            out[f"{page}:{visit}"] = time.perf_counter() - t
            out[f"{page}:{visit}:cpu"] = time.process_time() - c
            errors += [f"{page}: {str(e.value)[:300]}" for e in at.exception]
    out["errors"] = errors
    from pages.shell import warmup

    warmup.stop()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", type=int, default=76)
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--pages", default=",".join(PAGES))
    ap.add_argument("--texts", action="store_true", help="with model answers (texts)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    runs = []
    for _ in range(args.repeats):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            args.pages,
            str(args.models),
            str(args.questions),
            "1" if args.texts else "0",
        ]
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        line = next((x for x in out.stdout.splitlines()[::-1] if x.startswith("RESULT ")), None)
        if line is None:
            print("failed:", out.stderr[-1500:])
            continue
        runs.append(json.loads(line[len("RESULT ") :]))
        print(
            f"run {len(runs)}: "
            + ", ".join(f"{k} {v:.2f}" for k, v in runs[-1].items() if isinstance(v, float)),
            flush=True,
        )
    if not runs:
        return
    keys = [k for k, v in runs[0].items() if isinstance(v, float)]
    print(
        f"\n{args.models} systems x {args.questions} questions x 2 games, "
        f"median of {len(runs)} (seconds; wall, cpu)"
    )
    for k in keys:
        if k.endswith(":cpu") or k == "load_cpu":
            continue
        cpu = f"{k}:cpu" if f"{k}:cpu" in runs[0] else ("load_cpu" if k == "load" else None)
        wall = statistics.median(r[k] for r in runs)
        c = statistics.median(r[cpu] for r in runs) if cpu else float("nan")
        print(f"  {k:<20} {wall:6.2f}  {c:6.2f}")
    errs = sorted({e for r in runs for e in r["errors"]})
    if errs:
        print("errors:", errs)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        res = _child(sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
        print("RESULT " + json.dumps(res))
        sys.stdout.flush()
        os._exit(0)
    main()
