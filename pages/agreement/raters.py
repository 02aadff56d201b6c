"""The raters the Human agreement page shows: the prompted (LLM) judges, and the automatic
measures (BLEU, BERTScore, BARTScore, ...) as a group of their own.

With dozens of measures (HANNA has 72) the figures would be unreadable, so the page starts
with every LLM judge and a few common measures (``svc.DEFAULT_MEASURES``); the user adds more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from data.schema import Dataset
from pages.agreement import PAGE
from pages.services import agreement as svc
from pages.shell import ui

JUDGES = f"{PAGE}.judges"
MEASURES = f"{PAGE}.measures"


@dataclass(frozen=True)
class Chosen:
    """The raters chosen on the page.

    Attributes
    ----------
    judges, measures : list of str
        Labels of the chosen prompted judges and automatic measures.
    pairs : tuple of (str, str)
        Their (judge, prompt_id), judges first.
    table : pandas.DataFrame
        Every rater of the dataset (``svc.raters``).
    """

    judges: list = field(default_factory=list)
    measures: list = field(default_factory=list)
    pairs: tuple = ()
    table: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def labels(self) -> list[str]:
        """Every chosen rater's label, judges first (the order of the figures)."""
        return [*self.judges, *self.measures]

    @property
    def has_measures(self) -> bool:
        """Whether the dataset has automatic measures at all."""
        return bool(len(self.table)) and bool(self.table["automatic"].any())


def parse_baseline(text: str) -> str:
    """The human-baseline reference of a link (``baseline=all|others``)."""
    if text not in svc.BASELINES:
        raise ValueError(f"not one of {', '.join(svc.BASELINES)}")
    return text


def _multiselect(label: str, options: list[str], default: list[str], key: str, **kwargs):
    """A multiselect that keeps the remembered choice still among ``options``, starting from
    ``default`` (first visit, or another dataset's raters)."""
    remembered = st.session_state.get(key)
    kept = [o for o in (remembered or []) if o in options]
    if remembered is None or (remembered and not kept):
        kept = default
    st.session_state[key] = kept
    return st.multiselect(label, options, key=key, format_func=ui.short, **kwargs)


def choose(ds: Dataset) -> Chosen:
    """Draw the rater choice (two multiselects: LLM judges, automatic measures)."""
    table = svc.raters(ds)
    if not len(table):
        return Chosen(table=table)
    judge_opts = table.loc[~table["automatic"], "label"].tolist()
    measure_opts = table.loc[table["automatic"], "label"].tolist()
    default_judges, default_measures = svc.default_labels(table)
    c1, c2 = st.columns(2)
    judges: list[str] = []
    measures: list[str] = []
    if judge_opts:
        with c1:
            judges = _multiselect(
                f"LLM judges ({len(judge_opts)})",
                judge_opts,
                default_judges,
                JUDGES,
                help="Prompted judges (judge · prompt). Every section below uses these.",
            )
    if measure_opts:
        with c2 if judge_opts else c1:
            measures = _multiselect(
                f"Automatic measures ({len(measure_opts)})",
                measure_opts,
                default_measures,
                MEASURES,
                help="Non-LLM measures (BLEU, ROUGE, BERTScore, BARTScore, ...), shown after "
                "the LLM judges. A few common ones to start; add more (the figures grow a "
                "row per measure).",
            )
    judges = [j for j in judge_opts if j in set(judges)]
    measures = [m for m in measure_opts if m in set(measures)]
    return Chosen(
        judges=judges,
        measures=measures,
        pairs=svc.pairs_of(table, [*judges, *measures]),
        table=table,
    )
