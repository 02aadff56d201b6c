"""A judge's comparisons with the holes real runs have, for the tests that compare two ways of
building its P (shared by test_arrays_exact and test_bias_pmatrix)."""

from __future__ import annotations

import numpy as np

from data.schema import Dataset


def with_holes(ds: Dataset) -> Dataset:
    """``ds`` with unparsed samples, a context with nothing parsed, a candidate seen only in
    unparsed rows, and a context judged in one order only (the same holes for a given ``ds``)."""
    comps = ds.comparisons.copy()
    rng = np.random.default_rng(3)
    comps.loc[rng.random(len(comps)) < 0.2, "p_first"] = np.nan  # unparsed samples
    ctx = comps["context_id"].astype(str)
    contexts = list(dict.fromkeys(ctx))
    comps.loc[ctx == contexts[1], "p_first"] = np.nan  # nothing parsed in a context
    two = ctx == contexts[2]
    cand = str(comps.loc[two, "first_id"].iloc[0])  # only unparsed rows for one candidate
    touch = two & ((comps["first_id"].astype(str) == cand) | (comps["second_id"] == cand))
    comps.loc[touch, "p_first"] = np.nan
    keep = ~((ctx == contexts[3]) & (comps["first_id"].astype(str) > comps["second_id"]))
    comps = comps[keep & (rng.random(len(comps)) > 0.1)].reset_index(drop=True)
    return Dataset(
        name="holes", contexts=ds.contexts, candidates=ds.candidates,
        human_scores=ds.human_scores, comparisons=comps, ratings=ds.ratings,
    )  # fmt: skip
