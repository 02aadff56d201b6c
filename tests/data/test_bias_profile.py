"""data.bias.profile and data.bias.cycles on real data (SummEval ChatGPT, PandaLM GPT-3.5)
and their empty / malformed cases; the CLI."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from data.bias import cycles_summary, pair_frame, profile_by_gap, profile_summary, worst_cycles
from data.bias.cycles import CYCLE_COLUMNS
from data.bias.cycles import SUMMARY_COLUMNS as CYCLE_SUMMARY
from data.bias.profile import BY_GAP_COLUMNS, SUMMARY_COLUMNS
from data.schema import DataError
from data.synthetic.simulate import simulate
from tests.data._benchmark_files import need, real

SUMMEVAL_JUDGE = "gpt-3.5-turbo-0301/ab-choice"


def test_summary_counts_match_the_pair_frame_and_samples():
    ds = simulate(
        30,
        4,
        mode="samples",
        n_samples=3,
        tie_rate=0.1,
        position_bias=0.5,
        likert=False,
        random_state=1,
    )
    s = profile_summary(ds, "quality", "simulated").iloc[0]
    assert tuple(profile_summary(ds, "quality", "simulated").columns) == SUMMARY_COLUMNS
    df = pair_frame(ds, "quality", "simulated")
    assert s["n_pairs"] == s["n_both"] == len(df) == 30 * 6
    stable = np.r_[df["stable_ab"], df["stable_ba"]]
    assert s["repetition_stability"] == pytest.approx(stable.mean())
    assert (
        s["repetition_stability_low"] <= s["repetition_stability"] <= s["repetition_stability_high"]
    )
    assert s["first_win_rate"] > 0.5 and s["fairness"] < 0  # primacy
    assert s["reasons"] == {}
    by = profile_by_gap(ds, "quality", "simulated", n_bins=3)
    assert tuple(by.columns) == BY_GAP_COLUMNS and by["n"].sum() == len(df)


def test_empty_and_unknown_judges():
    ds = simulate(3, 3, likert=False)
    with pytest.raises(DataError, match="no comparisons by judge"):
        profile_summary(ds, "quality", "nobody")
    s = profile_summary(ds, "other", "simulated").iloc[0]
    assert s["n_pairs"] == 0 and "no comparisons for attribute 'other'" in s["reasons"]["pairs"]
    assert not len(profile_by_gap(ds, "other", "simulated"))
    c = cycles_summary(ds, "other", "simulated")
    assert tuple(c.columns) == CYCLE_SUMMARY and not len(c)
    w = worst_cycles(ds, "other", "simulated")
    assert tuple(w.columns) == CYCLE_COLUMNS and not len(w)


@pytest.mark.slow
def test_summeval_chatgpt_profile_and_cycles():
    ds = real("summeval")
    for attribute in ("coherence", "consistency", "fluency", "relevance"):
        s = profile_summary(ds, attribute, SUMMEVAL_JUDGE).iloc[0]
        assert s["n_pairs"] == s["n_both"] == 1100
        assert (
            np.isnan(s["repetition_stability"])
            and "sampled once" in s["reasons"]["repetition_stability"]
        )
        assert (
            0.5 < s["consistency"] < 0.8
            and s["consistency_low"] < s["consistency"] < s["consistency_high"]
        )
        assert s["gap_source"] == "human score gap"
        by = profile_by_gap(ds, attribute, SUMMEVAL_JUDGE)
        assert 2 <= len(by) <= 5 and by["n"].sum() == 1100  # quantile edges merge
        c = cycles_summary(ds, attribute, SUMMEVAL_JUDGE)
        # 11 pairs among 12 compared candidates per context: a tree, no triad to check
        assert len(c) == 100 and (c["n_triads"] == 0).all() and c.attrs["total_circular"] == 0
        assert np.isfinite(c["bt_disagreement"]).all()
    # coherence: published-scale values of this judge (see the closing note)
    s = profile_summary(ds, "coherence", SUMMEVAL_JUDGE).iloc[0]
    assert s["consistency"] == pytest.approx(708 / 1100)
    assert s["first_win_rate"] == pytest.approx(0.5207, abs=1e-3)


@pytest.mark.slow
def test_pandalm_one_order_profile_and_cycles():
    ds = real("pandalm")
    s = profile_summary(ds, "overall", "gpt-3.5-turbo").iloc[0]
    assert s["n_pairs"] == 999 - 25 and s["n_both"] == 0  # 25 unparsed answers left out
    assert np.isnan(s["consistency"]) and "both orders" in s["reasons"]["consistency"]
    assert np.isnan(s["fairness"]) and 0.4 < s["first_win_rate"] < 0.6
    assert s["gap_source"] == "human vote margin"
    c = cycles_summary(ds, "overall", "gpt-3.5-turbo")
    assert c.attrs["total_circular"] == int(c["n_circular"].sum()) > 0
    w = worst_cycles(ds, "overall", "gpt-3.5-turbo", n=5)
    assert len(w) == 5 and w["strength"].is_monotonic_decreasing


@pytest.mark.slow
@need("pandalm")
def test_cli_prints_the_tables():
    out = subprocess.run(
        [sys.executable, "-m", "data.bias", "pandalm", "--judge", "gpt-3.5-turbo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    for title in (
        "Position-bias profile",
        "By quality gap",
        "Transitivity",
        "Length preference",
        "Style coefficients",
        "Calibration",
    ):
        assert f"## {title}" in out
    bad = subprocess.run(
        [sys.executable, "-m", "data.bias", "pandalm", "--judge", "nobody"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "nobody" in bad.stderr and "Traceback" not in bad.stderr
