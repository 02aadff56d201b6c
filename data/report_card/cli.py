"""The command line of :mod:`data.report_card`: a benchmark's judge table as text.

    python -m data.report_card --benchmark llmbar [--attribute A] [--unparsed wrong|skip]
        [--categories subset|source] [--usage FILE] [--data-dir DIR]

One line per judge: n (pairs scored), accuracy [Wilson interval], positional agreement (right
in both orders), consistency, first-position rate, ECE (judges with probabilities) and the
cost per 1,000 judgments. Judge runs live in the judge layer's run store, which ``data``
does not read: ``--usage`` takes the usage table as CSV (columns
:data:`data.report_card.USAGE_COLUMNS`; ``judge.runs.usage.judge_usage(...).to_csv(FILE)``
writes it); without it the cost column is "–".
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

import pandas as pd

from data.report_card.card import USAGE_COLUMNS, card, category_table, judge_table, with_cost
from data.report_card.pairs import LEVELS, UNPARSED
from data.schema import DataError

DESCRIPTION = "A benchmark's judges against the known answers of its pairs."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m data.report_card", description=DESCRIPTION)
    p.add_argument("--benchmark", required=True, help="a benchmark name, e.g. llmbar")
    p.add_argument("--attribute", default=None, help="the attribute (default: every one)")
    p.add_argument(
        "--unparsed",
        choices=UNPARSED,
        default="wrong",
        help="an unparsed verdict counts as wrong (default, as LLMBar counts) or is left out",
    )
    p.add_argument(
        "--categories", choices=LEVELS, default=None, help="also print accuracy per category"
    )
    p.add_argument("--usage", metavar="FILE", help="usage CSV of judges run here (the cost)")
    p.add_argument("--data-dir", metavar="DIR", help="the data folder (default ../shared/data)")
    return p


def _num(value, digits: int = 3) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(v) else f"{v:.{digits}f}"


def render(table: pd.DataFrame) -> str:
    """The judge table as aligned text (the columns the issue names)."""
    head = [
        "judge",
        "n",
        "accuracy [95% CI]",
        "pos. agreement",
        "consistency",
        "first-pos. rate",
        "ECE",
        "$ / 1k",
    ]
    cells = []
    for r in table.itertuples(index=False):
        acc = f"{_num(r.accuracy)} [{_num(r.lower)}, {_num(r.upper)}]"
        usd = getattr(r, "usd_per_1k", math.nan)
        cells.append(
            [
                str(r.judge),
                f"{int(r.n):,}",
                acc,
                _num(r.positional_agreement),
                _num(r.consistency),
                _num(r.first_position_rate),
                _num(r.ece),
                _num(usd, 4),
            ]
        )
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(head)]

    def line(values):
        return "  ".join(
            v.ljust(widths[i]) if i == 0 else v.rjust(widths[i]) for i, v in enumerate(values)
        ).rstrip()

    return "\n".join([line(head), *(line(c) for c in cells)])


def _usage(path: str | None) -> pd.DataFrame | None:
    if not path:
        return None
    try:
        usage = pd.read_csv(path)
    except (OSError, ValueError) as err:
        raise DataError(f"cannot read the usage table {path}: {err}") from err
    missing = [c for c in USAGE_COLUMNS if c not in usage.columns]
    if missing:
        raise DataError(f"{path}: the usage table needs columns {missing}")
    return usage


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2: bad input or no pair with gold)."""
    from data.benchmarks import load_benchmark

    args = _parser().parse_args(argv)
    try:
        ds = load_benchmark(args.benchmark, args.data_dir)
        usage = _usage(args.usage)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    c = card(ds, args.attribute, unparsed=args.unparsed)
    if not len(c.gold.scored) or not c.judges:
        print(
            f"error: {args.benchmark} has no pair with both a human (gold) verdict and a judge "
            "verdict: nothing to score",
            file=sys.stderr,
        )
        return 2
    table = with_cost(judge_table(c), c, usage)
    print(
        f"{ds.name}: {len(c.gold.scored):,} pairs with a gold winner, {len(c.judges)} judges "
        f"(unparsed verdicts {'count as wrong' if args.unparsed == 'wrong' else 'left out'})"
    )
    print(render(table))
    if args.categories:
        cats = category_table(c, level=args.categories)
        if not len(cats):
            print("\nno category: the context ids are not '<category>/<id>'")
        else:
            wide = cats.pivot(index="judge", columns="category", values="accuracy")
            print(f"\naccuracy per {args.categories}")
            print(wide.round(3).to_string())
    return 0
