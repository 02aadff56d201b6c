"""A workspace file never sets the judge endpoint silently (issue 23, item 1).

A colleague's workspace names another endpoint (judge.backend, judge.base_url, judge.model
among its settings). Opening it shows that host on the Judge page and asks; until the user
confirms it, no request reaches it (not a run, not a batch, not the key), and the answer holds
for this browser session only. The default endpoint and a host the user typed need no
confirmation.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from data.io.workspace import BenchmarkRef, save_workspace
from tests.judge.fake_openai import FakeOpenAI

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 300
SECRET = "sk-endpoint-test-8d969eef6ecad3c29a3a629280e686cf"


@pytest.fixture
def env(monkeypatch, tmp_path) -> Path:
    """A private cache, and the key in the environment (as on a user's machine)."""
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return tmp_path


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open_workspace(blob: bytes) -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    at.sidebar.file_uploader(key="app.ws.file").upload("colleague.zip", blob, "application/zip")
    _ok(at.run())
    at.sidebar.button(key="app.ws.open").click()
    _ok(at.run())
    return _ok(at.switch_page("pages/judge/page.py").run())


def _warnings(at: AppTest) -> str:
    """The page's warnings as plain text (the host in them is escaped Markdown)."""
    from pages.shell.text import unsafe

    return " ".join(unsafe(w.value) for w in at.warning)


def _wait(at: AppTest, done, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.3)
        _ok(at.run())


def test_a_workspace_endpoint_waits_for_the_user(env):
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        host = fake.base_url.removesuffix("/v1")
        blob = save_workspace(
            {"demo": BenchmarkRef("demo")},
            "demo",
            {
                "judge.backend": "openai",
                "judge.base_url": fake.base_url,
                "judge.model": "fake-judge",
                "judge.n_contexts": 1,
            },
        )
        at = _open_workspace(blob)
        assert at.text_input(key="judge.base_url").value == fake.base_url  # restored
        assert host in _warnings(at) and "until you confirm" in _warnings(at)
        assert at.button(key="judge.run").disabled

        at.radio(key="judge.run_as").set_value("batch")  # nor does the batch panel
        _ok(at.run())
        time.sleep(1.0)
        _ok(at.run())
        assert fake.requests == [], fake.requests
        assert "judge.job" not in at.session_state  # no run was started
        at.radio(key="judge.run_as").set_value("live")
        _ok(at.run())

        at.button(key="judge.confirm_host").click()
        _ok(at.run())
        assert not _warnings(at), _warnings(at)
        assert not at.button(key="judge.run").disabled
        at.button(key="judge.run").click()
        _ok(at.run())
        _wait(at, lambda: len(fake.answered_prompts) == 30)
        assert {auth for _, _, auth in fake.requests} == {f"Bearer {SECRET}"}

        # remembered for this browser session only: a new session asks again
        again = _open_workspace(blob)
        assert host in _warnings(again)
        assert again.button(key="judge.run").disabled
        n = len(fake.requests)

        # a host the user types needs no confirmation
        typed = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
        _ok(typed.switch_page("pages/judge/page.py").run())
        typed.text_input(key="judge.base_url").input(fake.base_url)
        _ok(typed.run())
        assert not _warnings(typed) and not typed.button(key="judge.run").disabled
        assert len(fake.requests) == n


def test_endpoint_hosts():
    from pages.judge.backend_column import endpoint_host

    assert endpoint_host("") is None and endpoint_host("  ") is None
    assert endpoint_host("https://API.openai.com/v1/") == "https://api.openai.com"
    assert endpoint_host("http://user:pw@127.0.0.1:8000/v1") == "http://127.0.0.1:8000"
    assert endpoint_host("https://evil.example:443/x") == "https://evil.example"
    assert endpoint_host("localhost:8000/v1") == "localhost:8000/v1"  # not a URL: whole
    assert endpoint_host("http://h:notaport/v1") == "http://h:notaport/v1"
