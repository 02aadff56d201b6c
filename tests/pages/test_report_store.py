"""The report's views kept with the workspace (issue 23, item 6): written as JSON within a
size bound, read back as figures and tables; a crafted report shows its tags as text, loads
no remote image and names no page the app does not have."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go
import pytest
import streamlit as st

from pages.shell import report_store, ui


def _registry(n_views: int = 3) -> dict:
    views = {}
    for k in range(n_views):
        df = pd.DataFrame({"system": ["a & b", "<i>c</i>"], "score": [0.5, float("nan")]})
        fig = go.Figure(go.Bar(x=df["system"], y=df["score"], name="<b>bold</b>"))
        ui.polish(fig, f"Scores {k} <of> systems")
        views[f"Scores {k}"] = {"fig": fig, "data": df, "settings": {"tau": 0.5, "k": k}}
    section = {
        "views": views,
        "metrics": {"Spearman": {"value": "0.41", "help": "rank correlation"}},
        "settings": {"tau": 0.5},
        "run": None,
        "pending": [],
    }
    return {"mine": {"Rankings": section, "**evil** [x](http://e)": dict(section)}}


@pytest.fixture
def session(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(st, "session_state", state)
    return state


def test_views_come_back_as_they_were(session):
    registry = _registry()
    report, left_out = report_store.report_json(registry, ["mine"])
    assert left_out == 0 and list(report["datasets"]["mine"]) == ["Rankings"]  # not the evil one
    json.dumps(report, allow_nan=False)  # plain JSON
    assert report_store.restore(json.loads(json.dumps(report)), {"mine": "mine (w)"}) == 3
    back = session[ui.REPORT]["mine (w)"]["Rankings"]
    assert list(back["views"]) == list(registry["mine"]["Rankings"]["views"])
    for title, view in registry["mine"]["Rankings"]["views"].items():
        got = back["views"][title]
        assert got["fig"].layout.title.text == view["fig"].layout.title.text  # escaped once
        assert list(got["fig"].data[0].x) == list(view["fig"].data[0].x)
        assert got["fig"].data[0].name == view["fig"].data[0].name
        pd.testing.assert_frame_equal(got["data"], view["data"], check_dtype=False)
        assert got["settings"] == view["settings"]
    assert back["metrics"] == registry["mine"]["Rankings"]["metrics"]
    assert report_store.restore(report, {"mine": "mine (w)"}) == 0  # the session's own win


def test_the_size_is_bounded():
    registry = _registry(20)
    full, _ = report_store.report_json(registry, ["mine"])
    size = len(json.dumps(full))
    report, left_out = report_store.report_json(registry, ["mine"], limit=size // 2)
    assert left_out > 0 and len(json.dumps(report)) <= size // 2
    assert 0 < len(report["datasets"]["mine"]["Rankings"]["views"]) < 20


def test_a_crafted_report_shows_its_tags_as_text(session):
    fig = {
        "data": [{"type": "bar", "x": ["<a href='http://evil'>x</a>"], "y": [1]}],
        "layout": {
            "title": {"text": "<a href='http://evil/t'>click</a><br>line"},
            "images": [{"source": "http://evil/pixel.png"}],
            "xaxis": {"ticksuffix": "<b>!</b>"},
        },
    }
    bad_trace = {"data": [{"type": "scattermapbox"}], "layout": {}}
    report = {
        "version": 1,
        "datasets": {
            "mine": {
                "Rankings": {
                    "views": [
                        {"title": "ok", "fig": fig, "data": None, "settings": None},
                        {"title": "map", "fig": bad_trace, "data": None, "settings": None},
                        {"title": "junk", "fig": [1], "data": {"columns": [[1]]}},
                    ],
                    "metrics": {"m": {"value": 1, "help": "not text"}},
                },
                "**x**": {"views": [{"title": "t", "fig": fig}]},
            },
            "not opened": {"Rankings": {"views": [{"title": "t", "fig": fig}]}},
        },
    }
    assert report_store.restore(report, {"mine": "mine"}) == 1
    pages = session[ui.REPORT]["mine"]
    assert list(pages) == ["Rankings"] and list(pages["Rankings"]["views"]) == ["ok"]
    got = pages["Rankings"]["views"]["ok"]["fig"]
    assert got.layout.title.text == "&lt;a href='http://evil/t'&gt;click&lt;/a&gt;<br>line"
    assert got.data[0].x[0].startswith("&lt;a href")
    assert got.layout.xaxis.ticksuffix == "&lt;b&gt;!&lt;/b&gt;"
    assert not got.layout.images
    assert ui.plain_fig_text(got) is got and got.layout.title.text.count("&lt;a") == 1
    assert pages["Rankings"]["metrics"] == {}
    assert "not opened" not in session[ui.REPORT]
