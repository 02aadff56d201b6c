"""data.synthetic.bias_demo: the simulated judge with known biases, and its truth recovered by data.bias."""

from __future__ import annotations

import numpy as np
import pytest

from data.bias import cycles_summary, pair_frame, profile_by_gap, style_coefficients, worst_cycles
from data.synthetic.bias_demo import (
    CHANCE_CYCLES,
    NAME,
    TRUTH_COLUMNS,
    bias_demo,
    true_first_win,
    truth_table,
)
from data.validate import validate_dataset

A, J = "quality", "simulated"


@pytest.fixture(scope="module")
def demo():
    ds, truth = bias_demo()
    return ds, truth, pair_frame(ds, A, J), profile_by_gap(ds, A, J), cycles_summary(ds, A, J)


def test_dataset_shows_every_section(demo):
    ds, truth, pairs, _, _ = demo
    validate_dataset(ds)
    assert ds.name == NAME and len(ds.contexts) == 40 and len(ds.candidates) == 320
    assert ds.candidates["system"].nunique() == 8
    assert set(ds.comparisons["sample"]) == {0, 1, 2}  # repetition stability is defined
    tie_share = (ds.comparisons["verdict"] == "tie").mean()
    assert 0.03 < tie_share < 0.07
    assert ds.human_scores["annotator"].nunique() == 3
    assert (ds.candidates["text"].str.split().str.len() >= 20).all()
    for text in ("length bias 1", "bonus 1 x exp(-0.5", "d00, d01, d02", "d17, d31"):
        assert text in ds.description
    assert truth["description"] == ds.description
    assert bias_demo()[0].comparisons.equals(ds.comparisons)  # seeded


def test_truth_is_recovered(demo):
    ds, truth, pairs, by_gap, cycles = demo
    table = truth_table(truth, style_coefficients(ds, A, J), by_gap, pairs, cycles)
    assert tuple(table.columns) == TRUTH_COLUMNS and len(table) == 1 + len(by_gap) + 1
    assert table["ok"].all(), table
    length = table.iloc[0]
    assert length["low"] <= 1.0 <= length["high"] and length["low"] > 0  # a real effect
    bins = table.attrs["bins"]
    assert np.all(np.diff(bins["true"]) < 0)  # the bonus shrinks with the gap ...
    assert by_gap["first_win_rate"].iloc[0] - by_gap["first_win_rate"].iloc[-1] > 0.08  # seen
    assert bins["true"].iloc[-1] == pytest.approx(0.5, abs=0.01)


def test_cycle_contexts_are_exact(demo):
    ds, truth, _, _, cycles = demo
    found = cycles.loc[cycles["n_circular"] > 0, "context_id"].tolist()
    assert found == ["d00", "d01", "d02", *CHANCE_CYCLES]
    assert cycles.set_index("context_id").loc[["d00", "d01", "d02"], "n_circular"].eq(1).all()
    q = truth["quality"]
    for row in worst_cycles(ds, A, J).itertuples(index=False):
        if row.context_id in truth["cycle_contexts"]:  # the injected 1st-2nd-3rd triad
            top3 = q[q.context_id == row.context_id].nlargest(3, "quality")["candidate_id"]
            assert {row.i, row.j, row.k} == set(top3)


def test_true_first_win_matches_the_simulated_rate(demo):
    # the truth formula against the judge's own verdicts: pooled first-win rate within 0.02
    ds, truth, pairs, _, _ = demo
    p = ds.comparisons["p_first"].mean()
    assert true_first_win(truth, pairs).mean() == pytest.approx(p, abs=0.02)


def test_a_wrong_truth_is_crossed(demo):
    ds, truth, pairs, by_gap, cycles = demo
    wrong = dict(truth, length_bias=3.0, cycle_contexts=["d05"], position_bias=0.0)
    table = truth_table(wrong, style_coefficients(ds, A, J), by_gap, pairs, cycles)
    assert not table["ok"].iloc[0] and not table["ok"].iloc[-1]
    assert not table["ok"].iloc[1]  # no first-slot bonus: the first bin is not covered
