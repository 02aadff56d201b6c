"""The workspace in the app (issue 11 item 6): a workspace file opened from the sidebar brings
its datasets and settings, is autosaved under the cache with its id in the URL, and a new
session opened with that URL (a refresh) finds the same datasets and settings; a broken file
changes nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import data
from data.io.workspace import BenchmarkRef, load_workspace, save_workspace
from pages.shell.text import unsafe
from tests.pages.test_state import APP, TIMEOUT, _ok, _param

SECRET = "sk-workspace-page-test-2b7e151628aed2a6"


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(folder))
    return folder


def _mine():
    demo = data.demo_dataset()
    keep = demo.candidates["context_id"].isin(["news01", "news02", "news03"])
    return dataclasses.replace(
        demo,
        name="mine.csv",
        candidates=demo.candidates[keep],
        contexts=demo.contexts[demo.contexts["context_id"].isin(["news01", "news02", "news03"])],
        human_scores=demo.human_scores[demo.human_scores["context_id"].isin(["news01"])],
        comparisons=demo.comparisons[demo.comparisons["context_id"].isin(["news01", "news02"])],
        ratings=demo.ratings.iloc[:0],
        description="my upload",
    )


def _open(at: AppTest, name: str, content: bytes) -> AppTest:
    at.sidebar.file_uploader(key="app.ws.file").upload(name, content, "application/zip")
    _ok(at.run())
    at.sidebar.button(key="app.ws.open").click()
    return _ok(at.run())


def test_open_autosave_and_refresh(cache):
    blob = save_workspace(
        {"demo": BenchmarkRef("demo"), "mine.csv": _mine()},
        "mine.csv",
        {"app.debias.mode": "tau", "app.debias.tau": 0.7, "judge.api_key": SECRET},
    )
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    at = _open(at, "work.zip", blob)
    datasets = at.session_state["app.datasets"]
    assert list(datasets) == ["demo", "mine.csv"]
    assert at.session_state["app.active"] == "mine.csv"
    assert len(datasets["mine.csv"].candidates) == 18
    # autosaved under the cache, its id in the URL, and no key on disk
    ws = at.session_state["app.ws"]
    saved = cache / "workspaces" / f"{ws}.zip"
    assert saved.is_file() and SECRET.encode() not in saved.read_bytes()
    back, settings = load_workspace(saved.read_bytes())
    assert list(back) == ["demo", "mine.csv"] and settings["app.debias.tau"] == 0.7
    assert _param(at, "ws") == ws and _param(at, "dataset") == "mine.csv"

    # a setting changed later (not in the URL) is autosaved too
    _ok(at.switch_page("pages/judge/page.py").run())
    at.text_input(key="judge.model").input("my-local-judge")
    at.text_input(key="judge.api_key").input(SECRET)
    _ok(at.run())
    _ok(at.switch_page("pages/data/page.py").run())  # another run saves what the last one drew
    for path in cache.rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path

    # a refresh: a new session with the same URL finds the upload and the settings
    again = AppTest.from_file(APP, default_timeout=TIMEOUT)
    again.query_params["ws"] = ws
    again.query_params["dataset"] = "mine.csv"
    _ok(again.run())
    assert again.session_state["app.active"] == "mine.csv"
    assert len(again.session_state["app.datasets"]["mine.csv"].candidates) == 18
    _ok(again.switch_page("pages/position_bias/page.py").run())
    assert again.radio(key="app.debias.mode").value == "tau"
    assert again.slider(key="app.debias.tau").value == pytest.approx(0.7)
    _ok(again.switch_page("pages/judge/page.py").run())
    assert again.text_input(key="judge.model").value == "my-local-judge"
    assert again.text_input(key="judge.api_key").value == ""  # never saved


def test_a_broken_workspace_changes_nothing(cache):
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    before = dict(at.session_state["app.datasets"])
    at = _open(at, "broken.zip", b"PK-not-really")
    messages = " ".join(unsafe(e.value) for e in at.sidebar.error)  # shown text, unescaped
    details = " ".join(unsafe(m.value) for m in at.sidebar.markdown)
    assert "Could not open broken.zip" in messages and "Nothing already loaded" in messages
    assert "broken.zip: not a JudgeScope workspace (not a zip archive)" in details
    assert at.session_state["app.datasets"] == before


def test_an_unknown_workspace_link_says_so(cache):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["ws"] = "0123456789ab"
    at.query_params["dataset"] = "mine.csv"
    _ok(at.run())
    notes = " ".join(unsafe(i.value) for i in at.sidebar.info)  # shown text, unescaped
    assert "not saved on this machine" in notes and "mine.csv" in notes
    assert at.session_state["app.active"] == "demo"
