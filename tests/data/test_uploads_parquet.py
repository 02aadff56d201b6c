"""Uploaded Parquet files (issue 23, items 8 and 9): read by the one bounded reader that
workspace files use, so a dictionary bomb is refused from the size its text expands to, and
the Arrow columns are read as stored, whatever the ``pandas`` metadata says."""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from data.io import read_frame, read_upload
from data.limits import UPLOAD_LIMITS
from data.schema import DataError
from tests.data._io_tables import swap_pandas_names, two_candidates
from tests.data.test_fuzz_uploads import base_tables
from tests.data.test_fuzz_workspace import dictionary_bomb


def _parquet(df: pd.DataFrame, **kw) -> bytes:
    out = io.BytesIO()
    df.to_parquet(out, **kw)
    return out.getvalue()


def test_a_5_kb_dictionary_bomb_upload_is_refused_from_its_expanded_size(monkeypatch):
    body = dictionary_bomb(1_000_000, 5_500)  # 5.5 GB of text once decoded
    assert len(body) < 6_000

    def no_decoding(*args, **kwargs):
        raise AssertionError("the text was decoded before its size was checked")

    monkeypatch.setattr(pa, "chunked_array", no_decoding)  # what decodes the dictionaries
    with pytest.raises(DataError) as err:
        read_frame("bomb.parquet", body)
    msg = str(err.value)
    assert msg.startswith("bomb.parquet: the values (text decoded from its dictionaries)")
    assert "5,501,000,000 bytes" in msg  # both columns: 1 + 5,500 bytes a row
    limit = UPLOAD_LIMITS.max_decompressed_bytes
    assert f"limit of {limit / 1e6:,.1f} MB ({limit:,} bytes, MAX_DECOMPRESSED_BYTES" in msg
    assert "split the table into smaller files" in msg


def test_an_index_written_by_pandas_is_read_as_a_column():
    cands = two_candidates()
    ds = read_upload("candidates.parquet", _parquet(cands.set_index("system")), "candidates")
    assert ds.candidates["system"].tolist() == ["s1", "s2"]  # was all NaN
    # an unnamed index (a filtered frame) holds row labels, not cells: no extra column
    frame = read_frame("f.parquet", _parquet(cands[cands["system"] == "s2"]))
    assert list(frame.columns) == ["context_id", "candidate_id", "system", "text"]
    assert frame.index.tolist() == [0]


def test_crafted_pandas_metadata_cannot_swap_columns():
    contexts = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["first text", "second text"]})
    table = pa.Table.from_pandas(contexts, preserve_index=False)
    out = io.BytesIO()
    pq.write_table(swap_pandas_names(table, {"context_id": "text", "text": "context_id"}), out)
    assert pd.read_parquet(io.BytesIO(out.getvalue()))["context_id"].tolist()[0] == "first text"
    ds = read_upload("contexts.parquet", out.getvalue(), "contexts")
    assert ds.contexts["context_id"].tolist() == ["c1", "c2"]
    assert ds.contexts["text"].tolist() == ["first text", "second text"]


@pytest.mark.parametrize("layout", list(base_tables()))
def test_a_column_written_as_the_index_is_not_missing(layout):
    """The issue's 7 files refused with "column missing": each layout written with its
    first column as the pandas index reads as the same file written without an index."""
    df = base_tables()[layout].convert_dtypes()
    kind = "long" if layout not in ("wide", "pairwise") else layout
    plain = read_upload(f"{layout}.parquet", _parquet(df, index=False), kind)
    indexed = _parquet(df.set_index(df.columns[0]))
    assert pd.read_parquet(io.BytesIO(indexed)).index.name == df.columns[0]
    got = read_upload(f"{layout}.parquet", indexed, kind)
    for name in ("contexts", "candidates", "ratings", "human_scores", "comparisons"):
        want = plain.table(name)
        have = got.table(name)[list(want.columns)]  # the index column comes last
        pd.testing.assert_frame_equal(have, want)
