"""AppTest of the Rationales page: keywords, the map and unsupported citations on SummEval's
ChatGPT rationales (stareval ratings, ab-choice verdicts); a judge without rationales (the
demo, SummEval's bare multiple-choice judge) gets a message saying why."""

from __future__ import annotations

from data.rationales import explanation
from tests.pages import _analysis_apptest as apptest
from tests.pages._analysis_apptest import chart_titles, metrics, need, open_page

PAGE = "pages/rationales/page.py"
STAREVAL = "gpt-3.5-turbo-0301/stareval (ratings)"


def test_demo_judge_without_rationales_says_why():
    at = open_page(PAGE)
    apptest.assert_clean(at)
    assert at.title[0].value == "Rationales"
    info = apptest.info_text(at)
    assert "gives no rationale" in info and "bare labels or scores" in info
    assert "explain" in info  # what to do: a template that asks for an explanation
    assert not at.subheader  # the sections are not drawn


@need("summeval")
def test_summeval_stareval_keywords_map_citations():
    at = open_page(PAGE, "summeval")
    at.selectbox(key="app.attribute").set_value("coherence").run()
    at.selectbox(key="app.judge").set_value(STAREVAL).run()
    apptest.assert_clean(at)
    assert [s.value for s in at.subheader] == [
        "Keywords",
        "Map of the rationales",
        "Unsupported citations",
    ]
    captions = "\n".join(c.value for c in at.caption)
    assert "of 1200 answers on *coherence* carry a rationale" in captions
    assert "Map of the rationales" in chart_titles(at)
    tables = [t.value for t in at.dataframe]
    per_criterion = next(t for t in tables if "attribute" in t and "keywords" in t)
    assert set(per_criterion["attribute"]) == {"coherence", "consistency", "fluency", "relevance"}
    fluency = per_criterion.set_index("attribute").loc["fluency", "keywords"]
    assert "grammatically" in fluency
    per_score = next(t for t in tables if "score" in t and "keywords" in t)
    assert len(per_score) >= 4  # 1 to 5 stars
    shown = metrics(at)
    rate = float(shown["Unsupported rate"])
    assert 0.0 < rate < 0.5
    # colour by agreement with humans and map every criterion: redrawn without error
    at.selectbox(key="rationales.colour").set_value("agreement with humans").run()
    at.radio(key="rationales.map_scope").set_value("every criterion").run()
    apptest.assert_clean(at)
    assert "rationales drawn** (a seeded sample)" in "\n".join(c.value for c in at.caption)


@need("summeval")
def test_summeval_bare_and_pairwise_judges():
    at = open_page(PAGE, "summeval")
    at.selectbox(key="app.attribute").set_value("coherence").run()
    at.selectbox(key="app.judge").set_value("gpt-3.5-turbo-0301/mcq (ratings)").run()
    apptest.assert_clean(at)
    info = apptest.info_text(at)
    assert "gives no rationale" in info and explanation("D") == ""
    at.selectbox(key="app.judge").set_value("gpt-3.5-turbo-0301/ab-choice").run()
    apptest.assert_clean(at)
    assert "**Per verdict** on *coherence*" in "\n".join(m.value for m in at.markdown)
    assert "Map of the rationales" in chart_titles(at)


@need("summeval")
def test_a_clicked_rating_opens_on_the_page():
    """A map point of a ratings judge shows that rating up close (the Examples page holds
    comparisons only): the candidate's text and the judge's whole answer."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from data.benchmarks import load_benchmark
        from data.rationales import rationales
        from pages.rationales import Choice
        from pages.rationales.mapping import _open

        ds = load_benchmark("summeval")
        judge = "gpt-3.5-turbo-0301/stareval"
        pts = rationales(ds, "coherence", judge, prompt_id="stareval").head(5)
        choice = Choice(ds, "summeval", "coherence", judge, "stareval", judge)
        event = {"selection": {"points": [{"customdata": [int(pts.index[2])]}]}}
        st.session_state["row"] = pts.loc[pts.index[2]].to_dict()
        _open(choice, pts, type("E", (), {"selection": type("S", (), event["selection"])})())

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    row = at.session_state["row"]
    assert any(f"candidate {row['candidate_id']}" in m.value for m in at.markdown)
    texts = [t.value for t in at.text]
    assert str(row["raw"]) in texts and len(texts) == 2


def _demo_with_rationales():
    """The demo with a rationale in every answer: its judge is named in both the comparisons
    and the ratings tables (issue 23, item 11)."""
    import dataclasses

    import data

    ds = data.demo_dataset()
    words = ["coherent", "fluent", "factual", "concise", "relevant", "clear"]
    comps, ratings = ds.comparisons.copy(), ds.ratings.copy()
    comps["raw"] = [
        f"{v}\nThe first summary is more {words[i % 6]} than the second one."
        for i, v in enumerate(comps["verdict"].fillna("tie"))
    ]
    ratings["raw"] = [
        f"Score: {s:g}\nThe summary reads as {words[i % 5]} and mostly accurate."
        for i, s in enumerate(ratings["score"])
    ]
    return dataclasses.replace(ds, comparisons=comps, ratings=ratings)


def test_demo_judge_in_both_tables_finds_its_keywords():
    at = open_page(PAGE, _demo_with_rationales())
    for judge in at.selectbox(key="app.judge").options:
        at.selectbox(key="app.judge").set_value(judge).run()
        apptest.assert_clean(at)
        assert "Finding the keywords failed" not in apptest.info_text(at), judge
        tables = [t.value for t in at.dataframe]
        by = "score" if "(ratings)" in judge else "verdict"
        assert any(by in t and "keywords" in t for t in tables), (judge, tables)
