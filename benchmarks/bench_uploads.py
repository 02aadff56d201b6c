"""Uploads read within bounds (issue 23, items 8 and 10): peak memory of Parquet dictionary
bombs, and the CPU a wide CSV's preview costs.

    .venv/bin/python benchmarks/bench_uploads.py [--bombs] [--wide] [--repeats 5]

``--bombs``: each bomb is read by ``data.io.read_frame`` (the upload path) in a child process
under an address-space cap (``BENCH_CAP`` bytes, default 10 GiB, so a bomb fails there, not
the machine); printed: the file's size, what happened, the child's peak RSS (VmHWM) and the
RSS the read added, and its CPU seconds. The bombs are dictionary-encoded text columns
(``tests.data.test_fuzz_workspace.dictionary_bomb``): 5 KB -> 5.5 GB of text and 9 KB ->
10.2 GB.

``--wide``: a 10.9 KB CSV of 1,000 columns (two id columns and 998 score columns, two
rows): median wall and CPU of ``data.io.preview_upload`` on first sight, again on the same
bytes (what Streamlit reruns do on every widget change), and with a changed mapping.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOMBS = {"5 KB": (1_000_000, 5_500), "9 KB": (1_700_000, 6_000)}


def bomb_child(rows: int, width: int, cap: int) -> dict:
    """Run in a child: read the bomb as an upload under the cap."""
    from data.io import read_frame
    from tests.data.test_fuzz_workspace import dictionary_bomb, status_bytes

    body = dictionary_bomb(rows, width)
    resource.setrlimit(resource.RLIMIT_AS, (status_bytes("VmSize") + cap,) * 2)
    rss0, t0 = status_bytes("VmHWM"), time.process_time()
    try:
        read_frame("bomb.parquet", body)
        result = "read"
    except BaseException as err:  # MemoryError at the cap is the finding, not a failure
        result = f"{type(err).__name__}: {str(err)[:140]}"
    return {
        "bytes": len(body),
        "expands_to": rows * width,
        "result": result,
        "peak_rss_mb": round(status_bytes("VmHWM") / 2**20),
        "added_rss_mb": round((status_bytes("VmHWM") - rss0) / 2**20),
        "cpu_s": round(time.process_time() - t0, 2),
    }


def bombs() -> None:
    cap = int(os.environ.get("BENCH_CAP", 10 * 2**30))
    for label, (rows, width) in BOMBS.items():
        code = (
            "import json, sys; sys.path.insert(0, '.'); "
            "from benchmarks.bench_uploads import bomb_child; "
            f"print('RESULT' + json.dumps(bomb_child({rows}, {width}, {cap})))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
        )
        out = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
        if out:
            print(label, out[-1][len("RESULT") :])
        else:  # e.g. std::bad_alloc aborts the process
            print(label, f"child died (rc {proc.returncode}): {proc.stderr.strip()[-300:]}")


def wide_csv() -> bytes:
    header = ["context_id", "candidate_id"] + [f"sc{k:03d}" for k in range(998)]
    rows = [["c1", c] + [str((k + j) % 10) for k in range(998)] for j, c in enumerate("ab")]
    return "".join(",".join(r) + "\n" for r in [header, *rows]).encode()


def wide(repeats: int) -> None:
    from data.io import preview_upload

    data = wide_csv()
    n_cols = data.split(b"\n")[0].count(b",") + 1
    print(f"wide CSV: {len(data):,} bytes, {n_cols:,} columns")

    def timed(fn):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        return time.perf_counter() - t0, time.process_time() - c0, out

    first, again, changed = [], [], []
    for k in range(repeats):
        body = data + b"\n" * k  # new bytes each repeat: a first sight, not a cached one
        first.append(timed(lambda body=body: preview_upload("wide.csv", body))[:2])
        wall, cpu, preview = timed(lambda body=body: preview_upload("wide.csv", body))
        again.append((wall, cpu))
        mapping = preview.mapping
        if mapping is not None and hasattr(mapping, "attributes"):
            import dataclasses

            kept = dict(list(mapping.attributes.items())[:-1])  # one score column dropped
            mapping = dataclasses.replace(mapping, attributes=kept)
        changed.append(
            timed(lambda body=body, m=mapping: preview_upload("wide.csv", body, "wide", m))[:2]
        )
    for label, runs in (("first", first), ("same bytes", again), ("mapping changed", changed)):
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  preview, {label:16s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  (median of {repeats})")
    print(f"  kind {preview.kind!r}, error {preview.error!s:.120}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bombs", action="store_true")
    parser.add_argument("--wide", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.bombs or not args.wide:
        bombs()
    if args.wide or not args.bombs:
        wide(args.repeats)
    print(json.dumps({"load": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
