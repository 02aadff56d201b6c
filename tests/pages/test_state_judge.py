"""The Judge page keeps its settings (issue 11 items 6 and 12): switching the backend and back
keeps the model and base URL, a visit elsewhere keeps them too, the domain follows the
dataset, and a judged dataset keeps a short name however many judges run."""

from __future__ import annotations

import dataclasses

import pytest

import data
from tests.pages._analysis_apptest import open_page
from tests.pages.test_state import _ok, warnings  # noqa: F401  (fixture)


def test_backend_switch_keeps_model_and_base_url(warnings):  # noqa: F811
    at = open_page("pages/judge/page.py")
    at.text_input(key="judge.model").input("my-local-judge")
    at.text_input(key="judge.base_url").input("http://localhost:8000/v1")
    _ok(at.run())
    at.radio(key="judge.backend").set_value("hf")
    _ok(at.run())
    at.text_input(key="judge.hf_model").input("/models/tiny")
    _ok(at.run())
    at.radio(key="judge.backend").set_value("openai")
    _ok(at.run())
    assert at.text_input(key="judge.model").value == "my-local-judge"
    assert at.text_input(key="judge.base_url").value == "http://localhost:8000/v1"
    # another page and back: the same, and the transformers model too
    _ok(at.switch_page("pages/data/page.py").run())
    _ok(at.switch_page("pages/judge/page.py").run())
    assert at.text_input(key="judge.model").value == "my-local-judge"
    assert at.text_input(key="judge.base_url").value == "http://localhost:8000/v1"
    at.radio(key="judge.backend").set_value("hf")
    _ok(at.run())
    assert at.text_input(key="judge.hf_model").value == "/models/tiny"
    assert not [w for w in warnings if "default value" in w], warnings


def test_domain_follows_the_dataset(warnings):  # noqa: F811
    demo = data.demo_dataset()
    stories = dataclasses.replace(
        demo, name="tales", description="Story generation: prompts and the stories of 6 systems"
    )
    at = open_page("pages/judge/page.py", stories)
    assert at.selectbox(key="judge.domain|tales").value == "story"
    assert "Story A:" in at.code[0].value and "Summary A:" not in at.code[0].value
    at = open_page("pages/judge/page.py")
    assert at.selectbox(key="judge.domain|demo").value == "summary"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("demo", "demo (judged)"),
        ("demo (judged)", "demo (judged)"),
        ("demo + my-local-judge/liusie-c1 + other/liusie-c2", "demo (judged)"),
        ("wide.csv", "wide.csv (judged)"),
    ],
)
def test_judged_name_stays_short(source, expected):
    from pages.services.judge import judged_name

    assert judged_name(source) == expected


def test_page_settings_in_the_url(warnings):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    from tests.pages.test_state import APP, TIMEOUT, _param

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["template"] = "liusie-c2"
    at.query_params["mode"] = "no such mode"
    _ok(at.run())
    _ok(at.switch_page("pages/judge/page.py").run())
    assert at.selectbox(key="judge.template").value == "liusie-c2"
    assert at.code[0].value.startswith("Passage:")
    assert at.selectbox(key="judge.mode").value == "pairwise: label probabilities"
    at.selectbox(key="judge.template").set_value("liusie-c1")
    _ok(at.run())
    _ok(at.run())
    assert _param(at, "template") == "liusie-c1"
    assert not [w for w in warnings if "default value" in w], warnings
