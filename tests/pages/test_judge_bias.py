"""AppTest of the Judge bias page: the position profile against the quality gap, length and
style bias, transitivity (openable cycles), calibration (the shared debias mode) and ties,
on the demo, a simulated judge with a known length bias and cycles, and the real SummEval,
PandaLM and Topical-Chat judges; a dataset without a judge gets the guidance message."""

from __future__ import annotations

import pandas as pd
import pytest

import data
from data.schema import Dataset
from data.synthetic.simulate import simulate_with_truth
from pages.services import judge_bias as svc
from pages.shell.debias import MODE
from tests.pages._analysis_apptest import (
    assert_clean,
    chart_titles,
    info_text,
    metrics,
    need,
    open_page,
    rejudged,
)

PAGE = "pages/judge_bias/page.py"
SECTIONS = [
    "Position-bias profile",
    "Length and style",
    "Transitivity",
    "Calibration",
    "Ties",
    "Self-preference and contamination",
]
GAP_PLOT = "Position consistency, first-position win rate and ties against the quality gap"


@pytest.fixture(scope="module")
def simulated() -> Dataset:
    ds, _ = simulate_with_truth(
        12,
        6,
        judge_noise=0.0,
        position_bias=1.0,
        position_bias_decay=1.0,
        length_bias=2.0,
        cycles=2,
        texts=True,
        n_systems=6,
        mode="soft",
        random_state=3,
        judge_name="sim-judge",
    )
    return rejudged(ds, "simulated biases", ds.comparisons, ds.ratings)


def test_demo_shows_every_section_with_numbers():
    at = open_page(PAGE)
    assert_clean(at)
    assert [t.value for t in at.title] == ["Judge bias"]
    assert [s.value for s in at.subheader] == SECTIONS
    m = metrics(at)
    # the demo judge favours the first slot and sees every pair in both orders
    assert float(m["First-position win rate"]) > 0.55
    assert 0.0 <= float(m["Position consistency"]) <= 1.0
    assert float(m["Preference fairness"]) < 0  # primacy
    titles = chart_titles(at)
    assert GAP_PLOT in titles
    assert "Style coefficients: what moves the judge beyond quality" in titles
    assert "Calibration methods side by side" in str(at.session_state["app.report"])
    assert any("Judging the Judges" in c.value for c in at.caption)


def test_gap_bins_control_redraws_the_profile():
    at = open_page(PAGE)
    at.slider(key="judge_bias.n_bins").set_value(3).run()
    assert_clean(at)
    fig = next(f for f in _figures(at) if f["layout"]["title"]["text"] == GAP_PLOT)
    assert all(len(trace["x"]) <= 3 for trace in fig["data"] if trace.get("mode"))


def _figures(at) -> list[dict]:
    from tests.pages._analysis_apptest import charts

    return charts(at)


def test_use_on_every_page_sets_the_shared_debias_mode():
    at = open_page(PAGE)
    at.radio(key="judge_bias.shared").set_value("swap").run()
    button = at.button(key="judge_bias.use")
    assert not button.disabled
    button.click().run()
    assert_clean(at)
    assert any("Swap calibration" in c.value for c in at.caption)
    at.switch_page("pages/position_bias/page.py").run()
    assert not at.exception
    assert at.radio(key=MODE).value == "swap"


def test_a_dataset_without_any_judge_gets_guidance():
    demo = data.demo_dataset()
    bare = rejudged(demo, "no judge", demo.comparisons.iloc[0:0], demo.ratings.iloc[0:0])
    at = open_page(PAGE, bare)
    assert not at.exception
    assert "no judge verdicts or judge ratings" in info_text(at)
    assert not at.subheader


def test_simulated_length_bias_and_cycles_are_shown(simulated):
    at = open_page(PAGE, simulated)
    assert_clean(at)
    coef = svc.style_coefficients(simulated, "quality", "sim-judge")[0].set_index("term")
    assert coef.loc["length", "low"] > 0  # the known length preference, found
    pref = svc.length_preference(simulated, "quality", "sim-judge").set_index("source")
    assert pref.loc["judge", "p_longer"] > 0.5
    assert "Circular triads per context" in chart_titles(at)
    m = metrics(at)
    # exactly one circular triad in each of the two contexts given a cycle
    assert m["Contexts with a cycle"].startswith("2 / ")
    assert m["Circular triads"].startswith("2 / ")
    worst = svc.worst_cycles(simulated, "quality", "sim-judge")
    assert len(worst) == 2
    # "Open" takes the first cycle's context to the Examples page
    at.button(key="judge_bias.open.0").click().run()
    assert not at.exception
    assert at.selectbox(key="examples.context").value == str(worst["context_id"].iloc[0])


def test_simulated_baseline_choice_changes_the_win_rates(simulated):
    at = open_page(PAGE, simulated)
    title = "Length-controlled win rate against a baseline"
    systems = at.selectbox(key="judge_bias.baseline").options
    before = next(f for f in _figures(at) if f["layout"]["title"]["text"] == title)
    other = next(s for s in systems if s != at.selectbox(key="judge_bias.baseline").value)
    at.selectbox(key="judge_bias.baseline").set_value(other).run()
    assert_clean(at)
    after = next(f for f in _figures(at) if f["layout"]["title"]["text"] == title)
    assert after["layout"]["yaxis"]["title"]["text"] == f"win rate against {other}"
    assert after != before


@need("summeval")
def test_summeval_chatgpt_profile_and_no_triangles():
    at = open_page(PAGE, "summeval")
    assert_clean(at)
    judge = at.selectbox(key="app.judge").value
    assert "gpt-3.5" in judge
    m = metrics(at)
    assert 0.0 < float(m["Position consistency"]) < 1.0
    assert GAP_PLOT in chart_titles(at)
    infos = info_text(at)
    if m["Circular triads"].endswith("/ 0"):
        assert "No triad was compared in all three of its pairs" in infos
    table = svc.calibration_table(at.session_state["app.datasets"]["summeval"], "coherence", judge)
    assert {"off", "swap", "isotonic"} <= set(table["method"])


@need("pandalm")
def test_pandalm_one_order_says_why_consistency_is_missing():
    at = open_page(PAGE, "pandalm")
    assert_clean(at)
    m = metrics(at)
    assert m["Position consistency"] == "n/a"
    assert "Position consistency** is not available" in info_text(at)
    assert float(m["First-position win rate"]) > 0.0


@need("topicalchat")
def test_topicalchat_ratings_judge_gets_the_sections_that_apply():
    at = open_page(PAGE, "topicalchat")
    assert_clean(at)
    assert at.selectbox(key="app.judge").value.endswith("(ratings)")
    infos = info_text(at)
    assert "needs pairwise verdicts" in infos
    m = metrics(at)
    assert 0.0 < float(m["Repetition stability"]) <= 1.0
    assert 0.0 <= float(m["Tie rate"]) <= 1.0
    assert "Position consistency" not in m
    assert not pd.isna(float(m["Repetition stability"]))


def test_services_build_each_input_once_per_judge(simulated, monkeypatch):
    """A judge change builds the pair frame, the cycles P and the calibration inputs once."""
    from data import bias as data_bias

    calls = {"judged_pairs": 0, "cycles_pmatrix": 0, "judge_inputs": 0}
    for name in calls:
        real = getattr(data_bias, name)

        def counted(*args, _real=real, _name=name, **kw):
            calls[_name] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(data_bias, name, counted)
    fresh = Dataset(  # a new object: cold caches
        name="fresh", contexts=simulated.contexts, candidates=simulated.candidates,
        human_scores=simulated.human_scores, comparisons=simulated.comparisons,
        ratings=simulated.ratings,
    )  # fmt: skip
    a, j = "quality", "sim-judge"
    svc.profile_summary(fresh, a, j)
    for n_bins in (3, 5):
        svc.profile_by_gap(fresh, a, j, n_bins)
    svc.length_preference(fresh, a, j)
    svc.style_coefficients(fresh, a, j)
    for base in svc.systems(fresh, a, j)[:2]:
        svc.length_controlled_win_rate(fresh, a, j, base)
    svc.cycles_summary(fresh, a, j)
    svc.worst_cycles(fresh, a, j, 5)
    svc.calibration_table(fresh, a, j)
    for method in ("swap", "isotonic"):
        svc.reliability_frame(fresh, a, j, method)
    assert calls == {"judged_pairs": 1, "cycles_pmatrix": 1, "judge_inputs": 1}


@need("topicalchat")
def test_topicalchat_ratings_judge_length_preference_against_humans():
    at = open_page(PAGE, "topicalchat")
    assert_clean(at)
    assert "P(prefers the longer candidate): judge and humans" in chart_titles(at)
    fig = next(
        f
        for f in _figures(at)
        if f["layout"]["title"]["text"] == "P(prefers the longer candidate): judge and humans"
    )
    assert list(fig["data"][0]["x"]) == ["judge", "humans"]
    assert any(
        c.value.startswith("A ratings judge scores each candidate alone") for c in at.caption
    )
    assert "length preference of a ratings judge is not available" not in info_text(at)
