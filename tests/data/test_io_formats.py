"""data.io.formats: round trips in every format and table, malformed and odd files."""

from __future__ import annotations

import pandas as pd
import pytest

from data.io import read_frame, read_table, read_upload, write_table
from data.schema import TABLE_NAMES, DataError, empty_table
from data.synthetic.simulate import simulate
from data.validate import validate_table
from tests.data._io_tables import FORMATS, tricky_tables


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", TABLE_NAMES)
def test_round_trip_every_format_and_table(tmp_path, fmt, name):
    table = tricky_tables()[name]
    path = write_table(table, tmp_path / f"{name}.{fmt}")
    back = read_table(path, name)
    pd.testing.assert_frame_equal(back, table)
    # detected without being told the table
    pd.testing.assert_frame_equal(read_table(path), table)
    # and from bytes + file name, as an upload arrives
    pd.testing.assert_frame_equal(read_table(path.name, name, data=path.read_bytes()), table)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", TABLE_NAMES)
def test_round_trip_empty_tables(tmp_path, fmt, name):
    table = validate_table(empty_table(name), name)
    path = write_table(table, tmp_path / f"{name}.{fmt}")
    pd.testing.assert_frame_equal(read_table(path, name), table)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_simulated(tmp_path, fmt):
    ds = simulate(3, 4, mode="samples", n_samples=2, tie_rate=0.2, n_systems=5, random_state=1)
    for name in TABLE_NAMES:
        path = write_table(ds.table(name), tmp_path / f"{name}.{fmt}")
        pd.testing.assert_frame_equal(read_table(path, name), ds.table(name))


def test_unknown_extension():
    with pytest.raises(DataError, match=r"scores.xlsx: cannot tell the file format.*\.csv"):
        read_upload("scores.xlsx", b"a,b\n1,2\n")


def test_malformed_csv_and_json():
    with pytest.raises(DataError, match=r"bad.csv, row 1 \(line 2 of the file\): a quoted cell"):
        read_frame("bad.csv", b'a,b\n1,"unclosed\n')
    with pytest.raises(DataError, match=r"bad.json, line 1, column \d+: not valid JSON"):
        read_frame("bad.json", b'[{"a": 1},')
    with pytest.raises(DataError, match=r"bad.jsonl, line 2, column \d+: not valid JSON"):
        read_frame("bad.jsonl", b'{"a": 1}\n{"a": \n')
    with pytest.raises(DataError, match=r"bad.json, row 2: expected an object"):
        read_frame("bad.json", b'[{"a": 1}, 5]')


def test_json_variants_are_read():
    a = read_frame("t.json", b'{"data": [{"a": 1, "b": "x"}, {"a": 2}]}')
    b = read_frame("t.json", b'{"a": [1, 2], "b": ["x", null]}')
    assert a["a"].tolist() == [1, 2] and b["a"].tolist() == [1, 2]
    assert a["b"].iloc[0] == "x" and pd.isna(a["b"].iloc[1])


def test_bom_is_ignored():
    out = read_upload("c.csv", "\ufeffcontext_id,text\nd1,hi\n".encode())
    assert out.contexts["context_id"].tolist() == ["d1"]


def test_corrupt_parquet():
    with pytest.raises(DataError, match=r"x.parquet: not a readable Parquet file"):
        read_frame("x.parquet", b"not parquet at all")
