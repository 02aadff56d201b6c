"""``python -m data.agreement``: the agreement tables of a benchmark, printed.

    python -m data.agreement --benchmark hanna [--judge J ...] [--attribute A ...]

prints the human inter-annotator agreement, the human baseline, judge-human correlations,
the Williams + Benjamini-Hochberg matrices between judges and judge self-consistency, and
the pairwise accuracy of comparative judges.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence

import pandas as pd

from data.agreement.correlations import correlation_table
from data.agreement.humans import human_baseline_table, iaa_table
from data.agreement.judges import pairwise_accuracy_table, self_consistency_table
from data.agreement.williams import FAMILIES, williams_table
from data.schema import DataError, Dataset
from data.scope.analysis_view import analysis_view
from data.scope.systems import systems_of
from ranking.agreement import ALTERNATIVES, BASELINE_REFERENCES, KENDALL_VARIANTS

#: The ``--help`` description (the first line of the package docstring says the same).
DESCRIPTION = (
    "Agreement tables: where the canonical tables meet the agreement statistics of ``ranking``."
)

# Count columns print as whole numbers (missing as <NA>).
_COUNTS = {
    "n",
    "n_items",
    "n_used",
    "n_dropped_nan",
    "n_units",
    "n_skipped",
    "n_annotators",
    "icc2k_items",
    "n_samples",
    "n_nan",
    "n_contexts",
}


def _split(values: Iterable[str] | None) -> list[str] | None:
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _show(title: str, frame: pd.DataFrame, out) -> None:
    print(f"\n== {title} ==", file=out)
    if frame.empty:
        print("(nothing to show)", file=out)
        return
    frame = frame.copy()
    for col in frame.columns:
        if col in _COUNTS:  # whole numbers print without decimals, missing as <NA>
            frame[col] = frame[col].astype("Int64")
    with pd.option_context(
        "display.width",
        200,
        "display.max_columns",
        50,
        "display.max_rows",
        500,
        "display.max_colwidth",
        60,
    ):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.3f}"), file=out)


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Print the agreement tables of a benchmark.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (``--benchmark`` required; see ``--help``); default
        ``sys.argv[1:]``.
    out : file-like, optional
        Where the tables go; default standard output.

    Returns
    -------
    int
        0, or 2 after printing the message of a DataError (an unknown benchmark, judge or
        attribute, missing files) to standard error.
    """
    from data import load_benchmark

    out = out or sys.stdout
    p = argparse.ArgumentParser(prog="python -m data.agreement", description=DESCRIPTION)
    p.add_argument("--benchmark", required=True, help="benchmark name, e.g. hanna, summeval")
    p.add_argument("--data-dir", default=None, help="folder with the benchmark files")
    p.add_argument("--judge", action="append", help="judge name(s); repeat or comma-separate")
    p.add_argument("--prompt-id", action="append", help="prompt id(s) (Eval-Prompts)")
    p.add_argument("--attribute", action="append", help="attribute(s)")
    p.add_argument(
        "--exclude",
        action="append",
        help="systems left out (default: the dataset's reference systems, e.g. HANNA's "
        "Human story); 'none' keeps every system",
    )
    p.add_argument(
        "--reading",
        choices=["published", "cleaned"],
        help="judge ratings as published or cleaned (default: published when they differ)",
    )
    p.add_argument(
        "--annotators",
        action="append",
        help="annotators whose mean is the human reference (default: the only group)",
    )
    p.add_argument(
        "--levels", default="overall,system,item", help="units correlated: item, system, overall"
    )
    p.add_argument("--methods", default="kendall")
    p.add_argument("--variant", default="b", choices=list(KENDALL_VARIANTS))
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--williams-level", default="overall", choices=["overall", "system"])
    for flag, default, choices, text in (
        (
            "--alternative",
            "two-sided",
            ALTERNATIVES,
            "Williams: two-sided, or greater (judge_a agrees more with the humans) / less",
        ),
        (
            "--family",
            "judges",
            FAMILIES,
            "Benjamini-Hochberg over the judge pairs of an attribute and prompt, over the "
            "attributes of a pair, or over every test",
        ),
        (
            "--reference",
            "others",
            BASELINE_REFERENCES,
            "human baseline: each annotator vs the mean of the others, or of all (HANNA)",
        ),
    ):
        p.add_argument(flag, default=default, choices=list(choices), help=text)
    p.add_argument(
        "--tables",
        default="iaa,baseline,correlation,williams,consistency,accuracy",
        help="comma-separated subset of the default",
    )
    args = p.parse_args(argv)

    try:
        ds = load_benchmark(args.benchmark, data_dir=args.data_dir)
        exclude = _split(args.exclude)
        exclude = [] if exclude == ["none"] else exclude
        ds = analysis_view(ds, exclude, args.reading)
        _print_tables(ds, args, out)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def _print_tables(ds: Dataset, args: argparse.Namespace, out) -> None:
    judge, prompt, attr = _split(args.judge), _split(args.prompt_id), _split(args.attribute)
    annotators = _split(args.annotators)
    tables = set(_split([args.tables]) or [])
    print(f"{ds.name}: {ds.counts()}", file=out)
    print(f"systems: {', '.join(systems_of(ds)) or '(no system labels)'}", file=out)
    if "iaa" in tables and len(ds.human_scores):
        _show("human inter-annotator agreement", iaa_table(ds, attr), out)
    if "baseline" in tables and len(ds.human_scores):
        whom = "the others" if args.reference == "others" else "all annotators"
        _show(
            f"human baseline (each annotator vs the mean of {whom})",
            human_baseline_table(
                ds,
                attr,
                method=args.methods.split(",")[0],
                variant=args.variant,
                reference=args.reference,
            ),
            out,
        )
    if len(ds.ratings):
        if "correlation" in tables:
            _show(
                "judge vs human mean",
                correlation_table(
                    ds,
                    judge,
                    prompt,
                    attr,
                    annotators,
                    units=args.levels.split(","),
                    methods=args.methods.split(","),
                    variant=args.variant,
                    n_boot=args.n_boot,
                    random_state=args.seed,
                ),
                out,
            )
        if "williams" in tables:
            wt = williams_table(
                ds,
                judge,
                prompt,
                attr,
                annotators,
                unit=args.williams_level,
                method=args.methods.split(",")[0],
                variant=args.variant,
                alternative=args.alternative,
                family=args.family,
            )
            fam = {
                "judges": "per attribute and prompt",
                "attributes": "per judge pair over the attributes",
                "all": "over every test",
            }[args.family]
            _show(f"Williams tests between judges, {args.alternative} (p_bh: BH {fam})", wt, out)
        if "consistency" in tables:
            _show(
                "judge self-consistency across samples",
                self_consistency_table(ds, judge, prompt, attr),
                out,
            )
    if "accuracy" in tables and len(ds.comparisons) and len(ds.human_scores):
        _show(
            "pairwise accuracy of comparative judges",
            pairwise_accuracy_table(ds, judge, attr, annotators),
            out,
        )
