"""AppTest of the Rankings page: demo and real SummEval run, the key elements show, the
heatmap is P with rows = shown first, switching the ranking method changes the main table,
and a dataset without comparisons gets a plain note instead of an error."""

from __future__ import annotations

import numpy as np

import data
from data.schema import Dataset, empty_table
from pages.services import comparisons
from pages.services import rankings as rankings_svc
from tests.pages._analysis_apptest import array, chart_titles, charts, need, open_page

PAGE = "pages/rankings.py"


def _heatmap(at):
    return next(f for f in charts(at) if f["layout"]["title"]["text"].startswith("Probability"))


def test_demo_shows_matrix_rankings_agreement_and_systems():
    at = open_page(PAGE)
    assert [t.value for t in at.title] == ["Rankings"]
    titles = chart_titles(at)
    assert any(t.startswith("Probability matrix, context") for t in titles)
    assert any(t.startswith("Ranks by method, context") for t in titles)
    assert any(t.startswith("Systems by Bradley–Terry") for t in titles)

    spearman = [float(m.value) for m in at.metric if m.label == "Spearman"]
    assert len(spearman) == len(rankings_svc.METHODS)
    # the demo judge is noisy and biased but clearly informative
    assert all(0.6 < r <= 1.0 for r in spearman)
    assert sum(m.label == "Pairwise accuracy" for m in at.metric) == len(rankings_svc.METHODS) + 1
    assert float(next(m.value for m in at.metric if m.label == "Systems")) == 6

    # heatmap: rows = shown first, columns = shown second, the judge's P of context 0
    demo = data.demo_dataset()
    pm = comparisons.build_pmatrix(demo, "consistency", "demo-judge (simulated)")
    heat = _heatmap(at)["data"][0]
    assert heat["y"] == pm.candidate_ids[0] and heat["x"] == pm.candidate_ids[0]
    np.testing.assert_allclose(array(heat["z"]), pm.P[0], equal_nan=True)
    assert heat["zmid"] == 0.5 and "shown first" in heat["hovertemplate"]

    table = at.dataframe[0].value
    assert len(table) == 6
    assert "win-ratio score" in table.columns
    assert table["rank: win-ratio"].is_monotonic_increasing


def test_switching_the_ranking_method_changes_the_main_table():
    at = open_page(PAGE)
    before = at.dataframe[0].value
    at.selectbox(key="rank.method").set_value("Bradley–Terry").run()
    assert not at.exception
    after = at.dataframe[0].value
    assert "Bradley–Terry score" in after.columns and "win-ratio score" not in after.columns
    assert after["rank: Bradley–Terry"].is_monotonic_increasing
    assert not before.equals(after)


def test_a_dataset_without_comparisons_gets_a_note():
    demo = data.demo_dataset()
    ds = Dataset(
        name="scores only",
        contexts=demo.contexts,
        candidates=demo.candidates,
        human_scores=demo.human_scores,
        comparisons=empty_table("comparisons"),
    )
    at = open_page(PAGE, ds)
    assert not at.error
    assert any("has no pairwise comparisons" in i.value for i in at.info)
    assert not charts(at)


@need("summeval")
def test_real_summeval_verdicts():
    at = open_page(PAGE, "summeval")
    assert not at.error
    assert at.selectbox(key="rank.judge").value == "gpt-3.5-turbo-0301/ab-choice"
    # 12 systems compared in adjacent pairs per document; BT over systems across documents
    assert float(next(m.value for m in at.metric if m.label == "Systems")) == 12
    assert len(at.dataframe[0].value) == 12
    heat = _heatmap(at)["data"][0]
    z = array(heat["z"])
    assert z.shape == (12, 12)
    # ChatGPT verdicts are A / B / C(tie): p in {0, 0.5, 1}, and most pairs never compared
    assert set(np.unique(z[np.isfinite(z)])) <= {0.0, 0.5, 1.0}
    assert np.isnan(z).sum() > 100
    spearman = [float(m.value) for m in at.metric if m.label == "Spearman"]
    assert len(spearman) == 3 and all(-1.0 <= r <= 1.0 for r in spearman)
