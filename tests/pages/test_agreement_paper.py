"""The Human agreement page's paper analyses (issue 12): automatic measures beside the LLM
judges, the system filter, one judge against every other rater (HANNA Figure 6), the
prompt effect (Figures 7/8), ratings per system (Tables 6/7) and annotator pairs (Chiang &
Lee Table 6). Expected values come from the tables with pandas and scipy."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import data
from data import agreement as dag
from data.schema import AUTOMATIC
from tests.pages._analysis_apptest import (
    APP,
    TIMEOUT,
    agreement_tab,
    array,
    figures,
    metrics,
    need_folder,
    open_page,
)
from tests.pages._known import kendall_by_unit, kendall_scipy, rated_items

JUDGE = "demo-judge (simulated)"
EXPLAIN, PLAIN = f"{JUDGE} · explain", f"{JUDGE} · plain"
OVERALL = "Kendall tau-b with humans, overall level"


def _with_measures() -> data.Dataset:
    """The demo with three automatic measures (on a 0-1 scale, noisier and noisier)."""
    demo = data.demo_dataset()
    keys = ["context_id", "candidate_id", "attribute"]
    human = demo.human_scores.groupby(keys, observed=True)["score"].mean().reset_index()
    rng = np.random.default_rng(0)
    extra = [
        human.assign(
            judge=name,
            prompt_id=AUTOMATIC,
            sample=0,
            score=human["score"] / 5 + rng.normal(0, noise, len(human)),
            raw="",
        )
        for name, noise in (("BLEU", 0.1), ("BERTScore F1", 0.2), ("chrF", 0.4))
    ]
    ratings = pd.concat([demo.ratings, *extra], ignore_index=True)
    return dataclasses.replace(demo, name="demo with measures", ratings=ratings)


def _heatmap(at, title: str) -> tuple[list, list, np.ndarray]:
    spec = figures(at)[title]["data"][0]
    return list(spec["y"]), list(spec["x"]), array(spec["z"])


def test_automatic_measures_beside_the_llm_judges():
    ds = _with_measures()
    at = open_page("pages/agreement/page.py", ds)
    measures = at.multiselect(key="agreement.measures")
    assert list(measures.options) == ["BERTScore F1", "BLEU", "chrF"]  # natural order
    assert measures.value == ["BLEU", "BERTScore F1"]  # the common ones, not chrF
    rows, cols, z = _heatmap(at, OVERALL)
    # LLM judges first, then the measures, then the human baseline
    assert rows[:2] == [EXPLAIN, PLAIN] and set(rows[2:4]) == {"BLEU", "BERTScore F1"}
    assert rows[4].startswith("human baseline")
    for i, name in enumerate(rows[:4]):
        judge, prompt = (JUDGE, name.split(" · ")[1]) if " · " in name else (name, AUTOMATIC)
        for j, attribute in enumerate(cols):
            want = kendall_by_unit(rated_items(ds, judge, prompt, attribute))["overall"]
            assert z[i, j] == pytest.approx(want), (name, attribute)
    assert metrics(at)["Judges × prompts"] == "2"
    assert any("2 automatic measure(s)" in c.value for c in at.caption)

    measures.set_value(["BLEU", "BERTScore F1", "chrF"]).run()
    assert not at.exception
    rows, _, _ = _heatmap(at, OVERALL)
    assert "chrF" in rows and rows.index("chrF") > rows.index(PLAIN)
    # the noisiest measure agrees least
    at.multiselect(key="agreement.judges").set_value([]).run()
    assert not at.exception and not at.error
    rows, _, z = _heatmap(at, OVERALL)
    assert rows[:3] == ["BERTScore F1", "BLEU", "chrF"]
    assert (z[2] < z[1]).all()


def _versus_table(ds, me, versus, alternative):
    table = dag.williams_versus_table(
        ds, me, versus=versus, alternative=alternative, family="attributes"
    )
    return table.pivot_table(index="attribute", columns="judge_b", values="p_bh")


def test_one_judge_against_every_other_rater():
    ds = _with_measures()
    at = agreement_tab(open_page("pages/agreement/page.py", ds), "significance")
    title = f"{EXPLAIN} against every other rater: Williams + BH adjusted p, overall level"
    rows, cols, z = _heatmap(at, title)
    assert rows == ["consistency", "fluency"]
    assert cols == [PLAIN, "BERTScore F1", "BLEU"]
    versus = [(JUDGE, "plain"), ("BERTScore F1", AUTOMATIC), ("BLEU", AUTOMATIC)]
    want = _versus_table(ds, (JUDGE, "explain"), versus, "greater")
    names = [JUDGE, "BERTScore F1", "BLEU"]
    assert np.allclose(z, want.loc[rows, names].to_numpy(), equal_nan=True)
    assert np.isfinite(z).all() and (z >= 0).all() and (z <= 1).all()

    # two-sided tests: other p-values, the same as the data layer's
    at.radio(key="agreement.w_side").set_value("two-sided").run()
    assert not at.exception
    _, _, z2 = _heatmap(
        at, f"{EXPLAIN} against every other rater: Williams + BH adjusted p, overall level"
    )
    want2 = _versus_table(ds, (JUDGE, "explain"), versus, "two-sided")
    assert np.allclose(z2, want2.loc[rows, names].to_numpy(), equal_nan=True)
    assert not np.allclose(z2, z)

    # against every loaded rater: chrF (not chosen above) joins
    at.radio(key="agreement.versus_scope").set_value(
        "every loaded rater (LLMs and all measures)"
    ).run()
    _, cols, _ = _heatmap(at, title)
    assert "chrF" in cols and len(cols) == 4


def _linked(**query) -> AppTest:
    """The app opened from a link (``exclude=``, ``dataset=``: the sidebar's Analysis scope
    is drawn only in runs of app.py itself), then the Human agreement page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    at.switch_page("pages/agreement/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_system_filter_changes_the_correlations():
    demo = data.demo_dataset()
    at = _linked()
    rows, cols, before = _heatmap(at, OVERALL)
    groups = agreement_tab(at, "groups")  # the systems offered to the group comparison
    assert "hallucinator" in groups.multiselect(key="agreement.group_a").options
    at = _linked(exclude="hallucinator")
    rows2, _, after = _heatmap(at, OVERALL)
    assert rows2 == rows
    assert any("hallucinator" in c.value for c in at.caption)  # the page says so
    i = rows.index(PLAIN)
    for j, attribute in enumerate(cols):
        items = rated_items(demo, JUDGE, "plain", attribute)
        kept = items[items["system"] != "hallucinator"]
        assert after[i, j] == pytest.approx(kendall_by_unit(kept)["overall"])
        assert before[i, j] == pytest.approx(kendall_by_unit(items)["overall"])
    assert not np.allclose(before[:2], after[:2])
    # the systems left out are not offered to the group comparison, which shows Welch's t
    agreement_tab(at, "groups")
    assert "hallucinator" not in at.multiselect(key="agreement.group_a").options
    assert any("Welch's t" in d.value.columns for d in at.dataframe)


def test_ratings_per_system_and_prompt_effect():
    demo = data.demo_dataset()
    at = agreement_tab(open_page("pages/agreement/page.py"), "paper")
    title = f"{EXPLAIN}: mean rating per system and criterion"
    spec = figures(at)[title]["data"][0]
    systems, attrs = list(spec["y"]), list(spec["x"])
    assert attrs == ["consistency", "fluency", "Average"]
    assert systems == sorted(demo.candidates["system"].unique())
    z, text = array(spec["z"]), np.asarray(spec["text"], dtype=object)
    r = demo.ratings[demo.ratings["prompt_id"] == "explain"]
    item = r.groupby(["context_id", "candidate_id", "attribute"], observed=True)["score"].mean()
    item = item.reset_index().merge(demo.candidates[["context_id", "candidate_id", "system"]])
    for i, system in enumerate(systems):
        for j, attribute in enumerate(attrs):
            sel = item[item["system"] == system]
            x = (
                sel["score"]
                if attribute == "Average"
                else sel.loc[sel["attribute"] == attribute, "score"]
            )
            low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
            assert z[i, j] == pytest.approx(x.mean())
            assert text[i, j] == f"{x.mean():.2f} ± {(high - low) / 2:.2f}"

    # the prompt effect: per model and prompt, the mean over attributes (Figures 7/8)
    fig = figures(at)["Prompt effect on the overall Kendall tau-b (Figure 7)"]
    bars = {trace["name"]: array(trace["y"])[0] for trace in fig["data"]}
    for prompt in ("explain", "plain"):
        want = np.mean(
            [
                kendall_by_unit(rated_items(demo, JUDGE, prompt, a))["overall"]
                for a in demo.attributes
            ]
        )
        assert bars[prompt] == pytest.approx(want)
    assert "Prompt effect on the system Kendall tau-b (Figure 8)" in figures(at)


def test_annotator_pairs_matrix():
    demo = data.demo_dataset()
    at = agreement_tab(open_page("pages/agreement/page.py"), "humans")
    title = "Kendall tau-b between annotator pairs (human), overall level"
    rows, cols, z = _heatmap(at, title)
    assert rows == ["consistency", "fluency", "mean over attributes"]
    names = ["human_1", "human_2", "human_3"]
    assert cols == [f"{a} – {b}" for a, b in itertools.combinations(names, 2)]
    hs = demo.human_scores
    for i, attribute in enumerate(rows[:2]):
        wide = hs[hs["attribute"] == attribute].pivot_table(
            index=["context_id", "candidate_id"], columns="annotator", values="score"
        )
        for j, (a, b) in enumerate(itertools.combinations(names, 2)):
            assert z[i, j] == pytest.approx(kendall_scipy(wide[a], wide[b]))
    assert np.allclose(z[2], z[:2].mean(axis=0))


@pytest.mark.slow
def test_hanna_paper_settings():
    """HANNA opens as the paper: Human left out, 20 LLM judges and 4 common measures, the
    baseline against the mean of all annotators (Figure 4: Beluga-13B .25, baseline .48)."""
    need_folder("hanna")
    at = open_page("pages/agreement/page.py", "hanna")
    assert not at.error
    rows, cols, z = _heatmap(at, OVERALL)
    assert len(rows) == 20 + 4 + 1 and len(cols) == 6
    assert rows[-5:-1] == ["BARTScore-SH", "BERTScore F1", "BLEU", "ROUGE-1 F-Score"]
    assert np.nanmean(z[rows.index("Beluga-13B/eval_prompt_1")]) == pytest.approx(0.2463, abs=1e-3)
    assert np.nanmean(z[rows.index("ChatGPT/eval_prompt_1")]) == pytest.approx(0.1782, abs=1e-3)
    assert np.nanmean(z[-1]) == pytest.approx(0.477, abs=2e-3)  # the paper's ~.48
    agreement_tab(at, "significance")
    title = "Beluga-13B/eval_prompt_1 against every other rater: Williams + BH adjusted p, overall level"
    _, cols, p = _heatmap(at, title)
    chatgpt = p[:, cols.index("ChatGPT/eval_prompt_1")]
    assert 0.01 <= np.nanmin(chatgpt) and np.nanmax(chatgpt) <= 0.15  # paper: .01 to .14
    at.radio(key="agreement.versus_scope").set_value(
        "every loaded rater (LLMs and all measures)"
    ).run()
    _, cols, _ = _heatmap(at, title)
    assert len(cols) == 19 + 72
    # the human story back in: the correlations rise (the bug issue 12 names)
    rows, _, z = _heatmap(_linked(dataset="hanna", exclude=""), OVERALL)
    assert np.nanmean(z[rows.index("Beluga-13B/eval_prompt_1")]) == pytest.approx(0.323, abs=2e-3)


@pytest.mark.slow
def test_hanna_link_chooses_the_judge_and_attribute():
    """A Reproduce-page link (judge=, attribute=, exclude=, reading=) opens the page on them."""
    need_folder("hanna")
    at = _linked(
        dataset="hanna",
        judge="Mistral-7B/eval_prompt_1",
        attribute="surprise",
        exclude="Human",
        reading="published",
    )
    figs = figures(agreement_tab(at, "significance"))
    title = "Mistral-7B/eval_prompt_1 against every other rater: Williams + BH adjusted p"
    assert f"{title}, overall level" in figs
    assert "Williams + BH adjusted p: surprise, eval_prompt_1" in figs
    figs = figures(agreement_tab(at, "paper"))
    assert "Mistral-7B/eval_prompt_1: mean rating per system and criterion" in figs
    agreement_tab(at, "judges")
    assert at.selectbox(key="agreement.dot_attr").value == "surprise"
