"""data.io.workspace: one file with datasets and settings, read back exactly, validated on open."""

from __future__ import annotations

import dataclasses
import io
import json
import re
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
    assert (
        "ratings"
        in json.loads(zipfile.ZipFile(io.BytesIO(good)).read("workspace.json"))["datasets"][0][
            "tables"
        ]
    )
    src = zipfile.ZipFile(io.BytesIO(good))
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


# ----------------------------------------------------------------------------- issue 23
def _manifest_of(blob: bytes) -> dict:
    return json.loads(zipfile.ZipFile(io.BytesIO(blob)).read("workspace.json"))


def _rebuilt(blob: bytes, manifest_text: str) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for item in src.namelist():
            body = manifest_text.encode() if item == "workspace.json" else src.read(item)
            zf.writestr(item, body)
    return out.getvalue()


def _small():
    from tests.data.test_fuzz_workspace import base_dataset

    return base_dataset()


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda m: m.update(active=[1]), "the active dataset is a list"),
        (lambda m: m.update(settings=[1]), "the settings are a list"),
        (lambda m: m.update(settings="x"), "the settings are a text"),
        (lambda m: m["datasets"][0].update(tables=5), "its tables are not a list"),
        (lambda m: m.update(version=True), "workspace version True"),
        (lambda m: m["datasets"].append(dict(m["datasets"][0])), "two datasets are named"),
    ],
)
def test_malformed_manifests_are_refused_naming_the_member(change, says):
    blob = save_workspace({"mine": _small()}, "mine", {"a": 1})
    manifest = _manifest_of(blob)
    change(manifest)
    with pytest.raises(DataError, match=re.escape(says)) as err:
        load_workspace(_rebuilt(blob, json.dumps(manifest)), "w.zip")
    assert "w.zip" in str(err.value) and "workspace.json" in str(err.value)


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"settings": {"a": ' + "[" * 900 + "]" * 900 + "}}", "nests more than 64 levels"),
        ("[" * 100_000 + "]" * 100_000, "nests more than 64 levels"),
        ('{"a": ' + "9" * 5_000 + "}", "an integer of 5,000 digits"),
        ('{"a": NaN}', "NaN is not JSON"),
    ],
)
def test_hostile_json_is_a_data_error(text, says):
    blob = save_workspace({"mine": _small()}, "mine")
    with pytest.raises(DataError, match=re.escape(says)) as err:
        load_workspace(_rebuilt(blob, text), "w.zip")
    assert "w.zip, member workspace.json" in str(err.value)


def _patched(blob: bytes, member: str, offset: int, value: bytes) -> bytes:
    """``blob`` with ``value`` written at ``offset`` of ``member``'s local header and at the
    same field of its central directory entry (2 bytes further: "version made by")."""
    import struct

    zf = zipfile.ZipFile(io.BytesIO(blob))
    data = bytearray(blob)
    local = zf.getinfo(member).header_offset
    data[local + offset : local + offset + len(value)] = value
    pos = zf.start_dir
    while True:
        n, m, k = struct.unpack("<HHH", data[pos + 28 : pos + 34])
        if data[pos + 46 : pos + 46 + n] == member.encode():
            break
        pos += 46 + n + m + k
    data[pos + offset + 2 : pos + offset + 2 + len(value)] = value
    return bytes(data)


def test_damaged_archives_are_data_errors_naming_the_member():
    blob = save_workspace({"mine": _small()}, "mine")
    member = "d0/contexts.parquet"
    cases = {
        "encrypted": (_patched(blob, member, 6, b"\x01\x00"), "is encrypted"),
        "method 99": (_patched(blob, member, 8, b"\x63\x00"), "compressed with method 99"),
        "crc": (_patched(blob, member, 14, b"\0\0\0\0"), "Bad CRC-32"),
    }
    end = blob.rindex(b"PK\x05\x06")
    bad_offset = bytearray(blob)
    bad_offset[end + 16 : end + 20] = (len(blob) * 2).to_bytes(4, "little")
    cases["central directory offset"] = (bytes(bad_offset), "damaged")
    twice = io.BytesIO()
    with zipfile.ZipFile(twice, "w") as zf, zipfile.ZipFile(io.BytesIO(blob)) as src:
        for item in src.namelist():
            zf.writestr(item, src.read(item))
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr(member, src.read(member))
    cases["two members"] = (twice.getvalue(), f"two members are named {member!r}")
    for what, (content, says) in cases.items():
        with pytest.raises(DataError, match=re.escape(says)) as err:
            load_workspace(content, "w.zip")
        assert str(err.value).startswith("w.zip"), what


def test_bombs_are_refused_before_they_are_read():
    from tests.data.test_fuzz_workspace import Member, dictionary_bomb, raw_zip, zero_bomb

    blob = save_workspace({"mine": _small()}, "mine")
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        bodies = {n: zf.read(n) for n in zf.namelist()}
    data, crc = zero_bomb(300 << 20)
    manifest_bomb = raw_zip(
        [Member.of(n, b) for n, b in bodies.items() if n != "workspace.json"]
        + [Member(b"workspace.json", data, crc, 300 << 20)]
    )
    with pytest.raises(DataError, match=r"declares 314,572,800 bytes.*MAX_MANIFEST_BYTES"):
        load_workspace(manifest_bomb, "w.zip")
    bodies["d0/contexts.parquet"] = dictionary_bomb(2_000_000, 2_000)
    with pytest.raises(DataError, match=r"expand to 4,00\d\.\d MB.*MAX_DECOMPRESSED_BYTES"):
        load_workspace(raw_zip([Member.of(n, b) for n, b in bodies.items()]), "w.zip")


def test_dataset_and_member_counts_are_bounded():
    from data.limits import MAX_WORKSPACE_DATASETS

    blob = save_workspace({"mine": _small()}, "mine")
    manifest = _manifest_of(blob)
    manifest["datasets"] += [
        {"name": f"d{k}", "benchmark": "demo"} for k in range(MAX_WORKSPACE_DATASETS)
    ]
    with pytest.raises(DataError, match="MAX_WORKSPACE_DATASETS"):
        load_workspace(_rebuilt(blob, json.dumps(manifest)), "w.zip")
    with pytest.raises(ValueError, match="MAX_WORKSPACE_DATASETS"):
        save_workspace({f"d{k}": BenchmarkRef("demo") for k in range(MAX_WORKSPACE_DATASETS + 1)})


def test_report_and_workspace_id_come_back():
    from data.io.workspace import read_workspace

    report = {"version": 1, "views": [{"title": "连贯性", "values": [1, 2.5, None]}]}
    blob = save_workspace(
        {"mine": _small()}, "mine", {"a": 1}, report=report, workspace_id="0123456789ab"
    )
    ws = read_workspace(blob, "w.zip")
    assert ws.report == report and ws.workspace_id == "0123456789ab"
    assert ws.settings == {"a": 1, "app.active": "mine"}
    with pytest.raises(ValueError, match="12 hexadecimal digits"):
        save_workspace({"mine": _small()}, workspace_id="../../x")


def test_settings_that_would_not_open_again_are_not_written():
    deep: list = []
    for _ in range(100):
        deep = [deep]
    kept = clean_settings({"deep": deep, "big": 10**30, "ok": [[1]]})
    assert kept == {"ok": [[1]]}
