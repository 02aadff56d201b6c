"""``python -m data.bias BENCHMARK --judge J [--attribute A ...]``: a judge's bias tables.

Prints, per attribute, the position-bias profile (one row and per gap bin), the transitivity
totals, the length preference and style coefficients, and the calibration table.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from data.schema import DataError


def _show(title: str, df: pd.DataFrame, out) -> None:
    print(f"\n## {title}", file=out)
    print(
        df.to_string(index=False, float_format=lambda x: f"{x:.3f}") if len(df) else "(none)",
        file=out,
    )


def report(ds, attribute: str, judge: str, out=sys.stdout) -> None:
    """Print every bias table of ``judge`` on ``attribute`` to ``out``."""
    from data import bias

    print(f"\n# {ds.name}: {judge} on {attribute}", file=out)
    summary = bias.profile_summary(ds, attribute, judge)
    reasons = summary.pop("reasons").iloc[0]
    _show(
        "Position-bias profile",
        summary.T.reset_index().set_axis(["statistic", "value"], axis=1),
        out,
    )
    for k, v in reasons.items():
        print(f"  {k}: {v}", file=out)
    _show(
        f"By quality gap ({summary['gap_source'].iloc[0]})",
        bias.profile_by_gap(ds, attribute, judge),
        out,
    )
    cyc = bias.cycles_summary(ds, attribute, judge)
    print(
        f"\n## Transitivity\n  circular triads {cyc.attrs.get('total_circular')} of "
        f"{cyc.attrs.get('total_triads')} checked; comparisons disagreeing with the judge's own "
        f"Bradley–Terry fit: {cyc.attrs.get('bt_disagreement', float('nan')):.3f}",
        file=out,
    )
    for title, fn in (
        ("Length preference", bias.length_preference),
        ("Style coefficients", bias.style_coefficients),
        ("Calibration", bias.calibration_table),
    ):
        try:
            _show(title, fn(ds, attribute, judge), out)
        except (DataError, ValueError) as err:
            print(f"\n## {title}\n  not available: {err}", file=out)


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m data.bias", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("benchmark", help="benchmark name (summeval, pandalm, ...)")
    parser.add_argument("--judge", required=True, help="a pairwise judge of the benchmark")
    parser.add_argument(
        "--attribute", action="append", help="attribute (default: every one judged)"
    )
    args = parser.parse_args(argv)
    import data

    try:
        ds = data.load_benchmark(args.benchmark)
        comp = ds.comparisons
        attrs = args.attribute or sorted(
            comp.loc[comp["judge"] == args.judge, "attribute"].unique()
        )
        if not attrs:
            raise DataError(f"judge {args.judge!r} has no comparisons in {args.benchmark!r}")
        for attribute in attrs:
            report(ds, attribute, args.judge)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
