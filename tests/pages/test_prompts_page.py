"""The Prompt sensitivity page on the demo and the real benchmarks, plus its pure helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import data
from data.arrays import comparisons_to_P, scores_to_matrix
from data.schema import Dataset
from pages.services import judge_outputs as judge_outputs_svc
from pages.services import prompts as prompts_svc
from ranking import kendall, pairwise_accuracy
from tests._columns import RATING_COLUMNS
from tests.pages._analysis_apptest import APP, TIMEOUT, open_page, open_page_loaded
from tests.pages._analysis_apptest import array as _array
from tests.pages._analysis_apptest import figures as _figures
from tests.pages._analysis_apptest import metrics as _metrics
from tests.pages._analysis_apptest import need_folder as _need
from tests.pages._known import judge_rows


def _page(benchmark: str | None = None) -> AppTest:
    return open_page_loaded("pages/prompts/page.py", benchmark)


# ----------------------------------------------------------------------------- pages


def test_demo_every_view_and_the_violin_switch():
    at = _page()
    figs = _figures(at)
    model = "demo-judge (simulated)"
    assert f"{model}: consistency scores per template" in figs
    assert figs[f"{model}: consistency scores per template"]["data"][0]["type"] == "box"
    shift = figs[f"{model}: mean shift vs explain"]
    assert [t["name"] for t in shift["data"]] == ["consistency", "fluency"]
    tau = figs[f"{model}: rank stability (system level), consistency"]["data"][0]
    assert tau["type"] == "heatmap" and tau["x"] == ["explain", "plain"]
    z = _array(tau["z"])
    assert np.allclose(np.diag(z), 1.0) and np.all(np.abs(z) <= 1)
    # Kendall tau-b (scipy) between the systems' mean consistency scores under each template
    ds = data.demo_dataset()
    r = ds.ratings[ds.ratings["attribute"] == "consistency"].merge(
        ds.candidates[["context_id", "candidate_id", "system"]], on=["context_id", "candidate_id"]
    )
    means = r.groupby(["prompt_id", "system"])["score"].mean().unstack("system")
    want = stats.kendalltau(means.loc["explain"], means.loc["plain"]).statistic
    assert z[0, 1] == pytest.approx(want) and z[1, 0] == pytest.approx(want)
    # every demo answer parsed: one line says so, no empty bar chart
    assert f"{model}: unparsed answers per template" not in figs
    assert any("No unparsed answers" in c.value for c in at.caption)
    assert "First-position win rate per judge and template" in figs
    assert "Pairwise accuracy per judge and template" in figs
    metrics = _metrics(at)
    assert metrics["Templates"] == "2" and metrics["Unparsed answers"] == "0.0%"
    assert metrics["Largest mean shift"].startswith(("+", "-"))

    at.radio(key="prompts.shape").set_value("violin").run()
    assert _figures(at)[f"{model}: consistency scores per template"]["data"][0]["type"] == (
        "violin"
    )
    at.radio(key="prompts.rank_level").set_value("item").run()
    assert f"{model}: rank stability (item level), consistency" in _figures(at)


def test_baseline_choice_moves_the_shift():
    at = _page()
    before = _metrics(at)["Largest mean shift"]
    at.selectbox(key="prompts.baseline").set_value("plain").run()
    after = _metrics(at)["Largest mean shift"]
    assert float(after) == pytest.approx(-float(before), abs=0.011)  # the same pair, reversed


def test_page_without_judge_outputs_says_what_to_do():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    good = (
        b"context_id,candidate_id,attribute,annotator,score\n"
        b"c1,x,quality,ann1,4\nc1,y,quality,ann1,2\n"
    )
    at.file_uploader(key="data.file").upload("humans.csv", good, "text/csv").run()
    at.button(key="data.add").click().run()
    at.switch_page("pages/prompts/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "has no judge outputs" in at.info[0].value


@pytest.mark.slow
def test_hanna_four_eval_prompts():
    _need("hanna")
    at = _page("hanna")
    model = at.selectbox(key="prompts.model").value
    assert model in {"Beluga-13B", "ChatGPT", "Llama-13B", "Mistral-7B", "OrcaPlatypus"}
    assert _metrics(at)["Templates"] == "4"
    tau = _figures(at)[f"{model}: rank stability (system level), coherence"]["data"][0]
    assert tau["x"] == [f"eval_prompt_{k}" for k in range(1, 5)]
    at.selectbox(key="prompts.model").set_value("ChatGPT").run()
    assert not at.exception
    assert "ChatGPT: mean shift vs eval_prompt_1" in _figures(at)


@pytest.mark.slow
def test_summeval_five_chatgpt_methods_and_pairwise():
    _need("summeval_llm_eval")
    at = _page("summeval")
    assert at.selectbox(key="prompts.model").value == "gpt-3.5-turbo-0301"
    assert _metrics(at)["Templates"] == "5"
    figs = _figures(at)
    bias = figs["First-position win rate per judge and template"]
    assert bias["data"][0]["x"][0] == "gpt-3.5-turbo-0301/ab-choice"
    frames = [d.value for d in at.dataframe]
    pb = next(f for f in frames if "first_position_win_rate" in f.columns)
    assert set(pb["attribute"]) == {"coherence", "consistency", "fluency", "relevance"}
    assert pb["pairwise_accuracy"].between(0.5, 1).all()
    # each the pairwise accuracy of the verdicts against the mean human scores (ranking)
    ds = data.load_benchmark("summeval")
    for row in pb.itertuples():
        rows = judge_rows(ds, row.attribute, row.judge)
        pm = comparisons_to_P(rows, attribute=row.attribute, judge=row.judge)
        ref = scores_to_matrix(ds.human_scores, pm, attribute=row.attribute)
        assert row.pairwise_accuracy == pytest.approx(float(pairwise_accuracy(pm.P, ref)))


@pytest.mark.slow
def test_topicalchat_one_template_says_so():
    _need("topicalchat_usr")
    at = _page("topicalchat")
    assert _metrics(at)["Templates"] == "1"
    assert "one template here" in " ".join(i.value for i in at.info)
    figs = _figures(at)
    assert "gpt-3.5-turbo: coherence scores per template" in figs
    assert "gpt-3.5-turbo: unparsed answers per template" in figs


# ----------------------------------------------------------------------------- pure helpers


def _ratings(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


def test_rating_variants_temperature_and_model():
    r = _ratings(
        [
            ("c", "x", "q", "m/t0.2-p1", "p1", 0, 3.0),
            ("c", "x", "q", "m/t1-p1", "p1", 0, 4.0),
            ("c", "x", "q", "m/t1-p1", "p2", 0, 5.0),
            ("c", "x", "q", "other/p1", "p1", 0, 2.0),
        ]
    )
    v = prompts_svc.rating_variants(Dataset(name="t", ratings=r))
    assert v["model"].tolist() == ["m", "m", "m", "other"]
    assert v["temperature"].tolist()[:3] == [0.2, 1.0, 1.0]
    assert v["variant"].tolist() == ["p1 @ t0.2", "p1 @ t1", "p2 @ t1", "p1"]
    assert prompts_svc.model_options(v) == ["m", "other"]


def test_mean_shift_is_a_paired_t_interval():
    rng = np.random.default_rng(3)
    n = 40
    base = rng.integers(1, 6, n).astype(float)
    other = np.clip(base + rng.normal(0.4, 0.8, n), 1, 5)
    rows = [(f"c{i // 4}", f"x{i % 4}", "q", "m/a", "a", 0, base[i]) for i in range(n)]
    rows += [(f"c{i // 4}", f"x{i % 4}", "q", "m/b", "b", 0, other[i]) for i in range(n)]
    out = prompts_svc.mean_shift(Dataset(name="t", ratings=_ratings(rows)), "m", "a").iloc[0]
    d = other - base
    ref = stats.ttest_rel(other, base)
    ci = ref.confidence_interval(0.95)
    assert out["shift"] == pytest.approx(d.mean())
    assert out["lower"] == pytest.approx(ci.low) and out["upper"] == pytest.approx(ci.high)
    assert out["pvalue"] == pytest.approx(ref.pvalue)
    assert out["n_items"] == n


def test_rank_stability_against_direct_kendall():
    ds = data.demo_dataset()
    v = prompts_svc.rating_variants(ds)
    model = prompts_svc.model_options(v)[0]
    got = prompts_svc.rank_stability(ds, model, "fluency", "system")
    sel = v[(v["attribute"] == "fluency")].merge(
        ds.candidates[["context_id", "candidate_id", "system"]], on=["context_id", "candidate_id"]
    )
    means = sel.groupby(["variant", "system"])["score"].mean().unstack("system")
    ref = stats.kendalltau(means.loc["explain"], means.loc["plain"]).statistic
    assert got.loc["explain", "plain"] == pytest.approx(ref)
    assert got.loc["plain", "explain"] == pytest.approx(ref)
    # item level: the mean of per-context taus over contexts where tau is defined
    item = prompts_svc.rank_stability(ds, model, "fluency", "item")
    per = sel.groupby(["variant", "context_id", "candidate_id"])["score"].mean()
    taus = []
    for ctx in sorted(sel["context_id"].unique()):
        a = per.loc["explain", ctx]
        b = per.loc["plain", ctx].reindex(a.index)
        t = stats.kendalltau(a, b).statistic
        if np.isfinite(t):
            taus.append(t)
    assert item.loc["explain", "plain"] == pytest.approx(np.mean(taus))
    assert math.isclose(float(kendall(np.arange(4.0), np.arange(4.0))), 1.0)


def test_rating_failure_frame_counts_nan_scores():
    rows = [("c", "x", "q", "m/a", "a", s, np.nan if s == 0 else 3.0) for s in range(4)]
    v = prompts_svc.rating_variants(Dataset(name="t", ratings=_ratings(rows)))
    out = prompts_svc.rating_failure_frame(v, "m").iloc[0]
    assert out["n_failed"] == 1 and out["n_outputs"] == 4 and out["failure_rate"] == 0.25


def test_failure_reasons_of_raw_outputs():
    from judge.templates import builtin_templates

    t = builtin_templates()["liusie-c1"]
    rows = pd.DataFrame(
        {
            "p_first": [1.0, np.nan, np.nan, np.nan],
            "raw": ["A", "[refusal] refusal: no", "I cannot decide.", None],
        }
    )
    out = judge_outputs_svc.outputs_with_failures(rows, "comparisons", t)
    assert out["failure"].tolist()[:2] == ["", "refusal"]
    assert out["failure"].iloc[2] not in ("", "unparsed answer")  # the parser's own code
    assert out["failure"].iloc[3] == "no answer"
    counts = judge_outputs_svc.failure_counts(out)
    assert counts["n_outputs"].sum() == 3


@pytest.mark.slow
def test_pandalm_pairwise_judges_only():
    _need("pandalm_testset")
    at = _page("pandalm")
    assert "Absolute ratings" not in [h.value for h in at.header]
    frames = [d.value for d in at.dataframe]
    pb = next(f for f in frames if "first_position_win_rate" in f.columns)
    assert set(pb["judge"]) == {"gpt-3.5-turbo", "pandalm-7b"}  # humans have no template
    assert pb["reference"].str.contains("human annotator").all()
    assert pb["pairwise_accuracy"].between(0.5, 1).all()


# ----------------------------------------------------------------------------- never parsed


def _never_parsed(ds: Dataset, prompt_id: str, model: str | None = None) -> Dataset:
    """``ds`` with every answer under ``prompt_id`` (of one model) unparsed."""
    r = ds.ratings.copy()
    hit = r["prompt_id"].astype(str) == prompt_id
    if model is not None:
        hit &= r["judge"].astype(str).str.startswith(model + "/")
    r.loc[hit, "score"] = np.nan
    return Dataset(
        name=f"{ds.name}, {prompt_id} never parsed",
        contexts=ds.contexts,
        candidates=ds.candidates,
        human_scores=ds.human_scores,
        comparisons=ds.comparisons,
        ratings=r,
    )


def test_page_keeps_rank_stability_and_parse_failures_when_a_template_never_parsed():
    # the case the parse-failure chart exists to explain must not lose it (nor the ranks)
    at = open_page("pages/prompts/page.py", _never_parsed(data.demo_dataset(), "plain"))
    assert not at.exception and not at.error
    model = "demo-judge (simulated)"
    for level in ("system", "item"):
        at.radio(key="prompts.rank_level").set_value(level).run()
        figs = _figures(at)
        tau = figs[f"{model}: rank stability ({level} level), consistency"]["data"][0]
        assert tau["x"] == ["explain", "plain"]
        z = _array(tau["z"])
        assert z[0, 0] == 1.0 and np.isnan(z[1]).all() and np.isnan(z[:, 1]).all()
        bars = figs[f"{model}: unparsed answers per template"]
        shares = {
            (t["name"], x): y
            for t in bars["data"]
            for x, y in zip(t["x"], _array(t["y"]), strict=True)
        }
        assert shares[("consistency", "plain")] == 1.0
        assert shares[("consistency", "explain")] == 0.0
    assert any("under plain could be parsed" in w.value for w in at.warning)
    assert _metrics(at)["Largest mean shift"] == "n/a"
    assert _metrics(at)["Unparsed answers"] == "50.0%"


def test_rank_stability_and_shift_report_a_template_that_never_parsed():
    ds = _never_parsed(data.demo_dataset(), "plain")
    v = prompts_svc.rating_variants(ds)
    model = prompts_svc.model_options(v)[0]
    for level in ("system", "item"):
        tau = prompts_svc.rank_stability(ds, model, "fluency", level)
        assert list(tau.index) == list(tau.columns) == ["explain", "plain"]
        assert tau.loc["explain", "explain"] == 1.0 and tau["plain"].isna().all()
    shift = prompts_svc.mean_shift(ds, model, "explain")
    assert sorted(shift["attribute"]) == ["consistency", "fluency"]
    assert (shift["variant"] == "plain").all() and (shift["n_items"] == 0).all()
    assert shift["shift"].isna().all() and shift["reason"].str.contains("fewer than 2").all()
    # the never-parsed template as the baseline: the other one is reported against it
    back = prompts_svc.mean_shift(ds, model, "plain")
    assert (back["variant"] == "explain").all() and back["shift"].isna().all()


def test_real_hanna_with_one_eval_prompt_never_parsed():
    _need("hanna")
    ds = _never_parsed(data.load_benchmark("hanna"), "eval_prompt_3", model="ChatGPT")
    v = prompts_svc.rating_variants(ds)
    names = [f"eval_prompt_{k}" for k in range(1, 5)]
    for level in ("system", "item"):
        tau = prompts_svc.rank_stability(ds, "ChatGPT", "coherence", level)
        assert list(tau.columns) == names
        assert tau["eval_prompt_3"].isna().all()
        others = tau.drop(index="eval_prompt_3", columns="eval_prompt_3").to_numpy()
        assert np.isfinite(others).all() and np.allclose(np.diag(others), 1.0)
    fails = prompts_svc.rating_failure_frame(v, "ChatGPT")
    third = fails[fails["variant"] == "eval_prompt_3"]
    assert len(third) == 6 and (third["failure_rate"] == 1.0).all()
