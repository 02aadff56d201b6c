"""The Data page's upload (issue 11, items 1-4 and 12): the wide mapping offers every field
pre-filled by the guess, the preview follows the mapping live, a pairwise file with garbage
verdicts joins the active dataset with its notes shown, auto says what it guessed and
offers the other layouts, and PandaLM shows human verdicts. Issue 22: an Arena-Hard file is
recognised and read by its importer (texts from its question and answer files, the verdict
map edited, the strength policy chosen); an LLMBar-style file keeps its texts and gold
labels; bad weights, contradicting systems and malformed records are refused with nothing
loaded lost."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from data.natural import natural_key
from pages.data.mapping import GENERATION
from tests.data.test_io_guess import MODELS, PROMPTS, _hanna_like
from tests.pages.test_home_page import _app


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _hanna_uploaded() -> AppTest:
    """The Data page with a HANNA-like wide file given to the uploader (not yet added)."""
    at = _app()
    at.file_uploader(key="data.file").upload("hanna.csv", _hanna_like(), "text/csv").run()
    return at


def _votes_after_hanna() -> AppTest:
    """The HANNA-like file loaded as a dataset, then pairwise verdicts given to the uploader
    (the target left at its default)."""
    at = _hanna_uploaded()
    at.button(key="data.add").click().run()
    at.file_uploader(key="data.file").upload("votes.csv", _verdicts(), "text/csv").run()
    return at


def plain(text: str) -> str:
    """Markdown source as the user reads it: the backslash escapes of ``ui.safe`` removed."""
    return re.sub(r"\\(.)", r"\1", text)


def _markdown(at: AppTest) -> str:
    return plain("\n".join(m.value for m in at.markdown))


def _info(at: AppTest) -> str:
    return plain(" ".join(i.value for i in at.info))


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


def _summary(at: AppTest):
    """The table that says what each table holds (the preview's, or the loaded dataset's)."""
    return next(d.value for d in at.dataframe if "table" in d.value.columns)


def form_key(at, key: str) -> str:
    """The key of a mapping-form widget: the form's keys carry the file's generation."""
    return f"{key}.{at.session_state[GENERATION]}"


def test_wide_upload_mapped_previewed_and_loaded():
    at = _hanna_uploaded()
    _ok(at)
    info = _info(at)
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
    at = _votes_after_hanna()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    _ok(at)
    # the attribute offered is the active dataset's, so the verdicts meet its human scores
    assert at.selectbox(key=form_key(at, "data.pair.attr")).value == "coherence"
    assert at.selectbox(key=form_key(at, "data.pair.first_sys")).value == "model_a"
    assert at.selectbox(key=form_key(at, "data.pair.second_sys")).value == "model_b"
    notes = _markdown(at)
    assert "votes.csv: 12 of 36 verdict(s) in column 'winner' not understood" in notes
    assert "verdict 'garbage' not understood: rows 13–24" in notes
    assert "1 of 3 context(s) have no usable verdict and cannot be ranked: 'P2'" in notes
    at.text_input(key=form_key(at, "data.pair.judge")).set_value("human:crowd").run()
    at.button(key="data.add").click().run()
    _ok(at)
    assert at.sidebar.selectbox[0].value == "hanna.csv"  # the same, short name
    ds = at.session_state["app.datasets"]["hanna.csv"]
    assert len(ds.comparisons) == 36 and ds.comparisons["p_first"].isna().sum() == 12
    assert ds.comparisons["attribute"].unique().tolist() == ["coherence"]
    assert len(ds.human_scores) == 48 and ds.sources["comparisons"] == ["votes.csv"]
    assert "Added votes.csv to **hanna.csv**." in plain(" ".join(s.value for s in at.success))
    summary = _summary(at)  # what each table holds
    row = summary.set_index("table").loc["comparisons"]
    assert (row["rows"], row["judges or annotators"], row["files"]) == (
        36,
        "human:crowd",
        "votes.csv",
    )


def test_pairwise_attribute_follows_the_load_target():
    """As a new dataset, the attribute for every row is the guessed one ('overall', as the
    guess note says), not the active dataset's; added to it, its first attribute; a value
    the user picks stays when the target changes."""
    at = _votes_after_hanna()
    _ok(at)
    assert at.radio(key="data.target").value == "Load as a new dataset"
    assert "attribute 'overall' for every row" in _info(at)
    assert at.selectbox(key=form_key(at, "data.pair.attr")).value == "overall"
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    assert _ok(at).selectbox(key=form_key(at, "data.pair.attr")).value == "coherence"
    at.radio(key="data.target").set_value("Load as a new dataset").run()
    assert _ok(at).selectbox(key=form_key(at, "data.pair.attr")).value == "overall"
    at.selectbox(key=form_key(at, "data.pair.attr")).set_value("relevance").run()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    assert _ok(at).selectbox(key=form_key(at, "data.pair.attr")).value == "relevance"
    at.radio(key="data.target").set_value("Load as a new dataset").run()
    at.selectbox(key=form_key(at, "data.pair.attr")).set_value("overall").run()
    at.button(key="data.add").click().run()
    ds = _ok(at).session_state["app.datasets"]["votes.csv"]
    assert ds.comparisons["attribute"].unique().tolist() == ["overall"]


def test_auto_says_what_it_guessed_and_offers_the_other_layouts():
    at = _app()
    data = b"context_id,candidate_id,text,n_words\nc1,a,hello,1\nc1,b,hi there,2\n"
    at.file_uploader(key="data.file").upload("c.csv", data, "text/csv").run()
    _ok(at)
    assert "read as a wide table" in _info(at)
    at.button(key="data.alt.candidates").click().run()
    _ok(at)
    assert at.radio(key="data.kind").value == "long"
    assert at.dataframe[0].value["table"].tolist() == ["candidates"]
    at.button(key="data.add").click().run()
    ds = _ok(at).session_state["app.datasets"]["c.csv"]
    assert ds.candidates["n_words"].tolist() == ["1", "2"] and len(ds.human_scores) == 0


def test_duplicate_rows_added_to_the_active_dataset_are_refused_clearly():
    at = _hanna_uploaded()
    at.button(key="data.add").click().run()
    at.radio(key="data.target").set_value("Add to the active dataset").run()
    at.button(key="data.add").click().run()
    assert not at.exception
    text = plain(" ".join(e.value for e in at.error)) + _markdown(at)
    assert "hanna.csv (human_scores), rows 1–48: already in hanna" in text
    assert len(at.session_state["app.datasets"]["hanna.csv"].human_scores) == 48


def test_uploaded_files_reach_the_judge_and_rankings_pages():
    at = _votes_after_hanna()
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
    at = _hanna_uploaded()
    at.number_input(key=form_key(at, "data.scale.coherence.lo")).set_value(1).run()
    at.number_input(key=form_key(at, "data.scale.coherence.hi")).set_value(3).run()
    assert not at.exception
    text = plain(" ".join(e.value for e in at.error)) + _markdown(at)
    assert "hanna.csv cannot be loaded as read now" in text
    assert (
        "hanna.csv, row 7, column 'Coherence': 4 is outside the scale of 'coherence' (1 to 3)"
        in text
    )
    at.number_input(key=form_key(at, "data.scale.coherence.hi")).set_value(5).run()
    at.button(key="data.add").click().run()
    assert _ok(at).session_state["app.datasets"]["hanna.csv"].scales == {"coherence": (1.0, 5.0)}


# ----------------------------------------------------------------------------- issue 22
PUBLISHED = Path(__file__).parents[1] / "data" / "published"
AH = PUBLISHED / "arena-hard-v0.1"
AH_FILE = AH / "model_judgment" / "gpt-4-1106-preview" / "gpt-4-0613.jsonl"


def _editor(at: AppTest):
    """The verdict map (the page's one data_editor) as shown, and its key."""
    assert len(at.data_editor) == 1
    return at.data_editor[0].value, at.data_editor[0].key


def _edit(at: AppTest, key: str, rows: dict[int, str]) -> AppTest:
    at.session_state[key] = {
        "edited_rows": {str(i): {"reading": label} for i, label in rows.items()},
        "added_rows": [],
        "deleted_rows": [],
    }
    return at.run()


def test_arena_hard_file_is_recognised_mapped_and_loaded():
    at = _app()
    at.file_uploader(key="data.file").upload(AH_FILE.name, AH_FILE.read_bytes()).run()
    _ok(at)
    assert "Recognised as **Arena-Hard-Auto judgments**" in _info(at).replace("\\", "")
    shown, key = _editor(at)
    assert shown["value"].tolist() == ["B>A", "A>B", "A>>B", "B>>A", "A=B"]
    assert shown["reading"].tolist() == [
        "B>A: second better (-1)",
        "A>B: first better (+1)",
        "A>>B: first much better (+2)",
        "B>>A: second much better (-2)",
        "A=B: tie (0)",
    ]
    notes = _markdown(at)
    assert "Baseline: 'gpt-4-0314'" in notes
    assert "1 game(s) have no score" in notes and "gpt-4-0613.jsonl, line 3" in notes
    assert _summary(at)["table"].tolist() == ["candidates", "comparisons"]
    # the question and answer files give the texts
    companions = [AH / "question.jsonl", *sorted((AH / "model_answer").glob("*.jsonl"))]
    at.file_uploader(key=form_key(at, "data.pub.companions")).set_value(
        [(p.name, p.read_bytes(), "application/json") for p in companions]
    ).run()
    assert _ok(at) and _summary(at)["table"].tolist() == ["contexts", "candidates", "comparisons"]
    # the user reads the tie as not understood, and picks the probability policy
    _ok(_edit(at, key, {4: "not understood (kept unparsed)"}))
    at.radio(key=form_key(at, "data.pub.strength")).set_value("probability").run()
    _ok(at)
    assert "verdict 'A=B' not understood" in _markdown(at)
    at.button(key="data.add").click().run()
    _ok(at)
    ds = at.session_state["app.datasets"][AH_FILE.name]
    c = ds.comparisons
    assert len(c) == 6 and c["p_first"].isna().sum() == 2
    np.testing.assert_array_equal(c["grade"], [-1, 1, 2, -2, np.nan, np.nan])
    np.testing.assert_array_equal(c["p_first"], [0.25, 0.75, 1.0, 0.0, np.nan, np.nan])
    assert (c["weight"] == 1).all()
    assert (c.loc[c["sample"] == 0, "first_id"] == "gpt-4-0314").all()
    assert len(ds.contexts) == 3 and (ds.candidates["text"] != "").all()
    assert ds.description == "Arena-Hard-Auto judgments; baseline 'gpt-4-0314'"
    assert "Arena-Hard-Auto judgments; baseline 'gpt-4-0314'" in plain(
        " ".join(c.value for c in at.caption)
    )


def test_a_malformed_published_file_is_refused_and_nothing_is_lost():
    at = _app()
    lines = AH_FILE.read_text(encoding="utf-8").splitlines()
    bad = lines[0] + "\n" + lines[1].replace('"model"', '"modell"') + "\n"
    at.file_uploader(key="data.file").upload("m.jsonl", bad.encode()).run()
    assert not at.exception
    text = plain(" ".join(e.value for e in at.error)) + _markdown(at)
    assert "m.jsonl, line 2, field 'model': missing" in text
    at.button(key="data.add").click().run()
    assert not at.exception
    assert list(at.session_state["app.datasets"]) == ["demo"]


def _llmbar_csv() -> bytes:
    from tests.data.test_io_pairwise_tables import llmbar_like

    return llmbar_like().to_csv(index=False).encode()


def test_llmbar_style_file_maps_texts_gold_labels_and_a_verdict_map():
    at = _app()
    at.file_uploader(key="data.file").upload("llmbar.csv", _llmbar_csv(), "text/csv").run()
    _ok(at)
    fields = {
        "data.pair.ctx_text": "input",
        "data.pair.first_text": "output_1",
        "data.pair.second_text": "output_2",
        "data.pair.verdict": "verdict",
        "data.pair.human": "label",
        "data.pair.judge_col": "judge",
        "data.pair.first": None,
        "data.pair.first_sys": None,
    }
    for k, value in fields.items():
        assert at.selectbox(key=form_key(at, k)).value == value, k
    shown, key = _editor(at)
    assert list(zip(shown["column"], shown["value"], strict=True)) == [
        ("verdict", "Output (a)"),
        ("verdict", "Output (b)"),
        ("verdict", "garbage"),
        ("label", "1"),
        ("label", "2"),
    ]
    assert shown["reading"].tolist()[2] == "not understood (kept unparsed)"
    notes = _markdown(at)
    assert "verdict 'garbage' not understood: row 6" in notes
    assert "'label' is read as the human (gold) verdict, by 'human:gold'" in _info(at)
    _ok(_edit(at, key, {2: "B>A: second better (-1)"}))
    assert "verdict 'garbage' not understood" not in _markdown(at)
    at.button(key="data.add").click().run()
    ds = _ok(at).session_state["app.datasets"]["llmbar.csv"]
    assert len(ds.contexts) == 3 and len(ds.candidates) == 6
    assert (ds.candidates["text"] != "").all()
    c = ds.comparisons
    assert c["judge"].value_counts().to_dict() == {"gpt-4": 6, "human:gold": 6}
    assert c["p_first"].notna().all()


def test_bad_weights_and_contradicting_systems_are_refused_on_the_page():
    at = _app()
    data = b"question_id,model_a,model_b,winner,weight\nq1,m1,m2,A>>B,1\nq1,m2,m1,B,0\n"
    at.file_uploader(key="data.file").upload("w.csv", data, "text/csv").run()
    assert not at.exception
    text = plain(" ".join(e.value for e in at.error)) + _markdown(at)
    assert "w.csv, row 2, column 'weight': weight '0' is not a positive number" in text
    at.button(key="data.add").click().run()
    assert list(at.session_state["app.datasets"]) == ["demo"]
    data = b"context,first,second,model_a,model_b,verdict\nc1,x,y,gpt-4,llama,A\nc1,x,y,claude,llama,B\n"
    at.file_uploader(key="data.file").clear().upload("s.csv", data, "text/csv").run()
    assert not at.exception
    text = plain(" ".join(e.value for e in at.error)) + _markdown(at)
    assert "s.csv, candidate 'x' of context 'c1': 2 different systems" in text
    assert list(at.session_state["app.datasets"]) == ["demo"]
