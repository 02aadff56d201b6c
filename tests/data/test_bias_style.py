"""data.bias.style: length preference, style coefficients, style-controlled ranks, LC win rate."""

import numpy as np
import pytest

import data
from data.bias.style import (
    STYLE_TERMS,
    length_controlled_win_rate,
    length_preference,
    style_coefficients,
    style_ranking,
)
from data.schema import DataError
from data.synthetic.simulate import simulate_with_truth


@pytest.fixture(scope="module")
def biased():
    return simulate_with_truth(60, 8, n_systems=8, length_bias=1.5, texts=True, random_state=0)[0]


@pytest.fixture(scope="module")
def unbiased():
    return simulate_with_truth(60, 8, n_systems=8, length_bias=0.0, texts=True, random_state=1)[0]


def test_length_bias_is_seen_in_preference_and_coefficients(biased, unbiased):
    lp = length_preference(biased, "quality", "simulated").set_index("source")
    assert lp.loc["judge", "low"] > 0.5 and lp.loc["judge", "p_longer"] > lp.loc["humans", "high"]
    cand = style_coefficients(biased, "quality", "simulated", items="candidate").set_index("term")
    # the correctly specified (candidate-level) model covers the true 1.5
    assert cand.loc["length", "low"] <= 1.5 <= cand.loc["length", "high"]
    sysl = style_coefficients(biased, "quality", "simulated").set_index("term")
    assert list(sysl.index) == list(STYLE_TERMS) and sysl.loc["length", "low"] > 0.5
    none = style_coefficients(unbiased, "quality", "simulated").set_index("term")
    assert none.loc["length", "low"] <= 0.0 <= none.loc["length", "high"]
    lp0 = length_preference(unbiased, "quality", "simulated").set_index("source")
    assert lp0.loc["judge", "low"] <= 0.5 + 0.03


def test_style_ranking_and_lc_win_rate_shapes(biased):
    sr = style_ranking(biased, "quality", "simulated")
    assert list(sr.columns) == [
        "system", "score_plain", "low_plain", "high_plain", "score_controlled",
        "low_controlled", "high_controlled", "rank_plain", "rank_controlled",
    ]  # fmt: skip
    assert sr["rank_controlled"].iloc[0] == 1 and sr["rank_controlled"].is_monotonic_increasing
    assert (np.diff(sr["score_controlled"]) <= 0).all()
    assert (sr["low_controlled"] <= sr["score_controlled"]).all()
    base = sr["system"].iloc[-1]
    lc = length_controlled_win_rate(biased, "quality", "simulated", base)
    assert list(lc.columns) == ["system", "win_rate_raw", "win_rate_lc", "low", "high"]
    row = lc.set_index("system").loc[base]
    assert row["win_rate_lc"] == 0.5 and row["win_rate_raw"] == 0.5
    assert ((lc["low"] <= lc["win_rate_lc"]) & (lc["win_rate_lc"] <= lc["high"])).all()
    with pytest.raises(DataError, match="choose one of"):
        length_controlled_win_rate(biased, "quality", "simulated", "no such system")


def test_unknown_judge_is_a_clear_error(biased):
    with pytest.raises(DataError, match="no comparisons by judge"):
        length_preference(biased, "quality", "nobody")


@pytest.mark.parametrize(
    "name, judge", [("summeval", "gpt-3.5-turbo-0301/ab-choice"), ("pandalm", "gpt-3.5-turbo")]
)
def test_real_judges(name, judge):
    ds = data.load_benchmark(name)
    attribute = "coherence" if name == "summeval" else "overall"
    lp = length_preference(ds, attribute, judge).set_index("source")
    assert lp.loc["judge", "n_pairs"] > 800 and lp.loc["judge", "low"] > 0.5
    assert np.isfinite(lp.loc["humans", "p_longer"])
    sc = style_coefficients(ds, attribute, judge).set_index("term")
    assert sc.loc["length", "low"] > 0  # both judges favour longer answers beyond the system
    sr = style_ranking(ds, attribute, judge)
    assert set(sr["rank_plain"]) >= {1.0}
    base = sr["system"].iloc[len(sr) // 2]
    lc = length_controlled_win_rate(ds, attribute, judge, base)
    assert lc["win_rate_lc"].notna().all()
