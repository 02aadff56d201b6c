"""The sidebar's Analysis scope (issue 12, item 1): systems left out and the reading of the
judge ratings change what the analysis pages compute, follow the URL, are remembered per
dataset; the "Compare two groups of systems" section shows Welch's t."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import data
from data.arrays import comparisons_to_P
from data.scope.systems import systems_of
from ranking import win_ratio
from tests.pages._analysis_apptest import TIMEOUT, metrics, need
from tests.pages._known import judge_rows
from tests.pages.test_state import _app as _state_app
from tests.pages.test_state import (
    _ok,
    warnings,  # noqa: F401  (Streamlit's default-value warnings)
)

DEMO_JUDGE = "demo-judge (simulated)"


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))


_app = partial(_state_app, TIMEOUT)  # the app opened with query parameters, no exception


def _exclude(at: AppTest):
    return at.sidebar.multiselect(key="app.exclude")


def _caption_text(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


# AppTest draws the sidebar only in runs of app.py itself (not after switch_page), so each
# scope below is set in the first page (Data) or by the URL, then one page is visited.


def test_leaving_systems_out_changes_rankings_and_prompts():
    demo_systems = systems_of(data.demo_dataset())
    at = _app()
    assert _exclude(at).options == demo_systems and _exclude(at).value == []
    _ok(at.switch_page("pages/rankings/page.py").run())
    assert metrics(at)["Systems"] == str(len(demo_systems))
    assert "No system left out" in _caption_text(at)
    assert at.multiselect(key="rank.groups.a").options == demo_systems

    at = _app()
    _ok(_exclude(at).set_value(["keywords", "lead"]).run())
    assert at.query_params["exclude"] == "keywords,lead"
    kept = [s for s in demo_systems if s not in ("keywords", "lead")]
    _ok(at.switch_page("pages/rankings/page.py").run())
    assert metrics(at)["Systems"] == str(len(kept))
    assert "Left out: keywords, lead" in _caption_text(at)
    assert at.multiselect(key="rank.groups.a").options == kept
    # every ranked candidate belongs to a kept system
    table = next(d.value for d in at.dataframe if "rank: win-ratio" in d.value.columns)
    assert set(table["system"]) <= set(kept)

    at = _app(exclude="keywords,lead")  # the same scope from a link
    assert _exclude(at).value == ["keywords", "lead"]
    _ok(at.switch_page("pages/prompts/page.py").run())
    assert "Left out: keywords, lead" in _caption_text(at)
    assert at.multiselect(key="prompts.groups.a").options == kept
    assert "Welch's t" in metrics(at)


def test_the_url_carries_the_scope_and_drops_unknown_systems(warnings):  # noqa: F811
    at = _app(exclude="lead,nope")
    assert _exclude(at).value == ["lead"]
    notes = " ".join(i.value for i in at.sidebar.info)
    assert "'nope'" in notes and "ignored" in notes
    assert at.query_params["exclude"] == "lead"
    # nothing left out is a setting too: exclude= (empty) comes back as none
    _ok(_exclude(at).set_value([]).run())
    assert at.query_params["exclude"] == ""
    again = _app(exclude="")
    assert _exclude(again).value == []
    assert not warnings


def test_group_comparison_on_rankings_is_welch_on_the_win_ratios():
    at = _app()
    _ok(at.switch_page("pages/rankings/page.py").run())
    a = at.multiselect(key="rank.groups.a").value
    b = at.multiselect(key="rank.groups.b").value
    demo = data.demo_dataset()
    assert a == systems_of(demo)[:1] and b == systems_of(demo)[1:]
    attribute = at.selectbox(key="app.attribute").value
    # independently: win-ratio per candidate from the judge's P, grouped by system
    pm = comparisons_to_P(
        judge_rows(demo, attribute, DEMO_JUDGE), attribute=attribute, judge=DEMO_JUDGE
    )
    wr = win_ratio(pm.P, tau=0.5)
    system = demo.candidates.astype(str).set_index(["context_id", "candidate_id"])["system"]
    rows = [
        (system[(ctx, cand)], wr[c, k])
        for c, (ctx, ids) in enumerate(zip(pm.context_ids, pm.candidate_ids, strict=True))
        for k, cand in enumerate(ids)
    ]
    df = pd.DataFrame(rows, columns=["system", "wr"])
    ref = stats.ttest_ind(
        df.loc[df["system"].isin(a), "wr"], df.loc[df["system"].isin(b), "wr"], equal_var=False
    )
    assert float(metrics(at)["Welch's t"]) == pytest.approx(ref.statistic, abs=5e-4)
    # another split moves it
    _ok(at.multiselect(key="rank.groups.a").set_value(["large", "small"]).run())
    # a system moved to group A leaves group B; B keeps the rest of its choice
    assert at.multiselect(key="rank.groups.b").value == [
        s for s in b if s not in ("large", "small")
    ]
    assert float(metrics(at)["Welch's t"]) != pytest.approx(ref.statistic, abs=5e-4)
    shown = next(d.value for d in at.dataframe if "Welch's t" in d.value.columns)
    assert list(shown["score"]) == ["judge win-ratio", "human score"]


@need("hanna")
def test_hanna_defaults_leave_the_human_story_out():
    at = _app(dataset="hanna")
    assert _exclude(at).value == ["Human"]  # the reference story, as the paper
    assert at.sidebar.radio(key="app.reading").value == "published"
    _ok(at.switch_page("pages/prompts/page.py").run())
    text = _caption_text(at)
    assert "Left out: Human" in text and "judge ratings as published" in text
    systems = systems_of(data.load_benchmark("hanna"))
    assert at.multiselect(key="prompts.groups.a").options == [s for s in systems if s != "Human"]
    # LLM judges first, the automatic measures after them
    models = at.selectbox(key="prompts.model").options
    llm = [m for m in models if "automatic measure" not in m]
    assert models[: len(llm)] == llm and len(models) - len(llm) >= 70
    assert "Welch's t" in metrics(at)


@need("hanna")
def test_hanna_link_reading_groups_and_memory_per_dataset(warnings):  # noqa: F811
    link = _app(dataset="hanna", exclude="", reading="cleaned")
    assert _exclude(link).value == []
    assert link.sidebar.radio(key="app.reading").value == "cleaned"
    _ok(link.sidebar.radio(key="app.reading").set_value("published").run())
    assert link.query_params["reading"] == "published"
    # another dataset: its own defaults; back: this session's choice for it
    _ok(_exclude(link).set_value(["GPT-2"]).run())
    link.sidebar.selectbox(key="app.switch.hanna").set_value("demo")
    _ok(link.run())
    assert _exclude(link).value == []
    assert not link.sidebar.radio  # the demo's ratings have one reading
    link.sidebar.selectbox(key="app.switch.demo").set_value("hanna")
    _ok(link.run())
    assert _exclude(link).value == ["GPT-2"]
    assert link.sidebar.radio(key="app.reading").value == "published"
    assert not warnings

    shown = {}
    for reading in ("cleaned", "published"):
        at = _app(dataset="hanna", exclude="", reading=reading)
        _ok(at.switch_page("pages/prompts/page.py").run())
        assert f"judge ratings {'cleaned' if reading == 'cleaned' else 'as published'}" in (
            _caption_text(at)
        )
        # Human vs GPT-2 stories by default (Chiang & Lee's groups)
        assert at.multiselect(key="prompts.groups.a").value == ["Human"]
        assert at.multiselect(key="prompts.groups.b").value == ["GPT-2"]
        shown[reading] = float(metrics(at)["Welch's t"])
    assert np.isfinite(list(shown.values())).all()


def test_one_view_object_per_dataset_scope_and_reading():
    from pages.shell import scope, session, state

    demo = data.demo_dataset()
    assert scope.view(demo, [], None) is demo  # nothing left out: the dataset itself
    first = scope.view(demo, ["lead"], None)
    assert scope.view(demo, ["lead"], None) is first  # the services' caches hit
    assert state.token(first) == state.token(scope.view(demo, ["lead"], None))
    assert "lead" not in systems_of(first) and len(first.candidates) < len(demo.candidates)
    assert scope.view(demo, ["lead", "small"], None) is not first
    assert session.parse_exclude("Human, GPT-2,") == ["Human", "GPT-2"]
    with pytest.raises(ValueError, match="not one of"):
        session.parse_reading("raw")
