"""data.io.upload: layout detection and uploads of canonical tables."""

from __future__ import annotations

import pytest

from data.io import detect_kind, read_upload
from data.schema import DataError, empty_table


def test_detect_kind():
    assert detect_kind(["context_id", "text"]) == "contexts"
    assert detect_kind(["context_id", "candidate_id", "text", "system"]) == "candidates"
    assert detect_kind(["Context ID", "candidate_id", "attribute", "annotator", "score"]) == (
        "human_scores"
    )
    assert detect_kind(list(empty_table("comparisons").columns)) == "comparisons"
    assert detect_kind(list(empty_table("ratings").columns)) == "ratings"
    assert detect_kind(["context", "first", "second", "verdict"]) == "pairwise"
    assert detect_kind(["context_id", "candidate_id", "coherence", "fluency"]) == "wide"
    assert detect_kind(["foo", "bar"]) is None


def test_upload_canonical_table_detected():
    data = b"context_id,candidate_id,attribute,annotator,score\nd1,a,q,x,3\nd1,b,q,x,4\n"
    ds = read_upload("my scores.csv", data, scales={"q": (1, 5)})
    assert ds.name == "my scores"
    assert ds.human_scores["score"].tolist() == [3.0, 4.0]
    assert len(ds.comparisons) == 0 and ds.scales == {"q": (1, 5)}


def test_upload_misspelled_header_goes_to_the_closest_table():
    data = b"context_id,candidate_id,attribute,annotator,scroe\nd1,a,q,x,3\n"
    with pytest.raises(DataError, match=r"s.csv, column 'scroe'.*did you mean 'score'"):
        read_upload("s.csv", data)


def test_upload_unknown_layout():
    with pytest.raises(DataError, match=r"x.csv: cannot tell which table"):
        read_upload("x.csv", b"foo,bar\n1,2\n")


def test_upload_kind_long_picks_the_canonical_table():
    # these headers fit candidates and a wide table alike, so they are not guessed
    data = b"context_id,candidate_id,text,n_words\nd1,a,hello,1\n"
    assert detect_kind(["context_id", "candidate_id", "text", "n_words"]) is None
    with pytest.raises(DataError, match=r"c.csv, columns .*: the layout is ambiguous"):
        read_upload("c.csv", data)
    cands = read_upload("c.csv", data, kind="long").candidates
    assert cands["text"].tolist() == ["hello"] and cands["n_words"].tolist() == ["1"]
    with pytest.raises(DataError, match=r"c.csv, column 'scroe'.*did you mean 'score'"):
        read_upload(
            "c.csv", b"context_id,candidate_id,attribute,annotator,scroe\nd,a,q,x,1\n", kind="long"
        )


def test_upload_kind_overrides_detection():
    data = b"context_id,candidate_id,text\nd1,a,hello\n"
    ds = read_upload("c.tsv", data.replace(b",", b"\t"), kind="candidates")
    assert ds.candidates["text"].tolist() == ["hello"]
