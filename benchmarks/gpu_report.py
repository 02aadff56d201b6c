"""One markdown table from ``gpu_throughput.py --json`` figures (and the tests' outcome).

    .venv/bin/python benchmarks/gpu_report.py figures.json [--tests-log pytest.log] [--out DIR]

Prints the table and, with ``--out``, writes it to ``DIR/gpu_report.md``: a heading line with
the card, torch / CUDA / transformers versions, dtype and date; one row per model x batch size
(comparisons/s, estimated TFLOP/s and its share of the card's bf16 peak and of the job's FLOP
floor at the measured matmul ceiling, the ratio to one at a time and to a plain transformers
forward, peak memory, the profiler's GEMM / attention / other shares of GPU time and GPU busy
share of wall time); then the matmul ceiling and the tests' last line. Missing figures show
as "-" (e.g. "skipped: no CUDA" for the profile on CPU).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

COLUMNS = (
    "model",
    "batch",
    "comparisons/s",
    "est. TFLOP/s",
    "share of bf16 peak",
    "share of FLOP floor",
    "vs one at a time",
    "plain forward prompts/s",
    "vs plain forward",
    "peak memory",
    "GEMM / attention / other (GPU time)",
    "GPU busy (of wall)",
)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _num(x, fmt=".1f", suffix="") -> str:
    return "-" if x is None else f"{x:{fmt}}{suffix}"


def floor_rate(row: dict, matmul: dict | None) -> float | None:
    """Comparisons/s if every estimated FLOP ran at the matmul ceiling."""
    if not matmul or not row.get("flops_per_comparison"):
        return None
    return matmul["tflops"] * 1e12 / row["flops_per_comparison"]


def table_row(row: dict, matmul: dict | None) -> list[str]:
    prof = row.get("profile") or {}
    if "skipped" in prof:
        shares = busy = f"skipped: {prof['skipped']}"
    elif prof:
        shares = " / ".join(
            _pct(prof.get(f"{k}_share")).replace(" ", "") for k in ("gemm", "attention", "other")
        )
        busy = _pct(prof.get("gpu_busy_share"))
    else:
        shares = busy = "-"
    floor = floor_rate(row, matmul)
    return [
        row["model"],
        str(row["batch"]),
        _num(row["comparisons_per_s"])
        + (f" ({row['n_errors']} errors)" if row["n_errors"] else ""),
        _num(row.get("tflops"), ".3g"),
        _pct(row.get("share_of_peak")),
        _pct(row["comparisons_per_s"] / floor if floor else None),
        _num(row.get("vs_one_at_a_time"), ".1f", "×"),
        _num(row.get("plain_forward_per_s")),
        _num(row.get("vs_plain_forward"), ".2f", "×"),
        _num(row.get("peak_memory_gib"), ".1f", " GiB"),
        shares,
        busy,
    ]


def tests_line(log_text: str) -> str:
    """pytest's summary line ("12 passed, 3 skipped in 4.0s") from its output, or a note."""
    for line in reversed(log_text.strip().splitlines()):
        if re.search(r"\b(passed|failed|error|errors|skipped|no tests ran)\b", line):
            return line.strip(" =")
    return "no pytest summary line found"


def render(report: dict, tests: str | None = None) -> str:
    env, rows, matmul = report["env"], report["rows"], report.get("matmul")
    job = env.get("job", {})
    pairs = job.get("n_candidates", 0) * (job.get("n_candidates", 0) - 1)
    head = (
        f"**{env['card']}** · torch {env['torch']}"
        + (f" (CUDA {env['cuda']})" if env.get("cuda") else "")
        + f" · transformers {env['transformers']} · {env['dtype']} · {env['date']}"
        + (
            " · SMOKE RUN (tiny models on CPU: the figures check the script, not a card)"
            if env.get("smoke")
            else ""
        )
    )
    job_line = (
        f"Job: {job.get('n_contexts')} contexts × {pairs} ordered pairs"
        + (
            f", ~{rows[0]['prompt_tokens']:.0f} prompt tokens each"
            if rows and rows[0].get("prompt_tokens")
            else ""
        )
        + (
            f"; bf16 peak {env['peak_bf16_tflops']:.0f} TFLOP/s"
            if env.get("peak_bf16_tflops")
            else "; no bf16 peak figure for this device"
        )
    )
    lines = [head, "", job_line, ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        lines.append("| " + " | ".join(table_row(row, matmul)) + " |")
    lines.append("")
    if matmul:
        lines.append(
            f"Matmul ceiling: {matmul['n']}³ {matmul['dtype']} at {matmul['tflops']:.3g} TFLOP/s "
            "(the FLOP floor column divides by it)."
        )
    else:
        lines.append("Matmul ceiling: not measured.")
    seen = set()
    for row in rows:  # tokens per comparison and the floor do not depend on the batch size
        floor = floor_rate(row, matmul)
        if floor and row["model"] not in seen:
            seen.add(row["model"])
            lines.append(
                f"- {row['model']}: {row['tokens_per_comparison']:.0f} tokens per comparison, "
                f"FLOP floor {floor:,.0f} comparisons/s"
            )
    if tests is not None:
        lines.append(f"\nTests: {tests}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", type=Path, help="JSON written by gpu_throughput.py --json")
    parser.add_argument("--tests-log", type=Path, help="pytest output to take the summary from")
    parser.add_argument("--out", type=Path, help="folder to write gpu_report.md into")
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.figures.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"cannot read the figures {args.figures}: {exc}. Run gpu_throughput.py --json.")
    tests = None
    if args.tests_log is not None:
        tests = (
            tests_line(args.tests_log.read_text(errors="replace"))
            if args.tests_log.exists()
            else f"no log at {args.tests_log}"
        )
    text = render(report, tests)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_report.md").write_text(text)
    return text


if __name__ == "__main__":
    main()
