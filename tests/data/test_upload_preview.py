"""The upload preview of a wide file (issue 23, item 10): the columns are told apart in bulk
(one parse for all of them) with the same outcome as one by one, and a preview is kept per
file bytes and mapping, so a rerun with nothing changed reads nothing again."""

from __future__ import annotations

import dataclasses

import pandas as pd

from data.coerce import coerce_float, coerce_float_columns
from data.io import preview_upload, read_frame
from data.io import result as io_result
from data.io.guess import _has_numbers, _number_columns
from data.io.pairwise_guess import _verdict_like, _verdict_like_columns


def _wide(n: int = 300) -> bytes:
    header = ["context_id", "candidate_id", "notes"] + [f"sc{k:03d}" for k in range(n)]
    rows = [
        ["c1", "a", "fine", *(str(k % 10) for k in range(n))],
        ["c1", "b", "A>B", *("" if k % 7 else "3" for k in range(n))],
    ]
    return "".join(",".join(r) + "\n" for r in [header, *rows]).encode()


def test_bulk_column_facts_agree_with_one_column_at_a_time():
    frame = read_frame("w.csv", _wide(40))
    frame["mixed"] = pd.Series([1, "tie"], dtype=object)
    frame["floats"] = [1.5, float("nan")]
    frame["flags"] = [True, False]
    frame["verdicts"] = pd.Series(["A", "B"], dtype="str")
    cols = list(frame.columns)
    assert _number_columns(frame, cols) == {c for c in cols if _has_numbers(frame[c])}
    assert _verdict_like_columns(frame, cols) == {c for c in cols if _verdict_like(frame[c])}
    bulk = coerce_float_columns(frame, cols)
    for c in cols:
        num, bad = coerce_float(frame[c])
        pd.testing.assert_series_equal(pd.Series(bulk[c][0]), pd.Series(num.to_numpy()))
        assert bulk[c][1].tolist() == bad.tolist()


def test_a_preview_is_kept_per_bytes_and_mapping(monkeypatch):
    data = _wide()
    first = preview_upload("w.csv", data)
    assert first.kind == "wide" and len(first.mapping.attributes) == 300

    def no_read(*args, **kwargs):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(io_result, "_read_preview", no_read)
    again = preview_upload("w.csv", data)
    assert again == first and again is not first
    again.layouts.append(("x", "y"))  # the page changes what it is given
    again.result.notes.append("changed")
    kept = preview_upload("w.csv", data)
    assert kept.layouts == first.layouts and kept.result.notes == first.result.notes
    monkeypatch.undo()
    fewer = dict(list(first.mapping.attributes.items())[:-1])
    changed = preview_upload(
        "w.csv", data, "wide", dataclasses.replace(first.mapping, attributes=fewer)
    )
    assert set(changed.result.dataset.human_scores["attribute"]) == set(fewer.values())
    other = preview_upload("w.csv", data + b"c2,a,x," + b",".join([b"1"] * 300) + b"\n")
    assert other.n_rows == 3
