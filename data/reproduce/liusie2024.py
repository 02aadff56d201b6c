"""Liusie, Manakul & Gales (EACL 2024): comparative assessment, on the data we have.

The paper's numbers (Tables 5-11) come from FlanT5 and Llama2-chat comparisons of every
ordered pair of SummEval's 16 summaries per document, which were not released. The analyses
are computed here on SummEval's released GPT-3.5 pairwise verdicts
(``gpt-3.5-turbo-0301/ab-choice``: 12 systems, adjacent system pairs in both orders, hard
A/B/C answers), with published NaN and a note naming that data.
"""

from __future__ import annotations

import os

from data.benchmarks import load_benchmark
from data.comparative.tables import judge_template_table, subset_table
from data.reproduce._common import link, row

BENCH = "summeval"
JUDGE = "gpt-3.5-turbo-0301/ab-choice"
_DATA = (
    "the paper's FlanT5 / Llama2-chat comparisons of all 16 SummEval summaries are not "
    "released; computed on SummEval's released GPT-3.5 A/B verdicts ({judge}, 12 systems, "
    "adjacent system pairs in both orders)"
)

#: (column of judge_template_table, the paper's tables, readable quantity, page).
_TEMPLATE = (
    ("p_first", "Tables 5/9", "positional bias P(A)", "bias"),
    ("spearman_wr", "Table 6", "Spearman vs humans per document, win-ratio", "rankings"),
    (
        "spearman_debiased",
        "Table 6",
        "Spearman vs humans per document, win-ratio debiased (balanced threshold)",
        "rankings",
    ),
    ("accuracy", "Tables 7/10", "pairwise accuracy on pairs whose human scores differ", "bias"),
    (
        "accuracy_debiased",
        "Tables 7/10",
        "pairwise accuracy on pairs whose human scores differ, debiased",
        "bias",
    ),
    ("spearman_ml", "Table 11", "Spearman vs humans per document, maximum likelihood", "rankings"),
)


def compute(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """Every row of the paper (see :func:`data.reproduce.reproduce`)."""
    ds = load_benchmark(BENCH, data_dir)
    note = _DATA.format(judge=JUDGE)
    out = []
    table = judge_template_table(ds, judge=JUDGE)
    for col, ref, quantity, page in _TEMPLATE:
        for rec in table.itertuples(index=False):
            out.append(
                row(
                    ref,
                    f"{quantity}, {rec.attribute} ({rec.judge})",
                    None,
                    getattr(rec, col),
                    note=note,
                    page=page,
                    settings=link(BENCH, attribute=rec.attribute, judge=rec.judge),
                )
            )
    subsets = subset_table(ds, attribute="coherence", judge=JUDGE)
    n_all = int(subsets["n"].max()) if len(subsets) else 0
    for rec in subsets.itertuples(index=False):
        for col, what in (("final", f"the full ranking of all {n_all}"), ("gold", "the humans")):
            out.append(
                row(
                    "Table 8",
                    f"pairwise accuracy of the ranking of {rec.n} random candidates against "
                    f"{what}, coherence ({rec.n_draws} draws per document)",
                    None,
                    getattr(rec, col),
                    note=note + "; the paper uses FlanT5-xl on all 16 summaries",
                    page="rankings",
                    settings=link(BENCH, attribute="coherence", judge=JUDGE),
                )
            )
    return out
