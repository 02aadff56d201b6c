"""The caching decorators of the service layer and small helpers shared by its modules.

:func:`cache_data` and :func:`cache_resource` are Streamlit's, with a :class:`Dataset`
argument hashed by :func:`pages.shell.tokens.token` (the object and its revision) instead of its
tables: the cached functions take the dataset itself, and tests and benchmarks call them
with any :class:`Dataset`, no Streamlit session needed.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from data.schema import Dataset
from judge.names import parse_judge_name
from pages.shell.tokens import token

#: How the caches hash a dataset argument: by object and revision, never by content.
HASH_FUNCS = {Dataset: token}


def cache_data(**kwargs):
    """``st.cache_data`` with :data:`HASH_FUNCS`: results are copied out to each caller."""
    return st.cache_data(hash_funcs=HASH_FUNCS, **kwargs)


def cache_resource(**kwargs):
    """``st.cache_resource`` with :data:`HASH_FUNCS`: one shared object, to be kept read-only."""
    return st.cache_resource(hash_funcs=HASH_FUNCS, **kwargs)


# ---------------------------------------------------------------------------------------
# Numbers for display
# ---------------------------------------------------------------------------------------


def mean_finite(values) -> float:
    """Mean over the finite entries; NaN when there are none (no warning)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def fmt(value, digits: int = 3) -> str:
    """A number for a metric: rounded, or "n/a" when undefined (NaN / None)."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


def welch_columns(table, digits: int) -> dict[str, list[str]]:
    """The shown columns of a two-group comparison table (``mean_a``, ``std_a``, ``n_a``, the
    same for b, ``statistic``): "group A" and "group B" as "mean ± sd (n)", and "Welch's t",
    with ``digits`` decimals; the caller puts its key columns before them and p after."""

    def cell(mean, sd, n) -> str:
        return f"{fmt(mean, digits)} ± {fmt(sd, digits)} (n = {int(n)})"

    return {
        f"group {g}": [
            cell(*r)
            for r in zip(table[f"mean_{s}"], table[f"std_{s}"], table[f"n_{s}"], strict=True)
        ]
        for g, s in (("A", "a"), ("B", "b"))
    } | {"Welch's t": [fmt(t, digits) for t in table["statistic"]]}


def with_systems(frame, candidates):
    """``frame`` (``context_id`` and ``candidate_id`` as strings) with each candidate's
    ``system`` from the candidates table; the rows of candidates without one left out."""
    keys = ["context_id", "candidate_id"]
    lut = candidates[[*keys, "system"]].dropna(subset=["system"]).astype(str).drop_duplicates(keys)
    return frame.merge(lut, on=keys, how="inner")


# ---------------------------------------------------------------------------------------
# Names of rating judges (Human agreement and Prompt sensitivity pages)
# ---------------------------------------------------------------------------------------


def variant_label(judge: str, prompt_id: str) -> str:
    """One readable name for a (judge, prompt) pair: the judge alone when it names the prompt."""
    judge, prompt_id = str(judge), str(prompt_id)
    if prompt_id in judge.split("/"):
        return judge
    return f"{judge} · {prompt_id}"


def judge_model(judge: str, prompt_id: str) -> tuple[str, float | None]:
    """(model, temperature) of a ratings judge name, read by ``judge.names.parse_judge_name``.

    The prompt id and the decoding tag (``t0.7-p0.9``) are taken out of the name, so the
    ratings of one model under several templates or temperatures group together:
    ``gpt-3.5-turbo-0301/altmcq`` (prompt ``altmcq``) -> ``gpt-3.5-turbo-0301``;
    ``my-model/t0.7-p1`` -> (``my-model``, 0.7).
    """
    name = parse_judge_name(judge, prompt_id, kind="absolute")
    return name.model, name.temperature
