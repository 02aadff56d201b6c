"""Williams' tests of the Human agreement page: every pair of chosen raters (a square
matrix per attribute), and one rater against every other (HANNA Figure 6: criteria x other
raters). The tests and their Benjamini-Hochberg families are ``data.agreement``'s."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from data import agreement as dag
from data.schema import Dataset
from pages.services.agreement.raters import rater_label, with_raters
from pages.services.common import cache_data


def _listed(annotators: tuple | None) -> list[str] | None:
    return list(annotators) if annotators else None


@dataclasses.dataclass(frozen=True)
class WilliamsTest:
    """How the page's Williams tests run: the correlation ``method`` / ``variant`` with the
    humans (``annotators``; None: all) at the ``unit`` level, the sidedness ``alternative``
    and the Benjamini-Hochberg ``family``, as ``data.agreement.williams_table`` takes them."""

    method: str
    variant: str
    annotators: tuple | None
    unit: str
    alternative: str
    family: str

    def options(self) -> dict:
        """The keyword arguments of ``data.agreement``'s two Williams tables."""
        return {**dataclasses.asdict(self), "annotators": _listed(self.annotators)}


@cache_data(show_spinner="Williams tests between judges…", max_entries=16)
def williams(
    ds: Dataset, test: WilliamsTest, across_prompts: bool, pairs: tuple | None = None
) -> pd.DataFrame:
    """Williams + BH table of the raters ``pairs`` (None: all); ``across_prompts`` compares
    every rater with every other (judges are then named by their label, under the prompt
    "all prompts")."""
    ds = with_raters(ds, pairs)
    if across_prompts and len(ds.ratings):
        r = ds.ratings
        labels = [rater_label(j, p) for j, p in zip(r["judge"], r["prompt_id"], strict=True)]
        ds = dataclasses.replace(ds, ratings=r.assign(judge=labels, prompt_id="all prompts"))
    return dag.williams_table(ds, **test.options())


def _hover(row, a: str, b: str, ra: float, rb: float) -> str:
    return (
        f"{a} vs {b}<br>r = {ra:.3f} vs {rb:.3f} (difference {ra - rb:+.3f})"
        f"<br>p = {row.p:.3g}, BH-adjusted {row.p_bh:.3g}<br>n = {row.n}"
        + (f"<br>{row.reason}" if row.reason else "")
    )


def williams_heatmap_frames(table: pd.DataFrame, attribute: str, prompt_id: str, order=None):
    """(adjusted p, hover text) square frames for one attribute and prompt: the cell (row a,
    column b) is the test of a against b (one-sided: that a agrees more with the humans;
    two-sided tests fill both cells of a pair). ``order``: the raters' order (default
    sorted)."""
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    names = list(dict.fromkeys([*sel["judge_a"], *sel["judge_b"]]))
    if order is not None:
        names = [n for n in order if n in set(names)] + [n for n in names if n not in set(order)]
    else:
        names = sorted(names)
    p = pd.DataFrame(np.nan, index=names, columns=names)
    hover = pd.DataFrame("", index=names, columns=names)
    for row in sel.itertuples(index=False):
        cells = [(row.judge_a, row.judge_b, row.r_a, row.r_b)]
        if row.alternative == "two-sided":
            cells.append((row.judge_b, row.judge_a, row.r_b, row.r_a))
        for a, b, ra, rb in cells:
            p.loc[a, b] = row.p_bh
            hover.loc[a, b] = _hover(row, a, b, ra, rb)
    return p, hover


@cache_data(show_spinner="Williams tests of one judge against every other rater…", max_entries=16)
def williams_versus(
    ds: Dataset, test: WilliamsTest, judge: tuple, versus: tuple | None
) -> pd.DataFrame:
    """``data.agreement.williams_versus_table`` of the rater ``judge`` ((judge, prompt_id))
    against ``versus`` ((judge, prompt_id) tuples; None: every other rater), with the other
    rater's ``label_b``."""
    table = dag.williams_versus_table(
        ds, judge, versus=list(versus) if versus is not None else None, **test.options()
    )
    table["label_b"] = [
        rater_label(j, p) for j, p in zip(table["judge_b"], table["prompt_b"], strict=True)
    ]
    return table


def williams_versus_frames(table: pd.DataFrame, order=None):
    """(adjusted p, hover text): criteria x other raters (``order``: the raters' labels in
    display order; default the table's)."""
    labels = list(dict.fromkeys(table["label_b"]))
    if order is not None:
        known = set(labels)
        labels = [x for x in order if x in known] + [x for x in labels if x not in set(order)]
    p = table.pivot_table(
        index="attribute", columns="label_b", values="p_bh", aggfunc="first", dropna=False
    ).reindex(columns=labels)
    hover = pd.DataFrame("", index=p.index, columns=p.columns)
    for row in table.itertuples(index=False):
        a = rater_label(row.judge_a, row.prompt_a)
        hover.loc[row.attribute, row.label_b] = _hover(row, a, row.label_b, row.r_a, row.r_b)
    return p, hover
