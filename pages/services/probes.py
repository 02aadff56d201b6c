"""The Judge bias page's probes: candidate log-probabilities under a causal model, cached per
(dataset, model, texts), and the self-preference and contamination tables built on them.

The model runs through ``judge.token_logprobs`` on the transformers backend the Judge page
also uses (``pages.services.judge.hf_backend``, one load per server); the tables come from
``data.bias.probes``. Results live in the session (``st.session_state[RESULTS]``), so the run
button is needed once per dataset revision, model and text choice; the Min-K% share, the
strata and the groups are recomputed from the stored log-probabilities without the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from data.bias import probes as dp
from data.natural import natural_key
from data.schema import Dataset
from pages.services.common import cache_data
from pages.shell.tokens import token

#: session key: {(dataset token, model, cap, with context): Scored}
RESULTS = "judge_bias.probe_results"
#: texts scored by default (whole contexts)
DEFAULT_CAP = 400
#: what a prefix looks like when candidates are scored after their context
CONTEXT_SEP = "\n\n"


@dataclass(frozen=True)
class Scored:
    """One run: the texts, their token log-probabilities and the cap's note."""

    texts: pd.DataFrame
    logprobs: tuple
    note: str
    model: str


def _key(ds: Dataset, model: str, cap: int, with_context: bool) -> tuple:
    return (token(ds), model.strip(), int(cap), bool(with_context))


def stored(ds: Dataset, model: str, cap: int, with_context: bool) -> Scored | None:
    """The run for these settings, if it was made in this session."""
    return st.session_state.get(RESULTS, {}).get(_key(ds, model, cap, with_context))


def run(ds: Dataset, model: str, cap: int, with_context: bool, progress=None) -> Scored:
    """Load ``model`` (cached) and score the candidates; store and return the run.

    Raises the backend's errors (a model that cannot be loaded, a seq2seq model) for the page
    to show.
    """
    from judge import token_logprobs
    from pages.services.judge import hf_backend

    model = model.strip()
    if not model:
        raise ValueError("enter a causal model: a Hub id or a local folder")
    texts, note = dp.probe_texts(ds, cap)
    backend = hf_backend(model)
    prefixes = None
    if with_context:
        prefixes = [c + CONTEXT_SEP if c else "" for c in texts["context_text"]]
    lps = token_logprobs(backend, texts["text"].tolist(), prefixes, progress=progress)
    result = Scored(texts.drop(columns=["context_text"]), tuple(lps), note, model)
    st.session_state.setdefault(RESULTS, {})[_key(ds, model, cap, with_context)] = result
    return result


def scores(ds: Dataset, run: Scored, k: float) -> pd.DataFrame:
    """Per-candidate table of the candidates in ``ds`` (the analysed ones), with the
    dataset's other candidate columns for grouping."""
    table = dp.score_table(run.texts, list(run.logprobs), k)
    extra = [c for c in ds.candidates.columns if c not in table.columns and c != "text"]
    keys = ["context_id", "candidate_id"]
    present = ds.candidates[keys + extra].astype({c: str for c in keys})
    table = table.astype({c: str for c in keys}).merge(present, on=keys, how="inner")
    return table.reset_index(drop=True)


def by_system(table: pd.DataFrame) -> pd.DataFrame:
    """Mean log-likelihood, perplexity and Min-K% per system, natural order."""
    out = (
        table.groupby("system")[dp.SCORE_COLUMNS]
        .mean()
        .assign(n_texts=table.groupby("system").size())
        .reset_index()
    )
    return out.sort_values("system", key=lambda s: s.map(natural_key)).reset_index(drop=True)


@cache_data(show_spinner="Relating the judge's preferences to likelihood…", max_entries=16)
def self_preference(
    ds: Dataset, attribute: str, judge: str, table: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pairs, summary) of :func:`data.bias.probes.preference_pairs` and its correlations."""
    pairs = dp.preference_pairs(ds, attribute, judge, table)
    if not len(pairs):
        return pairs, pd.DataFrame()
    return pairs, dp.self_preference_summary(pairs, n_boot=1000, random_state=0)


@cache_data(show_spinner=False, max_entries=16)
def family(pairs: pd.DataFrame, own: tuple[str, ...]) -> pd.DataFrame:
    return dp.family_win_rates(pairs, list(own), n_boot=1000, random_state=0)


@cache_data(show_spinner=False, max_entries=16)
def contamination(
    table: pd.DataFrame, column: str, group_a: tuple, group_b: tuple, score: str
) -> tuple[dict, pd.DataFrame]:
    return dp.contamination(
        table, column, list(group_a), list(group_b), score=score, n_boot=1000, random_state=0
    )


def group_columns(table: pd.DataFrame) -> list[str]:
    """Columns a user can split the texts by: system first, then other labels."""
    skip = set(dp.SCORE_COLUMNS) | {"candidate_id"}
    cols = [c for c in table.columns if c not in skip and table[c].nunique() >= 2]
    return sorted(cols, key=lambda c: (c != "system", c != "context_id", c))


def values_of(table: pd.DataFrame, column: str) -> list[str]:
    vals = table[column].dropna().astype(str).unique()
    return sorted(vals, key=natural_key)


def finite(x) -> bool:
    return x is not None and bool(np.isfinite(float(x)))
