"""One P per judge: the calibration layout gathered from the transitivity P
(data.bias.pmatrix.compared_layout) equals data.comparative.tables.judge_pmatrix exactly — same
contexts, candidates, floats and counts — on a simulated judge with holes, SummEval and
PandaLM; judge_inputs uses the prebuilt cycles P and refuses another judge's."""

from __future__ import annotations

import numpy as np
import pytest

import data
from data import bias
from data.bias.pmatrix import compared_layout
from data.comparative.tables import judge_pmatrix
from data.schema import DataError, Dataset
from data.synthetic.simulate import simulate_with_truth
from tests.data._holes import with_holes

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
    return with_holes(ds)


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
    from data.comparative.tables import human_scores_for

    r, s = human_scores_for(ds, attribute, want)
    assert np.array_equal(ref[0], r, equal_nan=True) and ref[1] == s
