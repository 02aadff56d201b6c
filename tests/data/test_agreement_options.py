"""The agreement tables' new options on a small hand-made set: Williams sides and BH families,
one rater against all others, the human baseline's reference, annotator pairs, alpha across
samples. Every value is checked against scipy / the krippendorff package / hand formulas."""

from __future__ import annotations

import dataclasses

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import data
from data import agreement as da
from tests.data.test_agreement_real import ITEM, small_dataset, twin_williams


def two_attribute_set():
    """small_dataset with a second attribute, a third judge under another prompt and an
    automatic measure (the same score under both attributes)."""
    ds = small_dataset()
    rng = np.random.default_rng(3)
    hs2 = ds.human_scores.assign(
        attribute="style", score=rng.integers(1, 6, len(ds.human_scores)).astype(float)
    )
    r = ds.ratings
    r2 = r.assign(attribute="style", score=rng.integers(1, 6, len(r)).astype(float))
    j3 = r[r["sample"] == 0].assign(judge="J3", prompt_id="q")
    j3 = j3.assign(score=rng.integers(1, 6, len(j3)).astype(float))
    auto = r[(r["sample"] == 0) & (r["judge"] == "J1")].assign(
        judge="BLEU", prompt_id="automatic", score=rng.normal(size=24)
    )
    ratings = pd.concat(
        [r, r2, j3, j3.assign(attribute="style"), auto, auto.assign(attribute="style")]
    )
    return dataclasses.replace(
        ds,
        human_scores=pd.concat([ds.human_scores, hs2], ignore_index=True),
        ratings=ratings.reset_index(drop=True),
    )


def twin_pair(ds, a, b, attribute, level="overall"):
    """(r_a, r_b, r_ab, n) of two (judge, prompt) raters, by pandas + scipy."""
    hm = ds.human_scores[ds.human_scores["attribute"] == attribute]
    hm = hm.groupby(ITEM)["score"].mean().rename("human")
    r = ds.ratings[ds.ratings["attribute"] == attribute]
    js = r.groupby([*ITEM, "judge", "prompt_id"])["score"].mean().reset_index()
    cols = {}
    for name, (j, p) in (("a", a), ("b", b)):
        cols[name] = js[(js["judge"] == j) & (js["prompt_id"] == p)].set_index(ITEM)["score"]
    w = pd.DataFrame(cols).join(hm).dropna()
    if level == "system":
        w = w.join(ds.candidates.set_index(ITEM)["system"]).groupby("system").mean()
    tau = lambda x, y: stats.kendalltau(x, y).statistic  # noqa: E731
    return tau(w["a"], w["human"]), tau(w["b"], w["human"]), tau(w["a"], w["b"]), len(w)


def test_williams_table_one_sided_has_both_orders_and_bh_families():
    ds = two_attribute_set()
    two = da.williams_table(ds, prompt_id="p")
    assert len(two) == 2 and (two["alternative"] == "two-sided").all()
    one = da.williams_table(ds, prompt_id="p", alternative="greater", family="attributes")
    assert len(one) == 4 and set(zip(one["judge_a"], one["judge_b"], strict=True)) == {
        ("J1", "J2"),
        ("J2", "J1"),
    }
    for row in one.itertuples(index=False):
        ra, rb, rab, n = twin_pair(ds, (row.judge_a, "p"), (row.judge_b, "p"), row.attribute)
        t, p2 = twin_williams(ra, rb, rab, n)
        assert (row.t, row.p, row.n) == (pytest.approx(t), pytest.approx(stats.t.sf(t, n - 3)), n)
        back = two[two["attribute"] == row.attribute]["p"].item()
        assert row.p == pytest.approx(p2 / 2 if t > 0 else 1 - p2 / 2)
        assert back == pytest.approx(p2)
    # family="attributes": BH over the two attributes of each ordered pair.
    for _, fam in one.groupby(["judge_a", "judge_b"]):
        np.testing.assert_allclose(fam["p_bh"], stats.false_discovery_control(fam["p"]))
    judges = da.williams_table(ds, prompt_id="p", alternative="greater")
    for _, fam in judges.groupby("attribute"):
        np.testing.assert_allclose(fam["p_bh"], stats.false_discovery_control(fam["p"]))
    M = da.williams_matrix_frame(one, "quality", "p", value="p")
    assert M.loc["J1", "J2"] + M.loc["J2", "J1"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="family"):
        da.williams_table(ds, family="criteria")


@pytest.mark.parametrize("level", ["overall", "system"])
def test_williams_versus_table_tests_one_rater_against_every_other(level):
    ds = two_attribute_set()
    v = da.williams_versus_table(ds, "J1", prompt_id="p", unit=level)
    raters = {("J2", "p"), ("J3", "q"), ("BLEU", "automatic")}
    assert set(zip(v["judge_b"], v["prompt_b"], strict=True)) == raters and len(v) == 2 * 3
    assert (v["judge_a"] == "J1").all() and (v["prompt_a"] == "p").all()
    assert (v["level"] == level).all() and (v["alternative"] == "greater").all()
    for row in v.itertuples(index=False):
        ra, rb, rab, n = twin_pair(
            ds, ("J1", "p"), (row.judge_b, row.prompt_b), row.attribute, level
        )
        t, _ = twin_williams(ra, rb, rab, n)
        assert (row.r_a, row.r_b, row.r_ab, row.n) == (
            pytest.approx(ra),
            pytest.approx(rb),
            pytest.approx(rab),
            n,
        )
        assert row.p == pytest.approx(stats.t.sf(t, n - 3))
    for _, fam in v.groupby(["judge_b", "prompt_b"]):
        np.testing.assert_allclose(fam["p_bh"], stats.false_discovery_control(fam["p"]))
    per_attr = da.williams_versus_table(ds, ("J1", "p"), unit=level, family="judges")
    for _, fam in per_attr.groupby("attribute"):
        np.testing.assert_allclose(fam["p_bh"], stats.false_discovery_control(fam["p"]))
    every = da.williams_versus_table(ds, ("J1", "p"), unit=level, family="all")
    np.testing.assert_allclose(every["p_bh"], stats.false_discovery_control(every["p"]))
    some = da.williams_versus_table(ds, ("J1", "p"), versus=["J3"], attribute="style")
    assert len(some) == 1 and some["judge_b"].item() == "J3"


def test_williams_versus_table_names_what_is_wrong():
    ds = two_attribute_set()
    ds2 = dataclasses.replace(
        ds, ratings=pd.concat([ds.ratings, ds.ratings.assign(prompt_id="p2")])
    )
    with pytest.raises(data.DataError, match="several prompts"):
        da.williams_versus_table(ds2, "J1")
    with pytest.raises(data.DataError, match="judge 'J9' not found"):
        da.williams_versus_table(ds, "J9")
    with pytest.raises(data.DataError, match="rater 'J9' not found"):
        da.williams_versus_table(ds, "J1", versus="J9")
    with pytest.raises(data.DataError, match="no ratings under prompt_id 'q'"):
        da.williams_versus_table(ds, ("J1", "q"))


def test_human_baseline_table_reference_column():
    ds = small_dataset()
    loo = da.human_baseline_table(ds, units=("overall",))
    full = da.human_baseline_table(ds, units=("overall",), reference="all")
    assert (loo["reference"] == "others").all() and (full["reference"] == "all").all()
    W = ds.human_scores.pivot_table(index=ITEM, columns="annotator", values="score")
    for name in W.columns:
        got = full[full["annotator"] == name]["value"].item()
        assert got == pytest.approx(stats.kendalltau(W[name], W.mean(axis=1)).statistic)
    with pytest.raises(ValueError, match="reference"):
        da.human_baseline_table(ds, reference="mean")


@pytest.mark.parametrize("unit", ["overall", "system"])
def test_annotator_pairs_table_is_kendall_per_pair_with_holes(unit):
    ds = small_dataset()
    hs = ds.human_scores.copy()
    hs.loc[hs.index[hs["annotator"] == "rater_1"][:5], "score"] = np.nan  # five blanks
    ds = dataclasses.replace(ds, human_scores=hs)
    table = da.annotator_pairs_table(ds, unit=unit)
    assert list(zip(table["annotator_a"], table["annotator_b"], strict=True)) == [
        ("rater_1", "rater_2"),
        ("rater_1", "rater_3"),
        ("rater_2", "rater_3"),
    ]
    W = hs.pivot_table(index=ITEM, columns="annotator", values="score", dropna=False)
    for row in table.itertuples(index=False):
        w = W[[row.annotator_a, row.annotator_b]].dropna()
        n = len(w)
        if unit == "system":
            w = w.join(ds.candidates.set_index(ITEM)["system"]).groupby("system").mean()
        want = stats.kendalltau(w[row.annotator_a], w[row.annotator_b]).statistic
        assert row.value == pytest.approx(want, abs=1e-12)
        assert row.n_used == n  # the items both scored, at either unit
    assert table["n_used"].tolist() == [19, 19, 24]
    sp = da.annotator_pairs_table(ds, method="spearman", groups={"two": ["rater_3", "rater_2"]})
    assert len(sp) == 1 and sp["annotator_a"].item() == "rater_3"
    assert sp["value"].item() == pytest.approx(
        stats.spearmanr(W["rater_3"], W["rater_2"]).statistic
    )


def test_self_consistency_alpha_across_samples():
    ds = small_dataset()
    sc = da.self_consistency_table(ds).set_index("judge")
    assert sc.columns.tolist()[8:11] == ["alpha_interval", "alpha_ordinal", "share_identical"]
    for judge in ("J1", "J2"):
        r = ds.ratings[ds.ratings["judge"] == judge]
        Y = r.pivot_table(index=ITEM, columns="sample", values="score", dropna=False)
        for level in ("interval", "ordinal"):
            want = krippendorff.alpha(reliability_data=Y.to_numpy().T, level_of_measurement=level)
            assert sc.loc[judge, f"alpha_{level}"] == pytest.approx(want, abs=1e-12)


def test_system_ratings_table_means_and_t_interval():
    """Per system and attribute: the mean of the items' scores and the t interval of it;
    the "Average" row pools every attribute."""
    import pandas as pd
    from scipy import stats

    from data.agreement import AVERAGE, system_ratings_table
    from data.schema import Dataset

    cands = pd.DataFrame(
        {
            "context_id": ["c1", "c1", "c2", "c2"],
            "candidate_id": ["a", "b", "a", "b"],
            "system": ["A", "B", "A", "B"],
            "text": ["", "", "", ""],
        }
    )
    ratings = pd.DataFrame(
        {
            "context_id": ["c1", "c1", "c1", "c2", "c2", "c1", "c2"],
            "candidate_id": ["a", "a", "b", "a", "b", "a", "a"],
            "attribute": ["x", "x", "x", "x", "x", "y", "y"],
            "judge": "j",
            "prompt_id": "p",
            "sample": [0, 1, 0, 0, 0, 0, 0],
            "score": [2.0, 4.0, 1.0, 5.0, 2.0, 3.0, 4.0],
        }
    )
    ds = Dataset(name="t", candidates=cands, ratings=ratings)
    t = system_ratings_table(ds, "j").set_index(["system", "attribute"])
    # System A, x: items c1/a (mean of samples 2, 4 -> 3) and c2/a (5).
    assert t.loc[("A", "x"), "mean"] == pytest.approx(4.0)
    lo, hi = stats.t.interval(0.95, 1, loc=4.0, scale=stats.sem([3.0, 5.0]))
    assert (t.loc[("A", "x"), "lower"], t.loc[("A", "x"), "upper"]) == pytest.approx((lo, hi))
    assert t.loc[("A", AVERAGE), "mean"] == pytest.approx(np.mean([3.0, 5.0, 3.0, 4.0]))
    assert t.loc[("B", "x"), "n"] == 2
    # B was not rated on y: the row is there (one grid for every system), empty.
    assert t.loc[("B", "y"), "n"] == 0 and np.isnan(t.loc[("B", "y"), "mean"])
