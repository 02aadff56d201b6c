"""data.io.wide: wide tables with and without a mapping, errors by wide row and column."""

from __future__ import annotations

import pytest

from data.io import WideMapping, read_upload
from data.schema import DataError

WIDE_CSV = (
    b"doc,sys,response,article,coherence,fluency\n"
    b'd1,m1,"Good, short.",Art 1,4,5\n'
    b"d1,m2,Bad.,Art 1,2,\n"
    b"d2,m1,Fine.,Art 2,3,3\n"
)


def test_wide_with_mapping():
    mapping = WideMapping(
        context_id="doc",
        candidate_id="sys",
        system="sys",
        context_text="article",
        candidate_text="response",
        attributes={"coherence": "coherence", "fluency": "fluency"},
        default_annotator="expert",
    )
    ds = read_upload("wide.csv", WIDE_CSV, mapping=mapping, scales={"coherence": (1, 5)})
    assert ds.contexts["context_id"].tolist() == ["d1", "d2"]
    assert ds.contexts["text"].tolist() == ["Art 1", "Art 2"]
    assert ds.candidates[["context_id", "candidate_id", "system", "text"]].values.tolist() == [
        ["d1", "m1", "m1", "Good, short."],
        ["d1", "m2", "m2", "Bad."],
        ["d2", "m1", "m1", "Fine."],
    ]
    hs = ds.human_scores
    # the empty fluency cell of row 2 is skipped, not a score
    assert hs[
        ["context_id", "candidate_id", "attribute", "annotator", "score"]
    ].values.tolist() == [
        ["d1", "m1", "coherence", "expert", 4.0],
        ["d1", "m1", "fluency", "expert", 5.0],
        ["d1", "m2", "coherence", "expert", 2.0],
        ["d2", "m1", "coherence", "expert", 3.0],
        ["d2", "m1", "fluency", "expert", 3.0],
    ]


def test_wide_guessed_without_mapping():
    data = b"context_id,candidate_id,text,coherence,notes\nd1,a,hi,4,fine\nd1,b,yo,2,meh\n"
    ds = read_upload("w.csv", data, kind="wide")  # with a text column it could be candidates
    assert sorted(ds.human_scores["attribute"].unique()) == ["coherence"]  # notes left out
    assert ds.candidates["text"].tolist() == ["hi", "yo"]
    assert ds.human_scores["annotator"].unique().tolist() == ["human"]


def test_wide_per_annotator_columns():
    data = b"ctx,cand,coh_a1,coh_a2\nd1,a,4,5\nd1,b,1,\n"
    mapping = WideMapping(
        context_id="ctx",
        candidate_id="cand",
        attributes={"coh_a1": ("coherence", "a1"), "coh_a2": ("coherence", "a2")},
    )
    ds = read_upload("w.csv", data, mapping=mapping)
    assert ds.human_scores[["candidate_id", "annotator", "score"]].values.tolist() == [
        ["a", "a1", 4.0],
        ["a", "a2", 5.0],
        ["b", "a1", 1.0],
    ]


def test_wide_annotator_column():
    data = b"ctx,cand,rater,coh\nd1,a,r1,4\nd1,a,r2,5\nd1,b,r1,1\n"
    mapping = WideMapping(
        context_id="ctx", candidate_id="cand", annotator="rater", attributes={"coh": "coherence"}
    )
    ds = read_upload("w.csv", data, mapping=mapping)
    assert len(ds.candidates) == 2
    assert ds.human_scores["annotator"].tolist() == ["r1", "r2", "r1"]


def test_wide_errors_name_the_wide_rows_and_columns():
    data = b"ctx,cand,coh\nd1,a,4\nd1,b,x\nd1,c,9\nd1,a,3\n"
    mapping = WideMapping(context_id="ctx", candidate_id="cand", attributes={"coh": "coherence"})
    with pytest.raises(DataError) as err:
        read_upload("w.csv", data, mapping=mapping, scales={"coherence": (1, 5)})
    lines = err.value.problems
    assert lines[0].startswith("w.csv, row 2, column 'coh': 'x' is not a number")
    assert lines[1].startswith("w.csv, row 3, column 'coh': 9 is outside the scale")
    fixed = data.replace(b",x\n", b",2\n").replace(b",9\n", b",1\n")
    with pytest.raises(DataError, match=r"w.csv, rows 1, 4, column 'cand'"):
        read_upload("w.csv", fixed, mapping=mapping)


def test_wide_mapping_names_missing_column():
    mapping = WideMapping(context_id="ctx", candidate_id="cand", attributes={"cohh": "c"})
    with pytest.raises(DataError, match=r"column 'cohh'.*did you mean 'coh'"):
        read_upload("w.csv", b"ctx,cand,coh\nd1,a,4\n", mapping=mapping)
