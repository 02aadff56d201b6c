"""Chiang & Lee (ACL 2023): LLM evaluation of stories, on the data we have.

The paper's 200 WritingPrompts stories (100 human-written, 100 by GPT-2) rated by three
English teachers and by T0 / text-curie / text-davinci / ChatGPT are not in the data folder.
Its analyses run here on the nearest data: HANNA (human-written vs GPT-2 stories, rated by
three crowd workers and by Chhun et al.'s LLM judges) and TopicalChat (GPT-3.5's 20 sampled
answers per item, for the agreement across samples). Every row has published NaN and a note.
"""

from __future__ import annotations

import os

import pandas as pd

from data.agreement import annotator_pairs_table, self_consistency_table
from data.agreement.groups import group_comparison_table
from data.benchmarks import load_benchmark
from data.reproduce import published as pub
from data.reproduce._common import link, mean_by, row
from data.scope.analysis_view import analysis_view

_NOT_RELEASED = (
    "the paper's stories and the teachers' ratings are not released; computed on HANNA ({what})"
)
#: The groups of Table 1: human-written vs GPT-2 stories (HANNA's systems).
GROUP_A, GROUP_B = ("Human",), ("GPT-2",)
#: The HANNA judges compared (Eval-Prompt 1, the paper's simplest questionnaire).
JUDGES = tuple(f"{m}/eval_prompt_1" for m in pub.HANNA_LLMS)


def _table_1_rows(rec, rater: str, columns, note: str, settings: dict) -> list[dict]:
    """Table 1's rows for one record of an agreement table: one per (column, what) of
    ``columns``, the value ``rec.<column>``, nothing published."""
    return [
        row(
            "Table 1",
            f"{rater}: {what}, {rec.attribute}",
            None,
            getattr(rec, col),
            note=note,
            page="agreement",
            settings=settings,
        )
        for col, what in columns
    ]


def table_1_groups(hanna) -> list[dict]:
    """Table 1: mean of each group and Welch's t, by the humans and each LLM judge."""
    every = analysis_view(hanna, exclude=[], reading="published")
    g = group_comparison_table(every, GROUP_A, GROUP_B, judge=list(JUDGES))
    note = _NOT_RELEASED.format(
        what="96 human-written vs 96 GPT-2 stories, 3 MTurk workers, LLM ratings as published"
    )
    humans = g[g["rater"] == "human"].drop_duplicates("attribute")
    judged = g[g["rater"] == "judge"]
    out = []
    for who, part in (("human annotators (mean of 3)", humans), (None, judged)):
        for rec in part.itertuples(index=False):
            rater = who or rec.judge
            settings = link(
                "hanna",
                attribute=rec.attribute,
                judge=rec.judge,
                exclude=[],
                reading="published",
            )
            columns = (
                ("mean_a", "mean rating of human-written stories"),
                ("mean_b", "mean rating of GPT-2 stories"),
                ("statistic", "Welch's t (human-written minus GPT-2)"),
            )
            out += _table_1_rows(rec, rater, columns, note, settings)
    return out


def table_1_samples(topicalchat) -> list[dict]:
    """Table 1's IAA: Krippendorff's alpha and the share of full agreement across samples."""
    sc = self_consistency_table(topicalchat)
    out = []
    for rec in sc.itertuples(index=False):
        note = (
            f"the paper samples each LLM 3 times on its stories; computed on TopicalChat, "
            f"{rec.judge}'s {rec.n_samples} sampled answers per item"
        )
        settings = link("topicalchat", attribute=rec.attribute, judge=rec.judge)
        columns = (
            ("alpha_interval", "Krippendorff's alpha (interval) across samples"),
            ("share_identical", "share of items whose samples all agree"),
        )
        out += _table_1_rows(rec, rec.judge, columns, note, settings)
    return out


def table_6(hanna) -> list[dict]:
    """Table 6: Kendall's tau between two annotators, averaged over the three pairs."""
    every = analysis_view(hanna, exclude=[], reading="published")
    pairs = annotator_pairs_table(every)
    means: pd.Series = mean_by(pairs, "attribute")
    note = _NOT_RELEASED.format(
        what="all 1,056 stories; its human_1..3 are positions in the file, not the same "
        "worker across stories"
    )
    return [
        row(
            "Table 6",
            f"Kendall tau-b between two annotators, mean of the 3 pairs, {attr}",
            None,
            value,
            note=note,
            page="agreement",
            settings=link("hanna", attribute=attr, exclude=[], reading="published"),
        )
        for attr, value in means.items()
    ]


def compute(data_dir: str | os.PathLike | None = None) -> list[dict]:
    """Every row of the paper (see :func:`data.reproduce.reproduce`)."""
    hanna = load_benchmark("hanna", data_dir)
    topicalchat = load_benchmark("topicalchat", data_dir)
    return [*table_1_groups(hanna), *table_1_samples(topicalchat), *table_6(hanna)]
