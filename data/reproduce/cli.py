"""The command line of :mod:`data.reproduce`: print a paper's table, or write it as JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

import pandas as pd

from data.reproduce import COLUMNS, PAPERS, rows
from data.schema import DataError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m data.reproduce",
        description="A paper's published numbers beside the ones JudgeScope computes.",
    )
    p.add_argument("paper", help=f"one of: {', '.join(PAPERS)}")
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON records here")
    p.add_argument("--data-dir", metavar="DIR", help="the data folder (default ../shared/data)")
    return p


def _cell(value, digits: int = 3) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def render(table: pd.DataFrame, width: int = 60) -> str:
    """The table as aligned text: ref, quantity (cut to ``width``), published, computed,
    abs_diff, status, note."""
    cols = ["ref", "quantity", "published", "computed", "abs_diff", "status", "note"]
    cells = [[_cell(v) for v in rec] for rec in table[cols].itertuples(index=False)]
    for c in cells:
        if len(c[1]) > width:
            c[1] = c[1][: width - 1] + "…"
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(cols[:-1])]
    numeric = {2, 3, 4}

    def line(values):
        parts = [
            v.rjust(widths[i]) if i in numeric else v.ljust(widths[i])
            for i, v in enumerate(values[:-1])
        ]
        return "  ".join(parts + [values[-1]]).rstrip()

    return "\n".join([line(cols), *(line(c) for c in cells)])


def records(table: pd.DataFrame) -> list[dict]:
    """JSON-ready records: NaN becomes null."""
    out = []
    for rec in table.to_dict(orient="records"):
        out.append(
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2: unknown paper or bad data)."""
    args = _parser().parse_args(argv)
    if args.paper not in PAPERS:
        print(f"unknown paper {args.paper!r}; known papers: {', '.join(PAPERS)}", file=sys.stderr)
        return 2
    try:
        table = rows(args.paper, args.data_dir)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        keep = [*COLUMNS, "page", "settings", "tolerance", "bound", "status"]
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(records(table[keep]), fh, indent=1, ensure_ascii=False)
        except OSError as err:
            print(f"error: cannot write {args.json}: {err}", file=sys.stderr)
            return 2
    print(f"{PAPERS[args.paper].title}")
    print(render(table))
    counts = table["status"].value_counts()
    print("\n" + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    if args.json:
        print(f"wrote {len(table)} rows to {args.json}")
    return 0
