"""Chhun, Suchanek & Clavel (TACL 2024) on HANNA: Tables 1, 3, 6 and 7.

Table 1 is inter-rater reliability (ICC2k); Tables 3, 6 and 7 are mean ratings, taken over
all 1,056 HANNA stories (the human-written one included, as the paper's tables show it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement import (
    iaa_table,
    judge_scores,
    rating_matrix,
    reference_annotators,
    system_ratings_table,
)
from data.reproduce import published as pub
from data.reproduce._common import fmt, link, row
from data.reproduce.chhun2024_setting import BENCH, EP1, READING, judge_name
from data.schema import Dataset
from data.scope.analysis_view import analysis_view

_NOT_RELEASED_TRIES = (
    "the three tries per story are not released (the ratings file holds their mean), so "
    "the LLMs' self-consistency cannot be computed"
)


def _link(exclude=(), **params) -> dict:
    params.setdefault("reading", READING)
    return link(BENCH, exclude=list(exclude), **params)


def _icc_tries(ds: Dataset, attr: str, kind: str) -> float:
    """ICC of ``kind`` over the three annotators of ``attr`` (the variants tried in the
    note of Table 1's human rows)."""
    names = reference_annotators(ds)
    hs = ds.human_scores[ds.human_scores["attribute"] == attr]
    Y, _ = rating_matrix(hs, list(names))
    return rk.icc(Y, kind=kind).value


def table_1(ds: Dataset, every: Dataset, ten: Dataset) -> list[dict]:
    """Table 1: ICC2k of the LLMs' three tries and of the three human annotators."""
    out = []
    for llm in ("Beluga-13B", "Mistral-7B"):
        for abbr, attr in pub.HANNA_CRITERIA.items():
            out.append(
                row(
                    "Table 1",
                    f"{llm} self-consistency ICC2k over its 3 tries, {abbr}, Eval-Prompt 1",
                    pub.TABLE1_ICC[llm][abbr],
                    None,
                    note=_NOT_RELEASED_TRIES,
                    page="agreement",
                    settings=_link(attribute=attr, judge=judge_name(llm)),
                )
            )
    iaa = iaa_table(every).set_index("attribute")["icc2k"]
    iaa10 = iaa_table(ten).set_index("attribute")["icc2k"]
    for abbr, attr in pub.HANNA_CRITERIA.items():
        tried = (
            f"ICC2k over the 1,056 stories {fmt(iaa.get(attr))}, over the 960 generated "
            f"ones {fmt(iaa10.get(attr))}; single-rater ICC2 {fmt(_icc_tries(every, attr, 'ICC2'))}"
            f" / {fmt(_icc_tries(ten, attr, 'ICC2'))}, ICC3k "
            f"{fmt(_icc_tries(every, attr, 'ICC3k'))}"
        )
        out.append(
            row(
                "Table 1",
                f"human inter-annotator ICC2k, {abbr} (3 annotators, all 1,056 stories)",
                pub.TABLE1_ICC["Human"][abbr],
                iaa.get(attr),
                note="the released per-annotator ratings do not reproduce the table; tried: "
                + tried,
                page="agreement",
                settings=_link(attribute=attr),
            )
        )
    return out


def _mean_ratings(ds: Dataset, judges: list[str]) -> dict[str, float]:
    """Each judge's mean item score (its samples' mean per item), from one selection: the
    same items in the same order as one judge's own ``judge_scores``, so the same sums."""
    scores = judge_scores(ds, judge=judges)
    by = scores.groupby("judge", sort=False, observed=True)["score"]
    means = {str(j): float(s.mean()) for j, s in by}
    return {j: means.get(j, np.nan) for j in judges}


def table_3(every: Dataset) -> list[dict]:
    """Table 3: mean rating per LLM and Eval-Prompt, over every story and criterion."""
    out = []
    n_stories = len(every.candidates)
    means = _mean_ratings(
        every, [judge_name(llm, p) for llm in pub.HANNA_LLMS for p in pub.HANNA_EVAL_PROMPTS]
    )
    for llm in pub.HANNA_LLMS:
        for k, p in enumerate(pub.HANNA_EVAL_PROMPTS, start=1):
            j = judge_name(llm, p)
            note = ""
            if llm != "ChatGPT":
                note = (
                    "the paper also averages the ratings of the Llama-written stories it "
                    f"added (not released); computed on HANNA's {n_stories:,} stories"
                )
            out.append(
                row(
                    "Table 3",
                    f"{llm} mean rating, Eval-Prompt {k} (all criteria and stories)",
                    pub.TABLE3[llm][k - 1],
                    means[j],
                    note=note,
                    page="prompts",
                    settings=_link(judge=j),
                )
            )
    return out


def _system_means(ds: Dataset, judge: str) -> pd.DataFrame:
    """Mean rating per system (rows) and criterion abbreviation (columns) + "Average"."""
    t = system_ratings_table(ds, judge).pivot(index="system", columns="attribute", values="mean")
    return t.rename(columns={v: k for k, v in pub.HANNA_CRITERIA.items()})


def tables_6_7(ds: Dataset, every: Dataset) -> list[dict]:
    """Tables 6 (Beluga-13B) and 7 (Mistral-7B): mean Eval-Prompt 1 rating per generator
    and criterion; ``ds`` is HANNA as loaded (for the cleaned reading), ``every`` its view
    with every system and the published reading."""
    cleaned = analysis_view(ds, exclude=[], reading="cleaned")
    out = []
    for ref, llm, table in (
        ("Table 6", "Beluga-13B", pub.TABLE6),
        ("Table 7", "Mistral-7B", pub.TABLE7),
    ):
        j = judge_name(llm, EP1)
        means = _system_means(every, j)
        clean = _system_means(cleaned, j)
        for system, values in table.items():
            if system not in pub.HANNA_TABLE_SYSTEMS:
                continue
            for col, value in zip(pub.TABLE_COLUMNS, values, strict=True):
                computed = means.at[system, col] if system in means.index else np.nan
                note = ""
                if abs(computed - value) > 0.006:
                    note = (
                        f"the published per-story means average failed tries (0 or -1) in; "
                        f"the cleaned reading gives {fmt(clean.at[system, col])}; the paper's "
                        f"{llm} table seems to leave failed tries out, which the released "
                        "means do not allow (Table 6, Beluga-13B, reproduces)"
                    )
                out.append(
                    row(
                        ref,
                        f"{llm} mean rating of {system} stories, {col}, Eval-Prompt 1",
                        value,
                        computed,
                        note=note,
                        page="agreement",
                        settings=_link(judge=j, attribute=pub.HANNA_CRITERIA.get(col)),
                    )
                )
        for system, values in table.items():
            if system in pub.HANNA_TABLE_SYSTEMS:
                continue
            out.append(
                row(
                    ref,
                    f"{llm} mean rating of {system}-written stories, Average, Eval-Prompt 1",
                    values[-1],
                    None,
                    note="the Llama-written stories and their ratings are not released",
                    page="agreement",
                    settings=_link(judge=j),
                )
            )
    return out
