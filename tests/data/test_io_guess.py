"""data.io.guess and the layout guess of read_upload_result / preview_upload: a HANNA-like wide
file is read with its context text and systems; what was guessed is said; a wrong guess
names the layout it tried and the alternatives."""

from __future__ import annotations

import pytest

from data.io import WideMapping, guess_wide, preview_upload, read_upload, read_upload_result
from data.schema import DataError

PROMPTS = {
    "P1": "Write a story about a dragon that is afraid of the dark and the knight who helps it.",
    "P2": "You wake up one morning and every clock in the world has stopped at the same minute.",
    "P3": "A letter arrives addressed to you, postmarked fifty years before you were born.",
}
MODELS = ["GPT-2", "Human", "CTRL", "XLNet"]


def _hanna_like() -> bytes:
    """One row per story and annotator: Story ID, Prompt, Model, Story, Annotator, scores."""
    lines = ["Story ID,Prompt,Model,Story,Annotator,Coherence,Relevance"]
    k = 0
    for pid, prompt in PROMPTS.items():
        for m, model in enumerate(MODELS):
            k += 1
            story = f"Story {k} by {model}: once upon a time, something happened, the end."
            for a in range(2):
                lines.append(
                    f'{pid},"{prompt}",{model},"{story}",ann{a},{(m + a) % 5 + 1},{(k + a) % 5 + 1}'
                )
    return ("\n".join(lines) + "\n").encode()


def test_hanna_like_wide_file_guessed_with_context_text_and_systems():
    result = read_upload_result("hanna.csv", _hanna_like())
    assert result.kind == "wide" and result.guessed
    m = result.mapping
    assert (m.context_id, m.candidate_id, m.system) == ("Story ID", "Model", "Model")
    assert (m.context_text, m.candidate_text, m.annotator) == ("Prompt", "Story", "Annotator")
    assert m.attributes == {"Coherence": "coherence", "Relevance": "relevance"}
    assert result.notes[0] == (
        "read as a wide table: context id = 'Story ID', candidate id = 'Model', system = "
        "'Model', context text = 'Prompt', candidate text = 'Story', annotator = 'Annotator', "
        "scores = coherence, relevance"
    )
    ds = result.dataset
    # the Judge page needs a context text per context, Rankings systems that recur
    assert ds.contexts["context_id"].tolist() == ["P1", "P2", "P3"]
    assert ds.contexts["text"].tolist() == list(PROMPTS.values())
    assert ds.candidates.groupby("system")["context_id"].nunique().to_dict() == dict.fromkeys(
        MODELS, 3
    )
    assert len(ds.human_scores) == 3 * 4 * 2 * 2
    assert ds.sources == {t: ["hanna.csv"] for t in ("contexts", "candidates", "human_scores")}


def test_candidate_ids_that_recur_across_contexts_name_the_systems():
    data = b"doc,candidate,quality\nd1,bart,4\nd1,pegasus,3\nd2,bart,2\nd2,pegasus,5\n"
    result = read_upload_result("w.csv", data, kind="wide")
    assert result.mapping.system == "candidate"
    assert any("recur across contexts, so they name the systems too" in n for n in result.notes)
    assert result.dataset.candidates["system"].tolist() == ["bart", "pegasus", "bart", "pegasus"]
    # unique candidate ids name no system
    unique = b"doc,candidate,quality\nd1,x1,4\nd1,x2,3\nd2,x3,2\nd2,x4,5\n"
    assert read_upload_result("w.csv", unique, kind="wide").mapping.system is None


def test_a_given_mapping_is_read_as_given():
    mapping = WideMapping(
        context_id="Story ID",
        candidate_id="Model",
        annotator="Annotator",
        attributes={"Coherence": "coherence"},
    )
    ds = read_upload("hanna.csv", _hanna_like(), mapping=mapping, kind="wide")
    assert len(ds.contexts) == 0 and ds.candidates["system"].isna().all()
    assert ds.human_scores["annotator"].unique().tolist() == ["ann0", "ann1"]


def test_guess_without_scores_is_none():
    import pandas as pd

    frame = pd.DataFrame({"doc_id": ["a", "a"], "model": ["m1", "m2"], "note": ["x", "y"]})
    assert guess_wide(frame) == (None, [])


def test_auto_guess_offers_the_other_layouts():
    data = b"context_id,candidate_id,text,n_words\nc1,a,hello,1\nc1,b,hi there,2\n"
    with pytest.raises(DataError, match="ambiguous"):  # in code, still asked
        read_upload("c.csv", data)
    preview = preview_upload("c.csv", data, "auto")
    assert preview.error is None and preview.result.guessed
    assert preview.kind == "wide"
    assert [k for k, _ in preview.result.alternatives] == ["candidates"]
    assert preview.summary()["table"].tolist() == ["candidates", "human_scores"]
    assert list(preview.heads(1)) == ["candidates", "human_scores"]
    long = preview_upload("c.csv", data, "long")
    assert long.kind == "candidates" and long.result.dataset.candidates["n_words"].tolist() == [
        "1",
        "2",
    ]


def test_a_wrong_guess_names_the_layout_and_alternatives():
    # no layout fits: read as the closest table, and the message says so (not 6 bare lines)
    data = b"judge,prompt,score\nj,p,3\n"
    with pytest.raises(DataError) as err:
        read_upload("r.csv", data)
    msg = str(err.value)
    assert msg.startswith("r.csv: read as a ratings table, the layout guessed from its columns")
    assert "could also be wide or pairwise or long" in msg
    assert "column 'context_id': required column is missing" in msg
    preview = preview_upload("r.csv", data)
    assert preview.kind == "ratings" and preview.error is not None


def test_preview_keeps_the_error_and_the_guessed_mapping():
    bad = _hanna_like().replace(b",ann0,1,", b",ann0,x,", 1)
    preview = preview_upload("hanna.csv", bad, "wide")
    assert preview.error is not None and "'x' is not a number" in str(preview.error)
    assert preview.mapping.context_text == "Prompt"  # the form can still be pre-filled
    unreadable = preview_upload("x.xlsx", b"a,b\n1,2\n")
    assert unreadable.error is not None and unreadable.columns == []
