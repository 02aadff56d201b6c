"""The Human agreement page's "How many human labels do I need?" section (PPI++): SummEval
and PandaLM show the forest plot, the width curve and the answer with the numbers of
data.ppi; datasets where PPI has nothing to combine say why without failing."""

from __future__ import annotations

import re

import numpy as np
import pytest

import data
from data import agreement as dag
from data import ppi as dppi
from pages.shell.text import unsafe
from tests.pages._analysis_apptest import agreement_tab, array, figures, need, open_page

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
KEY = "agreement.ppi"


def _section(at, label_part: str) -> dict:
    return {k: v for k, v in figures(at).items() if label_part in k}


def _answer(at) -> str:
    hits = [m.value for m in at.markdown if "PPI++ is" in m.value or "every one of" in m.value]
    assert hits, "the section gives no answer"
    return hits[-1]


@need("summeval")
def test_summeval_forest_curve_and_answer():
    ds = data.load_benchmark("summeval")
    at = agreement_tab(open_page("pages/agreement/page.py", ds), "ppi")
    assert "How many human labels do I need?" in [h.value for h in at.header]
    judge = at.selectbox(key=f"{KEY}.judge")
    judge.set_value("gpt-4-0314/rts").run()
    at.selectbox(key=f"{KEY}.attribute").set_value("coherence").run()
    at.slider(key=f"{KEY}.n_labels").set_value(20).run()
    assert not at.exception, [e.value for e in at.exception]
    forest = _section(at, "estimates with 20 human labels")
    assert len(forest) == 1
    spec = next(iter(forest.values()))
    # the page's reference group on SummEval is the experts (the page's default)
    group = at.session_state["agreement.group"]
    annotators = dag.annotator_groups(ds)[group]
    units = dppi.ppi_units(ds, "coherence", "gpt-4-0314/rts", "rts", annotators=annotators)
    want = dppi.ppi_estimates(units, n_labels=20, seed=0)
    traces = {t["name"]: t for t in spec["data"]}
    assert set(traces) == {"judge only", "human only", "PPI++"}
    for method, t in traces.items():
        w = want[want["method"] == method].set_index("system").reindex(units.systems)
        np.testing.assert_allclose(array(t["x"]), w["estimate"].to_numpy(), atol=1e-9)
    curve = _section(at, "interval width against the number of human labels")
    assert len(curve) == 1
    names = [t["name"] for t in next(iter(curve.values()))["data"]]
    assert names == ["judge only", "human only", "PPI++"]
    answer = _answer(at)
    m = re.search(r"With ~(\d+) labelled contexts PPI\+\+ is as narrow as 20 human labels", answer)
    assert m and 10 <= int(m.group(1)) < 20, answer


@need("pandalm")
def test_pandalm_bradley_terry_and_win_rate():
    at = agreement_tab(open_page("pages/agreement/page.py", "pandalm"), "ppi")
    at.selectbox(key=f"{KEY}.judge").set_value("gpt-3.5-turbo (verdicts)").run()
    at.selectbox(key=f"{KEY}.quantity").set_value("bradley_terry").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("25 comparison(s)" in unsafe(c.value) for c in at.caption)  # as read (escaped)
    assert _section(at, "estimates with 194 human labels")
    assert "labelled comparisons" in _answer(at)
    at.selectbox(key=f"{KEY}.quantity").set_value("win_rate").run()
    at.selectbox(key=f"{KEY}.baseline").set_value("llama-7b").run()
    assert not at.exception, [e.value for e in at.exception]
    spec = next(iter(_section(at, "judge-only, human-only and PPI++").values()))
    xs = np.concatenate([array(t["x"]) for t in spec["data"]])
    assert np.nanmin(xs) >= 0 and np.nanmax(xs) <= 1  # win rates


@need("webnlg2020")
def test_humans_without_a_judge_say_why():
    at = agreement_tab(open_page("pages/agreement/page.py", "webnlg2020"), "ppi")
    assert "How many human labels do I need?" in [h.value for h in at.header]
    assert any("human labels but no judge outputs" in i.value for i in at.info)
    assert not at.exception


@need("llmfao")
def test_human_verdicts_without_a_model_judge_say_why():
    at = agreement_tab(open_page("pages/agreement/page.py", "llmfao"), "ppi")
    assert any("PPI needs a judge's outputs" in i.value for i in at.info)
    assert not at.exception
