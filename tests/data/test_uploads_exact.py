"""Uploads are read exactly or refused with a message naming the file and the row or column
(issue 9, items 4-9): ragged CSV rows, nesting, ambiguous layouts, resource bounds, JSONL line
separators, integer overflow, float ids, duplicated alias columns, table paths in dataset.json.
"""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from data.io import load_dataset, read_frame, read_table, read_upload, save_dataset, write_table
from data.limits import MAX_COLUMNS, MAX_ROWS, Limits
from data.schema import DataError
from data.synthetic.simulate import simulate


def refused(name, data, match, **kwargs) -> str:
    with pytest.raises(DataError, match=match) as err:
        read_upload(name, data, **kwargs)
    return str(err.value)


def refused_but_well_formed_reads(name, data, match, well_formed, text):
    """``data`` is refused with ``match``, while ``well_formed`` (the same cell written
    properly) reads as one context whose text is ``text``."""
    refused(name, data, match)
    ok = read_upload(name, well_formed)
    assert ok.contexts["text"].tolist() == [text]


# --- item 4: a CSV row with more or fewer cells than the header


@pytest.mark.parametrize("sep", [",", "\t"])
def test_extra_cell_is_refused_not_shifted(sep):
    name = "c.csv" if sep == "," else "c.tsv"
    data = f"context_id{sep}text\nc1{sep}doc one{sep}EXTRA\n".encode()
    msg = refused(name, data, rf"{name}, row 1 \(line 2 of the file\): 3 cells, but the header")
    assert "has 2 columns" in msg


def test_short_row_is_refused_not_padded():
    data = b"context_id,candidate_id,text\nc1,a,hello\nc1,b\n"
    refused("c.csv", data, r"c.csv, row 2 \(line 3 of the file\): 2 cells, but the header has 3")


def test_ragged_rows_are_counted_past_quoted_line_breaks_and_blank_lines():
    data = b'context_id,text\nc1,"two\nlines"\n\nc2,ok\nc3,x,y\nc4\n'
    msg = refused("c.csv", data, r"2 problem\(s\)")
    assert "c.csv, row 3 (line 6 of the file): 3 cells" in msg
    assert "c.csv, row 4 (line 7 of the file): 1 cells" in msg


def test_unclosed_quote_is_refused_instead_of_swallowing_the_rest():
    # a closed quote holding a line break, a comma and a doubled quote is one cell
    refused_but_well_formed_reads(
        "c.csv",
        b'context_id,text\nc1,"never closed\nc2,second row\n',
        r"c.csv, row 1 \(line 2 of the file\): a quoted cell starts here",
        b'context_id,text\nc1,"a,\nb ""q"""\n',
        'a,\nb "q"',
    )


def test_two_columns_with_the_same_header_are_refused():
    refused("c.csv", b"context_id,text,text\nc1,a,b\n", r"c.csv, columns 2 and 3 \('text'\)")


# --- item 5: nesting


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_deep_nesting_is_a_message_not_a_recursion_error(name):
    data = b'{"context_id": "c1", "text": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"
    refused(name, data, rf"{name}, line 1, column \d+: the JSON is nested more than 64 levels")


@pytest.mark.parametrize(
    ("cell", "what"), [('{"a": 1}', "an object"), ("[1, 2]", "a list")], ids=["object", "list"]
)
def test_nested_cell_is_refused_with_row_and_column(cell, what):
    data = f'[{{"context_id": "c1", "text": "x"}}, {{"context_id": {cell}, "text": "y"}}]'
    refused("n.json", data.encode(), rf"n.json, row 2, column 'context_id': the value is {what}")


def test_repeated_key_in_an_object_is_refused():
    data = (
        b'{"context_id": "c1", "text": "x"}\n{"context_id": "c2", "context_id": "c3", "text": 1}\n'
    )
    refused("r.jsonl", data, r"r.jsonl, row 2, column 'context_id': the object names this key")


def test_unpaired_surrogate_escape_is_refused():
    # a proper pair is one character
    refused_but_well_formed_reads(
        "s.json",
        b'[{"context_id": "c1", "text": "bad \\ud800 escape"}]',
        r"s.json, row 1, column 'text': the text holds an unpaired surrogate",
        b'[{"context_id": "c1", "text": "\\ud83d\\ude00"}]',
        "\U0001f600",
    )


# --- item 6: ambiguous layouts are not guessed


def test_ratings_without_score_is_not_read_as_a_wide_table():
    data = b"context_id,candidate_id,attribute,judge,prompt_id,sample,raw\nc1,a,q,j,p,0,7\n"
    msg = refused("r.csv", data, r"r.csv, columns .*: the layout is ambiguous")
    assert "a ratings table without its column(s) 'score'" in msg
    assert "a wide table with human score column(s) 'sample', 'raw'" in msg
    assert "'long' or 'wide'" in msg
    refused("r.csv", data, r"column 'score': required column is missing", kind="long")


def test_candidates_with_a_numeric_column_ask_for_the_layout():
    data = b"context_id,candidate_id,text,n_words\nc1,a,hello,1\nc1,b,hi there,2\n"
    msg = refused("c.csv", data, r"the layout is ambiguous")
    assert "a candidates table" in msg and "'n_words'" in msg
    long = read_upload("c.csv", data, kind="long")
    assert len(long.human_scores) == 0 and long.candidates["n_words"].tolist() == ["1", "2"]
    wide = read_upload("c.csv", data, kind="wide")
    assert wide.human_scores["attribute"].unique().tolist() == ["n_words"]


def test_candidates_with_a_text_notes_column_are_candidates():
    data = b"context_id,candidate_id,text,notes\nc1,a,hello,fine\nc1,b,hi,too short\n"
    ds = read_upload("c.csv", data)
    assert ds.candidates["notes"].tolist() == ["fine", "too short"]
    assert len(ds.human_scores) == 0


def test_human_scores_without_annotator_ask_for_the_layout():
    data = b"context_id,candidate_id,attribute,score\nc1,a,coherence,3\n"
    msg = refused("h.csv", data, r"the layout is ambiguous")
    assert "a human_scores table without its column(s) 'annotator'" in msg


# --- item 7: rows, columns, cells and decompressed size are bounded


def test_forty_thousand_columns_are_refused_from_the_header(monkeypatch):
    header = ",".join(f"c{i}" for i in range(40_000))
    data = (header + "\n" + ",".join("1" for _ in range(40_000)) + "\n").encode()

    def no_table(*args, **kwargs):
        raise AssertionError("a table was built before the column count was checked")

    monkeypatch.setattr(pacsv, "read_csv", no_table)
    msg = refused("w.csv", data, rf"w.csv, column {MAX_COLUMNS + 1:,} \('c{MAX_COLUMNS}'\)")
    assert f"40,000 columns, more than the limit of {MAX_COLUMNS:,} columns" in msg


def test_json_with_too_many_distinct_keys_is_refused():
    records = [{f"k{i}": 1} for i in range(MAX_COLUMNS + 1)]
    with pytest.raises(DataError, match=rf"k.json, column {MAX_COLUMNS + 1:,}"):
        read_frame("k.json", json.dumps(records).encode())


def test_parquet_row_count_is_checked_before_decompressing(monkeypatch):
    table = pa.table({"sample": pa.array(np.zeros(MAX_ROWS + 1, dtype=np.int8))})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    data = buf.getvalue()
    assert len(data) < 1_000_000  # small on disk, millions of rows once read

    def no_read(*args, **kwargs):
        raise AssertionError("the data were decompressed before the row count was checked")

    monkeypatch.setattr(pd, "read_parquet", no_read)
    monkeypatch.setattr(pq.ParquetFile, "read", no_read)
    msg = refused("big.parquet", data, rf"big.parquet, row {MAX_ROWS + 1:,}: the file has more")
    assert f"limit of {MAX_ROWS:,} data rows" in msg


def test_parquet_decompressed_size_and_cells_are_bounded():
    df = pd.DataFrame({"context_id": [f"c{i}" for i in range(2000)], "text": ["x" * 50] * 2000})
    buf = io.BytesIO()
    df.to_parquet(buf)
    with pytest.raises(DataError, match=r"t.parquet: the Parquet file's data decompress to"):
        read_frame("t.parquet", buf.getvalue(), limits=Limits(max_decompressed_bytes=10_000))
    with pytest.raises(DataError, match=r"t.parquet, row 1,001: .* more than the limit of 2,000"):
        read_frame("t.parquet", buf.getvalue(), limits=Limits(max_cells=2000))


def test_csv_rows_are_bounded():
    data = b"context_id,text\n" + b"".join(b"c%d,t\n" % i for i in range(30))
    with pytest.raises(DataError, match=r"c.csv, row 11: the file has more than the limit of 10"):
        read_frame("c.csv", data, limits=Limits(max_rows=10))
    with pytest.raises(DataError, match=r"c.jsonl, row 11: the file has more than the limit"):
        read_frame("c.jsonl", b'{"a": 1}\n' * 30, limits=Limits(max_rows=10, max_cells=None))


def test_nested_parquet_column_is_refused():
    table = pa.table({"context_id": ["c1"], "text": pa.array([["a", "b"]])})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    refused("n.parquet", buf.getvalue(), r"n.parquet, column 'text': holds values of type list")


# --- item 8: JSONL line separators, overflow, float ids, duplicated aliases, duplicate keys

SEPARATORS = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg"


def test_jsonl_round_trips_unicode_line_separators(tmp_path):
    table = pd.DataFrame({"context_id": ["c1", "c\u20282"], "text": [SEPARATORS, "plain"]})
    path = write_table(table, tmp_path / "contexts.jsonl")
    assert path.read_bytes().count(b"\n") == 2  # one line per row, whatever the text holds
    back = read_table(path, "contexts")
    assert back["text"].tolist() == [SEPARATORS, "plain"]
    assert back["context_id"].tolist() == ["c1", "c\u20282"]
    # written by another tool, the separators raw inside the strings
    raw = json.dumps({"context_id": "c1", "text": SEPARATORS}, ensure_ascii=False) + "\r\n"
    assert read_upload("x.jsonl", raw.encode()).contexts["text"].tolist() == [SEPARATORS]


RATINGS_HEAD = "context_id,candidate_id,attribute,judge,prompt_id,sample,score\n"


@pytest.mark.parametrize("sample", ["1e20", "9223372036854775808", "-9223372036854775809"])
def test_sample_out_of_int64_range_is_refused(sample):
    data = (RATINGS_HEAD + f"c1,a,q,j,p,0,3\nc1,a,q,j,p,{sample},3\n").encode()
    refused("r.csv", data, rf"r.csv, row 2, column 'sample': '{sample}' is outside the whole")


def test_large_samples_are_exact():
    data = (
        RATINGS_HEAD + "c1,a,q,j,p,9007199254740993,3\nc1,a,q,j,p,9007199254740992,3\n"
    ).encode()
    assert read_upload("r.csv", data).ratings["sample"].tolist() == [2**53 + 1, 2**53]
    js = [{"context_id": "c1", "candidate_id": "a", "attribute": "q", "judge": "j"}] * 2
    js = [dict(r, prompt_id="p", sample=s, score=3) for r, s in zip(js, [1e20, 2], strict=True)]
    refused("r.json", json.dumps(js).encode(), r"r.json, row 1, column 'sample': 1e\+20 is out")


def test_float_ids_that_cannot_be_exact_are_refused():
    data = json.dumps([{"context_id": 2.0**63, "text": "a"}, {"context_id": 1e19, "text": "b"}])
    msg = refused("c.json", data.encode(), r"c.json, row 1, column 'context_id': the id 9.22")
    assert "row 2, column 'context_id': the id 1e+19" in msg
    # below 2**53 a whole float is the integer it holds, and different floats stay different
    ok = json.dumps(
        [{"context_id": 2.0**52 + 1, "text": "a"}, {"context_id": 2.0**52, "text": "b"}]
    )
    ids = read_upload("c.json", ok.encode()).contexts["context_id"].tolist()
    assert ids == [str(2**52 + 1), str(2**52)]


def test_parquet_float_id_column_is_refused_above_two_to_the_53():
    df = pd.DataFrame({"context_id": [1.0, 2.0**63, np.nan], "text": ["a", "b", "c"]})
    buf = io.BytesIO()
    df.to_parquet(buf)
    msg = refused("c.parquet", buf.getvalue(), r"c.parquet, row 2, column 'context_id'")
    assert "floating-point number" in msg


def test_integer_ids_in_json_are_exact_beyond_float_precision():
    data = json.dumps(
        [
            {"context_id": 2**60 + 1, "text": "a"},
            {"context_id": None, "text": "b"},
            {"context_id": 2**64 + 1, "text": "c"},
        ]
    )
    msg = refused("c.json", data.encode(), r"c.json, row 2, column 'context_id': the cell is empty")
    assert "row 1" not in msg and "row 3" not in msg
    data = json.dumps([{"context_id": 2**60 + 1, "text": "a"}, {"context_id": 1.5, "text": "b"}])
    ids = read_upload("c.json", data.encode()).contexts["context_id"].tolist()
    assert ids == [str(2**60 + 1), "1.5"]


def test_duplicated_pairwise_alias_columns_are_refused():
    data = b"context,first,second,verdict,winner\nc1,a,b,A,B\n"
    refused("p.csv", data, r"p.csv, columns 'verdict' and 'winner': each could be the verdict")
    data = b"context,first,second,p,Probability\nc1,a,b,0.2,0.8\n"
    refused("p.csv", data, r"columns 'p' and 'Probability': each could be the probability")


def test_duplicated_wide_columns_are_refused():
    data = b"context_id,candidate_id,Coherence,coherence\nc1,a,4,2\n"
    refused("w.csv", data, r"w.csv, columns 'Coherence' and 'coherence': all hold the scores")
    data = b"doc_id,context,candidate,coherence\nc1,c1,a,4\n"
    refused("w.csv", data, r"w.csv, columns 'doc_id' and 'context': each could be the context")


# --- item 9: dataset.json may only name files inside its folder


@pytest.fixture
def saved(tmp_path):
    folder = save_dataset(simulate(2, 3, random_state=0), tmp_path / "ds")
    return folder


def _point(folder, name, target):
    meta = json.loads((folder / "dataset.json").read_text())
    meta["tables"][name] = target
    (folder / "dataset.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("how", ["absolute", "dotdot"])
def test_load_dataset_refuses_paths_outside_the_folder(saved, tmp_path, how):
    outside = tmp_path / "secret.csv"
    outside.write_text("context_id,text\nx,private\n")
    _point(saved, "contexts", str(outside) if how == "absolute" else "../secret.csv")
    with pytest.raises(DataError, match=r"dataset.json, tables.contexts: .* points outside"):
        load_dataset(saved)


def test_load_dataset_refuses_a_link_leading_out(saved, tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("context_id,text\nx,private\n")
    os.symlink(outside, saved / "linked.csv")
    _point(saved, "contexts", "linked.csv")
    with pytest.raises(DataError, match=r"tables.contexts: 'linked.csv' is a link to .*outside"):
        load_dataset(saved)


def test_load_dataset_follows_links_inside_the_folder(saved):
    os.symlink(saved / "contexts.csv", saved / "alias.csv")
    _point(saved, "contexts", "alias.csv")
    assert len(load_dataset(saved).contexts) == 2


def test_load_dataset_refuses_malformed_metadata(saved):
    (saved / "dataset.json").write_text('{"tables": ["contexts.csv"]}')
    with pytest.raises(DataError, match=r"dataset.json: expected an object with 'tables'"):
        load_dataset(saved)
    (saved / "dataset.json").write_text('{"tables": {}, "scales": {"q": "high"}}')
    with pytest.raises(DataError, match=r"scale of 'q': 'high' is not a \(low, high\) pair"):
        load_dataset(saved)
