"""data.bias tables with their inputs prebuilt (pairs= / pm= / reference=): the same tables,
the inputs used as is, bad inputs refused; calibration ranks every context at once; the length
preference of a ratings judge (rating_pairs) on a constructed judge and on Topical-Chat."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

import data
from data import bias
from data.bias import calibration as calib
from data.paths import data_dirs
from data.schema import Dataset
from data.synthetic.simulate import simulate, simulate_with_truth

J = "simulated"


@pytest.fixture(scope="module")
def sim() -> Dataset:
    ds, _ = simulate_with_truth(
        20, 6, n_systems=6, length_bias=1.0, position_bias=0.8, cycles=2, texts=True,
        n_samples=3, random_state=4,
    )  # fmt: skip
    return ds


def _tables(ds, attribute, judge, **kw):
    """Every table of the page; kw: the prebuilt inputs (empty: built inside)."""
    pairs = {"pairs": kw["pairs"]} if "pairs" in kw else {}
    cyc = {"pm": kw["cycles_pm"]} if "cycles_pm" in kw else {}
    cal = {"pm": kw["pm"], "reference": kw["reference"]} if "pm" in kw else {}
    base = bias.style_ranking(ds, attribute, judge, **pairs)["system"].iloc[2]
    return {
        "summary": bias.profile_summary(ds, attribute, judge, **pairs),
        "by_gap": bias.profile_by_gap(ds, attribute, judge, n_bins=4, **pairs),
        "cycles": bias.cycles_summary(ds, attribute, judge, **cyc),
        "worst": bias.worst_cycles(ds, attribute, judge, n=5, **cyc),
        "longer": bias.length_preference(ds, attribute, judge, **pairs),
        "coef": bias.style_coefficients(ds, attribute, judge, **pairs),
        "ranking": bias.style_ranking(ds, attribute, judge, **pairs),
        "lc": bias.length_controlled_win_rate(ds, attribute, judge, base, **pairs),
        "calibration": bias.calibration_table(ds, attribute, judge, **cal),
        "reliability": bias.reliability_frame(ds, attribute, judge, "isotonic", **cal),
    }


def test_prebuilt_inputs_give_the_same_tables(sim):
    pm, reference = bias.judge_inputs(sim, "quality", J)
    prebuilt = dict(
        pairs=bias.judged_pairs(sim, "quality", J),
        cycles_pm=bias.cycles_pmatrix(sim, "quality", J),
        pm=pm,
        reference=reference,
    )
    built, given = _tables(sim, "quality", J), _tables(sim, "quality", J, **prebuilt)
    for name, df in built.items():
        pd.testing.assert_frame_equal(df, given[name], obj=name)
        assert str(df.attrs) == str(given[name].attrs), name
    assert built["worst"].shape[0] == 5  # cycles exist, so the pm path is exercised
    # the frame-only tables take the bare pair frame too
    frame = bias.pair_frame(sim, "quality", J)
    pd.testing.assert_frame_equal(
        bias.profile_by_gap(sim, "quality", J, n_bins=4, pairs=frame), built["by_gap"]
    )
    pd.testing.assert_frame_equal(
        bias.style_ranking(sim, "quality", J, pairs=frame), built["ranking"]
    )


def test_prebuilt_inputs_are_used_as_is(sim):
    jp = bias.judged_pairs(sim, "quality", J)
    before = bias.length_preference(sim, "quality", J, pairs=jp).set_index("source")
    flipped = jp.frame.assign(p_ab=1.0 - jp.frame["p_ab"], p_ba=1.0 - jp.frame["p_ba"])
    after = bias.length_preference(sim, "quality", J, pairs=flipped).set_index("source")
    assert after.loc["judge", "p_longer"] == pytest.approx(1.0 - before.loc["judge", "p_longer"])
    assert after.loc["humans", "p_longer"] == before.loc["humans", "p_longer"]
    # a P with one context dropped gives a table of the other contexts only
    pm = bias.cycles_pmatrix(sim, "quality", J)
    fewer = type(pm)(
        P=pm.P[1:], context_ids=pm.context_ids[1:], candidate_ids=pm.candidate_ids[1:],
        counts=pm.counts[1:], attribute=pm.attribute, judge=pm.judge,
    )  # fmt: skip
    assert (
        list(bias.cycles_summary(sim, "quality", J, pm=fewer)["context_id"]) == pm.context_ids[1:]
    )


def test_bad_prebuilt_inputs_are_refused(sim):
    jp = bias.judged_pairs(sim, "quality", J)
    with pytest.raises(TypeError, match="samples behind the pair frame"):
        bias.profile_summary(sim, "quality", J, pairs=jp.frame)
    with pytest.raises(ValueError, match="tie_band=0.0.*tie_band=0.1"):
        bias.profile_by_gap(sim, "quality", J, pairs=jp, tie_band=0.1)
    with pytest.raises(TypeError, match="not a pair frame: columns"):
        bias.style_ranking(sim, "quality", J, pairs=pd.DataFrame({"x": [1]}))
    with pytest.raises(TypeError, match="judged_pairs"):
        bias.length_preference(sim, "quality", J, pairs=[1, 2])
    other = simulate(4, 3, judge_name="other", random_state=0)
    with pytest.raises(ValueError, match="judge 'other'.*cycles_pmatrix"):
        bias.worst_cycles(sim, "quality", J, pm=bias.cycles_pmatrix(other, "quality", "other"))
    pm, ref = bias.judge_inputs(sim, "quality", J)
    opm, _ = bias.judge_inputs(other, "quality", "other")
    with pytest.raises(ValueError, match="built for attribute 'quality', judge 'other'"):
        bias.calibration_table(sim, "quality", J, pm=opm, reference=ref)
    with pytest.raises(ValueError, match="reference scores have shape"):
        bias.reliability_frame(sim, "quality", J, "swap", pm=pm, reference=(ref[0][:2], ref[1]))


def _reordered_slow(raw, scores):
    n = diff = 0
    for r0, r1 in zip(raw, scores, strict=True):
        ok0, ok1 = np.isfinite(r0), np.isfinite(r1)
        if ok0.sum() < 2:
            continue
        n += 1
        same = np.array_equal(ok0, ok1) and np.array_equal(rankdata(r0[ok0]), rankdata(r1[ok1]))
        diff += not same
    return diff / n if n else np.nan


def test_reordered_matches_rankdata_per_context():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = rng.integers(0, 4, (15, 6)).astype(float)  # many ties
        a[rng.random(a.shape) < 0.3] = np.nan
        b = a.copy()
        moved = rng.random(a.shape) < 0.08
        b[moved] = rng.integers(0, 4, moved.sum())
        b[rng.random(a.shape) < 0.04] = np.nan
        got = calib._reordered(calib._rank_rows(a), b)
        assert np.isclose(got, _reordered_slow(a, b), equal_nan=True)
    empty = np.empty((0, 3))
    assert np.isnan(calib._reordered(calib._rank_rows(empty), empty))


def test_calibration_table_ranks_all_contexts_at_once(sim, monkeypatch):
    calls = []

    def counting(*args, **kw):
        calls.append(np.shape(args[0]))
        return rankdata(*args, **kw)

    monkeypatch.setattr(calib, "rankdata", counting)
    df = bias.calibration_table(sim, "quality", J)
    assert df["available"].all()
    # one call per method and one for the raw ranking, each over every context
    assert len(calls) <= len(calib.METHODS) + 1 and all(s[0] == 20 for s in calls)


def _ratings_judge(reverse: bool) -> Dataset:
    """A ratings judge whose candidates' lengths follow their mean score (or its reverse)."""
    ds = simulate(25, 4, n_samples=4, likert=True, judge_noise=0.3, random_state=2)
    r = ds.ratings
    mean = r.groupby(["context_id", "candidate_id"])["score"].mean()
    rank = mean.groupby(level=0).rank(method="first", ascending=not reverse)
    cand = ds.candidates.copy()
    key = pd.MultiIndex.from_frame(cand[["context_id", "candidate_id"]])
    cand["text"] = [" ".join(["word"] * int(5 * k)) for k in rank.reindex(key)]
    return Dataset(
        name="ratings by length", contexts=ds.contexts, candidates=cand,
        human_scores=ds.human_scores, comparisons=ds.comparisons, ratings=ds.ratings,
    )  # fmt: skip


@pytest.mark.parametrize("reverse", [False, True])
def test_ratings_judge_length_preference(reverse):
    ds = _ratings_judge(reverse)
    lp = bias.length_preference(ds, "quality", J, prompt_id="plain").set_index("source")
    frame = bias.rating_pairs(ds, "quality", J, "plain")
    a_longer = frame["words_a"] > frame["words_b"]
    expected = np.where(a_longer, frame["p_ab"], 1.0 - frame["p_ab"]).mean()
    assert lp.loc["judge", "n_pairs"] == len(frame) == 25 * 6
    assert lp.loc["judge", "p_longer"] == pytest.approx(expected)
    if reverse:
        assert lp.loc["judge", "high"] < 0.5 and lp.loc["humans", "high"] < 0.5
    else:
        assert lp.loc["judge", "low"] > 0.5 and lp.loc["humans", "low"] > 0.5


def test_real_topicalchat_ratings_judge_prefers_the_longer():
    if not (data_dirs()[0] / "topicalchat_usr").is_dir():
        pytest.skip("topicalchat_usr not in the data folder (real data absent)")
    ds = data.load_benchmark("topicalchat")
    judge = "gpt-3.5-turbo/geval"
    lp = bias.length_preference(ds, "engagingness", judge, "geval").set_index("source")
    frame = bias.rating_pairs(ds, "engagingness", judge, "geval")
    differ = frame["words_a"] != frame["words_b"]
    assert lp.loc["judge", "n_pairs"] == lp.loc["humans", "n_pairs"] == int(differ.sum()) > 800
    # both the judge and the humans favour the longer turn; the humans more strongly
    assert 0.5 < lp.loc["judge", "low"] and lp.loc["judge", "high"] < lp.loc["humans", "low"]
    same = bias.length_preference(ds, "engagingness", judge, "geval", pairs=frame)
    pd.testing.assert_frame_equal(same.set_index("source"), lp)
