"""One P per judge: the calibration layout gathered from the transitivity P
(data.bias.pmatrix.compared_layout) equals data.comparative.judge_pmatrix exactly — same
contexts, candidates, floats and counts — on a simulated judge with holes, SummEval and
PandaLM; judge_inputs uses the prebuilt cycles P and refuses another judge's; the human
reference by integer lookups (data.bias.reference.human_reference) equals
data.comparative.human_scores_for exactly (mean scores, pooled verdicts, a human judge left
out of them, none)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data import bias
from data.bias.pmatrix import compared_layout
from data.bias.reference import human_reference
from data.comparative import human_scores_for, judge_pmatrix
from data.schema import DataError, Dataset
from data.simulate import simulate_with_truth

J = "simulated"


def _same(got, want):
    assert got.context_ids == want.context_ids
    assert got.candidate_ids == want.candidate_ids
    assert got.P.shape == want.P.shape and got.counts.shape == want.counts.shape
    assert np.array_equal(got.P, want.P, equal_nan=True)  # bit for bit, NaN where NaN
    assert np.array_equal(got.counts, want.counts)
    assert (got.attribute, got.judge) == (want.attribute, want.judge)


@pytest.fixture(scope="module")
def holes() -> Dataset:
    """A simulated judge with unparsed samples, a context with none parsed, a candidate
    compared only in unparsed rows, pairs judged in one order only."""
    ds, _ = simulate_with_truth(
        14, 6, n_systems=6, position_bias=0.5, n_samples=3, random_state=7, texts=True
    )
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


def test_simulated_judge_with_holes(holes):
    cpm = bias.cycles_pmatrix(holes, "quality", J)
    want = judge_pmatrix(holes, "quality", J)
    assert len(cpm.context_ids) > len(want.context_ids)  # the all-unparsed context
    full = dict(zip(cpm.context_ids, cpm.candidate_ids, strict=True))
    third = cpm.context_ids[2]  # its candidate seen only in unparsed rows is left out
    assert (
        len(dict(zip(want.context_ids, want.candidate_ids, strict=True))[third])
        == len(full[third]) - 1
    )
    _same(compared_layout(cpm), want)
    pm, (ref, source) = bias.judge_inputs(holes, "quality", J)
    _same(pm, want)
    pm2, (ref2, _) = bias.judge_inputs(holes, "quality", J, cycles_pm=cpm)
    _same(pm2, want)
    assert np.array_equal(ref, ref2, equal_nan=True) and ref.shape == want.P.shape[:2]


def test_no_parsed_comparison_and_wrong_judge(holes):
    comps = holes.comparisons.assign(p_first=np.nan)
    empty = Dataset(
        name="empty", contexts=holes.contexts, candidates=holes.candidates,
        human_scores=holes.human_scores, comparisons=comps, ratings=holes.ratings,
    )  # fmt: skip
    assert compared_layout(bias.cycles_pmatrix(empty, "quality", J)) is None
    with pytest.raises(DataError, match="no parsed comparison for attribute 'quality'"):
        bias.judge_inputs(empty, "quality", J)
    cpm = bias.cycles_pmatrix(holes, "quality", J)
    with pytest.raises(ValueError, match="cycles_pm was built for .*judge 'simulated'"):
        bias.judge_inputs(holes, "quality", "other", cycles_pm=cpm)


@pytest.mark.parametrize(
    "name, attribute, judge",
    [
        ("summeval", "coherence", "gpt-3.5-turbo-0301/ab-choice"),
        ("pandalm", "overall", "gpt-3.5-turbo"),
        ("pandalm", "overall", "pandalm-7b"),
    ],
)
def test_real_judges(name, attribute, judge):
    try:
        ds = data.load_benchmark(name)
    except (DataError, OSError) as err:
        pytest.skip(f"{name} not in the data folder ({err})")
    cpm = bias.cycles_pmatrix(ds, attribute, judge)
    want = judge_pmatrix(ds, attribute, judge)
    _same(compared_layout(cpm), want)
    pm, ref = bias.judge_inputs(ds, attribute, judge, cycles_pm=cpm)
    _same(pm, want)
    assert _same_reference(ds, attribute, want)[0] is not None
    r, s = human_scores_for(ds, attribute, want)
    assert np.array_equal(ref[0], r, equal_nan=True) and ref[1] == s


# --------------------------------------------------------------- the human reference


def _same_reference(ds, attribute, pm):
    got, got_src = human_reference(ds, attribute, pm)
    want, want_src = human_scores_for(ds, attribute, pm)
    assert got_src == want_src
    if want is None:
        assert got is None
    else:
        assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    return got, got_src


def _verdicts_only(ds: Dataset) -> Dataset:
    """Human scores dropped; three human annotators' verdicts (noisy copies of the judge's,
    some unparsed, some pairs outside the judge's layout) instead."""
    comps = ds.comparisons
    rng = np.random.default_rng(5)
    humans = []
    for k in range(3):
        h = comps.sample(frac=0.6, random_state=k).assign(judge=f"human:rater{k}")
        p = np.nan_to_num(h["p_first"].to_numpy(float), nan=0.5)  # parsed where the judge's
        p = np.clip(p + rng.normal(0, 0.3, len(h)), 0, 1)  # was not: outside its layout
        p[rng.random(len(h)) < 0.1] = np.nan
        humans.append(h.assign(p_first=np.round(p)))
    return Dataset(
        name="verdicts", contexts=ds.contexts, candidates=ds.candidates,
        human_scores=ds.human_scores.iloc[:0], comparisons=pd.concat([comps, *humans]),
        ratings=ds.ratings,
    )  # fmt: skip


def test_human_reference_equals_human_scores_for(holes):
    pm = judge_pmatrix(holes, "quality", J)
    ref, source = _same_reference(holes, "quality", pm)
    assert source.startswith("mean human score") and np.isfinite(ref).sum() > 20
    verdicts = _verdicts_only(holes)
    pm_v = judge_pmatrix(verdicts, "quality", J)
    outside = verdicts.comparisons["context_id"].astype(str) == holes.contexts["context_id"][1]
    assert pm_v.context_ids == pm.context_ids and outside.any()  # human rows outside the layout
    assert verdicts.comparisons.loc[outside, "p_first"].notna().any()
    ref, source = _same_reference(verdicts, "quality", pm_v)
    assert source == "win-ratio of the pooled verdicts of 3 human annotator(s)"
    # a human judge's own verdicts are left out of the pooled reference
    pm_h = judge_pmatrix(verdicts, "quality", "human:rater1")
    ref, source = _same_reference(verdicts, "quality", pm_h)
    assert source == "win-ratio of the pooled verdicts of 2 human annotator(s)"
    bare = Dataset(
        name="bare", contexts=holes.contexts, candidates=holes.candidates,
        human_scores=holes.human_scores.iloc[:0], comparisons=holes.comparisons,
        ratings=holes.ratings,
    )  # fmt: skip
    ref, source = _same_reference(bare, "quality", pm)
    assert ref is None and "no human scores or human verdicts" in source
    assert bias.judge_inputs(verdicts, "quality", J)[1][1] == (
        "win-ratio of the pooled verdicts of 3 human annotator(s)"
    )
