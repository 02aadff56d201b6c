"""Agreement tables on the real HANNA, SummEval and TopicalChat data.

Every value is checked against an independent computation written here (pandas + scipy, the
``krippendorff`` package, the Williams / ICC formulas) and against sanity ranges; published
numbers are compared loosely where noted. The tests run whenever the data folder holds the
sets (``data.paths.data_dirs()``), and skip only when it does not.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import data
from data import agreement as da
from data.agreement._tables import pick, pick_rows
from tests._columns import RATING_COLUMNS
from tests.data._benchmark_files import real

pytestmark = pytest.mark.slow

ITEM = ["context_id", "candidate_id"]
HANNA_JUDGES = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")
HANNA_CRITERIA = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")
#: The four Eval-Prompts of the LLM judges (the automatic measures have prompt_id "automatic").
HANNA_PROMPTS = [f"eval_prompt_{i}" for i in range(1, 5)]


def _real_fixture(name: str):
    """A module-scoped fixture named ``name``: that benchmark, read once (skips if absent)."""

    @pytest.fixture(scope="module", name=name)
    def loaded():
        return real(name)

    return loaded


hanna = _real_fixture("hanna")
summeval = _real_fixture("summeval")
summeval_annotators = _real_fixture("summeval_annotators")
topicalchat = _real_fixture("topicalchat")


# ----------------------------------------------------------------------------- independent twins


def merged(ds, annotators=None):
    """Judge score (mean over samples) next to the human mean and the system, by pandas."""
    hs = ds.human_scores
    if annotators is not None:
        hs = hs[hs["annotator"].isin(annotators)]
    hm = hs.groupby([*ITEM, "attribute"])["score"].mean().rename("human").reset_index()
    js = ds.ratings.groupby([*ITEM, "attribute", "judge", "prompt_id"])["score"].mean()
    m = js.reset_index().merge(hm, on=[*ITEM, "attribute"])
    return m.merge(ds.candidates[[*ITEM, "system"]], on=ITEM)


def twin_corr(g, level, fn):
    g = g.dropna(subset=["score", "human"])
    if level == "overall":
        return fn(g["score"], g["human"]).statistic
    if level == "system":
        means = g.groupby("system")[["score", "human"]].mean()
        return fn(means["score"], means["human"]).statistic
    per = [
        fn(c["score"], c["human"]).statistic
        for _, c in g.groupby("context_id")
        if len(c) >= 2 and c["score"].nunique() > 1 and c["human"].nunique() > 1
    ]
    return float(np.mean(per))


def twin_icc2k(Y):
    """ICC(2,k) of Shrout & Fleiss from the two-way ANOVA mean squares."""
    Y = Y[np.isfinite(Y).all(axis=1)]
    n, k = Y.shape
    g = Y.mean()
    msr = k * ((Y.mean(1) - g) ** 2).sum() / (n - 1)
    msc = n * ((Y.mean(0) - g) ** 2).sum() / (k - 1)
    resid = Y - Y.mean(1, keepdims=True) - Y.mean(0, keepdims=True) + g
    mse = (resid**2).sum() / ((n - 1) * (k - 1))
    return (msr - mse) / (msr + (msc - mse) / n)


def twin_williams(r12, r13, r23, n):
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (
        (r12 - r13)
        * np.sqrt((n - 1) * (1 + r23))
        / np.sqrt(2 * K * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    )
    return t, 2 * stats.t.sf(abs(t), n - 3)


def annotator_matrix(ds, attribute, names):
    hs = ds.human_scores[ds.human_scores["attribute"] == attribute]
    return hs.pivot_table(index=ITEM, columns="annotator", values="score")[list(names)]


# ----------------------------------------------------------------------------- HANNA


def test_hanna_human_icc2k_and_alpha_per_criterion(hanna):
    table = da.iaa_table(hanna).set_index("attribute")
    assert set(table.index) == set(HANNA_CRITERIA)
    assert (table["group"] == "human").all() and (table["n_annotators"] == 3).all()
    assert (table["n_items"] == 1056).all() and (table["icc2k_items"] == 1056).all()
    for crit in HANNA_CRITERIA:
        Y = annotator_matrix(hanna, crit, ["human_1", "human_2", "human_3"]).to_numpy()
        row = table.loc[crit]
        assert row["icc2k"] == pytest.approx(twin_icc2k(Y), abs=1e-12)
        assert row["icc2k_lower"] < row["icc2k"] < row["icc2k_upper"]
        for lv in ("nominal", "ordinal", "interval"):
            want = krippendorff.alpha(reliability_data=Y.T, level_of_measurement=lv)
            assert row[f"alpha_{lv}"] == pytest.approx(want, abs=1e-12)
        assert row["share_all_agree"] == pytest.approx(np.mean(np.ptp(Y, axis=1) == 0))
    # HANNA's crowd agreement is low (Chhun et al. 2022 discuss it): complexity agrees most,
    # coherence not at all on individual stories.
    assert table["icc2k"].idxmax() == "complexity"
    assert table.loc["coherence", "icc2k"] < 0.0 < table.loc["complexity", "icc2k"] < 0.7


@pytest.fixture(scope="module")
def hanna_corr(hanna):
    return da.correlation_table(
        hanna,
        prompt_id=HANNA_PROMPTS,
        units=("overall", "system"),
        methods=("kendall",),
        n_boot=200,
    )


def test_hanna_kendall_overall_and_system_for_all_judges_and_prompts(hanna, hanna_corr):
    m = merged(hanna)
    assert len(hanna_corr) == 5 * 4 * 6 * 2
    for row in hanna_corr.itertuples(index=False):
        g = m[(m["judge"] == row.judge) & (m["attribute"] == row.attribute)]
        assert row.value == pytest.approx(twin_corr(g, row.level, stats.kendalltau), abs=1e-12)
        assert -1 <= row.lower <= row.upper <= 1
        assert row.n_used == g["score"].notna().sum()
    # Percentile intervals need not contain the estimate (11 systems, tau near its bound),
    # but nearly all do.
    inside = (hanna_corr["lower"] <= hanna_corr["value"]) & (
        hanna_corr["value"] <= hanna_corr["upper"]
    )
    assert inside.mean() > 0.9
    judges = {j.split("/")[0] for j in hanna_corr["judge"]}
    assert judges == set(HANNA_JUDGES)
    assert set(hanna_corr["prompt_id"]) == {f"eval_prompt_{i}" for i in range(1, 5)}
    overall = hanna_corr[hanna_corr["level"] == "overall"]["value"]
    system = hanna_corr[hanna_corr["level"] == "system"]["value"]
    # Story-level Kendall of these LLMs with the human mean is modest and positive, system
    # level (11 systems) much higher, as in the TACL HANNA analysis (loose comparison).
    assert overall.between(-0.1, 0.6).all() and overall.median() > 0.15
    assert system.median() > overall.median() + 0.2


def test_hanna_williams_bh_matrix_per_criterion(hanna):
    table = da.williams_table(hanna, prompt_id=HANNA_PROMPTS, attribute=["coherence", "surprise"])
    assert len(table) == 2 * 4 * 10  # 2 criteria x 4 prompts x C(5, 2) pairs
    m = merged(hanna)
    for (attr, pid), fam in table.groupby(["attribute", "prompt_id"]):
        wide = m[(m["attribute"] == attr) & (m["prompt_id"] == pid)].pivot_table(
            index=ITEM, columns="judge", values="score"
        )
        human = m.drop_duplicates(ITEM + ["attribute"]).set_index(ITEM + ["attribute"])["human"]
        h = human.xs(attr, level="attribute").reindex(wide.index)
        p_twin = []
        for row in fam.itertuples(index=False):
            ok = wide[row.judge_a].notna() & wide[row.judge_b].notna() & h.notna()
            a, b, hh = wide.loc[ok, row.judge_a], wide.loc[ok, row.judge_b], h[ok]
            ra, rb = stats.kendalltau(a, hh).statistic, stats.kendalltau(b, hh).statistic
            rab = stats.kendalltau(a, b).statistic
            t, p = twin_williams(ra, rb, rab, ok.sum())
            assert (row.r_a, row.r_b, row.r_ab, row.n) == (
                pytest.approx(ra),
                pytest.approx(rb),
                pytest.approx(rab),
                ok.sum(),
            )
            assert (row.t, row.p) == (pytest.approx(t, rel=1e-9), pytest.approx(p, rel=1e-9))
            p_twin.append(p)
        np.testing.assert_allclose(fam["p_bh"], stats.false_discovery_control(p_twin), rtol=1e-9)
        assert (fam["p_bh"] >= fam["p"] - 1e-15).all()
        M = da.williams_matrix_frame(table, attr, pid, value="t")
        np.testing.assert_allclose(M.to_numpy(), -M.to_numpy().T)


def test_hanna_human_baseline(hanna):
    table = da.human_baseline_table(hanna, units=("overall", "system"))
    names = ["human_1", "human_2", "human_3"]
    sys_of = hanna.candidates.set_index(ITEM)["system"]
    for crit in ("coherence", "complexity", "relevance"):
        W = annotator_matrix(hanna, crit, names)
        for name in names:
            own = W[name]
            others = W.drop(columns=name).mean(axis=1)
            g = pd.DataFrame({"score": own, "human": others}).reset_index()
            g["system"] = sys_of.reindex(pd.MultiIndex.from_frame(g[ITEM])).to_numpy()
            for level in ("overall", "system"):
                got = table[
                    (table["attribute"] == crit)
                    & (table["level"] == level)
                    & (table["annotator"] == name)
                ]["value"].item()
                assert got == pytest.approx(twin_corr(g, level, stats.kendalltau), abs=1e-12)
        mean = table[
            (table["attribute"] == crit)
            & (table["annotator"] == "mean")
            & (table["level"] == "overall")
        ]["value"].item()
        each = table[
            (table["attribute"] == crit)
            & (table["annotator"].isin(names))
            & (table["level"] == "overall")
        ]["value"]
        assert mean == pytest.approx(each.mean())
    # The baseline is weak at story level and strong at system level on HANNA.
    ov = table[(table["level"] == "overall") & (table["annotator"] == "mean")]["value"]
    sy = table[(table["level"] == "system") & (table["annotator"] == "mean")]["value"]
    assert ov.between(-0.2, 0.4).all() and sy.between(0.3, 1.0).all()


def test_hanna_self_consistency_explains_single_published_mean(hanna):
    table = da.self_consistency_table(hanna, judge="ChatGPT/eval_prompt_1")
    assert len(table) == 6 and table["icc2k"].isna().all()
    assert table["reason"].str.contains("one sample per item").all()


def test_cli_prints_the_hanna_tables(hanna):
    out = io.StringIO()
    da.main(
        [
            "--benchmark",
            "hanna",
            "--judge",
            "ChatGPT/eval_prompt_1,Beluga-13B/eval_prompt_1",
            "--attribute",
            "coherence",
            "--n-boot",
            "50",
        ],
        out=out,
    )
    text = out.getvalue()
    for title in (
        "human inter-annotator agreement",
        "human baseline",
        "judge vs human mean",
        "Williams tests",
        "self-consistency",
    ):
        assert title in text
    assert "ChatGPT/eval_prompt_1" in text and "complexity" not in text


# ----------------------------------------------------------------------------- SummEval

SUMMEVAL_JUDGES = ("gpt-3.5-turbo-0301/rts", "gpt-4-0314/rts", "llama-2-7b-chat-hf/rts")


def test_summeval_judges_vs_expert_mean_item_and_system(summeval):
    table = da.correlation_table(
        summeval,
        judge=list(SUMMEVAL_JUDGES),
        units=("item", "system"),
        methods=("spearman", "kendall"),
        n_boot=100,
    )
    assert len(table) == 3 * 4 * 2 * 2
    m = merged(summeval)
    for row in table.itertuples(index=False):
        g = m[(m["judge"] == row.judge) & (m["attribute"] == row.attribute)]
        fn = stats.spearmanr if row.method == "spearman" else stats.kendalltau
        assert row.value == pytest.approx(twin_corr(g, row.level, fn), abs=1e-12)
        # 12 systems x 100 documents rated; unparsed answers dropped and counted.
        assert row.n_items == 1200
        assert row.n_dropped_nan == g["score"].isna().sum()
    item = table[(table["level"] == "item") & (table["method"] == "spearman")]
    by_judge = item.groupby("judge")["value"].mean()
    # Shen et al. (2023): GPT-4 agrees best, Llama-2-7B barely; loose ordering check.
    assert by_judge["gpt-4-0314/rts"] > by_judge["gpt-3.5-turbo-0301/rts"]
    assert by_judge["gpt-3.5-turbo-0301/rts"] > by_judge["llama-2-7b-chat-hf/rts"]
    assert 0.3 < by_judge["gpt-4-0314/rts"] < 0.7
    skipped = item[item["judge"] == "llama-2-7b-chat-hf/rts"]
    assert (skipped["n_skipped"] > 20).all() and skipped["reason"].str.contains(
        "constant judge scores"
    ).all()


def test_summeval_expert_and_crowd_krippendorff_alpha(summeval_annotators):
    ds = summeval_annotators
    table = da.iaa_table(ds).set_index(["group", "attribute"])
    experts = [f"expert_{i}" for i in (1, 2, 3)]
    crowd = [f"crowd_{i}" for i in range(1, 6)]
    for group, names in (("expert", experts), ("crowd", crowd)):
        for attr in ("coherence", "consistency", "fluency", "relevance"):
            Y = annotator_matrix(ds, attr, names).to_numpy()
            row = table.loc[(group, attr)]
            assert row["n_items"] == 1200 and row["n_annotators"] == len(names)
            for lv in ("ordinal", "interval"):
                want = krippendorff.alpha(reliability_data=Y.T, level_of_measurement=lv)
                assert row[f"alpha_{lv}"] == pytest.approx(want, abs=1e-12)
            assert row["icc2k"] == pytest.approx(twin_icc2k(Y), abs=1e-12)
    # Fabbri et al. (2021) report interval alpha ~0.71 for the experts after their second
    # round and clearly lower crowd agreement. Loose check: mean over the four dimensions.
    expert_mean = table.loc["expert"]["alpha_interval"].mean()
    crowd_mean = table.loc["crowd"]["alpha_interval"].mean()
    assert 0.6 < expert_mean < 0.8
    assert crowd_mean < expert_mean - 0.1


# ----------------------------------------------------------------------------- TopicalChat


def test_topicalchat_gpt35_self_consistency_over_20_samples(topicalchat):
    table = da.self_consistency_table(topicalchat).set_index("attribute")
    r = topicalchat.ratings
    assert (table["n_samples"] == 20).all()
    for attr, row in table.iterrows():
        wide = r[r["attribute"] == attr].pivot_table(index=ITEM, columns="sample", values="score")
        Y = wide.to_numpy()
        assert row["n_items"] == len(wide)
        assert row["icc2k"] == pytest.approx(twin_icc2k(Y), abs=1e-12)
        assert row["icc2k_items"] == np.isfinite(Y).all(axis=1).sum()
        ok = np.isfinite(Y).sum(axis=1) >= 2
        same = [np.unique(v[np.isfinite(v)]).size == 1 for v in Y[ok]]
        assert row["share_identical"] == pytest.approx(np.mean(same))
        assert row["icc2k_lower"] < row["icc2k"] < row["icc2k_upper"]
    # The mean of 20 samples is very reliable (ICC2k > 0.8) although single samples rarely
    # all agree: the point of sampling K answers.
    assert (table["icc2k"] > 0.8).all() and (table["share_identical"] < 0.3).all()


def test_cli_reports_an_ambiguous_human_reference(summeval_annotators, capsys):
    assert da.main(["--benchmark", "summeval_annotators", "--tables", "correlation"]) == 2
    err = capsys.readouterr().err
    assert "several annotator groups" in err and "--annotators" in err


def test_the_package_runs_as_a_command():
    # data.agreement is a package: ``python -m data.agreement`` needs its __main__ module
    done = subprocess.run(
        [sys.executable, "-m", "data.agreement", "--help"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())  # as argparse wraps it for any terminal width
    assert shown.startswith("usage: python -m data.agreement")
    assert "--benchmark" in shown and "meet the agreement statistics" in shown


# ----------------------------------------------------------------------------- small synthetic set
# The table layer on a hand-made Dataset, so it is exercised without the real data too.


def small_dataset():
    rng = np.random.default_rng(0)
    cands = pd.DataFrame(
        [(f"c{c}", f"s{s}", f"s{s}", "text") for c in range(6) for s in range(4)],
        columns=["context_id", "candidate_id", "system", "text"],
    )
    human = []
    for row in cands.itertuples(index=False):
        for a in ("rater_1", "rater_2", "rater_3"):
            human.append(
                (row.context_id, row.candidate_id, "quality", a, float(rng.integers(1, 6)))
            )
    hs = pd.DataFrame(
        human, columns=["context_id", "candidate_id", "attribute", "annotator", "score"]
    )
    ratings = []
    for row in cands.itertuples(index=False):
        for judge in ("J1", "J2"):
            for sample in (0, 1):
                score = float(rng.integers(1, 6))
                if judge == "J1" and row.context_id == "c0" and sample == 1:
                    score = np.nan
                ratings.append(
                    (row.context_id, row.candidate_id, "quality", judge, "p", sample, score)
                )
    rt = pd.DataFrame(ratings, columns=RATING_COLUMNS)
    return data.Dataset(name="small", candidates=cands, human_scores=hs, ratings=rt)


def test_tables_on_a_small_synthetic_set():
    ds = small_dataset()
    assert da.annotator_groups(ds) == {"rater": ["rater_1", "rater_2", "rater_3"]}
    table = da.correlation_table(
        ds, units=("overall", "system", "item"), methods=("spearman",), n_boot=50
    )
    m = merged(ds)
    for row in table.itertuples(index=False):
        g = m[m["judge"] == row.judge]
        assert row.value == pytest.approx(twin_corr(g, row.level, stats.spearmanr), abs=1e-12)
        assert row.n_items == 24 and row.n_dropped_nan == 0  # one parsed sample suffices
    sc = da.self_consistency_table(ds).set_index("judge")
    assert sc.loc["J1", "n_nan"] == 4 and sc.loc["J1", "icc2k_items"] == 20
    assert sc.loc["J2", "n_samples"] == 2
    wt = da.williams_table(ds)
    assert len(wt) == 1 and (wt["judge_a"].item(), wt["judge_b"].item()) == ("J1", "J2")
    with pytest.raises(data.DataError, match="judge 'J9' not found; available: 'J1', 'J2'"):
        da.correlation_table(ds, judge="J9")
    Y, items = da.rating_matrix(ds.human_scores, ["rater_2", "rater_1"])
    want = ds.human_scores.pivot_table(index=ITEM, columns="annotator", values="score")
    want = want.reindex(pd.MultiIndex.from_frame(items))[["rater_2", "rater_1"]]
    np.testing.assert_array_equal(Y, want.to_numpy())


def test_pick_rows_keeps_what_picks_one_after_another_keep():
    # the chained selection of select_ratings / judge_scores: one copy of the rows at the end,
    # and a name is looked for among the rows the earlier columns kept
    t = pd.DataFrame(
        {
            "judge": ["J1", "J1", "J2", "J2", "J1"],
            "prompt_id": ["p1", "p2", "p3", "p1", "p1"],
            "attribute": ["a", "b", "a", "a", "b"],
            "score": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    chosen = {"judge": "J1", "prompt_id": ["p1"], "attribute": None}
    got = pick_rows(t, chosen, "t", columns=["judge", "score"])
    want = pick(pick(t, "judge", "J1", "t"), "prompt_id", ["p1"], "t")[["judge", "score"]]
    pd.testing.assert_frame_equal(got, want)
    assert pick_rows(t, {"judge": None}, "t") is t
    with pytest.raises(data.DataError, match="t: prompt_id 'p3' not found; available: 'p1', 'p2'$"):
        pick_rows(t, {"judge": "J1", "prompt_id": "p3"}, "t")
    with pytest.raises(data.DataError, match="t: judge 'J3' not found; available: 'J1', 'J2'$"):
        pick_rows(t, {"judge": ["J1", "J3"], "prompt_id": "p3"}, "t")
