"""Zeng et al. (ICLR 2024, LLMBar): the authors' ``statistics.json`` of every released
evaluator, recomputed from its ``result.json`` by the report card (``data.report_card``).

For each subset, judge model and prompting strategy the data folder holds, the authors'
counts are: ``correct_False`` / ``correct_True`` (right with output_1 shown first / output_2
shown first), ``correct_average`` (their mean), ``correct_both`` (right in both orders) and
``equal`` (the same winner in both orders), each over every pair of the subset, an answer
they could not parse counting as wrong (the report card's ``unparsed="wrong"``). The
published numbers are read from the ``statistics.json`` files themselves (they are data, not
the computation's input): ``"92 / 100 = 92.0%"`` is 92/100.
"""

from __future__ import annotations

import os
import re

import numpy as np

from data.benchmarks import benchmark_files, load_benchmark
from data.benchmarks import llmbar as bench
from data.benchmarks._common import read_json
from data.report_card import card
from data.reproduce._common import fmt, link, row
from data.schema import DataError

BENCH = "llmbar"
PAGE = "report-card"
#: Exact counts: a computed share equals the published k / n up to float noise.
TOL = 1e-9
#: (statistics.json key, readable quantity, column of the per-pair outcomes).
STATISTICS = (
    ("correct_False", "accuracy, output_1 shown first (correct_False)", "right_gold"),
    ("correct_True", "accuracy, output_2 shown first (correct_True)", "right_swapped"),
    ("correct_average", "accuracy, mean of the two orders (correct_average)", "score"),
    ("correct_both", "positional agreement: right in both orders (correct_both)", "both_right"),
    ("equal", "consistency: the same winner in both orders (equal)", "consistent"),
)
_COUNT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*=")
_PERCENT = re.compile(r"^\s*([0-9.eE+-]+)\s*%\s*$")


def published_value(text) -> float:
    """A ``statistics.json`` value as a share: ``"92 / 100 = 92.0%"`` -> 0.92 (from the
    counts), ``"93.5%"`` -> 0.935.

    Raises
    ------
    DataError
        Any other form.
    """
    s = str(text)
    m = _COUNT.match(s)
    if m:
        return int(m.group(1)) / int(m.group(2))
    m = _PERCENT.match(s)
    if m:
        return float(m.group(1)) / 100.0
    raise DataError(f"statistics.json value {text!r} is neither 'k / n = x%' nor 'x%'")


def compute(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """Every row (see :func:`data.reproduce.reproduce`)."""
    ds = load_benchmark(BENCH, data_dir)
    files = benchmark_files(BENCH, data_dir)
    c = card(ds, bench.ATTRIBUTE, unparsed="wrong")
    o = c.outcomes.assign(subset=c.outcomes["context_id"].map(bench.subset_of))
    groups = dict(tuple(o.groupby(["subset", "judge"], sort=False)))
    out = []
    for (subset, model, strategy), rel in bench.statistics_files().items():
        judge = bench.judge_name(model, strategy)
        stats = read_json(files[rel])
        part = groups.get((subset, judge))
        n_pairs = len(c.gold.scored[c.gold.scored["context_id"].map(bench.subset_of) == subset])
        for key, quantity, col in STATISTICS:
            if key not in stats:
                continue
            published = published_value(stats[key])
            note = ""
            if part is None or len(part) != n_pairs:
                computed = np.nan
                note = f"{judge} has verdicts on {0 if part is None else len(part)} of {n_pairs}"
            elif key == "equal":
                computed, note = _equal(part, published)
            else:
                values = part[col].to_numpy(dtype=np.float64)
                computed = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
            out.append(
                row(
                    f"statistics.json: {subset}",
                    f"{judge}: {quantity}",
                    published,
                    computed,
                    note=note,
                    page=PAGE,
                    settings=link(BENCH, judge=judge),
                    tolerance=TOL,
                )
            )
    return out


def _equal(part, published: float) -> tuple[float, str]:
    """The report card's consistency, and how the authors' ``equal`` counts otherwise."""
    consistent = part["consistent"].to_numpy(dtype=np.float64)
    ours = float(np.nanmean(consistent)) if np.isfinite(consistent).any() else np.nan
    n = len(part)
    n_same = int(np.nansum(consistent))
    n_both_unparsed = int(part["both_unparsed"].sum())
    authors = (n_same + n_both_unparsed) / n
    n_left_out = int(np.isnan(consistent).sum())
    if not n_left_out:
        return ours, ""
    return ours, (
        f"the authors count all {n} pairs, an unparsed answer as an answer of its own (two "
        f"unparsed answers agree): ({n_same} same winner + {n_both_unparsed} both "
        f"unparsed) / {n} = {fmt(authors, 4)}"
        + (" = the published value" if abs(authors - published) <= TOL else "")
        + f"; the report card's consistency leaves out the {n_left_out} pair(s) with an "
        "unparsed order"
    )
