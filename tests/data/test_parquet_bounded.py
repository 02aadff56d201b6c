"""data.rawread.parquet.read_parquet (issue 23), the one Parquet reader of uploads and
workspaces: the size a file's values expand to is bounded before they are materialised, and
the Arrow columns are read as stored (the pandas metadata ignored)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from data.limits import UPLOAD_LIMITS, Limits
from data.rawread.parquet import read_parquet
from data.schema import DataError
from tests.data._io_tables import swap_pandas_names, two_candidates


def _bytes(table: pa.Table, **kw) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, **kw)
    return out.getvalue()


def test_a_dictionary_bomb_is_refused_from_its_dictionary():
    from tests.data.test_fuzz_workspace import dictionary_bomb

    body = dictionary_bomb(2_000_000, 2_000)  # under 1 MB, 4 GB of text
    assert len(body) < 1_000_000
    sizes: list[int] = []
    with pytest.raises(DataError) as err:
        read_parquet(body, "bomb.parquet", UPLOAD_LIMITS, sizes=sizes)
    text = str(err.value)
    assert text.startswith("bomb.parquet: the values")
    assert "4,002,000,000 bytes" in text and "MAX_DECOMPRESSED_BYTES" in text
    assert "split the table" in text and not sizes
    # the same file is read when the limit allows it (the bound is what refuses it)
    rows = 50_000
    zeros = pa.array(np.zeros(rows, np.int32))
    small = pa.table(
        {
            "context_id": pa.DictionaryArray.from_arrays(zeros, pa.array(["c"])),
            "text": pa.DictionaryArray.from_arrays(zeros, pa.array(["x" * 100])),
        }
    )
    body = _bytes(small, store_schema=False)
    limits = Limits(max_decompressed_bytes=rows * 101 - 1)
    with pytest.raises(DataError, match="expand to"):
        read_parquet(body, "s.parquet", limits)
    frame = read_parquet(body, "s.parquet", Limits(), sizes=sizes)
    assert sizes == [rows * 101] and (frame["text"] == "x" * 100).all()


def test_fixed_width_values_are_counted_before_reading():
    table = pa.table({"id": pa.array(["a"] * 3_000), "blob": pa.nulls(3_000, pa.binary(400_000))})
    with pytest.raises(DataError, match=r"fixed-width values expand to 1,200\.0 MB"):
        read_parquet(_bytes(table, store_schema=False), "w.parquet", UPLOAD_LIMITS)


def test_columns_are_read_as_stored_not_as_the_pandas_metadata_says():
    cands = two_candidates()
    out = io.BytesIO()
    cands.set_index("system").to_parquet(out)
    frame = read_parquet(out.getvalue(), "c.parquet", UPLOAD_LIMITS)
    assert frame["system"].tolist() == ["s1", "s2"]  # pandas restores it as the index
    assert isinstance(frame.index, pd.RangeIndex)
    # crafted metadata that swaps two columns' names
    table = pa.Table.from_pandas(cands, preserve_index=False)
    body = _bytes(swap_pandas_names(table, {"context_id": "text", "text": "context_id"}))
    assert pd.read_parquet(io.BytesIO(body))["context_id"].tolist() == ["x", "y"]  # mis-read
    frame = read_parquet(body, "c.parquet", UPLOAD_LIMITS)
    assert frame["context_id"].tolist() == ["c1", "c1"] and frame["text"].tolist() == ["x", "y"]


def test_cells_of_every_kind_come_back_exactly():
    big = [1, None, 2**60 + 1]
    df = pd.DataFrame(
        {
            "text": pd.Series(["a", None, "連貫性"], dtype="str"),
            "f": [1.5, np.nan, 3.0],
            "i": np.array([1, 2, 3], dtype=np.int64),
            "b": [True, False, True],
            "big": pd.Series(big, dtype=object),
            "cat": pd.Categorical(["x", "y", "x"]),
            "none": [None, None, None],
            "bin": [b"ok", "ü".encode(), None],
        }
    )
    out = io.BytesIO()
    df.to_parquet(out, index=False)
    frame = read_parquet(out.getvalue(), "k.parquet", UPLOAD_LIMITS)
    assert list(frame.columns) == list(df.columns)
    assert frame["big"].tolist() == big  # not rounded through float64
    assert frame["bin"].tolist() == ["ok", "ü", None]
    assert str(frame["cat"].dtype) == "category" and frame["i"].dtype == np.int64
    pd.testing.assert_series_equal(frame["text"], df["text"])


@pytest.mark.parametrize(
    "table, says",
    [
        (pa.table({"a": pa.array([[1], [2, 3]])}), "holds values of type list"),
        (pa.table({"a": pa.array([{"x": 1}])}), "holds values of type struct"),
        (
            pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"]),
            "two columns have this name",
        ),
        (pa.table({"a": [b"\xff\xfe"]}), "not UTF-8"),
    ],
)
def test_what_is_not_a_table_cell_is_refused(table, says):
    with pytest.raises(DataError, match=says):
        read_parquet(_bytes(table), "n.parquet", UPLOAD_LIMITS)


def test_column_chunks_in_another_file_are_refused(tmp_path):
    from tests.data.test_fuzz_workspace import external_chunk

    elsewhere = tmp_path / "other.parquet"
    elsewhere.write_bytes(_bytes(pa.table({"a": ["secret"]})))
    body = external_chunk(_bytes(pa.table({"a": ["mine"]})), str(elsewhere))
    with pytest.raises(DataError, match="said to live in another file"):
        read_parquet(body, "e.parquet", UPLOAD_LIMITS)
