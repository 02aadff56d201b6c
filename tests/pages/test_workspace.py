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
from tests.pages.test_state import _app as _link

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


# ----------------------------------------------------------------------------- issue 23
LINK_WS = "0123456789ab"


def _notes(at: AppTest) -> list[str]:
    from pages.shell.text import unsafe

    return [unsafe(i.value) for i in at.sidebar.info]


def test_a_link_to_uploaded_data_works_once_its_workspace_file_is_opened(cache):
    """Machine B opens a link to data uploaded on machine A: one note says what it needs;
    opening the workspace file it came from keeps the names and the id the link names, so
    the link then works on B too, its settings winning over the file's."""
    mine = _mine()
    attribute = mine.attributes[-1]
    blob = save_workspace(
        {"demo": BenchmarkRef("demo"), "mine.csv": mine},
        "mine.csv",
        {"app.debias.mode": "tau", "app.debias.tau": 0.7},
        workspace_id=LINK_WS,
    )
    link = {"ws": LINK_WS, "dataset": "mine.csv", "tau": "0.66", "attribute": attribute}
    at = _link(**link)
    notes = _notes(at)
    assert len(notes) == 1, notes
    assert "mine.csv" in notes[0] and "workspace file it came from" in notes[0]
    assert at.session_state["app.active"] == "demo"

    at = _open(at, "mine-workspace.zip", blob)
    assert at.session_state["app.active"] == "mine.csv"  # the name the link names
    assert at.session_state["app.ws"] == LINK_WS  # and its id
    assert (cache / "workspaces" / f"{LINK_WS}.zip").is_file()
    assert _param(at, "ws") == LINK_WS and _param(at, "dataset") == "mine.csv"
    _ok(at.switch_page("pages/position_bias/page.py").run())
    assert at.slider(key="app.debias.tau").value == pytest.approx(0.66)  # the link's
    assert at.selectbox(key="app.attribute").value == attribute

    again = _link(**link)  # the original link, opened again on this machine
    assert not _notes(again), _notes(again)
    assert again.session_state["app.active"] == "mine.csv"
    assert again.session_state["app.ws"] == LINK_WS


def test_a_file_that_is_not_the_links_keeps_its_own_id(cache):
    blob = save_workspace({"mine.csv": _mine()}, "mine.csv", workspace_id="fedcba987654")
    at = _link(ws=LINK_WS, dataset="mine.csv")
    at = _open(at, "other.zip", blob)
    assert at.session_state["app.active"] == "mine.csv"
    assert at.session_state["app.ws"] != LINK_WS  # the link's id is taken only from its file


def test_a_demo_only_link_says_nothing_about_a_workspace(cache):
    at = _link(ws=LINK_WS, dataset="demo", attribute=data.demo_dataset().attributes[0])
    assert not _notes(at), _notes(at)
    assert at.session_state["app.active"] == "demo"


def test_a_hostile_workspace_file_changes_nothing_and_every_page_still_opens(cache):
    import random

    from tests.data import test_fuzz_workspace as fuzz

    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    before = dict(at.session_state["app.datasets"])
    rng, base = random.Random(5), fuzz._cached()
    damage = [fuzz.manifest_damage, fuzz.json_damage, fuzz.zip_damage] * 2
    hostile = [d(base, rng) for d in damage]
    for n, (story, blob, expect) in enumerate(hostile):
        if expect != "refuse":
            continue
        at = _open(at, f"hostile{n}.zip", blob)
        messages = " ".join(e.value for e in at.sidebar.error)
        assert "Could not open" in messages and "Nothing already loaded" in messages, story
        assert at.session_state["app.datasets"] == before, story


def test_the_reports_views_survive_a_refresh(cache):
    from pages.shell import ui

    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    at = _open(at, "work.zip", save_workspace({"mine.csv": _mine()}, "mine.csv"))
    ws = at.session_state["app.ws"]
    _ok(at.switch_page("pages/position_bias/page.py").run())
    registry = at.session_state[ui.REPORT]
    views = registry["mine.csv"]["Position bias"]["views"]
    assert views and any(v["fig"] is not None for v in views.values())
    _ok(at.run())  # the run after draws nothing new: the report is autosaved by now
    assert (cache / "workspaces" / f"{ws}.report.json").is_file()

    again = AppTest.from_file(APP, default_timeout=TIMEOUT)
    again.query_params["ws"] = ws
    _ok(again.run())
    back = again.session_state[ui.REPORT]["mine.csv"]["Position bias"]["views"]
    assert list(back) == list(views)
    for title, view in views.items():
        if view["fig"] is not None:
            assert back[title]["fig"].layout.title.text == view["fig"].layout.title.text
        if view["data"] is not None:
            assert back[title]["data"].shape == view["data"].shape
    _ok(again.switch_page("pages/report/page.py").run())
    assert any(m.label == "Views" and m.value == str(len(views)) for m in again.metric)
