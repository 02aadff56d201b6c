"""data.bias.calibration: the corrections side by side, reliability frames; simulated and real."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import ranking
from data.bias.calibration import (
    CALIBRATION_COLUMNS,
    METHODS,
    RELIABILITY_COLUMNS,
    calibration_table,
    corrected,
    reliability_frame,
)
from data.comparative.tables import human_scores_for, judge_pmatrix
from data.schema import DataError
from data.synthetic.simulate import simulate
from tests.data._benchmark_files import real

JUDGE = "simulated"


@pytest.fixture(scope="module")
def biased():
    return simulate(30, 5, position_bias=1.5, judge_noise=0.5, human_noise=0.3, random_state=3)


def test_table_on_a_simulated_position_bias(biased):
    df = calibration_table(biased, "quality", JUDGE)
    assert tuple(df.columns) == CALIBRATION_COLUMNS
    assert list(df["method"]) == list(METHODS)
    assert df["available"].all() and df["reason"].isna().all()
    assert df.attrs["reference"].startswith("mean human score")
    t = df.set_index("method")
    # the bias shows, and every correction brings the first slot back towards one half
    assert t.loc["off", "first_win_rate"] > 0.7
    for m in ("balanced_tau", "alpha", "swap", "isotonic", "platt"):
        assert abs(t.loc[m, "first_win_rate"] - 0.5) < abs(t.loc["off", "first_win_rate"] - 0.5)
    assert t.loc["off", "contexts_reordered"] == 0.0
    # swap calibration makes the two orders (nearly) agree; the human maps lower the ECE
    assert t.loc["swap", "disagreement"] < 0.3 * t.loc["off", "disagreement"]
    assert t.loc["isotonic", "ece"] < t.loc["off", "ece"]
    assert t.loc["platt", "ece"] < t.loc["off", "ece"]
    for col in ("pairwise_accuracy", "spearman", "ece", "swap_consistency"):
        assert t[col].between(0, 1).all(), col


def test_table_matches_ranking_on_the_same_P(biased):
    pm = judge_pmatrix(biased, "quality", JUDGE)
    ref, _ = human_scores_for(biased, "quality", pm)
    t = calibration_table(biased, "quality", JUDGE).set_index("method")
    Pm, tau, reason, res = corrected(pm.P, "swap", ref)
    assert tau is None and reason is None and res.method == "swap"
    wr = ranking.win_ratio(Pm)
    assert t.loc["swap", "spearman"] == pytest.approx(np.nanmean(ranking.spearman(wr, ref)))
    tau_b = float(ranking.balanced_threshold(pm.P))
    acc = ranking.pairwise_accuracy(pm.P, ref, tau_b)
    assert t.loc["balanced_tau", "pairwise_accuracy"] == pytest.approx(float(acc))
    iso = ranking.calibrate(pm.P, "isotonic", ref, random_state=0)
    assert t.loc["isotonic", "ece"] == pytest.approx(iso.ece_after)


def test_one_order_only_and_no_humans():
    ds = simulate(12, 4, position_bias=1.0, n_annotators=0, random_state=1)
    c = ds.comparisons
    # keep each pair in one order only: first before second in candidate id order
    ds = dataclasses.replace(
        ds, comparisons=c[c["first_id"].astype(str) < c["second_id"].astype(str)]
    )
    t = calibration_table(ds, "quality", JUDGE).set_index("method")
    assert not t.loc["swap", "available"] and "both orders" in t.loc["swap", "reason"]
    for m in ("isotonic", "platt"):
        assert not t.loc[m, "available"] and "human" in t.loc[m, "reason"]
    assert t.loc["off", "available"] and math.isnan(t.loc["off", "spearman"])
    assert math.isnan(t.loc["swap", "first_win_rate"])
    rel = reliability_frame(ds, "quality", JUDGE, "isotonic")
    assert len(rel) == 0 and tuple(rel.columns) == RELIABILITY_COLUMNS
    assert "no human" in rel.attrs["reason"]


def test_reliability_frame(biased):
    assert len(reliability_frame(biased, "quality", JUDGE, "platt", n_bins=8)) == 16
    rel = reliability_frame(biased, "quality", JUDGE, "platt")
    assert tuple(rel.columns) == RELIABILITY_COLUMNS
    assert rel["stage"].tolist() == ["before"] * 10 + ["after"] * 10
    assert rel.attrs["reason"] is None
    before, after = (rel[rel["stage"] == s] for s in ("before", "after"))
    assert before["count"].sum() == after["count"].sum() > 0

    def ece(f):
        used = f[f["count"] > 0]
        return float(
            (used["count"] * (used["mean_p"] - used["mean_y"]).abs()).sum() / used["count"].sum()
        )

    t = calibration_table(biased, "quality", JUDGE).set_index("method")
    assert ece(before) == pytest.approx(t.loc["off", "ece"])
    assert ece(after) == pytest.approx(t.loc["platt", "ece"])
    with pytest.raises(ValueError, match="unknown method"):
        reliability_frame(biased, "quality", JUDGE, "magic")
    with pytest.raises(DataError):
        calibration_table(biased, "quality", "nobody")


@pytest.mark.slow
def test_real_summeval_chatgpt_and_pandalm():
    ds = real("summeval")
    t = calibration_table(ds, "coherence", "gpt-3.5-turbo-0301/ab-choice").set_index("method")
    assert t["available"].all()
    assert t.loc["off", "first_win_rate"] == pytest.approx(0.521, abs=1e-3)
    assert t.loc["swap", "disagreement"] < t.loc["off", "disagreement"]
    assert t.loc["isotonic", "ece"] < 0.5 * t.loc["off", "ece"]
    assert t.loc["platt", "ece"] < 0.5 * t.loc["off", "ece"]
    rel = reliability_frame(ds, "coherence", "gpt-3.5-turbo-0301/ab-choice", "swap")
    after = rel[rel["stage"] == "after"]
    assert (after["count"] > 0).sum() == 3  # hard verdicts: three levels
    ds = real("pandalm")
    t = calibration_table(ds, "overall", "gpt-3.5-turbo").set_index("method")
    assert not t.loc["swap", "available"] and "both orders" in t.loc["swap", "reason"]
    assert t.loc[["isotonic", "platt"], "available"].all()
    assert t.loc["isotonic", "ece"] < t.loc["off", "ece"]
    df = calibration_table(ds, "overall", "gpt-3.5-turbo")
    assert "human annotator" in df.attrs["reference"]
