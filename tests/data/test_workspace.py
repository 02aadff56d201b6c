"""data.io.workspace: one file with datasets and settings, read back exactly, validated on open."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

import data
from data.io.workspace import BenchmarkRef, clean_settings, load_workspace, save_workspace
from data.schema import TABLE_NAMES, DataError


def _same(a, b) -> None:
    for table in TABLE_NAMES:
        pd.testing.assert_frame_equal(
            a.table(table).reset_index(drop=True), b.table(table).reset_index(drop=True)
        )
    assert a.scales == b.scales and a.description == b.description and a.source == b.source


def test_round_trip_keeps_every_table_and_setting():
    demo = data.demo_dataset()
    comps = demo.comparisons.copy()
    comps.loc[comps.index[:5], "p_first"] = np.nan  # unparsed answers stay NaN
    mine = dataclasses.replace(demo, name="mine", comparisons=comps, description="my upload")
    settings = {"app.debias.tau": 0.66, "app.debias.mode": "tau", "rank.methods": ["elo", "bt"]}
    blob = save_workspace({"demo": BenchmarkRef("demo"), "mine": mine}, "mine", settings)
    datasets, back = load_workspace(blob, "w.zip")
    assert list(datasets) == ["demo", "mine"]  # order kept
    assert datasets["demo"] == BenchmarkRef("demo")
    _same(mine, datasets["mine"])
    assert datasets["mine"].comparisons["p_first"].isna().sum() == 5
    assert back == {**settings, "app.active": "mine"}


def test_secrets_and_objects_never_reach_the_file():
    key = "sk-workspace-test-0123456789"
    settings = {
        "judge.api_key": key,
        "OPENAI_API_KEY": key,
        "judge.model": "m",
        "x.file": object(),
        "x.nan": float("nan"),
    }
    assert clean_settings(settings) == {"judge.model": "m"}
    blob = save_workspace({"demo": BenchmarkRef("demo")}, "demo", settings)
    assert key.encode() not in blob
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        assert key not in zf.read("workspace.json").decode()


def _with_manifest(blob: bytes, change) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for item in src.namelist():
            body = src.read(item)
            if item == "workspace.json":
                manifest = json.loads(body)
                change(manifest)
                body = json.dumps(manifest).encode()
            zf.writestr(item, body)
    return out.getvalue()


def test_broken_files_say_what_is_wrong():
    demo = data.demo_dataset()
    good = save_workspace({"mine": demo}, "mine")
    with pytest.raises(DataError, match=r"w\.zip: not a JudgeScope workspace \(not a zip"):
        load_workspace(b"hello", "w.zip")
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("other.txt", "x")
    with pytest.raises(DataError, match="no workspace.json inside"):
        load_workspace(empty.getvalue(), "w.zip")
    future = _with_manifest(good, lambda m: m.update(version=99))
    with pytest.raises(DataError, match="workspace version 99"):
        load_workspace(future, "w.zip")
    missing = _with_manifest(good, lambda m: m["datasets"][0]["tables"].append("ratings"))
    src = zipfile.ZipFile(io.BytesIO(missing))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:  # drop the ratings table itself
        for item in src.namelist():
            if not item.endswith("ratings.parquet"):
                zf.writestr(item, src.read(item))
    with pytest.raises(DataError, match=r"d0/ratings\.parquet \(table ratings of 'mine'\)"):
        load_workspace(out.getvalue(), "w.zip")


def test_tables_are_validated_like_an_upload():
    demo = data.demo_dataset()
    scores = demo.human_scores.copy()
    scores.loc[scores.index[3], "score"] = 9.0  # outside the 1-5 scale
    bad = dataclasses.replace(demo, name="mine", human_scores=scores)
    blob = save_workspace({"mine": bad}, "mine")
    with pytest.raises(DataError) as err:
        load_workspace(blob, "w.zip")
    text = str(err.value)
    assert "w.zip: mine/human_scores" in text and "score" in text and "nothing was opened" in text


def test_active_that_is_not_in_the_file_is_none():
    blob = save_workspace({"demo": BenchmarkRef("demo")}, "gone")
    assert load_workspace(blob)[1]["app.active"] is None


def test_reference_systems_survive_the_file_and_old_files_still_load():
    demo = data.demo_dataset()
    mine = dataclasses.replace(demo, name="mine", reference_systems=("lead", "large"))
    blob = save_workspace({"mine": mine}, "mine")
    back = load_workspace(blob, "w.zip")[0]["mine"]
    assert back.reference_systems == ("lead", "large")
    _same(mine, back)
    # a workspace saved before reference systems existed: none
    old = _with_manifest(blob, lambda m: m["datasets"][0].pop("reference_systems"))
    assert load_workspace(old, "w.zip")[0]["mine"].reference_systems == ()
    bad = _with_manifest(blob, lambda m: m["datasets"][0].update(reference_systems="lead"))
    with pytest.raises(DataError, match="reference_systems of dataset 'mine' are not a list"):
        load_workspace(bad, "w.zip")
