"""data.jury: juries built from simulated judges with known reliabilities, and PandaLM."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.jury import (
    JURY_METHODS,
    add_jury,
    build_jury,
    fleiss_overall,
    human_comparison,
    judge_agreement,
    judge_kinds,
    jury_name,
    jury_votes,
    shared_items,
)
from data.schema import DataError, Dataset
from ranking import cohen_kappa
from tests.data._benchmark_files import need

VERDICT_P = {"A": 1.0, "tie": 0.5, "B": 0.0}


def pairwise_dataset(accuracies, n_pairs=600, seed=0, samples=1):
    """Judges that give the true verdict with their accuracy, else another one at random;
    the truth is the human annotator's verdict."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(["A", "tie", "B"], n_pairs, p=[0.4, 0.2, 0.4])
    rows = []
    judges = {f"judge{k}": a for k, a in enumerate(accuracies)} | {"human:ann": 1.0}
    for judge, acc in judges.items():
        for s in range(samples if judge != "human:ann" else 1):
            for i, t in enumerate(truth):
                v = t if rng.random() < acc else rng.choice([c for c in VERDICT_P if c != t])
                rows.append(
                    dict(
                        context_id=f"c{i // 10}",
                        attribute="overall",
                        judge=judge,
                        first_id=f"x{i % 10}",
                        second_id=f"y{i % 10}",
                        p_first=VERDICT_P[v],
                        verdict=v,
                        sample=s,
                        raw="",
                    )
                )
    return Dataset("sim", comparisons=pd.DataFrame(rows)), truth


def ratings_dataset():
    """Three Likert judges (one with half points, one with two samples) and a measure."""
    rows = []
    scores = {
        "j1": [1, 2, 3, 4, 5, 3],
        "j2": [1.5, 2, 3, 4.5, 5, 2],
        "j3": [1, 3, 3, 4, 4, np.nan],
    }
    for judge, vals in scores.items():
        for i, v in enumerate(vals):
            rows.append(("c0", f"m{i}", "coh", judge, "p1", 0, v))
    rows.append(("c0", "m0", "coh", "j3", "p1", 1, 3.0))  # second sample of j3 on m0
    for i, v in enumerate([0.1, 0.3, 0.2, 0.5, 0.9, 0.4]):
        rows.append(("c0", f"m{i}", "coh", "bleu", "automatic", 0, v))
    cols = ["context_id", "candidate_id", "attribute", "judge", "prompt_id", "sample", "score"]
    human = pd.DataFrame(
        [("c0", f"m{i}", "coh", "h1", float(i)) for i in range(6)],
        columns=["context_id", "candidate_id", "attribute", "annotator", "score"],
    )
    return Dataset(
        "rat", ratings=pd.DataFrame(rows, columns=cols), human_scores=human, scales={"coh": (1, 5)}
    )


def test_dawid_skene_recovers_reliability_and_beats_majority():
    acc = [0.85, 0.8, 0.75, 0.4, 0.35, 0.35]
    ds, truth = pairwise_dataset(acc, n_pairs=2000, seed=3)
    judges = [f"judge{k}" for k in range(len(acc))]
    ds_jury = build_jury(ds, "overall", judges, "dawid-skene")
    rel = ds_jury.reliability.set_index("judge")["reliability"]
    np.testing.assert_allclose(rel[judges].to_numpy(), acc, atol=0.04)
    maj = build_jury(ds, "overall", judges, "majority")
    order = ds_jury.votes.items.index  # items sorted by key: align the truth
    keys = ds_jury.votes.items.apply(lambda r: int(r.context_id[1:]) * 10 + int(r.first_id[1:]), 1)
    t = truth[keys.to_numpy()]
    assert len(order) == len(truth)
    ds_acc = (ds_jury.rows["verdict"].to_numpy() == t).mean()
    maj_acc = (maj.rows["verdict"].to_numpy() == t).mean()
    assert ds_acc > maj_acc + 0.05, (ds_acc, maj_acc)
    # the jury beats the best member against the human annotator
    _, summary = human_comparison(ds, ds_jury)
    row = summary[(summary["measure"] == "agreement") & (summary["versus"] == "human:ann")]
    assert row["best_member"].iloc[0] == "judge0"
    assert row["jury_minus_best"].iloc[0] > 0


def test_samples_are_voted_then_combined_and_rows_are_a_judge():
    ds, _ = pairwise_dataset([0.8, 0.7, 0.6], n_pairs=50, seed=1, samples=3)
    judges = ["judge0", "judge1", "judge2"]
    votes = jury_votes(ds, "overall", judges)
    assert votes.values.shape == (50, 3) and votes.kind == "pairwise"
    c = ds.comparisons
    first = c[(c.judge == "judge1") & (c.context_id == "c0") & (c.first_id == "x0")]
    assert votes.values[0, 1] == pytest.approx(first["p_first"].mean())
    counts = first["verdict"].value_counts()
    top = counts[counts == counts.max()].index
    expected = top[0] if len(top) == 1 else "tie"
    assert votes.classes[votes.labels[0, 1]] == expected
    for method in JURY_METHODS:
        out = add_jury(ds, "overall", judges, method)
        name = jury_name(method, reversed(judges))
        assert name.startswith("jury:") and method in name
        assert name in out.judges and name not in ds.judges
        rows = out.comparisons[out.comparisons.judge == name]
        assert len(rows) == 50 and rows["p_first"].between(0, 1).all()
        assert set(rows["verdict"]) <= {"A", "B", "tie"}
        again = add_jury(out, "overall", judges, method)  # replaced, not doubled
        assert len(again.comparisons) == len(out.comparisons)


def test_mean_jury_of_probabilities():
    ds, _ = pairwise_dataset([0.8, 0.7], n_pairs=30, seed=2)
    jury = build_jury(ds, "overall", ["judge0", "judge1"], "mean")
    v = jury.votes.values
    np.testing.assert_allclose(jury.rows["p_first"].to_numpy(), v.mean(axis=1))


def test_ratings_jury_methods():
    ds = ratings_dataset()
    kinds = judge_kinds(ds, "coh")
    assert kinds == {"bleu": "automatic", "j1": "absolute", "j2": "absolute", "j3": "absolute"}
    votes = jury_votes(ds, "coh", ["j1", "j2", "j3"])
    assert votes.classes == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert any("rounded" in n for n in votes.notes)
    assert votes.values[0, 2] == pytest.approx(2.0)  # j3's two samples on m0: 1 and 3
    mean = build_jury(ds, "coh", ["j1", "j2", "j3"], "mean")
    np.testing.assert_allclose(mean.rows["score"].to_numpy(), np.nanmean(votes.values, axis=1))
    assert (mean.rows["prompt_id"] == "jury").all()
    maj = build_jury(ds, "coh", ["j1", "j2", "j3"], "majority")
    # m1: 2, 2, 3 -> 2; m4: 5, 5, 4 -> 5; m5: 3, 2, missing -> tie: the mean 2.5
    got = dict(zip(maj.rows["candidate_id"], maj.rows["score"], strict=True))
    assert got["m1"] == 2.0 and got["m4"] == 5.0 and got["m5"] == 2.5
    dsk = build_jury(ds, "coh", ["j1", "j2", "j3"], "dawid-skene")
    assert dsk.rows["score"].between(1, 5).all()
    detail, summary = human_comparison(ds, mean)
    assert set(detail["rater"]) == {"j1", "j2", "j3", mean.name}
    assert len(summary) > 0


def test_automatic_jury_is_mean_of_z_scores():
    ds = ratings_dataset()
    jury = build_jury(ds, "coh", ["bleu", "j1"], "mean")
    x = np.array([0.1, 0.3, 0.2, 0.5, 0.9, 0.4])
    y = np.array([1, 2, 3, 4, 5, 3], dtype=float)
    z = ((x - x.mean()) / x.std() + (y - y.mean()) / y.std()) / 2
    np.testing.assert_allclose(jury.rows["score"].to_numpy(), z)
    assert (jury.rows["prompt_id"] == "automatic").all()
    with pytest.raises(DataError, match="categorical"):
        build_jury(ds, "coh", ["bleu", "j1"], "dawid-skene")
    rho = judge_agreement(ds, "coh", ["bleu", "j1"]).loc["bleu", "j1"]
    assert rho == pytest.approx(
        pd.Series([0.1, 0.3, 0.2, 0.5, 0.9, 0.4]).corr(
            pd.Series([1.0, 2, 3, 4, 5, 3]), method="spearman"
        )
    )
    assert np.isnan(fleiss_overall(jury.votes).value)


@pytest.mark.parametrize(
    "judges, match",
    [(["j1"], "at least 2"), (["j1", "nobody"], "nobody"), (["j1", "judge0"], "mix")],
)
def test_bad_choices_say_what_to_do(judges, match):
    ds = ratings_dataset()
    pair, _ = pairwise_dataset([0.8], n_pairs=5)
    both = Dataset(
        "both",
        ratings=ds.ratings,
        comparisons=pair.comparisons.assign(attribute="coh"),
        scales=ds.scales,
    )
    with pytest.raises(DataError, match=match):
        build_jury(both, "coh", judges, "mean")


def test_no_shared_items():
    ds = ratings_dataset()
    r = ds.ratings
    r = r[~((r.judge == "j2") & r.candidate_id.isin(["m0", "m1", "m2"]))]
    r = r[~((r.judge == "j1") & r.candidate_id.isin(["m3", "m4", "m5"]))]
    with pytest.raises(DataError, match="shared items"):
        build_jury(Dataset("x", ratings=r, scales=ds.scales), "coh", ["j1", "j2"], "mean")


def test_agreement_matrix_is_cohen_kappa_on_shared_items():
    ds, _ = pairwise_dataset([0.8, 0.6, 0.5], n_pairs=200, seed=5)
    c = ds.comparisons
    c = c[~((c.judge == "judge2") & (c.context_id.isin(["c0", "c1"])))]  # judge2 skips some
    ds = Dataset("sim", comparisons=c)
    judges = ["judge0", "judge1", "judge2"]
    mat = judge_agreement(ds, "overall", judges)
    assert list(mat.index) == judges and np.allclose(np.diag(mat), 1.0)
    a = c[c.judge == "judge0"].set_index(["context_id", "first_id"])["verdict"]
    b = c[c.judge == "judge2"].set_index(["context_id", "first_id"])["verdict"]
    both = pd.concat([a, b], axis=1, join="inner")
    expected = cohen_kappa(both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()).value
    assert mat.loc["judge0", "judge2"] == pytest.approx(expected)
    assert mat.loc["judge2", "judge0"] == pytest.approx(expected)
    n = shared_items(jury_votes(ds, "overall", judges))
    assert n.loc["judge0", "judge2"] == 180 and n.loc["judge0", "judge1"] == 200
    fl = fleiss_overall(jury_votes(ds, "overall", judges))
    assert fl.n_items == 180 and fl.n_dropped_nan == 20 and 0 < fl.value < 1


@need("pandalm")
def test_pandalm_jury_of_two_llms():
    import data

    pandalm = data.load_benchmark("pandalm")
    judges = ["gpt-3.5-turbo", "pandalm-7b"]
    out = add_jury(pandalm, "overall", judges, "dawid-skene")
    name = jury_name("dawid-skene", judges)
    rows = out.comparisons[out.comparisons.judge == name]
    assert len(rows) == 999  # gpt-3.5's 25 unparsed answers: pandalm-7b alone decides
    jury = build_jury(pandalm, "overall", judges, "dawid-skene")
    assert (jury.reliability["n_items"].to_numpy() == [974, 999]).all()
    detail, summary = human_comparison(pandalm, jury)
    assert set(summary["versus"]) == {
        "human:annotator1",
        "human:annotator2",
        "human:annotator3",
        "human majority",
    }
    assert summary["jury"].between(0.3, 0.8).all()
