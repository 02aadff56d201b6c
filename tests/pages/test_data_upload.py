"""The Data page's upload (issue 11, items 1-4 and 12): the wide mapping offers every field
pre-filled by the guess, the preview follows the mapping live, a pairwise file with garbage
verdicts joins the active dataset with its notes shown, auto says what it guessed and
offers the other layouts, and PandaLM shows human verdicts."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from data.natural import natural_key
from pages.data.mapping import GENERATION
from tests.data.test_io_guess import MODELS, PROMPTS, _hanna_like
from tests.pages.test_home_page import _app


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _verdicts() -> bytes:
    """Every ordered pair of MODELS per prompt (36 rows); rows 13-24 (all of P2) garbage."""
    lines = ["Story ID,model_a,model_b,winner"]
    for pid in PROMPTS:
        for a in MODELS:
            for b in MODELS:
                if a != b:
                    i = len(lines)  # the data row number of this line
                    lines.append(f"{pid},{a},{b},{'garbage' if 13 <= i <= 24 else 'A'}")
    return ("\n".join(lines) + "\n").encode()


def form_key(at, key: str) -> str:
    """The key of a mapping-form widget: the form's keys carry the file's generation."""
    return f"{key}.{at.session_state[GENERATION]}"


def test_wide_upload_mapped_previewed_and_loaded():
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    _ok(at)
    info = " ".join(i.value for i in at.info)
    assert "Guessed from the columns: read as a wide table: context id = 'Story ID'" in info
    fields = {
        "data.map.ctx": "Story ID",
        "data.map.cand": "Model",
        "data.map.system": "Model",
        "data.map.ctx_text": "Prompt",
        "data.map.text": "Story",
        "data.map.annotator": "Annotator",
    }
    for key, value in fields.items():
        assert at.selectbox(key=form_key(at, key)).value == value, key
    assert at.multiselect(key=form_key(at, "data.map.attrs")).value == ["Coherence", "Relevance"]
    summary = at.dataframe[0].value
    assert summary["table"].tolist() == ["contexts", "candidates", "human_scores"]
    assert summary["rows"].tolist() == [3, 12, 48]
    # the preview follows the mapping before anything is loaded
    at.selectbox(key=form_key(at, "data.map.ctx_text")).select_index(0).run()  # (none)
    at.multiselect(key=form_key(at, "data.map.attrs")).set_value(["Coherence"]).run()
    summary = _ok(at).dataframe[0].value
    assert summary["table"].tolist() == ["candidates", "human_scores"]
    assert summary["rows"].tolist() == [12, 24]
    assert at.sidebar.selectbox[0].value == "demo"  # nothing loaded yet
    at.selectbox(key=form_key(at, "data.map.ctx_text")).set_value("Prompt").run()
    at.button(key="data.add").click().run()
    _ok(at)
    assert at.sidebar.selectbox[0].value == "hanna.csv"
    ds = at.session_state["app.datasets"]["hanna.csv"]
    assert ds.contexts["text"].tolist() == list(PROMPTS.values())
    assert ds.candidates["system"].tolist() == MODELS * 3
    assert ds.human_scores["attribute"].unique().tolist() == ["coherence"]


def test_pairwise_file_with_garbage_joins_the_active_dataset():
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    at.button(key="data.add").click().run()
    at.file_uploader(key="data.file").upload("votes.csv", _verdicts(), "text/csv").run()
    _ok(at)
    # the attribute offered is the active dataset's, so the verdicts meet its human scores
    assert at.selectbox(key=form_key(at, "data.pair.attr")).value == "coherence"
    assert at.selectbox(key=form_key(at, "data.pair.first")).value == "model_a"
    notes = _markdown(at)
    assert "votes.csv: 12 of 36 verdict(s) in column 'winner' not understood" in notes
    assert "verdict 'garbage' not understood: rows 13–24" in notes
    assert "1 of 3 context(s) have no usable verdict and cannot be ranked: 'P2'" in notes
    at.text_input(key=form_key(at, "data.pair.judge")).set_value("human:crowd").run()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    at.button(key="data.add").click().run()
    _ok(at)
    assert at.sidebar.selectbox[0].value == "hanna.csv"  # the same, short name
    ds = at.session_state["app.datasets"]["hanna.csv"]
    assert len(ds.comparisons) == 36 and ds.comparisons["p_first"].isna().sum() == 12
    assert ds.comparisons["attribute"].unique().tolist() == ["coherence"]
    assert len(ds.human_scores) == 48 and ds.sources["comparisons"] == ["votes.csv"]
    assert "Added votes.csv to **hanna.csv**." in " ".join(s.value for s in at.success)
    summary = at.dataframe[0].value  # what each table holds
    row = summary.set_index("table").loc["comparisons"]
    assert (row["rows"], row["judges or annotators"], row["files"]) == (
        36,
        "human:crowd",
        "votes.csv",
    )


def test_auto_says_what_it_guessed_and_offers_the_other_layouts():
    at = _app()
    data = b"context_id,candidate_id,text,n_words\nc1,a,hello,1\nc1,b,hi there,2\n"
    at.file_uploader(key="data.file").upload("c.csv", data, "text/csv").run()
    _ok(at)
    assert "read as a wide table" in " ".join(i.value for i in at.info)
    at.button(key="data.alt.candidates").click().run()
    _ok(at)
    assert at.radio(key="data.kind").value == "long"
    assert at.dataframe[0].value["table"].tolist() == ["candidates"]
    at.button(key="data.add").click().run()
    ds = _ok(at).session_state["app.datasets"]["c.csv"]
    assert ds.candidates["n_words"].tolist() == ["1", "2"] and len(ds.human_scores) == 0


def test_duplicate_rows_added_to_the_active_dataset_are_refused_clearly():
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    at.button(key="data.add").click().run()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    at.button(key="data.add").click().run()
    assert not at.exception
    text = " ".join(e.value for e in at.error) + _markdown(at)
    assert "hanna.csv (human_scores), rows 1–48: already in hanna" in text
    assert len(at.session_state["app.datasets"]["hanna.csv"].human_scores) == 48


def test_uploaded_files_reach_the_judge_and_rankings_pages():
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    at.button(key="data.add").click().run()
    at.file_uploader(key="data.file").upload("votes.csv", _verdicts(), "text/csv").run()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    at.button(key="data.add").click().run()
    at.switch_page("pages/judge/page.py").run()
    _ok(at)  # the contexts have their text: no "no row in the contexts table"
    assert "no row in the contexts table" not in _markdown(at)
    at.switch_page("pages/rankings/page.py").run()
    _ok(at)
    assert "Systems" in [s.value for s in at.subheader]  # the models recur across prompts


def test_pandalm_shows_human_verdicts_and_one_order_per_pair():
    at = _app()
    at.selectbox(key="data.benchmark").set_value("pandalm").run()
    at.button(key="data.load").click().run()
    metrics = {m.label: m.value for m in _ok(at).metric}
    captions = [c.value for c in at.caption]
    assert "Human scores" not in metrics and metrics["Human verdicts"] == "2,997"
    assert "pairwise verdicts of 3 human judge(s)" in captions
    assert "pairwise judge outputs, one presentation order per pair" in captions
    assert "pairwise judge outputs, both presentation orders kept" in [
        c.value for c in _app().caption
    ]
    contexts = at.selectbox(key="data.ctx").options
    assert contexts == sorted(contexts, key=natural_key)


def test_contexts_and_candidates_in_natural_order():
    at = _app()
    data = b"context_id,candidate_id,text\nc10,m10,x\nc2,m2,y\nc1,m10,z\nc1,m2,w\nc1,m1,v\n"
    at.file_uploader(key="data.file").upload("c.csv", data, "text/csv").run()
    at.button(key="data.add").click().run()
    assert _ok(at).selectbox(key="data.ctx").options == ["c1", "c2", "c10"]
    shown = [d.value for d in at.dataframe]  # the context's candidates: no context_id column
    cands = next(d for d in shown if "candidate_id" in d and "context_id" not in d)
    assert cands["candidate_id"].tolist() == ["m1", "m2", "m10"]


def test_score_scale_checks_the_wide_scores_in_the_preview():
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    at.number_input(key=form_key(at, "data.scale.coherence.lo")).set_value(1).run()
    at.number_input(key=form_key(at, "data.scale.coherence.hi")).set_value(3).run()
    assert not at.exception
    text = " ".join(e.value for e in at.error) + _markdown(at)
    assert "hanna.csv cannot be loaded as read now" in text
    assert (
        "hanna.csv, row 7, column 'Coherence': 4 is outside the scale of 'coherence' (1 to 3)"
        in text
    )
    at.number_input(key=form_key(at, "data.scale.coherence.hi")).set_value(5).run()
    at.button(key="data.add").click().run()
    assert _ok(at).session_state["app.datasets"]["hanna.csv"].scales == {"coherence": (1.0, 5.0)}
