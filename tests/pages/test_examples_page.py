"""AppTest of the Examples page (issue 11, item 8): the pair table and its filter counts on the
demo, the filters and the search, a pair opened up close (texts, every answer in both orders,
human scores), arriving from open_example (same dataset, another loaded one, one not
loaded), and the awkward datasets: no comparisons, no texts, one order only with unparsed
answers (PandaLM), SummEval with a document unparsed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data.schema import Dataset
from pages.services import examples as svc
from tests.pages._analysis_apptest import metrics, need, open_page, rejudged, summeval_with_a_hole

PAGE = "pages/examples/page.py"
DEMO_ATTRIBUTE, DEMO_JUDGE = "consistency", "demo-judge (simulated)"
FLIPS, DISAGREES, UNPARSED = (
    "Flips when the order is swapped",
    "Disagrees with the humans",
    "Unparsed",
)


def _table(at) -> pd.DataFrame:
    return at.dataframe[0].value


def _pair(at) -> tuple[str, str, str]:
    return tuple(at.selectbox(key="examples.pair").value.split("\t"))


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


@pytest.fixture(scope="module")
def demo_pairs():
    return svc.pairs(data.demo_dataset(), DEMO_ATTRIBUTE, DEMO_JUDGE).table


def test_demo_table_counts_and_filters(demo_pairs):
    at = open_page(PAGE)
    assert [t.value for t in at.title] == ["Examples"]
    assert (at.selectbox(key="app.attribute").value, at.selectbox(key="app.judge").value) == (
        DEMO_ATTRIBUTE,
        DEMO_JUDGE,
    )
    table = _table(at)
    assert len(table) == 12 * 15  # every unordered pair of 6 candidates in 12 contexts
    m = metrics(at)
    flips, disagrees = int(demo_pairs["flips"].sum()), int(demo_pairs["disagrees"].sum())
    assert 0 < flips < len(table) and 0 < disagrees < len(table)
    assert (m["Pairs"], m[FLIPS], m[DISAGREES], m[UNPARSED]) == (
        "180",
        str(flips),
        str(disagrees),
        "0",
    )
    # natural order of contexts, each pair once
    assert list(table["context"]) == sorted(table["context"])
    assert not table.duplicated(["context", "candidate i", "candidate j"]).any()

    at.checkbox(key="examples.flips").check().run()
    shown = _table(at)
    assert len(shown) == flips and shown["flips"].all()
    at.checkbox(key="examples.disagrees").check().run()
    both = _table(at)
    expected = int((demo_pairs["flips"] & demo_pairs["disagrees"]).sum())
    assert len(both) == expected and both["disagrees"].all()
    at.checkbox(key="examples.flips").uncheck().run()
    at.checkbox(key="examples.disagrees").uncheck().run()
    at.checkbox(key="examples.unparsed").check().run()
    assert not at.exception
    assert any("No pair matches" in i.value for i in at.info)


def test_search_and_context_filter():
    at = open_page(PAGE)
    demo = data.demo_dataset()
    # a phrase of one candidate's text: only that candidate's pairs in its context
    cand = demo.candidates.iloc[0]
    phrase = str(cand["text"]).split(",")[0][-25:]
    hits = demo.candidates[demo.candidates["text"].str.contains(phrase, regex=False)]
    assert len(hits) == 1
    at.text_input(key="examples.search").input(phrase.upper()).run()
    shown = _table(at)
    assert len(shown) == 5
    assert set(shown["context"]) == {cand["context_id"]}
    assert all(
        cand["candidate_id"] in (i, j)
        for i, j in zip(shown["candidate i"], shown["candidate j"], strict=True)
    )
    assert metrics(at)["Pairs"] == "5"
    at.text_input(key="examples.search").input("").run()
    at.selectbox(key="examples.context").set_value("news02").run()
    shown = _table(at)
    assert len(shown) == 15 and set(shown["context"]) == {"news02"}


def test_a_pair_up_close(demo_pairs):
    at = open_page(PAGE)
    demo = data.demo_dataset()
    row = demo_pairs.iloc[20]
    key = "\t".join([row.context_id, row.a, row.b])
    at.selectbox(key="examples.pair").set_value(key).run()
    assert not at.exception
    text = _markdown(at)
    ctx_text = demo.contexts.set_index("context_id").loc[row.context_id, "text"]
    cands = demo.candidates.set_index(["context_id", "candidate_id"])["text"]
    for needle in (ctx_text, cands[row.context_id, row.a], cands[row.context_id, row.b]):
        assert needle[:20].replace(".", "\\.").replace("-", "\\-") in text or needle[:20] in text
    assert f"**{row.a} first**" in text and f"**{row.b} first**" in text
    m = metrics(at)
    assert float(m["p(i wins | i first)"]) == pytest.approx(row.p_a_first, abs=5e-4)
    assert float(m["p(i wins | i second)"]) == pytest.approx(row.p_a_second, abs=5e-4)
    assert m["Flips when swapped"] == ("yes" if row.flips else "no")
    # each order's answers, then the human scores: 3 annotators and the mean, per attribute
    frames = [d.value for d in at.dataframe]
    answers = [f for f in frames if "parsed" in f.columns]
    assert [len(f) for f in answers] == [1, 1]
    assert answers[0]["p_first"].iloc[0] == pytest.approx(row.p_a_first)
    assert answers[1]["p_first"].iloc[0] == pytest.approx(1 - row.p_a_second)
    humans = next(f for f in frames if "annotator" in f.columns)
    hs = demo.human_scores
    hs = hs[(hs.context_id == row.context_id) & (hs.attribute == DEMO_ATTRIBUTE)]
    mean = humans[(humans.attribute == DEMO_ATTRIBUTE) & (humans.annotator == "mean")]
    assert mean[row.a].iloc[0] == pytest.approx(hs[hs.candidate_id == row.a].score.mean())
    assert mean[row.b].iloc[0] == pytest.approx(hs[hs.candidate_id == row.b].score.mean())


def _arrive(example: dict, datasets: dict | None = None, active: str = "demo"):
    from streamlit.testing.v1 import AppTest

    from tests.pages._analysis_apptest import APP, TIMEOUT

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if datasets:
        at.session_state["app.datasets"] = datasets
        at.session_state["app.active"] = active
    at.run()
    at.session_state["app.example"] = example
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_arriving_from_a_matrix_cell_opens_that_pair():
    ex = dict(
        dataset="demo",
        attribute="fluency",
        judge=DEMO_JUDGE,
        context_id="news03",
        first_id="small",  # shown first in the cell; the table keeps its natural order
        second_id="large",
    )
    at = _arrive(ex)
    assert at.selectbox(key="app.attribute").value == "fluency"
    assert at.selectbox(key="examples.context").value == "news03"
    assert _pair(at) == ("news03", "large", "small")
    assert "app.example" not in at.session_state
    assert len(_table(at)) == 15
    # used once: the next run keeps the user's own choices
    at.selectbox(key="examples.context").set_value("news04").run()
    assert at.selectbox(key="examples.context").value == "news04"


def test_arriving_for_a_whole_context_and_for_another_dataset():
    ds, holes, doc = summeval_with_a_hole() if _have_summeval() else (None, None, None)
    if holes is None:
        pytest.skip("SummEval not in the data folder")
    judge = "gpt-3.5-turbo-0301/ab-choice"
    datasets = {"demo": data.demo_dataset(), holes.name: holes}
    at = _arrive(
        dict(dataset=holes.name, attribute="relevance", judge=judge, context_id=doc),
        datasets,
        active="demo",
    )
    assert at.session_state["app.active"] == holes.name
    assert at.selectbox(key="app.attribute").value == "relevance"
    table = _table(at)
    assert len(table) == 11 and set(table["context"]) == {doc}
    assert metrics(at)[UNPARSED] == "11" and metrics(at)[FLIPS] == "0"
    assert (table["unparsed"] == 2).all()
    # the pair opened: one unparsed answer in each order, both marked
    said = [w.value for w in at.warning if "could not be parsed" in w.value]
    assert said == ["1 of 1 answer(s) could not be parsed (marked UNPARSED)."] * 2


def test_arriving_for_a_dataset_not_loaded_says_so():
    at = _arrive(dict(dataset="hanna", attribute="coherence", judge="x", context_id="1"))
    assert any("not loaded" in w.value for w in at.warning)
    assert len(_table(at)) == 180  # the active dataset, unfiltered


def _have_summeval() -> bool:
    from tests.pages._analysis_apptest import have

    return have("summeval")


def test_dataset_without_comparisons_points_to_judge_and_data():
    ds = data.demo_dataset()
    bare = rejudged(ds, "bare")
    at = open_page(PAGE, bare)
    assert not at.dataframe
    note = " ".join(i.value for i in at.info)
    assert "no pairwise comparisons" in note and "Judge" in note and "Data" in note


def test_uploaded_verdicts_without_texts_or_humans():
    comps = pd.DataFrame(
        {
            "context_id": ["q1", "q1", "q2"],
            "attribute": "overall",
            "judge": "uploaded",
            "first_id": ["m2", "m10", "m1"],
            "second_id": ["m10", "m2", "m2"],
            "p_first": [1.0, 1.0, np.nan],
            "verdict": ["A", "A", None],
            "sample": 0,
            "raw": ["A", "A", "no idea"],
        }
    )
    cands = pd.DataFrame(
        {
            "context_id": ["q1", "q1", "q2", "q2"],
            "candidate_id": ["m2", "m10", "m1", "m2"],
            "text": "",
        }
    )
    ds = data.validate.validate_dataset(
        Dataset(name="verdicts", candidates=cands, comparisons=comps)
    )
    at = open_page(PAGE, ds)
    table = _table(at)
    assert list(zip(table["candidate i"], table["candidate j"], strict=True)) == [
        ("m2", "m10"),
        ("m1", "m2"),
    ]
    m = metrics(at)
    assert (m[FLIPS], m[DISAGREES], m[UNPARSED]) == ("1", "n/a", "1")
    assert at.checkbox(key="examples.disagrees").disabled
    captions = " ".join(c.value for c in at.caption)
    assert "no text in this dataset" in captions and "No human reference" in captions
    at.selectbox(key="examples.pair").set_value("q2\tm1\tm2").run()
    answers = [d.value for d in at.dataframe if "parsed" in d.value.columns]
    assert list(answers[0]["parsed"]) == ["UNPARSED"] and list(answers[0]["raw"]) == ["no idea"]
    assert "not asked in this order" in " ".join(c.value for c in at.caption)


@need("pandalm")
def test_pandalm_one_order_and_unparsed_answers():
    at = open_page(PAGE, "pandalm")
    at.selectbox(key="app.judge").set_value("gpt-3.5-turbo").run()
    m = metrics(at)
    assert m[FLIPS] == "n/a" and at.checkbox(key="examples.flips").disabled
    ds = data.load_benchmark("pandalm")
    rows = ds.comparisons[ds.comparisons.judge == "gpt-3.5-turbo"]
    assert m[UNPARSED] == str(rows.p_first.isna().sum())  # one answer per pair
    at.checkbox(key="examples.unparsed").check().run()
    table = _table(at)
    assert len(table) == rows.p_first.isna().sum() and (table["unparsed"] == 1).all()
    assert table["p(i wins | i first)"].isna().all() and table["p(i wins | i second)"].isna().all()
    # the humans' pooled verdicts are the reference: disagreements can be told
    assert m[DISAGREES] not in ("n/a", "0")
    text = " ".join(w.value for w in at.warning)
    assert "1 of 1 answer(s) could not be parsed" in text
    assert any("garbage" in str(d.value.get("raw", pd.Series()).tolist()) for d in at.dataframe)
    # beside the judge's answer, the three annotators' own verdicts on the pair
    assert "**Human verdicts on this pair**" in _markdown(at)
    humans = next(d.value for d in at.dataframe if "order" in d.value and "sample" not in d.value)
    assert sorted(humans["judge"]) == ["human:annotator1", "human:annotator2", "human:annotator3"]


@need("llmfao")
def test_llmfao_pooled_crowd_verdicts_without_texts():
    at = open_page(PAGE, "llmfao")
    assert at.selectbox(key="app.judge").value == "human annotators (pooled)"
    ds = data.load_benchmark("llmfao")
    c = ds.comparisons
    pairs = {
        (x, *sorted((f, s))) for x, f, s in zip(c.context_id, c.first_id, c.second_id, strict=True)
    }
    assert metrics(at)["Pairs"] == f"{len(pairs):,}"
    assert metrics(at)[DISAGREES] == "n/a"  # the pooled humans are their own reference
    answers = [d.value for d in at.dataframe if "parsed" in d.value.columns]
    assert answers and all("judge" in f.columns for f in answers if len(f) > 1)
    assert "no text in this dataset" in " ".join(x.value for x in at.caption)


def test_the_view_survives_a_visit_to_another_page():
    at = open_page(PAGE)
    at.selectbox(key="examples.context").set_value("news05").run()
    at.checkbox(key="examples.flips").check().run()
    picked = at.selectbox(key="examples.pair").value
    at.switch_page("pages/rankings/page.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="examples.context").value == "news05"
    assert at.checkbox(key="examples.flips").value
    assert at.selectbox(key="examples.pair").value == picked
    assert set(_table(at)["context"]) == {"news05"} and _table(at)["flips"].all()


def test_a_judge_whose_every_answer_is_unparsed_still_shows_its_raw_answers():
    demo = data.demo_dataset()
    comps = demo.comparisons[demo.comparisons.attribute == "fluency"].assign(
        p_first=np.nan, raw="I cannot decide."
    )
    broken = rejudged(demo, "all unparsed", comps)
    at = open_page(PAGE, broken)
    assert any("could be parsed" in w.value for w in at.warning)
    assert at.selectbox(key="app.attribute").value == "fluency"
    m = metrics(at)
    assert (m["Pairs"], m[UNPARSED], m[FLIPS], m[DISAGREES]) == ("180", "180", "0", "0")
    answers = [d.value for d in at.dataframe if "parsed" in d.value.columns]
    assert [list(f["parsed"]) for f in answers] == [["UNPARSED"], ["UNPARSED"]]
    assert list(answers[0]["raw"]) == ["I cannot decide."]


def test_open_this_pair_on_rankings_lands_on_that_pair():
    at = open_page("pages/rankings/page.py")
    first = at.selectbox(key="rank.open.first").value
    second = at.selectbox(key="rank.open.second").value
    at.button(key="rank.open.pair").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Examples"]
    ctx, a, b = _pair(at)
    assert {a, b} == {first, second}
    assert at.selectbox(key="examples.context").value == ctx
    assert f"**{first} first**" in _markdown(at) and f"**{second} first**" in _markdown(at)


def test_decisions_follow_the_shared_debias_setting(demo_pairs):
    """A threshold tuned on Position bias is the one Examples decides with: the decisions,
    flips and disagreements are those at tau, the probabilities stay the judge's own."""
    at = open_page(PAGE)
    at.session_state["app.debias.mode"] = "tau"
    at.session_state["app.debias.tau"] = 0.7
    at.switch_page("pages/position_bias/page.py").run()  # where the setting is tuned
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    caption = " ".join(c.value for c in at.caption)
    assert "first wins when p > 0.70" in caption, caption
    table = _table(at)
    p_first = table["p(i wins | i first)"].to_numpy(dtype=float)
    decided = table["decision, i first"].to_numpy(dtype=object)
    a, b = table["candidate i"].to_numpy(dtype=object), table["candidate j"].to_numpy(dtype=object)
    ok = np.isfinite(p_first)
    want = np.where(p_first > 0.7, a, np.where(p_first < 0.7, b, "tie"))
    # one sample per ordered pair on the demo: the mean p decided at tau is the decision
    assert (decided[ok] == want[ok]).all()
    assert np.array_equal(p_first[ok], demo_pairs["p_a_first"].to_numpy(dtype=float)[ok])
    assert (decided[ok] != demo_pairs["decision_a_first"].to_numpy(dtype=object)[ok]).any()
    shifted = svc.pairs(data.demo_dataset(), DEMO_ATTRIBUTE, DEMO_JUDGE, ("hard", 0.7)).table
    assert int(metrics(at)[FLIPS]) == int(shifted["flips"].sum()) != int(demo_pairs["flips"].sum())
