"""data.bias.probes: score tables, self-preference pairs and strata, family win rates, contamination."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from data.bias.probes import (
    contamination,
    family_win_rates,
    preference_pairs,
    probe_texts,
    score_table,
    self_preference_summary,
)
from data.schema import DataError, Dataset
from data.synthetic.demo import demo_dataset
from tests.pages._analysis_apptest import need


def _ds():
    """Two contexts, three candidates each; both orders judged; humans score two attributes."""
    contexts = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["first source", "second"]})
    cands = pd.DataFrame(
        {
            "context_id": ["c1"] * 3 + ["c2"] * 3,
            "candidate_id": ["M10", "M2", "M1"] * 2,
            "system": ["own", "x", "y"] * 2,
            "text": ["a b c", "d e", "f", "g h", "", "i j k l"],
        }
    )
    human = pd.DataFrame(
        {
            "context_id": ["c1"] * 3 + ["c2"] * 3,
            "candidate_id": ["M10", "M2", "M1"] * 2,
            "attribute": "q",
            "annotator": "h1",
            "score": [3.0, 3.0, 1.0, 2.0, 2.0, 2.0],
        }
    )
    rows = []
    p = {("M10", "M2"): 0.8, ("M2", "M10"): 0.4, ("M1", "M10"): 0.1, ("M10", "M1"): 0.7}
    for (f, s), v in p.items():
        rows.append(("c1", "q", "J", f, s, v, 0))
    rows.append(("c1", "q", "J", "M10", "M2", np.nan, 1))  # an unparsed answer
    rows += [("c2", "q", "J", "M10", "M1", 0.6, 0), ("c2", "q", "J", "M2", "M1", 0.5, 0)]
    comp = pd.DataFrame(
        rows,
        columns=["context_id", "attribute", "judge", "first_id", "second_id", "p_first", "sample"],
    )
    ratings = pd.DataFrame(
        {
            "context_id": ["c1"] * 3,
            "candidate_id": ["M10", "M2", "M1"],
            "attribute": "q",
            "judge": "R",
            "prompt_id": "p",
            "sample": 0,
            "score": [4.0, 2.0, 4.0],
        }
    )
    return Dataset(
        name="t",
        contexts=contexts,
        candidates=cands,
        human_scores=human,
        comparisons=comp,
        ratings=ratings,
    )


def _scores(texts):
    lps = {
        ("c1", "M10"): [-1.0, -2.0, -3.0],
        ("c1", "M2"): [-4.0, -4.0],
        ("c1", "M1"): [-0.5],
        ("c2", "M10"): [-1.0, -1.0],
        ("c2", "M2"): [],
        ("c2", "M1"): [-2.0, -2.0, -2.0, -6.0],
    }
    return score_table(
        texts,
        [
            np.array(lps[(c, i)])
            for c, i in zip(texts["context_id"], texts["candidate_id"], strict=True)
        ],
    )


def test_probe_texts_natural_order_and_cap():
    texts, note = probe_texts(_ds())
    assert note == "" and list(texts["candidate_id"][:3]) == ["M1", "M2", "M10"]
    assert list(texts["context_text"][:1]) == ["first source"]
    capped, note = probe_texts(_ds(), max_texts=4)
    assert len(capped) == 3 and "3 of 6 candidates" in note and "1 of 2 contexts" in note
    demo, _ = probe_texts(demo_dataset(), max_texts=10_000)
    assert len(demo) == len(demo_dataset().candidates)


def test_score_table():
    sc = _scores(probe_texts(_ds())[0]).set_index(["context_id", "candidate_id"])
    row = sc.loc[("c1", "M10")]
    assert row["n_tokens"] == 3 and row["mean_logprob"] == pytest.approx(-2.0)
    assert row["perplexity"] == pytest.approx(math.exp(2.0))
    # int(0.2 * 4) = 0 tokens: at least the least likely one
    assert sc.loc[("c2", "M1"), "min_k_prob"] == pytest.approx(-6.0)
    assert math.isnan(sc.loc[("c2", "M2"), "perplexity"])
    with pytest.raises(ValueError, match="log-prob arrays"):
        score_table(probe_texts(_ds())[0], [])


def test_preference_pairs_average_orders_and_orient_by_humans():
    sc = _scores(probe_texts(_ds())[0])
    pairs = preference_pairs(_ds(), "q", "J", sc).set_index(["context_id", "first_id", "second_id"])
    # M2 vs M10: equal human score, natural order M2 first; orders averaged (NaN sample out):
    # (M2, M10) = 0.4; (M10, M2) = 0.8 -> for M2 0.2; mean 0.3
    r = pairs.loc[("c1", "M2", "M10")]
    assert r["preference"] == pytest.approx(0.3) and r["stratum"] == 0
    assert r["ll_diff"] == pytest.approx(-4.0 - (-2.0))
    # M10 (human 3) over M1 (human 1): first = M10; (M1, M10)=0.1 -> 0.9, (M10, M1)=0.7 -> 0.8
    r = pairs.loc[("c1", "M10", "M1")]
    assert r["preference"] == pytest.approx(0.8) and r["human_diff"] == 2 and r["stratum"] == 2
    assert r["ll_diff"] == pytest.approx(-2.0 - (-0.5))
    assert r["first_system"] == "own" and r["second_system"] == "y"
    # c2: the pair with the empty (unscored) text is left out
    assert ("c2", "M1", "M2") not in pairs.index and len(pairs) == 3


def test_ratings_judge_pairs():
    sc = _scores(probe_texts(_ds())[0])
    pairs = preference_pairs(_ds(), "q", "R", sc).set_index(["first_id", "second_id"])
    assert pairs.loc[("M10", "M1"), "preference"] == 0.5  # both rated 4
    assert pairs.loc[("M2", "M10"), "preference"] == 0.0  # rated 2 vs 4, equal humans
    with pytest.raises(DataError, match="no comparisons or ratings"):
        preference_pairs(_ds(), "q", "nobody", sc)


def _planted(n_ctx=60, random_state=0):
    rng = np.random.default_rng(random_state)
    rows = []
    for c in range(n_ctx):
        for k in range(6):
            h_a, h_b = rng.integers(1, 4, 2)
            ll = rng.normal(0, 1)
            own_a = k % 3 == 0
            p = 1 / (1 + np.exp(-(1.0 * (h_a - h_b) + 1.5 * ll + 0.8 * own_a)))
            rows.append(
                (f"c{c}", f"a{k}", f"b{k}", "own" if own_a else "x", "y", p, ll, float(h_a - h_b))
            )
    df = pd.DataFrame(
        rows,
        columns=[
            "context_id",
            "first_id",
            "second_id",
            "first_system",
            "second_system",
            "preference",
            "ll_diff",
            "human_diff",
        ],
    )
    df["stratum"] = df["human_diff"].round()
    return df


def test_self_preference_summary_against_scipy():
    pairs = _planted()
    table = self_preference_summary(pairs, n_boot=200, random_state=0).set_index("pairs")
    assert table.loc["all pairs", "spearman"] == pytest.approx(
        stats.spearmanr(pairs["preference"], pairs["ll_diff"]).statistic
    )
    sel = pairs["stratum"] == 0
    assert table.loc["human diff = 0", "pearson"] == pytest.approx(
        stats.pearsonr(pairs["preference"][sel], pairs["ll_diff"][sel]).statistic
    )
    assert table.loc["human diff = 0", "n"] == sel.sum()
    low, high = table.loc["all pairs", ["spearman_low", "spearman_high"]]
    assert 0 < low < high


def test_family_win_rates_find_the_planted_favour():
    pairs = _planted()
    table = family_win_rates(pairs, ["own"], n_boot=300, random_state=0).set_index("system")
    sel = (pairs["first_system"] == "own") & (pairs["stratum"] == 0)
    assert table.loc["own", "n_pairs"] == sel.sum()
    assert table.loc["own", "win_rate"] == pytest.approx(pairs["preference"][sel].mean())
    assert table.loc["own", "low"] > 0.5  # the planted own-family bonus
    none = family_win_rates(pairs, [], n_boot=0).set_index("system")
    assert none.loc["all own-family", "n_pairs"] == 0
    assert math.isnan(none.loc["all own-family", "win_rate"])


def test_contamination_auc_and_histogram():
    sc = pd.DataFrame({"system": ["old"] * 30 + ["new"] * 40})
    rng = np.random.default_rng(0)
    sc["min_k_prob"] = np.r_[rng.normal(-2, 1, 30), rng.normal(-4, 1, 40)]
    summary, hist = contamination(
        sc, "system", ["old"], ["new"], bins=10, n_boot=200, random_state=0
    )
    a, b = sc["min_k_prob"][:30], sc["min_k_prob"][30:]
    assert summary["auc"] == pytest.approx(stats.mannwhitneyu(a, b).statistic / 1200)
    assert summary["auc"] > 0.8 and summary["low"] < summary["auc"] < summary["high"]
    assert (summary["n_a"], summary["n_b"]) == (30, 40)
    assert hist.groupby("group")["count"].sum().to_dict() == {"A": 30, "B": 40}
    assert len(hist) == 20
    with pytest.raises(DataError, match="both groups"):
        contamination(sc, "system", ["old"], ["old", "new"])
    with pytest.raises(DataError, match="no column"):
        contamination(sc, "nope", ["old"], ["new"])
    empty, _ = contamination(sc, "system", ["old"], ["gone"], n_boot=0)
    assert math.isnan(empty["auc"]) and "group B" in empty["reason"]


@need("summeval")
def test_real_summeval_pairs_and_strata():
    import data

    ds = data.load_benchmark("summeval")
    texts, note = probe_texts(ds, 160)
    assert len(texts) == 160 and "of 1600" in note
    # a stand-in for the model: longer texts are less likely per token
    lps = [np.full(max(1, len(t.split())), -len(t) / 200.0) for t in texts["text"]]
    sc = score_table(texts, lps)
    judge = ds.comparisons["judge"].iloc[0]
    pairs = preference_pairs(ds, "coherence", judge, sc)
    assert len(pairs) > 0 and pairs["context_id"].nunique() == 10
    assert pairs["preference"].between(0, 1).all() and (pairs["human_diff"] >= 0).all()
    assert set(pairs["stratum"].dropna()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    table = self_preference_summary(pairs, n_boot=100, random_state=0)
    assert table["pairs"].iloc[0] == "all pairs" and table["n"].iloc[0] == len(pairs)
