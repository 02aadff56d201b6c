"""data.io.pairwise: verdict spellings, probabilities, mappings, errors by row and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.io import PairwiseMapping, pairwise_to_comparisons, read_upload, read_upload_result
from data.schema import DataError


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
    assert "verdict 'maybe'" not in msg  # not understood is not a refusal (see below)
    assert "compared with itself" not in msg  # skipped and counted (see below)
    assert "pairs.csv, row 3, column 'p': 1.5 is outside [0, 1]" in msg
    # the strict reading (no notes) still refuses a verdict it does not understand, and a
    # candidate compared with itself
    frame = pd.DataFrame({"first": ["a"], "second": ["b"], "verdict": ["maybe"]})
    with pytest.raises(DataError, match=r"row 1, column 'verdict': verdict 'maybe' is not"):
        pairwise_to_comparisons(frame)
    frame = pd.DataFrame({"first": ["a", "a"], "second": ["b", "a"], "verdict": ["A", "B"]})
    with pytest.raises(DataError, match=r"row 2, column 'second': candidate 'a' is compared"):
        pairwise_to_comparisons(frame)


def test_a_baseline_against_itself_is_skipped_with_a_count():
    data = b"question_id,model_a,model_b,winner\nq1,base,m1,A\nq1,base,base,tie\nq2,base,m1,B\n"
    result = read_upload_result("arena.csv", data)
    c = result.dataset.comparisons
    assert list(zip(c.first_id, c.second_id, strict=True)) == [("base", "m1"), ("base", "m1")]
    assert (
        "arena.csv: 1 of 3 row(s) compare a candidate with itself ('base': first = second, "
        "e.g. the baseline against itself) and are skipped: row 2" in result.notes
    )


def _garbage_csv() -> bytes:
    """30 verdicts over contexts c1..c10 (3 each); rows 19-24 say 'garbage', which leaves
    c7 and c8 with no usable verdict; row 27 says 'dunno'."""
    lines = ["context,first,second,winner"]
    for i in range(30):
        verdict = "garbage" if 18 <= i <= 23 else "dunno" if i == 26 else "AB"[i % 2]
        lines.append(f"c{i // 3 + 1},m{i % 3},m{(i + 1) % 3},{verdict}")
    return ("\n".join(lines) + "\n").encode()


def test_unparsed_verdicts_are_kept_counted_and_grouped():
    result = read_upload_result("votes.csv", _garbage_csv())
    c = result.dataset.comparisons
    assert len(c) == 30  # nothing dropped, nothing refused
    bad = c.index[c["p_first"].isna()].tolist()
    assert bad == [18, 19, 20, 21, 22, 23, 26]
    assert c.loc[bad, "verdict"].isna().all()
    assert c.loc[18, "raw"] == "garbage" and c.loc[26, "raw"] == "dunno"
    assert c.loc[0, "raw"] == "A" and c.loc[0, "p_first"] == 1.0
    notes = result.notes
    assert notes[0].startswith(
        "read as a pairwise-verdict table: first candidate id = 'first', second candidate id = "
        "'second', first system = 'first', second system = 'second', judge verdict = 'winner'"
    )
    assert notes[1] == (
        "the candidate ids in 'first' and 'second' recur across contexts, so they name the "
        "systems too"
    )
    assert "votes.csv: 7 of 30 verdict(s) in column 'winner' not understood" in notes[2]
    assert notes[3] == "verdict 'garbage' not understood: rows 19–24"
    assert notes[4] == "verdict 'dunno' not understood: row 27"
    assert notes[5] == (
        "votes.csv: 2 of 10 context(s) have no usable verdict and cannot be ranked: 'c7', 'c8'"
    )


def test_pairwise_attribute_and_judge_set_for_every_row():
    mapping = PairwiseMapping(
        first="first",
        second="second",
        verdict="winner",
        context_id="context",
        default_attribute="coherence",
        default_judge="human:crowd",
    )
    ds = read_upload("votes.csv", _garbage_csv(), mapping=mapping)
    assert ds.comparisons["attribute"].unique().tolist() == ["coherence"]
    assert ds.comparisons["judge"].unique().tolist() == ["human:crowd"]


def test_structural_problems_still_refuse_the_file():
    with pytest.raises(DataError, match=r"p.csv, column 'winner'.*no such column"):
        read_upload(
            "p.csv",
            b"context,first,second,verdict\nc1,a,b,A\n",
            mapping=PairwiseMapping(first="first", second="second", verdict="winner"),
        )
    with pytest.raises(DataError, match=r"p.csv, row 1, column 'first'"):
        read_upload("p.csv", b"context,first,second,verdict\nc1,,b,A\n", kind="pairwise")
