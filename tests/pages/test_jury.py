"""The Judge page's "Build a jury" tab: a jury of PandaLM's two LLM judges is built, added to
the dataset, and selected on Rankings and Position bias; bad choices get a clear message."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from data.jury import jury_name
from pages.shell.text import unsafe
from tests.data._benchmark_files import need
from tests.pages._analysis_apptest import agreement_tab

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 300
JUDGES = ["gpt-3.5-turbo", "pandalm-7b"]


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _jury_tab(benchmark: str) -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    at.selectbox(key="data.benchmark").set_value(benchmark).run()
    at.button(key="data.load").click().run()
    return _ok(at.switch_page("pages/judge/page.py").run())


def _judges(at: AppTest, attribute: str):
    return at.multiselect(key=f"judge.jury_judges.{attribute}")


@need("pandalm")
def test_build_a_jury_and_rank_with_it():
    at = _jury_tab("pandalm")
    _ok(_judges(at, "overall").set_value(["pandalm-7b"]).run())
    assert any("at least 2 judges" in i.value for i in at.info)
    _ok(_judges(at, "overall").set_value(JUDGES).run())
    _ok(at.radio(key="judge.jury_method").set_value("dawid-skene").run())
    name = jury_name("dawid-skene", JUDGES)
    assert any(name in unsafe(m.value) for m in at.markdown)  # as read (the name escaped)
    assert len(at.dataframe) >= 2  # the jury vs its best member, and every rater vs humans
    _ok(at.button(key="judge.jury_add").click().run())
    assert any(name in unsafe(s.value) and "Rankings" in s.value for s in at.success)
    for page in ("pages/rankings/page.py", "pages/position_bias/page.py"):
        _ok(at.switch_page(page).run())
        judge = at.selectbox(key="app.judge")
        assert name in judge.options, (page, judge.options)
        _ok(judge.set_value(name).run())
        assert at.selectbox(key="app.judge").value == name
    # Human agreement: the kappa heatmap against the human verdicts has a row for the jury
    _ok(at.switch_page("pages/agreement/page.py").run())
    agreement_tab(at, "pairwise")
    key = "agreement.fig.cohen-s-kappa-with-the-human-verdicts"
    (fig,) = [e for e in at.main if getattr(e, "key", None) == key]
    assert name in str(fig.proto)


@need("summeval")
def test_mixed_kinds_are_refused_with_a_message():
    at = _jury_tab("summeval")
    judges = ["gpt-3.5-turbo-0301/ab-choice", "gpt-4-0314/rts"]
    _ok(_judges(at, "coherence").set_value(judges).run())
    assert any("cannot mix pairwise" in e.value for e in at.error) or any(
        "cannot mix pairwise" in m.value for m in at.markdown
    )
