"""data.io.folders: a Dataset saved to a folder and loaded back."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from data.io import load_dataset, save_dataset
from data.schema import TABLE_NAMES, DataError, Dataset
from data.synthetic.demo import demo_dataset
from data.synthetic.simulate import simulate
from tests.data._io_tables import tricky_tables


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_save_and_load_dataset(tmp_path, fmt):
    tables = tricky_tables()
    ds = Dataset(
        "tricky \u00e9",
        scales={"coh\u00e9rence": (0.0, 5.0)},
        description="round trip",
        source="tests",
        **tables,
    )
    folder = save_dataset(ds, tmp_path / "ds", fmt=fmt)
    meta = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
    assert meta["tables"]["comparisons"] == f"comparisons.{fmt}"
    back = load_dataset(folder)
    assert (back.name, back.description, back.source) == (ds.name, "round trip", "tests")
    assert back.scales == {"coh\u00e9rence": (0.0, 5.0)}
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(back.table(name), ds.table(name))


def test_load_dataset_with_a_table_missing(tmp_path):
    ds = simulate(2, 3, random_state=0)
    folder = save_dataset(ds, tmp_path / "ds")
    (folder / "ratings.csv").unlink()
    back = load_dataset(folder)
    assert len(back.ratings) == 0 and len(back.comparisons) == len(ds.comparisons)


def test_reference_systems_round_trip_and_old_folders(tmp_path):
    ds = demo_dataset()
    system = "lead"
    ds.reference_systems = (system,)
    folder = save_dataset(ds, tmp_path / "ds")
    assert load_dataset(folder).reference_systems == (system,)
    meta_path = folder / "dataset.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["reference_systems"]  # a folder saved before reference systems existed
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert load_dataset(folder).reference_systems == ()
    meta["reference_systems"] = system  # a bare name is refused, naming the field
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(DataError, match="'reference_systems' must be a list"):
        load_dataset(folder)
