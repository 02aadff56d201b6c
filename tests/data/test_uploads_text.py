"""Text uploads read exactly (issue 23, item 10): integers of more than 4,300 digits (more
than Python converts) are a message naming the row and column, or text where the field is
text, never a bare ValueError; a CSV whose last cell is a quoted line break reads as written,
and write_table -> read_table keeps such cells."""

from __future__ import annotations

import pandas as pd
import pytest

from data.importers._common import read_records
from data.io import read_frame, read_table, read_upload, write_table
from data.schema import DataError

BIG = "1" + "0" * 5_000  # Python's int() refuses more than 4,300 digits
RATINGS = ["context_id", "candidate_id", "prompt_id", "judge", "attribute", "sample", "score"]


def _ratings_csv(sample: str, score: str) -> bytes:
    return f"{','.join(RATINGS)}\nc,a,p,j,q,{sample},{score}\n".encode()


def _ratings_jsonl(sample: str, score: str) -> bytes:
    cells = '"context_id": "c", "candidate_id": "a", "prompt_id": "p", "judge": "j"'
    return f'{{{cells}, "attribute": "q", "sample": {sample}, "score": {score}}}\n'.encode()


@pytest.mark.parametrize(
    "name, data, says",
    [
        ("r.csv", _ratings_csv(BIG, "1"), "r.csv, row 1, column 'sample': '10000"),
        ("r.jsonl", _ratings_jsonl("-" + BIG, "1"), "r.jsonl, row 1, column 'sample': '-1000"),
        ("r.jsonl", _ratings_jsonl("1", BIG), "r.jsonl, row 1, column 'score': '1000"),
        ("r.csv", _ratings_csv("1", BIG), "r.csv, row 1, column 'score': '1000"),
    ],
)
def test_a_5000_digit_number_is_refused_with_its_row_and_column(name, data, says):
    with pytest.raises(DataError, match=says):
        read_upload(name, data, "ratings")


def test_a_5000_digit_integer_in_a_text_field_is_read_as_its_digits():
    for name, data in [
        ("c.json", f'[{{"context_id": {BIG}, "text": "t"}}]'.encode()),
        ("c.jsonl", f'{{"context_id": "c", "text": {BIG}}}\n'.encode()),
    ]:
        frame = read_frame(name, data)
        assert BIG in frame.iloc[0].tolist()
        ds = read_upload(name, data, "contexts")
        assert BIG in ds.contexts.iloc[0].tolist()


def test_a_5000_digit_integer_in_a_judgment_file_is_a_message():
    with pytest.raises(DataError, match=r"a.jsonl, line 1: a number cannot be read"):
        read_records("a.jsonl", f'{{"x": {BIG}}}\n'.encode())
    with pytest.raises(DataError, match=r"a.json: a number cannot be read"):
        read_records("a.json", f'[{{"x": {BIG}}}]'.encode())


@pytest.mark.parametrize(
    "data, last",
    [
        (b'context_id,text\nc,"\n"\n', "\n"),
        (b'context_id,text\nc,"\n"', "\n"),
        (b'context_id,text\r\nc,"\r\n"\r\n', "\r\n"),
        (b'text\n"\n"\n', "\n"),
        (b'context_id,text\nc,"a""\n"\n', 'a"\n'),
    ],
)
def test_a_quoted_line_break_as_the_last_cell_is_read(data, last):
    assert read_frame("q.csv", data).iloc[-1, -1] == last
    assert read_frame("q.tsv", data.replace(b",", b"\t")).iloc[-1, -1] == last


@pytest.mark.parametrize("data", [b'context_id,text\nc,"\n', b'text\n"\n', b'a,b\nc,"x\n\n'])
def test_a_quote_never_closed_is_still_refused(data):
    with pytest.raises(DataError, match="a quoted cell starts here"):
        read_frame("u.csv", data)


@pytest.mark.parametrize("ext", ["csv", "tsv"])
@pytest.mark.parametrize("last", ["\n", "\r", "a\r\n", "\r\r", "x\n\n"])
def test_line_breaks_in_cells_survive_write_and_read(tmp_path, ext, last):
    df = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["t", last]})
    back = read_table(write_table(df, tmp_path / f"c.{ext}"), "contexts")
    assert back["text"].tolist() == ["t", last]
    ratings = pd.DataFrame(
        {
            "context_id": ["c1", "c1"],
            "candidate_id": ["a", "b"],
            "prompt_id": ["p", "p"],
            "judge": ["j", "j"],
            "attribute": ["q", "q"],
            "sample": [0, 0],
            "score": [1.5, float("nan")],
            "note": ["x\r", "y"],  # every cell quoted then: numbers and gaps read the same
        }
    )
    got = read_table(write_table(ratings, tmp_path / f"r.{ext}"), "ratings")
    assert got["note"].tolist() == ["x\r", "y"] and got["score"].iloc[0] == 1.5
    assert got["score"].isna().iloc[1] and got["sample"].tolist() == [0, 0]
