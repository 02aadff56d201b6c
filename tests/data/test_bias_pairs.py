"""data.bias.pairs.pair_frame and data.bias.features on hand-made, simulated and real data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ranking
from data.arrays import comparisons_to_P
from data.bias import features, pair_frame
from data.bias.pairs import JUDGE_GAP_RIDGE, PAIR_COLUMNS, rating_pairs
from data.schema import DataError, Dataset
from data.synthetic.simulate import simulate
from data.validate import validate_dataset
from tests.data._benchmark_files import real


def test_text_features_counts():
    texts = pd.Series(
        [
            "# Title\n\nSome **bold** words and __more__.\n- one\n* two\n+ three\n1. four\n2) five",
            "plain  words\there",
            "",
            None,
            "#hashtag is not a header; ** not bold ** either; -dash is no item",
        ],
        index=[10, 11, 12, 13, 14],
    )
    f = features.text_features(texts)
    assert list(f.columns) == ["words", "chars", "headers", "lists", "bold"]
    assert list(f.index) == [10, 11, 12, 13, 14]
    assert f.loc[10].tolist() == [17, len(texts[10]), 1, 5, 2]
    assert f.loc[11].tolist() == [3, 17, 0, 0, 0]
    assert f.loc[12].tolist() == [0, 0, 0, 0, 0]
    assert f.loc[13].isna().all()
    assert f.loc[14, ["headers", "lists", "bold"]].tolist() == [0, 0, 0]
    # words = whitespace tokens, as str.split
    assert f["words"].iloc[:3].tolist() == [len(t.split()) for t in texts.iloc[:3]]


def test_normalized_diff():
    out = features.normalized_diff([30, 0, 5, np.nan, 0], [10, 0, 5, 1, 4])
    np.testing.assert_allclose(out, [0.5, 0.0, 0.0, np.nan, -1.0])


def _toy() -> Dataset:
    """One context, candidates x, y, z (in that order), a judge with samples in both orders."""
    cands = pd.DataFrame(
        {
            "context_id": ["c1"] * 3 + ["c2"] * 2,
            "candidate_id": ["x", "y", "z", "u", "v"],
            "system": ["S1", "S2", "S3", "S1", "S2"],
            "text": ["one two three", "# H\n- a\n- b **c**", "four", "a b", "c"],
        }
    )
    rows = [
        # (ctx, first, second, p, verdict, sample)
        ("c1", "x", "y", 1.0, "A", 0),
        ("c1", "x", "y", 1.0, "A", 1),
        ("c1", "x", "y", 0.5, "tie", 2),
        ("c1", "y", "x", 0.0, "B", 0),  # y first, y loses: x wins in both orders
        ("c1", "y", "x", np.nan, None, 1),  # unparsed: out of the means
        ("c1", "z", "y", 1.0, "A", 0),  # pair (y, z) seen only with z first
        ("c1", "x", "z", np.nan, None, 0),  # pair (x, z): judged but never parsed
        ("c2", "v", "u", 0.7, None, 0),
        ("c2", "u", "v", 0.2, None, 0),
    ]
    comp = pd.DataFrame(
        rows, columns=["context_id", "first_id", "second_id", "p_first", "verdict", "sample"]
    )
    comp["attribute"], comp["judge"] = "q", "J"
    human = pd.DataFrame(
        {
            "context_id": ["c1"] * 6 + ["c2"] * 2,
            "candidate_id": ["x", "x", "y", "y", "z", "z", "u", "v"],
            "attribute": "q",
            "annotator": ["h1", "h2"] * 3 + ["h1", "h1"],
            "score": [5, 4, 2, 3, 4.5, 4.5, 3, 3],
        }
    )
    contexts = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["s1", "s2"]})
    ds = Dataset("toy", contexts=contexts, candidates=cands, human_scores=human, comparisons=comp)
    return validate_dataset(ds)


def test_pair_frame_orients_both_orders():
    ds = _toy()
    df = pair_frame(ds, "q", "J")
    assert tuple(df.columns) == PAIR_COLUMNS
    assert df[["context_id", "a", "b"]].values.tolist() == [
        ["c1", "x", "y"],
        ["c1", "x", "z"],
        ["c1", "y", "z"],
        ["c2", "u", "v"],
    ]
    r = df.set_index(["a", "b"])
    np.testing.assert_allclose(r.loc[("x", "y"), ["p_ab", "p_ba"]].astype(float), [2.5 / 3, 0.0])
    assert r.loc[("x", "y"), ["n_ab", "n_ba"]].tolist() == [3, 1]
    assert r.loc[("x", "y"), "stable_ab"] == pytest.approx(2 / 3)
    assert np.isnan(r.loc[("x", "y"), "stable_ba"])  # one parsed sample
    assert r.loc[("x", "y"), "tie_ab"] == pytest.approx(1 / 3) and r.loc[("x", "y"), "tie_ba"] == 0
    # unparsed only: still listed, NaN p, 0 samples
    xz = r.loc[("x", "z")]
    assert np.isnan(xz["p_ab"]) and np.isnan(xz["p_ba"]) and xz["n_ab"] == 0 and xz["n_ba"] == 0
    yz = r.loc[("y", "z")]
    assert np.isnan(yz["p_ab"]) and yz["p_ba"] == 1.0 and yz["n_ab"] == 0 and yz["n_ba"] == 1
    uv = r.loc[("u", "v")]
    assert (uv["p_ab"], uv["p_ba"]) == (0.2, 0.7)
    # human reference from mean scores: x 4.5, y 2.5, z 4.5, u = v = 3
    assert r["human_pref"].tolist() == [1.0, 0.5, 0.0, 0.5]
    np.testing.assert_allclose(r["human_gap"], [2.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(r["gap"], r["human_gap"])
    assert df.attrs["gap_source"] == "human score gap"
    assert r.loc[("x", "y"), ["system_a", "system_b"]].tolist() == ["S1", "S2"]
    assert r.loc[("x", "y"), ["words_a", "words_b", "headers_b", "lists_b", "bold_b"]].tolist() == [
        3,
        7,
        1,
        2,
        1,
    ]


def test_judge_gap_is_the_bradley_terry_distance():
    ds = _toy()
    df = pair_frame(ds, "q", "J")
    pm = comparisons_to_P(ds.comparisons, attribute="q", judge="J", candidates=ds.candidates)
    theta = ranking.bradley_terry(pm.P, ridge=JUDGE_GAP_RIDGE).scores
    pos = {
        c: {k: i for i, k in enumerate(ids)}
        for c, ids in zip(pm.context_ids, pm.candidate_ids, strict=True)
    }
    ctx = {c: k for k, c in enumerate(pm.context_ids)}
    want = [
        abs(theta[ctx[c], pos[c][a]] - theta[ctx[c], pos[c][b]])
        for c, a, b in df[["context_id", "a", "b"]].itertuples(index=False)
    ]
    np.testing.assert_allclose(df["judge_gap"], want)
    assert np.isfinite(df["judge_gap"]).all()


def test_human_votes_and_judge_gap_fallback():
    ds = _toy()
    ds.human_scores = ds.human_scores.iloc[:0]
    votes = pd.DataFrame(
        {
            "context_id": ["c1"] * 3,
            "attribute": "q",
            "judge": ["human:h1", "human:h2", "human:h1"],
            "first_id": ["x", "y", "y"],
            "second_id": ["y", "x", "z"],
            "p_first": [1.0, 1.0, 0.0],
            "verdict": ["A", "A", "B"],
            "sample": 0,
        }
    )
    ds.comparisons = pd.concat([ds.comparisons, votes], ignore_index=True)
    ds = validate_dataset(ds)
    r = pair_frame(ds, "q", "J").set_index(["a", "b"])
    # (x, y): h1 for x, h2 for y (y first, A) -> 0.5; (y, z): y first, B -> z -> 0
    assert r.loc[("x", "y"), "human_pref"] == 0.5 and r.loc[("x", "y"), "human_gap"] == 0.0
    assert r.loc[("y", "z"), "human_pref"] == 0.0 and r.loc[("y", "z"), "human_gap"] == 1.0
    assert np.isnan(r.loc[("u", "v"), "human_pref"])
    assert r.loc[("u", "v"), "gap"] == r.loc[("u", "v"), "judge_gap"]
    assert r.loc[("y", "z"), "gap"] == 1.0
    assert "human vote margin" in pair_frame(ds, "q", "J").attrs["gap_source"]
    ds.comparisons = ds.comparisons[~ds.comparisons["judge"].str.startswith("human:")]
    assert pair_frame(ds, "q", "J").attrs["gap_source"] == "judge Bradley–Terry gap"


def test_tie_band_and_bad_input():
    ds = _toy()
    r = pair_frame(ds, "q", "J", tie_band=0.25).set_index(["a", "b"])
    assert r.loc[("u", "v"), ["tie_ab", "tie_ba"]].tolist() == [0.0, 1.0]
    with pytest.raises(DataError, match="no comparisons by judge 'nobody'.*'J'"):
        pair_frame(ds, "q", "nobody")
    empty = pair_frame(ds, "other", "J")
    assert tuple(empty.columns) == PAIR_COLUMNS and not len(empty)
    assert "no comparisons for attribute 'other'" in empty.attrs["reason"]
    with pytest.raises(ValueError, match="tie_band"):
        pair_frame(ds, "q", "J", tie_band=0.5)


def test_matches_comparisons_to_P_on_simulated_samples():
    ds = simulate(6, 5, mode="samples", n_samples=3, tie_rate=0.2, likert=False, random_state=3)
    df = pair_frame(ds, "quality", "simulated")
    assert len(df) == 6 * 10 and (df[["n_ab", "n_ba"]] == 3).all().all()
    pm = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    c = df["context_id"].map({c: k for k, c in enumerate(pm.context_ids)}).to_numpy()
    ia = df["a"].str[1:].astype(int).to_numpy()
    ib = df["b"].str[1:].astype(int).to_numpy()
    np.testing.assert_allclose(df["p_ab"], pm.P[c, ia, ib])
    np.testing.assert_allclose(df["p_ba"], pm.P[c, ib, ia])
    # stability: share of the modal verdict among 3 samples
    comp = ds.comparisons
    modal = comp.groupby(["context_id", "first_id", "second_id"])["verdict"].agg(
        lambda v: v.value_counts().max() / len(v)
    )
    want = [
        modal[(ctx, a, b)] for ctx, a, b in df[["context_id", "a", "b"]].itertuples(index=False)
    ]
    np.testing.assert_allclose(df["stable_ab"], want)


def test_100k_rows():
    """A 105,000-row judge gives its 52,500 pairs (its time is measured in
    benchmarks/bench_bias_lab.py, not asserted here: a busy machine is not a failure)."""
    ds = simulate(500, 15, mode="samples", n_samples=1, likert=False, random_state=1)
    assert len(ds.comparisons) == 105_000
    df = pair_frame(ds, "quality", "simulated")
    assert len(df) == 500 * 15 * 14 // 2 and (df["n_ab"] + df["n_ba"] == 2).all()


@pytest.mark.slow
def test_real_summeval_and_pandalm():
    ds = real("summeval")
    for attribute in ("coherence", "consistency", "fluency", "relevance"):
        df = pair_frame(ds, attribute, "gpt-3.5-turbo-0301/ab-choice")
        assert len(df) == 1100 and (df["n_ab"] == 1).all() and (df["n_ba"] == 1).all()
        assert df.attrs["gap_source"] == "human score gap" and np.isfinite(df["gap"]).all()
    ds = real("pandalm")
    df = pair_frame(ds, "overall", "gpt-3.5-turbo")
    assert len(df) == 999
    assert int(((df["n_ab"] == 0) & (df["n_ba"] == 0)).sum()) == 25  # the 25 unparsed answers
    assert df.attrs["gap_source"] == "human vote margin"
    assert df["human_pref"].notna().all()


def test_rating_pairs_counts_sample_pairs():
    ds = simulate(3, 4, n_samples=3, likert=True, random_state=5)
    ds.ratings.loc[0, "score"] = np.nan  # one unparsed sample of d0/c0
    df = rating_pairs(ds, "quality", "simulated")
    assert tuple(df.columns) == PAIR_COLUMNS and len(df) == 3 * 6
    r = ds.ratings
    for row in df.iloc[[0, 1, 5, 9]].itertuples(index=False):
        sa = r[(r.context_id == row.context_id) & (r.candidate_id == row.a)]["score"].dropna()
        sb = r[(r.context_id == row.context_id) & (r.candidate_id == row.b)]["score"].dropna()
        x, y = sa.to_numpy()[:, None], sb.to_numpy()[None, :]
        assert row.n_ab == x.size * y.size
        assert row.p_ab == pytest.approx(((x > y).sum() + 0.5 * (x == y).sum()) / row.n_ab)
        assert row.tie_ab == pytest.approx((x == y).sum() / row.n_ab)
        cells = [(x > y).sum(), (x == y).sum(), (x < y).sum()]
        assert row.stable_ab == pytest.approx(max(cells) / row.n_ab)
    assert df["p_ba"].isna().all() and (df["n_ba"] == 0).all()
    assert df.attrs["gap_source"] == "human score gap"
    with pytest.raises(DataError, match="no ratings by judge 'x'"):
        rating_pairs(ds, "quality", "x")


def test_rating_pairs_needs_a_prompt_when_several():
    ds = simulate(2, 3, prompts=("p1", "p2"), random_state=0)
    with pytest.raises(DataError, match="several prompts.*prompt_id="):
        rating_pairs(ds, "quality", "simulated")
    assert len(rating_pairs(ds, "quality", "simulated", "p2")) == 2 * 3


@pytest.mark.slow
def test_real_topicalchat_rating_pairs():
    ds = real("topicalchat")
    df = rating_pairs(ds, "coherence", "gpt-3.5-turbo/geval")
    rated = ds.ratings[ds.ratings.attribute == "coherence"].groupby("context_id")["candidate_id"]
    assert len(df) == int(rated.nunique().map(lambda m: m * (m - 1) // 2).sum())
    assert (df["n_ab"] == 400).all()  # 20 x 20 samples
    assert df["p_ab"].between(0, 1).all() and df.attrs["gap_source"] == "human score gap"
