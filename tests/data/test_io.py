"""Readers and writers: round trips in every format, wide and pairwise layouts, uploads."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from data.io import (
    PairwiseMapping,
    WideMapping,
    detect_kind,
    load_dataset,
    pairwise_to_comparisons,
    read_frame,
    read_table,
    read_upload,
    save_dataset,
    write_table,
)
from data.schema import TABLE_NAMES, DataError, Dataset, empty_table
from data.simulate import simulate
from data.validate import validate_table

FORMATS = ["csv", "tsv", "json", "jsonl", "parquet"]

TRICKY = [
    "plain",
    "comma, inside",
    'quote " inside',
    "line\nbreak and\r\nwindows break",
    "tab\there",
    "  spaces kept  ",
    "unicode: caf\u00e9 \u6f22\u5b57 \U0001f600",
    "",
    "NA",
    "nan",
]


def tricky_tables() -> dict[str, pd.DataFrame]:
    n = len(TRICKY)
    ctx = [f"0{k}" for k in range(n)]  # leading zeros must survive
    ctx[1] = "NA"  # an id that pandas would read as missing by default
    tables = {
        "contexts": pd.DataFrame({"context_id": ctx, "text": TRICKY}),
        "candidates": pd.DataFrame(
            {
                "context_id": ctx + ctx,
                "candidate_id": [f"cand,{k}" for k in range(n)] + ["b\nc"] * n,
                "system": ["sys\u00e9"] * (2 * n - 2) + [None, None],
                "text": TRICKY + TRICKY[::-1],
            }
        ),
        "human_scores": pd.DataFrame(
            {
                "context_id": ctx,
                "candidate_id": [f"cand,{k}" for k in range(n)],
                "attribute": ["coh\u00e9rence"] * n,
                "annotator": [f"w{k % 3}" for k in range(n)],
                "score": [1.0, 2.5, np.nan, 0.1 + 0.2, 1e-17, 4.0, 5.0, 3.0, 2.0, 1.0],
            }
        ),
        "comparisons": pd.DataFrame(
            {
                "context_id": ctx,
                "attribute": ["flu"] * n,
                "judge": ['gpt, "v1"'] * n,
                "first_id": [f"cand,{k}" for k in range(n)],
                "second_id": ["b\nc"] * n,
                "p_first": [np.nan, 0.0, 1.0, 1 / 3, 0.5, np.nan, 0.25, 0.9, 0.1, 0.7],
                "verdict": ["A", None, "B", "tie", None, "A", "B", None, "tie", "A"],
                "sample": list(range(n)),
                "raw": TRICKY,
            }
        ),
        "ratings": pd.DataFrame(
            {
                "context_id": ctx,
                "candidate_id": ["b\nc"] * n,
                "attribute": ["q"] * n,
                "judge": ["j"] * n,
                "prompt_id": ["p1"] * n,
                "sample": [0] * n,
                "score": [np.nan, 1.0, 2.0, 3.5, 4.0, 5.0, np.nan, 1.0, 2.0, 3.0],
                "raw": TRICKY[::-1],
            }
        ),
    }
    return {name: validate_table(df, name) for name, df in tables.items()}


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


# --- detection and uploads of canonical tables


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


# --- wide format


WIDE_CSV = (
    b"doc,sys,response,article,coherence,fluency\n"
    b'd1,m1,"Good, short.",Art 1,4,5\n'
    b"d1,m2,Bad.,Art 1,2,\n"
    b"d2,m1,Fine.,Art 2,3,3\n"
)


def test_wide_with_mapping():
    mapping = WideMapping(
        context_id="doc",
        candidate_id="sys",
        system="sys",
        context_text="article",
        candidate_text="response",
        attributes={"coherence": "coherence", "fluency": "fluency"},
        default_annotator="expert",
    )
    ds = read_upload("wide.csv", WIDE_CSV, mapping=mapping, scales={"coherence": (1, 5)})
    assert ds.contexts["context_id"].tolist() == ["d1", "d2"]
    assert ds.contexts["text"].tolist() == ["Art 1", "Art 2"]
    assert ds.candidates[["context_id", "candidate_id", "system", "text"]].values.tolist() == [
        ["d1", "m1", "m1", "Good, short."],
        ["d1", "m2", "m2", "Bad."],
        ["d2", "m1", "m1", "Fine."],
    ]
    hs = ds.human_scores
    # the empty fluency cell of row 2 is skipped, not a score
    assert hs[
        ["context_id", "candidate_id", "attribute", "annotator", "score"]
    ].values.tolist() == [
        ["d1", "m1", "coherence", "expert", 4.0],
        ["d1", "m1", "fluency", "expert", 5.0],
        ["d1", "m2", "coherence", "expert", 2.0],
        ["d2", "m1", "coherence", "expert", 3.0],
        ["d2", "m1", "fluency", "expert", 3.0],
    ]


def test_wide_guessed_without_mapping():
    data = b"context_id,candidate_id,text,coherence,notes\nd1,a,hi,4,fine\nd1,b,yo,2,meh\n"
    ds = read_upload("w.csv", data, kind="wide")  # with a text column it could be candidates
    assert sorted(ds.human_scores["attribute"].unique()) == ["coherence"]  # notes left out
    assert ds.candidates["text"].tolist() == ["hi", "yo"]
    assert ds.human_scores["annotator"].unique().tolist() == ["human"]


def test_wide_per_annotator_columns():
    data = b"ctx,cand,coh_a1,coh_a2\nd1,a,4,5\nd1,b,1,\n"
    mapping = WideMapping(
        context_id="ctx",
        candidate_id="cand",
        attributes={"coh_a1": ("coherence", "a1"), "coh_a2": ("coherence", "a2")},
    )
    ds = read_upload("w.csv", data, mapping=mapping)
    assert ds.human_scores[["candidate_id", "annotator", "score"]].values.tolist() == [
        ["a", "a1", 4.0],
        ["a", "a2", 5.0],
        ["b", "a1", 1.0],
    ]


def test_wide_annotator_column():
    data = b"ctx,cand,rater,coh\nd1,a,r1,4\nd1,a,r2,5\nd1,b,r1,1\n"
    mapping = WideMapping(
        context_id="ctx", candidate_id="cand", annotator="rater", attributes={"coh": "coherence"}
    )
    ds = read_upload("w.csv", data, mapping=mapping)
    assert len(ds.candidates) == 2
    assert ds.human_scores["annotator"].tolist() == ["r1", "r2", "r1"]


def test_wide_errors_name_the_wide_rows_and_columns():
    data = b"ctx,cand,coh\nd1,a,4\nd1,b,x\nd1,c,9\nd1,a,3\n"
    mapping = WideMapping(context_id="ctx", candidate_id="cand", attributes={"coh": "coherence"})
    with pytest.raises(DataError) as err:
        read_upload("w.csv", data, mapping=mapping, scales={"coherence": (1, 5)})
    lines = err.value.problems
    assert lines[0].startswith("w.csv, row 2, column 'coh': 'x' is not a number")
    assert lines[1].startswith("w.csv, row 3, column 'coh': 9 is outside the scale")
    fixed = data.replace(b",x\n", b",2\n").replace(b",9\n", b",1\n")
    with pytest.raises(DataError, match=r"w.csv, rows 1, 4, column 'cand'"):
        read_upload("w.csv", fixed, mapping=mapping)


def test_wide_mapping_names_missing_column():
    mapping = WideMapping(context_id="ctx", candidate_id="cand", attributes={"cohh": "c"})
    with pytest.raises(DataError, match=r"column 'cohh'.*did you mean 'coh'"):
        read_upload("w.csv", b"ctx,cand,coh\nd1,a,4\n", mapping=mapping)


# --- pairwise-verdict format


def test_pairwise_verdict_spellings():
    data = (
        b"context,first,second,verdict\n"
        b"d1,a,b,A\nd1,b,a,2\nd1,a,c,tie\nd1,c,a,first\nd1,a,b,0\nd1,b,c,\n"
    )
    ds = read_upload("pairs.csv", data)
    c = ds.comparisons
    assert c["verdict"].tolist()[:5] == ["A", "B", "tie", "A", "tie"]
    assert pd.isna(c["verdict"].iloc[5])
    np.testing.assert_array_equal(c["p_first"], [1.0, 0.0, 0.5, 1.0, 0.5, np.nan])
    # a repeated pair becomes the next sample
    assert c["sample"].tolist() == [0, 0, 0, 0, 1, 0]
    assert c["attribute"].unique().tolist() == ["overall"]
    assert c["judge"].unique().tolist() == ["uploaded"]


def test_pairwise_probability_and_mapping():
    df = pd.DataFrame(
        {
            "q": ["x", "x"],
            "model_a": ["m1", "m2"],
            "model_b": ["m2", "m1"],
            "prob": [0.8, 0.35],
            "judge": ["gpt", "gpt"],
        }
    )
    out = pairwise_to_comparisons(
        df, PairwiseMapping(first="model_a", second="model_b", probability="prob", context_id="q")
    )
    assert out["p_first"].tolist() == [0.8, 0.35]
    assert out["judge"].tolist() == ["uploaded", "uploaded"]  # not mapped -> default
    assert out["context_id"].tolist() == ["x", "x"]


def test_pairwise_without_context_column_uses_default():
    ds = read_upload("arena.jsonl", b'{"model_a":"m1","model_b":"m2","winner":"1"}\n')
    assert ds.comparisons["context_id"].tolist() == ["all"]
    assert ds.comparisons["verdict"].tolist() == ["A"]


def test_pairwise_errors_name_rows_and_columns():
    data = b"context,first,second,verdict,p\nd1,a,b,maybe,0.5\nd1,a,a,A,0.5\nd1,a,b,B,1.5\n"
    with pytest.raises(DataError) as err:
        read_upload("pairs.csv", data)
    msg = str(err.value)
    assert "pairs.csv, row 1, column 'verdict': verdict 'maybe' is not understood" in msg
    assert "pairs.csv, row 2, column 'second': candidate 'a' is compared with itself" in msg
    assert "pairs.csv, row 3, column 'p': 1.5 is outside [0, 1]" in msg
