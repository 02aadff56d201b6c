"""Rankings page, rank intervals section: the forest plot of rank intervals (with the Arena
rank), the "significantly better" matrix and separability equal ``ranking.rank_intervals``
on the Bradley–Terry fit computed straight from the tables; the interval choice switches to
the bootstrap over contexts; a dataset with no systems says why instead of failing."""

from __future__ import annotations

import numpy as np
import pytest

import data
from data.schema import Dataset
from pages.shell.text import unsafe
from ranking import bradley_terry, rank_intervals
from tests.pages._analysis_apptest import array, chart_titles, figures, metrics, need, open_page
from tests.pages._known import system_games

PAGE = "pages/rankings/page.py"
FOREST = "Rank intervals of the systems"
MATRIX = "Significantly better (row vs column)"


def _expected(ds, attribute, judge):
    fc = system_games(ds, attribute, judge)
    bt = bradley_terry(first=fc.first, second=fc.second, outcome=fc.p, n_items=len(fc.items),
                       intervals="fisher")  # fmt: skip
    return fc.items, bt, rank_intervals(bt.scores, bt.lower, bt.upper)


def _check_against_tables(at, ds, attribute, judge):
    assert FOREST in chart_titles(at) and MATRIX in chart_titles(at)
    items, bt, ri = _expected(ds, attribute, judge)
    by_name = {name: k for k, name in enumerate(items)}
    fig = figures(at)[FOREST]["data"]
    dots, arena = fig[1], fig[2]
    names = list(dots["y"])
    # best first
    assert names == [items[k] for k in np.argsort(-bt.scores, kind="stable")] or np.all(
        np.diff(bt.scores[[by_name[n] for n in names]]) <= 0
    )
    idx = [by_name[n] for n in names]
    np.testing.assert_array_equal(array(dots["x"]), ri.rank[idx])
    np.testing.assert_array_equal(array(arena["x"]), ri.arena_rank[idx])
    lines = [x for x in fig[0]["x"] if x is not None]
    np.testing.assert_array_equal(array(lines[0::2]), ri.low[idx])
    np.testing.assert_array_equal(array(lines[1::2]), ri.high[idx])
    heat = figures(at)[MATRIX]["data"][0]
    assert list(heat["y"]) == names and list(heat["x"]) == names
    z = array(heat["z"])
    want = ri.better[np.ix_(idx, idx)].astype(float) - ri.better[np.ix_(idx, idx)].T
    np.fill_diagonal(want, np.nan)
    np.testing.assert_array_equal(z, want)
    # hover names both systems
    assert names[0] in heat["customdata"][0][1] and names[1] in heat["customdata"][0][1]
    shown = metrics(at)
    assert shown["Separability"] == f"{ri.separability:.0%}"
    n = len(names)
    assert shown["Significantly ordered pairs"] == f"{int(ri.better.sum())} of {n * (n - 1) // 2}"
    return ri


def test_demo_rank_intervals_match_the_tables():
    at = open_page(PAGE)
    demo = data.demo_dataset()
    ri = _check_against_tables(at, demo, "consistency", "demo-judge (simulated)")
    assert 0 < ri.separability <= 1
    # bootstrap over contexts: the section follows, built from bootstrap replicates
    at.selectbox(key="rank.intervals").set_value("Bootstrap over contexts").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Systems by Bradley–Terry with 95% bootstrap (contexts) intervals" in chart_titles(at)
    assert any("resampling whole contexts" in c.value for c in at.caption)
    fig = figures(at)[FOREST]["data"]
    lines = [x for x in fig[0]["x"] if x is not None]
    assert np.all(array(lines[0::2]) <= array(fig[1]["x"]))
    assert np.all(array(fig[1]["x"]) <= array(lines[1::2]))
    # the choice survives a visit to another page
    at.switch_page("pages/leaderboard/page.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="rank.intervals").value == "Bootstrap over contexts"


@need("summeval")
def test_summeval_chatgpt_rank_intervals():
    at = open_page(PAGE, "summeval")
    attribute = at.selectbox(key="app.attribute").value
    judge = at.selectbox(key="app.judge").value
    _check_against_tables(at, data.load_benchmark("summeval"), attribute, judge)


def test_no_systems_says_why():
    demo = data.demo_dataset()
    cands = demo.candidates.drop(columns="system").copy()
    cands["candidate_id"] = (
        cands["context_id"].astype(str) + "/" + cands["candidate_id"].astype(str)
    )
    comps = demo.comparisons.copy()
    for col in ("first_id", "second_id"):
        comps[col] = comps["context_id"].astype(str) + "/" + comps[col].astype(str)
    human = demo.human_scores.copy()
    human["candidate_id"] = (
        human["context_id"].astype(str) + "/" + human["candidate_id"].astype(str)
    )
    no_systems = Dataset(name="no systems", contexts=demo.contexts, candidates=cands,
                         human_scores=human, comparisons=comps)  # fmt: skip
    at = open_page(PAGE, no_systems)
    assert not at.exception
    assert FOREST not in chart_titles(at)
    assert any("No system-level ranking" in unsafe(c.value) for c in at.caption)


@pytest.mark.parametrize("label", ["Fisher", "Bootstrap over comparisons"])
def test_interval_choices_run(label):
    at = open_page(PAGE)
    at.selectbox(key="rank.intervals").set_value(label).run()
    assert not at.exception, [e.value for e in at.exception]
    assert FOREST in chart_titles(at)
