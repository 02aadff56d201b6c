"""Real data with a hole: SummEval with every ChatGPT verdict about one document unparsed.

Issue 9, item 11: a context with no usable comparison used to crash every pooled statistic
("context(s) [k] have no comparison at all") and, through them, the pairwise accuracy of
the Human agreement page. Here the public functions run on the P laid out over every
document (the unparsed one an all-NaN block) and the pages run on the dataset: the hole is
skipped and counted, per-context values are NaN there, and every other number is what it is
without that document.
"""

from __future__ import annotations

import numpy as np
import pytest

from data.agreement import pairwise_accuracy_table
from data.arrays import comparisons_to_P, scores_to_matrix
from data.schema import Dataset
from pages.services import comparisons
from pages.shell.text import unsafe
from ranking import (
    balanced_threshold,
    bradley_terry,
    ml_ranking,
    pairwise_accuracy,
    position_bias,
    swap_consistency,
    win_ratio,
)
from tests.pages._analysis_apptest import (
    agreement_tab,
    array,
    figures,
    need,
    open_page,
    rejudged,
    summeval_with_a_hole,
)

JUDGE = "gpt-3.5-turbo-0301/ab-choice"
ATTRIBUTES = ["coherence", "consistency", "fluency", "relevance"]

pytestmark = need("summeval")


@pytest.fixture(scope="module")
def summeval():
    """(SummEval, the same with one document's verdicts unparsed, that document's id)."""
    return summeval_with_a_hole()


def _laid_out(ds: Dataset, attribute: str):
    """P over every document of the candidates table (unparsed rows kept) and the humans."""
    rows = ds.comparisons[ds.comparisons["attribute"] == attribute]
    pm = comparisons_to_P(rows, attribute=attribute, judge=JUDGE, candidates=ds.candidates)
    ref = scores_to_matrix(ds.human_scores, pm, attribute=attribute)
    return pm, ref


def _accuracy_without(ds: Dataset, doc: str) -> dict[str, float]:
    """Pairwise accuracy per attribute over every document but ``doc`` (ranking on the P
    laid out from the tables)."""
    out = {}
    for attribute in ATTRIBUTES:
        pm, ref = _laid_out(ds, attribute)
        c = pm.context_ids.index(doc)
        out[attribute] = float(
            pairwise_accuracy(np.delete(pm.P, c, axis=0), np.delete(ref, c, axis=0))
        )
    return out


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_public_functions_skip_the_unparsed_document(summeval, attribute):
    ds, holes, doc = summeval
    pm, ref = _laid_out(holes, attribute)
    c = pm.context_ids.index(doc)
    assert np.isnan(pm.P[c]).all() and len(pm.context_ids) == 100
    P_rest, ref_rest = np.delete(pm.P, c, axis=0), np.delete(ref, c, axis=0)
    for stat in (position_bias, swap_consistency, balanced_threshold):
        value = stat(pm.P)
        assert (value.n_contexts, value.n_skipped) == (99, 1), stat.__name__
        assert value == pytest.approx(stat(P_rest)), stat.__name__
        assert np.isnan(stat(pm.P, per_context=True)[c]), stat.__name__
    acc, acc_rest = pairwise_accuracy(pm.P, ref), pairwise_accuracy(P_rest, ref_rest)
    assert acc == pytest.approx(acc_rest) and 0.5 < acc < 1
    # also skipped: documents whose human scores are all tied (common for consistency)
    assert acc.n_skipped == acc_rest.n_skipped + 1 and acc.n_contexts == acc_rest.n_contexts
    for scores in (win_ratio(pm.P), bradley_terry(pm.P).scores, ml_ranking(pm.P).scores):
        assert np.isnan(scores[c]).all()
        assert np.isfinite(np.delete(scores, c, axis=0)).any(axis=1).all()
    # the pages' own P (unparsed rows dropped) leaves the document out altogether
    kept = comparisons.pmatrix(holes, attribute, JUDGE)
    assert doc not in kept.context_ids and len(kept.context_ids) == 99
    assert position_bias(kept.P) == pytest.approx(position_bias(pm.P))


def test_pairwise_accuracy_table_is_defined_for_every_attribute(summeval):
    ds, holes, doc = summeval
    table = pairwise_accuracy_table(holes).set_index("attribute")
    assert sorted(table.index) == ATTRIBUTES
    assert (table["reason"] == "").all()  # it used to be "context(s) [3] have no comparison"
    for attribute in ATTRIBUTES:
        pm, ref = _laid_out(holes, attribute)
        c = pm.context_ids.index(doc)
        want = pairwise_accuracy(np.delete(pm.P, c, axis=0), np.delete(ref, c, axis=0))
        assert table.loc[attribute, "accuracy"] == pytest.approx(want)
    full = pairwise_accuracy_table(ds).set_index("attribute")
    # one document of 100 fewer: close to the accuracy with every document
    assert np.allclose(table["accuracy"], full.loc[table.index, "accuracy"], atol=0.02)


def test_pairwise_accuracy_table_of_a_judge_never_parsed_is_nan_with_the_reason(summeval):
    # every verdict on one attribute unparsed: no context is usable, so ranking returns NaN
    # with its reason (no exception for the table to catch) and the other attributes stand
    ds, _, _ = summeval
    comps = ds.comparisons.copy()
    comps.loc[comps["attribute"] == "fluency", "p_first"] = np.nan
    none_parsed = rejudged(ds, "summeval, fluency unparsed", comps, ds.ratings)
    table = pairwise_accuracy_table(none_parsed).set_index("attribute")
    assert np.isnan(table.loc["fluency", "accuracy"])
    assert "undefined" in table.loc["fluency", "reason"]
    assert "none of the 100 context(s)" in table.loc["fluency", "reason"]
    full = pairwise_accuracy_table(ds).set_index("attribute")
    rest = ["coherence", "consistency", "relevance"]
    np.testing.assert_allclose(table.loc[rest, "accuracy"], full.loc[rest, "accuracy"])
    assert (table.loc[rest, "reason"] == "").all()


def test_human_agreement_page_shows_every_pairwise_accuracy(summeval):
    _, holes, doc = summeval
    at = agreement_tab(open_page("pages/agreement/page.py", holes), "pairwise")
    assert not at.error
    bars = figures(at)["Pairwise accuracy against human scores"]["data"]
    assert sorted(t["name"] for t in bars) == ATTRIBUTES
    want = _accuracy_without(holes, doc)
    for t in bars:
        assert t["x"] == [JUDGE]
        assert array(t["y"])[0] == pytest.approx(want[t["name"]]), t["name"]
    assert all(0.5 < v < 1 for v in want.values())


@pytest.mark.parametrize(
    "page",
    [
        "pages/budgets/page.py",
        "pages/prompts/page.py",
        "pages/position_bias/page.py",
        "pages/rankings/page.py",
        "pages/leaderboard/page.py",
        "pages/examples/page.py",
    ],
)
def test_every_pairwise_page_opens_on_the_hole(summeval, page):
    _, holes, doc = summeval
    at = open_page(page, holes)
    assert not at.error
    if page == "pages/prompts/page.py":
        table = next(d.value for d in at.dataframe if "pairwise_accuracy" in d.value.columns)
        want = _accuracy_without(holes, doc)
        assert list(table["judge"]) == [JUDGE] * len(ATTRIBUTES)
        np.testing.assert_allclose(
            table["pairwise_accuracy"], [want[a] for a in table["attribute"]]
        )
        assert table["pairwise_accuracy"].between(0.5, 1).all()
        assert (table["contexts_unparsed"] == 1).all() and (table["n_contexts"] == 99).all()
    if page in ("pages/position_bias/page.py", "pages/rankings/page.py"):
        shown = [unsafe(c.value) for c in at.caption]  # the text as read (ids escaped)
        assert any(doc in c and "could be parsed" in c for c in shown)
    if page == "pages/examples/page.py":
        # the unparsed document's pairs are there, counted as unparsed
        assert any(m.label == "Unparsed" and m.value not in ("0", "n/a") for m in at.metric)


@pytest.mark.parametrize(
    "page", ["pages/data/page.py", "pages/judge/page.py", "pages/report/page.py"]
)
def test_every_other_page_opens_on_the_hole(summeval, page):
    """The Data, Judge and Report pages show the dataset with the hole without an error."""
    _, holes, _ = summeval
    at = open_page(page, holes)
    assert not at.exception and not at.error, [e.value for e in at.error]
