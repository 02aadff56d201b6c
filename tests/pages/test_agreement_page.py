"""The Human agreement page on the demo and on the real benchmarks, plus its pure helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import data
from data.agreement import verdict_agreement_table
from data.schema import Dataset
from pages.services import agreement as agreement_svc
from pages.services import common
from tests.pages._analysis_apptest import APP, TIMEOUT, agreement_tab, open_page, open_page_loaded
from tests.pages._analysis_apptest import array as _array
from tests.pages._analysis_apptest import figures as _figures
from tests.pages._analysis_apptest import metrics as _metrics
from tests.pages._analysis_apptest import need_folder as _need
from tests.pages._known import icc2k, kendall_by_unit, rated_items

BASELINE = "human baseline (vs mean of all annotators)"
BASELINE_OTHERS = "human baseline (vs mean of the others)"


def baseline_by_unit(ds: Dataset, attribute: str, reference: str = "all") -> dict[str, float]:
    """The human baseline at the three units, with pandas and scipy: each annotator's scores
    against the mean of all annotators (self included, HANNA's upper bound) or of the
    others (leave-one-out), averaged over annotators."""
    hs = ds.human_scores[ds.human_scores["attribute"].astype(str) == attribute]
    wide = hs.pivot_table(index=["context_id", "candidate_id"], columns="annotator", values="score")
    systems = ds.candidates.set_index(["context_id", "candidate_id"])["system"]
    per_annotator = []
    for name in wide.columns:
        ref = wide if reference == "all" else wide.drop(columns=name)
        items = pd.DataFrame({"score": wide[name], "human": ref.mean(axis=1)}).reset_index()
        items["system"] = systems.reindex(wide.index).to_numpy()
        per_annotator.append(kendall_by_unit(items))
    return {u: float(np.mean([a[u] for a in per_annotator])) for u in ("item", "system", "overall")}


def _page(benchmark: str | None = None) -> AppTest:
    return open_page_loaded("pages/agreement/page.py", benchmark)


# ----------------------------------------------------------------------------- pages


def test_demo_heatmaps_metrics_and_method_switch():
    at = _page()
    figs = _figures(at)
    demo = data.demo_dataset()
    overall = []
    for level in ("item", "system", "overall"):
        spec = figs[f"Kendall tau-b with humans, {level} level"]
        assert spec["data"][0]["type"] == "heatmap"
        # rows: judge x prompt, plus the human baseline row; columns: attributes
        assert spec["data"][0]["x"] == ["consistency", "fluency"]
        assert BASELINE in spec["data"][0]["y"]
        z = _array(spec["data"][0]["z"])
        # every cell is Kendall's tau-b computed from the tables with scipy
        for i, row in enumerate(spec["data"][0]["y"]):
            for j, attribute in enumerate(spec["data"][0]["x"]):
                if row == BASELINE:
                    want = baseline_by_unit(demo, attribute)[level]
                else:
                    judge, prompt_id = row.split(" · ")
                    want = kendall_by_unit(rated_items(demo, judge, prompt_id, attribute))[level]
                    if level == "overall":
                        overall.append(want)
                assert z[i, j] == pytest.approx(want), (level, row, attribute)
    metrics = _metrics(at)
    assert set(metrics) >= {"Best judge (overall)", "Human baseline (overall)", "Judges × prompts"}
    assert metrics["Judges × prompts"] == "2"
    assert len(at.caption) > 3  # every metric has its help line (and more)
    assert float(metrics["Best judge (overall)"]) == pytest.approx(max(overall), abs=5e-4)
    # the demo judge follows its humans: a clearly positive correlation
    assert 0.3 < float(metrics["Best judge (overall)"]) <= 1.0
    # the other questions are tabs of their own, built when opened
    assert "Williams + BH adjusted p: consistency, all prompts" not in figs
    assert "Williams + BH adjusted p: consistency, all prompts" in _figures(
        agreement_tab(at, "significance")
    )
    assert "Pairwise accuracy against human scores" in _figures(agreement_tab(at, "pairwise"))
    agreement_tab(at, "judges")

    # the other human baseline: each annotator against the mean of the others
    at.radio(key="agreement.baseline").set_value("others").run()
    assert not at.exception
    spec = _figures(at)["Kendall tau-b with humans, overall level"]["data"][0]
    assert BASELINE_OTHERS in spec["y"] and BASELINE not in spec["y"]
    z = _array(spec["z"])
    row = spec["y"].index(BASELINE_OTHERS)
    for j, attribute in enumerate(spec["x"]):
        want = baseline_by_unit(demo, attribute, "others")["overall"]
        assert z[row, j] == pytest.approx(want)
        assert want < baseline_by_unit(demo, attribute, "all")["overall"]  # self excluded
    assert float(_metrics(at)["Human baseline (overall)"]) != float(
        metrics["Human baseline (overall)"]
    )

    at.selectbox(key="agreement.method").set_value("Pearson").run()
    assert not at.exception
    after = _metrics(at)
    assert after["Best judge (overall)"] != metrics["Best judge (overall)"]
    assert "Pearson with humans, overall level" in _figures(at)


def test_demo_self_consistency_and_iaa_tables():
    at = agreement_tab(_page(), "humans")
    frames = [d.value for d in at.dataframe]
    iaa = next(f for f in frames if "alpha_interval" in f.columns)
    assert set(iaa["attribute"]) == {"consistency", "fluency"}
    assert (iaa["icc2k"] > 0.5).all()  # simulated annotators share the latent quality
    demo = data.demo_dataset()
    hs = demo.human_scores
    for row in iaa.itertuples():
        sel = hs[hs["attribute"] == row.attribute]
        x = sel.pivot_table(
            index=["context_id", "candidate_id"], columns="annotator", values="score"
        )
        assert row.icc2k == pytest.approx(icc2k(x.to_numpy()))
    sc = next(f for f in frames if "share_identical" in f.columns)
    assert (sc["n_samples"] == 3).all() and sc["icc2k"].between(0, 1).all()
    r = demo.ratings
    for row in sc.itertuples():
        sel = r[
            (r["judge"] == row.judge)
            & (r["prompt_id"] == row.prompt_id)
            & (r["attribute"] == row.attribute)
        ]
        x = sel.pivot_table(index=["context_id", "candidate_id"], columns="sample", values="score")
        assert row.icc2k == pytest.approx(icc2k(x.to_numpy()))


def test_page_without_human_data_says_what_to_do():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    csv = (
        b"context_id,attribute,judge,first_id,second_id,p_first\n"
        b"c1,quality,j,x,y,0.7\nc1,quality,j,y,x,0.4\n"
    )
    at.radio(key="data.kind").set_value("pairwise").run()
    at.file_uploader(key="data.file").upload("pairs.csv", csv, "text/csv").run()
    at.button(key="data.add").click().run()
    at.switch_page("pages/agreement/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "no human scores or human verdicts" in at.info[0].value
    assert not at.get("plotly_chart")


@pytest.mark.slow
def test_hanna_five_judges_four_prompts():
    _need("hanna")
    at = _page("hanna")
    figs = _figures(at)
    spec = figs["Kendall tau-b with humans, overall level"]["data"][0]
    # 5 judges x 4 Eval-Prompts, 4 common automatic measures, the human baseline
    assert len(spec["y"]) == 20 + 4 + 1
    assert len(spec["x"]) == 6
    assert _metrics(at)["Judges × prompts"] == "20"
    figs = _figures(agreement_tab(at, "significance"))
    will = [t for t in figs if t.startswith("Williams + BH adjusted p")]
    assert will and figs[will[0]]["data"][0]["type"] == "heatmap"
    p = _array(figs[will[0]]["data"][0]["z"])
    assert p.shape == (5, 5) and np.nanmax(p) <= 1


@pytest.mark.slow
def test_summeval_annotator_groups():
    _need("summeval_llm_eval")
    at = _page("summeval_annotators")
    assert at.selectbox(key="agreement.group").value == "expert"
    expert = _metrics(at)["Human baseline (overall)"]
    at.selectbox(key="agreement.group").set_value("crowd").run()
    assert not at.exception
    assert _metrics(at)["Human baseline (overall)"] != expert
    assert "Pairwise accuracy against human scores" in _figures(agreement_tab(at, "pairwise"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "benchmark, folder", [("summeval", "summeval_llm_eval"), ("topicalchat", "topicalchat_usr")]
)
def test_single_reference_benchmarks(benchmark, folder):
    _need(folder)
    at = _page(benchmark)
    figs = _figures(at)
    assert "Kendall tau-b with humans, system level" in figs
    assert _metrics(at)["Human baseline (overall)"] == "–"  # one (averaged) annotator
    agreement_tab(at, "humans")
    assert any("one (already averaged) score" in i.value for i in at.info)


@pytest.mark.slow
def test_pandalm_human_verdicts():
    _need("pandalm_testset")
    at = _page("pandalm")
    figs = _figures(at)
    spec = figs["Cohen's kappa with the human verdicts"]["data"][0]
    assert spec["type"] == "heatmap"
    assert {"gpt-3.5-turbo", "pandalm-7b"} <= set(spec["y"])
    assert "human majority" in spec["x"]


# ----------------------------------------------------------------------------- pure helpers


def test_variant_label_and_model_names():
    assert common.variant_label("ChatGPT/eval_prompt_1", "eval_prompt_1") == (
        "ChatGPT/eval_prompt_1"
    )
    assert common.variant_label("demo-judge", "plain") == "demo-judge · plain"
    assert common.judge_model("gpt-3.5-turbo-0301/altmcq", "altmcq") == ("gpt-3.5-turbo-0301", None)
    assert common.judge_model("my-model/t0.7-p0.9", "hanna-ep1") == ("my-model", 0.7)
    assert common.judge_model("plain", "plain") == ("plain", None)


def _verdicts(rows) -> Dataset:
    comps = pd.DataFrame(
        rows, columns=["context_id", "judge", "first_id", "second_id", "p_first", "verdict"]
    )
    comps = comps.assign(attribute="overall", sample=0)
    return Dataset(name="v", comparisons=comps)


def test_human_verdict_agreement_by_hand():
    # four pairs; two humans; one model judge that agrees with h1 on 3 of 4
    rows = []
    h1 = ["A", "B", "A", "B"]
    h2 = ["A", "B", "B", "B"]
    model = ["A", "B", "A", "A"]
    for k in range(4):
        for judge, labels in (("human:h1", h1), ("human:h2", h2), ("m", model)):
            v = labels[k]
            rows.append((f"c{k}", judge, "x", "y", {"A": 1.0, "B": 0.0}[v], v))
    out = verdict_agreement_table(_verdicts(rows)).set_index(["judge", "annotator"])
    assert out.loc[("m", "human:h1"), "agreement"] == 0.75
    assert out.loc[("m", "human:h2"), "agreement"] == 0.5
    # Cohen's kappa m vs h1: po = 0.75; m has A 3/4, h1 has A 2/4: pe = .75*.5 + .25*.5 = .5
    assert math.isclose(out.loc[("m", "human:h1"), "cohen_kappa"], 0.5)
    # majority of two humans: pairs where they disagree (c2) have no majority and are left out
    assert out.loc[("m", "human majority"), "n_pairs"] == 3
    assert out.loc[("human:h1", "human:h2"), "agreement"] == 0.75


def test_verdicts_read_from_probabilities_when_missing():
    rows = [
        ("c0", "human:h1", "x", "y", 0.9, None),
        ("c0", "m", "x", "y", 0.2, None),
        ("c1", "human:h1", "x", "y", 0.5, None),
        ("c1", "m", "x", "y", 0.5, None),
    ]
    out = verdict_agreement_table(_verdicts(rows))
    row = out[(out["judge"] == "m") & (out["annotator"] == "human:h1")].iloc[0]
    assert row["n_pairs"] == 2 and row["agreement"] == 0.5


def test_correlation_heatmap_frames_match_the_table():
    ds = data.demo_dataset()
    table = agreement_svc.correlations(ds, "spearman", "b", None, n_boot=50)
    values, hover = agreement_svc.correlation_heatmap_frames(table, "overall")
    assert list(values.columns) == ["consistency", "fluency"]
    assert set(values.index) == {
        "demo-judge (simulated) · explain",
        "demo-judge (simulated) · plain",
    }
    row = table[
        (table["level"] == "overall")
        & (table["attribute"] == "fluency")
        & (table["prompt_id"] == "plain")
    ].iloc[0]
    assert values.loc["demo-judge (simulated) · plain", "fluency"] == row["value"]
    assert (
        f"[{row['lower']:.3f}, {row['upper']:.3f}]"
        in hover.loc["demo-judge (simulated) · plain", "fluency"]
    )


# ----------------------------------------------------------------------------- two groups


def _welch_rows(ds, judge, prompt_id, group_a, group_b) -> list[dict]:
    """The group table as the page shows it, from the tables with pandas and scipy."""
    rows = []
    for attribute in sorted(ds.ratings["attribute"].unique()):
        items = rated_items(ds, judge, prompt_id, attribute)
        for rater, column in (("judge", "score"), ("human", "human")):
            xa = items.loc[items["system"].isin(group_a), column].dropna()
            xb = items.loc[items["system"].isin(group_b), column].dropna()
            res = stats.ttest_ind(xa, xb, equal_var=False)
            rows.append(
                {
                    "attribute": attribute,
                    "rater": rater,
                    "group A": f"{xa.mean():.2f} ± {xa.std(ddof=1):.2f} (n = {len(xa)})",
                    "group B": f"{xb.mean():.2f} ± {xb.std(ddof=1):.2f} (n = {len(xb)})",
                    "Welch's t": f"{res.statistic:.2f}",
                    "p": f"{res.pvalue:.4f}",
                }
            )
    return rows


def _group_table(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "group A" in d.value.columns)


def test_demo_compares_two_groups_of_systems_with_welch():
    at = agreement_tab(_page(), "groups")
    assert "Compare two groups of systems" in [h.value for h in at.header]
    demo = data.demo_dataset()
    label = at.selectbox(key="agreement.group_judge").value
    judge, prompt_id = label.split(" · ")
    # first visit: the first system against all the others
    a = at.multiselect(key="agreement.group_a").value
    b = at.multiselect(key="agreement.group_b").value
    assert a == ["hallucinator"] and b == ["keywords", "large", "lead", "small", "truncated"]
    shown = _group_table(at).drop(columns="note").to_dict("records")
    assert shown == _welch_rows(demo, judge, prompt_id, a, b)
    # the judge sees what the humans see: the hallucinator is far less consistent
    consistency = {
        r["rater"]: float(r["Welch's t"]) for r in shown if r["attribute"] == "consistency"
    }
    assert consistency["human"] < -5 and consistency["judge"] < -5

    # a system moved into group A leaves group B; another judge, other numbers
    at.multiselect(key="agreement.group_a").set_value(["large", "lead"]).run()
    assert at.multiselect(key="agreement.group_b").value == ["keywords", "small", "truncated"]
    at.multiselect(key="agreement.group_b").set_value(["hallucinator", "keywords"]).run()
    other = [o for o in at.selectbox(key="agreement.group_judge").options if o != label][0]
    at.selectbox(key="agreement.group_judge").set_value(other).run()
    assert not at.exception and not at.error
    judge, prompt_id = other.split(" · ")
    shown = _group_table(at).drop(columns="note").to_dict("records")
    assert shown == _welch_rows(
        demo, judge, prompt_id, ["large", "lead"], ["hallucinator", "keywords"]
    )

    at.multiselect(key="agreement.group_b").set_value([]).run()
    assert any("Pick at least one system for each group" in i.value for i in at.info)


def test_group_comparison_needs_systems():
    demo = data.demo_dataset()
    no_systems = Dataset(
        name="no systems",
        contexts=demo.contexts,
        candidates=demo.candidates.drop(columns="system"),
        human_scores=demo.human_scores,
        ratings=demo.ratings,
    )
    at = agreement_tab(open_page("pages/agreement/page.py", no_systems), "groups")
    assert not at.error
    assert any("two or more systems; this dataset has 0 system(s)." in i.value for i in at.info)
