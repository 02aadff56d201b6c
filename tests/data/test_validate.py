"""One test per validation failure class: each asserts the message names file, row and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data import validate
from data.io import read_upload
from data.problems import MAX_LISTED
from data.schema import TABLES, DataError, Dataset, empty_table
from data.validate import validate_dataset, validate_table


def human(**overrides) -> pd.DataFrame:
    cols = {
        "context_id": ["d1", "d1", "d2"],
        "candidate_id": ["a", "b", "a"],
        "attribute": ["coherence"] * 3,
        "annotator": ["x", "x", "y"],
        "score": [1, 4, 5],
    }
    cols.update(overrides)
    return pd.DataFrame(cols)


def comparisons(**overrides) -> pd.DataFrame:
    cols = {
        "context_id": ["d1", "d1", "d1"],
        "attribute": ["coherence"] * 3,
        "judge": ["j"] * 3,
        "first_id": ["a", "b", "a"],
        "second_id": ["b", "a", "b"],
        "p_first": [0.7, 0.2, np.nan],
        "verdict": ["A", "B", None],
        "sample": [0, 0, 1],
    }
    cols.update(overrides)
    return pd.DataFrame(cols)


def problem_lines(err: pytest.ExceptionInfo) -> list[str]:
    return err.value.problems


def one_problem(*args) -> str:
    """The problem line of ``validate_table(*args)``, which must refuse the table with exactly
    one."""
    with pytest.raises(DataError) as err:
        validate_table(*args)
    (line,) = problem_lines(err)
    return line


def test_valid_table_is_coerced_to_canonical_dtypes():
    df = human(context_id=[1, 1, 2], score=["1", " 4 ", "5.5"], annotator=["x", "x", " y "])
    out = validate_table(df, "human_scores")
    assert list(out.columns) == list(TABLES["human_scores"])
    assert out["context_id"].tolist() == ["1", "1", "2"]
    assert out["annotator"].tolist() == ["x", "x", "y"]  # ids are stripped
    assert out["score"].dtype == np.float64
    assert out["score"].tolist() == [1.0, 4.0, 5.5]
    assert str(out["context_id"].dtype) == "str"


def test_optional_columns_are_added_and_sample_is_int():
    out = validate_table(comparisons().drop(columns=["verdict"]), "comparisons")
    assert list(out.columns) == list(TABLES["comparisons"])
    assert out["verdict"].isna().all()
    assert (out["raw"] == "").all()
    assert out["sample"].dtype == np.int64
    assert out["verdict"].dtype == "str"


def test_header_case_and_spaces_are_accepted_and_extras_kept():
    df = human().rename(columns={"context_id": "Context ID", "score": " Score"})
    df["comment"] = ["ok", "", "late"]
    out = validate_table(df, "human_scores")
    assert list(out.columns) == [*TABLES["human_scores"], "comment"]
    assert out["comment"].tolist() == ["ok", "", "late"]


def test_empty_table_is_valid():
    out = validate_table(empty_table("ratings"), "ratings")
    assert len(out) == 0 and list(out.columns) == list(TABLES["ratings"])


def test_missing_column():
    with pytest.raises(DataError) as err:
        validate_table(human().drop(columns=["annotator"]), "human_scores", "scores.csv")
    msg = str(err.value)
    assert "scores.csv, column 'annotator'" in msg
    assert "required column is missing" in msg


def test_misspelled_column_suggests_closest_name():
    line = one_problem(human().rename(columns={"score": "scroe"}), "human_scores", "s.csv")
    assert "s.csv, column 'scroe'" in line
    assert "did you mean 'score'?" in line


def test_misspelled_optional_column_is_reported():
    cand = pd.DataFrame({"context_id": ["d"], "candidate_id": ["a"], "sytem": ["s"], "text": ["t"]})
    with pytest.raises(DataError, match=r"column 'sytem'.*did you mean 'system'"):
        validate_table(cand, "candidates", "cands.csv")


def test_wrong_type_names_row_and_column():
    df = human(score=["1", "abc", "5"])
    line = one_problem(df, "human_scores", "scores.csv")
    assert line.startswith("scores.csv, row 2, column 'score'")
    assert "'abc' is not a number" in line


def test_wrong_type_sample_not_whole_number():
    with pytest.raises(DataError, match=r"row 3, column 'sample': 1.5 is not a whole number"):
        validate_table(comparisons(sample=[0, 0, 1.5]), "comparisons", "c.csv")


def test_empty_id_cell():
    with pytest.raises(DataError, match=r"c.csv, row 2, column 'first_id': the cell is empty"):
        validate_table(comparisons(first_id=["a", "  ", "a"]), "comparisons", "c.csv")


def test_score_outside_scale():
    line = one_problem(human(score=[1, 7, 5]), "human_scores", "s.csv", {"coherence": (1, 5)})
    assert line.startswith("s.csv, row 2, column 'score'")
    assert "outside the scale of 'coherence' (1 to 5)" in line


def test_scale_only_applies_to_its_attribute():
    out = validate_table(human(score=[1, 7, 5]), "human_scores", scale={"fluency": (1, 5)})
    assert out["score"].tolist() == [1.0, 7.0, 5.0]


def test_automatic_measures_are_not_held_to_the_scale():
    df = pd.DataFrame(
        {
            "context_id": ["d1"] * 3,
            "candidate_id": ["a", "b", "a"],
            "attribute": ["q"] * 3,
            "judge": ["BLEU", "BLEU", "llm"],
            "prompt_id": ["automatic", "automatic", "p1"],
            "sample": [0, 0, 0],
            "score": [87.5, -3.2, 9.0],
        }
    )
    # only the prompted judge's 9 is off the scale
    line = one_problem(df, "ratings", "r.csv", {"q": (1, 5)})
    assert line.startswith("r.csv, row 3, column 'score': 9 is outside the scale of 'q'")
    out = validate_table(df.iloc[:2], "ratings", "r.csv", {"q": (1, 5)})
    assert out["score"].tolist() == [87.5, -3.2]


def test_duplicate_candidate():
    cand = pd.DataFrame(
        {
            "context_id": ["d1", "d1", "d2", "d1"],
            "candidate_id": ["a", "b", "a", "a"],
            "text": ["x", "y", "z", "w"],
        }
    )
    line = one_problem(cand, "candidates", "cands.csv")
    assert line.startswith("cands.csv, rows 1, 4, column 'candidate_id'")
    assert "context_id='d1', candidate_id='a'" in line


def test_duplicate_human_score_is_refused_naming_the_rows():
    df = human(candidate_id=["a", "b", "a"], context_id=["d1", "d1", "d1"], annotator=["x"] * 3)
    line = one_problem(df, "human_scores", "h.csv")
    assert line.startswith("h.csv, rows 1, 3, column 'annotator': the same human score")
    assert "candidate_id='a', attribute='coherence', annotator='x') appears 2 times" in line
    # the same candidate scored by two annotators, or on two attributes, is fine
    validate_table(human(annotator=["x", "x", "y"], context_id=["d1", "d1", "d1"]), "human_scores")


def test_duplicate_comparison_is_refused_but_samples_are_distinct():
    df = comparisons(first_id=["a", "b", "a"], second_id=["b", "a", "b"], sample=[0, 0, 0])
    line = one_problem(df, "comparisons", "c.csv")
    assert line.startswith("c.csv, rows 1, 3, column 'sample': the same comparison")
    assert "number repeated answers of the same judge with 'sample'" in line
    validate_table(comparisons(sample=[0, 0, 1]), "comparisons")


def test_duplicate_rating_is_refused():
    df = pd.DataFrame(
        {
            "context_id": ["d1"] * 4,
            "candidate_id": ["a", "a", "b", "a"],
            "attribute": ["q"] * 4,
            "judge": ["j"] * 4,
            "prompt_id": ["p1", "p2", "p1", "p1"],
            "sample": [0, 0, 0, 0],
            "score": [1, 2, 3, 4],
        }
    )
    line = one_problem(df, "ratings", "r.csv")
    assert line.startswith("r.csv, rows 1, 4, column 'sample': the same rating")


def test_many_duplicates_are_counted_not_all_spelled_out():
    n = 1000
    df = human(
        context_id=["d"] * (2 * n),
        candidate_id=[f"c{k}" for k in range(n)] * 2,
        attribute=["q"] * (2 * n),
        annotator=["x"] * (2 * n),
        score=[1] * (2 * n),
    )
    with pytest.raises(DataError) as err:
        validate_table(df, "human_scores", "big.csv")
    assert str(err.value).startswith(f"{n} problem(s)")
    assert len(err.value.problems) == MAX_LISTED + 1


def test_candidate_compared_with_itself():
    line = one_problem(comparisons(second_id=["b", "b", "b"]), "comparisons", "c.csv")
    assert line.startswith("c.csv, row 2, column 'second_id'")
    assert "compared with itself" in line


def test_p_first_outside_unit_interval():
    with pytest.raises(DataError) as err:
        validate_table(comparisons(p_first=[0.5, 1.5, -0.1]), "comparisons", "c.csv")
    lines = problem_lines(err)
    assert lines[0].startswith("c.csv, row 2, column 'p_first': 1.5 is outside [0, 1]")
    assert lines[1].startswith("c.csv, row 3, column 'p_first': -0.1 is outside [0, 1]")


def test_verdict_not_a_b_tie():
    df = comparisons(verdict=["a", "TIE", "maybe"])
    line = one_problem(df, "comparisons", "c.csv")
    assert line.startswith("c.csv, row 3, column 'verdict'")
    assert "'maybe' is not one of A, B, tie" in line
    ok = validate_table(comparisons(verdict=["a", "TIE", ""]), "comparisons")
    assert ok["verdict"].tolist()[:2] == ["A", "tie"] and pd.isna(ok["verdict"].iloc[2])


def test_unknown_candidate_across_tables():
    cand = pd.DataFrame({"context_id": ["d1", "d1"], "candidate_id": ["a", "b"], "text": ["", ""]})
    comp = comparisons(second_id=["b", "a", "zz"])
    ds = Dataset("mine", candidates=cand, comparisons=comp, human_scores=human().iloc[:2])
    with pytest.raises(DataError) as err:
        validate_dataset(ds, sources={"comparisons": "pairs.csv"})
    (line,) = problem_lines(err)
    assert line.startswith("pairs.csv, row 3, column 'second_id': unknown candidate 'zz'")


def test_unknown_candidate_in_scores_and_context():
    contexts = pd.DataFrame({"context_id": ["d1"], "text": ["t"]})
    cand = pd.DataFrame({"context_id": ["d1", "d9"], "candidate_id": ["a", "b"], "text": ["", ""]})
    ds = Dataset("mine", contexts=contexts, candidates=cand, human_scores=human())
    with pytest.raises(DataError) as err:
        validate_dataset(ds)
    lines = problem_lines(err)
    assert any(
        line.startswith("mine: candidates, row 2, column 'context_id': context 'd9'")
        for line in lines
    )
    assert any(
        line.startswith("mine: human_scores, row 2, column 'candidate_id': unknown candidate 'b'")
        for line in lines
    )


def test_every_problem_is_listed_across_tables():
    ds = Dataset(
        "mine",
        human_scores=human(score=["x", 2, 3]),
        comparisons=comparisons(p_first=[2.0, 0.1, 0.2]),
    )
    with pytest.raises(DataError) as err:
        validate_dataset(ds)
    msg = str(err.value)
    assert msg.startswith("2 problem(s) found in mine")
    assert "mine: human_scores, row 1, column 'score'" in msg
    assert "mine: comparisons, row 1, column 'p_first'" in msg


def test_long_problem_lists_are_capped():
    n = 100
    df = human(
        context_id=["d"] * n,
        candidate_id=[f"c{k}" for k in range(n)],
        attribute=["q"] * n,
        annotator=["x"] * n,
        score=["bad"] * n,
    )
    with pytest.raises(DataError) as err:
        validate_table(df, "human_scores", "big.csv")
    msg = str(err.value)
    assert msg.startswith("100 problem(s)")
    assert len(err.value.problems) == MAX_LISTED + 1
    assert f"and {n - MAX_LISTED} more" in msg


def test_bad_scales_reported():
    with pytest.raises(DataError, match=r"scale of 'q'.*low < high"):
        validate_dataset(Dataset("x", scales={"q": (5, 1)}))


def test_validate_dataset_returns_canonical_copy():
    ds = Dataset("x", human_scores=human(score=["1", "2", "3"]), scales={"coherence": [1, 5]})
    out = validate_dataset(ds)
    assert out.human_scores["score"].tolist() == [1.0, 2.0, 3.0]
    assert out.scales == {"coherence": (1.0, 5.0)}
    assert ds.human_scores["score"].tolist() == ["1", "2", "3"]  # input untouched


# --- file-level classes go through the upload reader, which the app uses


def test_empty_file():
    with pytest.raises(DataError, match=r"scores.csv: the file is empty \(0 bytes"):
        read_upload("scores.csv", b"")
    with pytest.raises(DataError, match=r"scores.csv: the file has no data rows"):
        read_upload("scores.csv", b"context_id,candidate_id,attribute,annotator,score\n")


def test_non_utf8_file_names_byte_offset():
    data = "context_id,text\nd1,caf\u00e9\n".encode("latin-1")
    with pytest.raises(DataError) as err:
        read_upload("contexts.csv", data)
    msg = str(err.value)
    offset = data.index(b"\xe9")
    assert "contexts.csv, line 2: the file is not UTF-8" in msg
    assert f"byte offset {offset}" in msg
    assert "re-save the file with UTF-8" in msg


def test_file_too_large_states_limit(monkeypatch):
    monkeypatch.setattr(validate, "MAX_UPLOAD_BYTES", 100)
    data = b"context_id,text\n" + b"d1,hello\n" * 20
    with pytest.raises(DataError) as err:
        read_upload("contexts.csv", data)
    msg = str(err.value)
    assert "contexts.csv" in msg and "more than the limit" in msg
    assert "100 bytes, MAX_UPLOAD_BYTES" in msg


def test_default_upload_limit_is_200_mb():
    assert validate.MAX_UPLOAD_BYTES == 200 * 1024 * 1024


# --------------------------------------------------------------------------- grade, weight


def graded(**overrides) -> pd.DataFrame:
    cols = {
        "context_id": ["q1"] * 4,
        "attribute": ["overall"] * 4,
        "judge": ["gpt-4"] * 4,
        "first_id": ["base", "m1", "base", "m1"],
        "second_id": ["m1", "base", "m1", "base"],
        "p_first": [1.0, 0.0, 0.5, 0.25],
        "verdict": ["A", "B", "tie", "B"],
        "grade": ["2", "-2", "0", "-1"],
        "weight": ["3", "3", "1", "1"],
        "sample": [0, 0, 1, 1],
    }
    cols.update(overrides)
    return pd.DataFrame(cols)


def test_grade_and_weight_are_kept_as_floats():
    out = validate_table(graded(), "comparisons")
    assert out["grade"].dtype == np.float64 and out["weight"].dtype == np.float64
    assert out["grade"].tolist() == [2, -2, 0, -1]
    assert out["weight"].tolist() == [3, 3, 1, 1]
    assert list(out.columns) == list(TABLES["comparisons"])
    assert list(TABLES["comparisons"])[6:9] == ["verdict", "grade", "weight"]


def test_absent_grade_and_weight_are_no_grade_and_weight_one():
    out = validate_table(comparisons(), "comparisons")
    assert out["grade"].isna().all() and out["grade"].dtype == np.float64
    assert out["weight"].tolist() == [1.0, 1.0, 1.0]
    assert empty_table("comparisons")["weight"].dtype == np.float64


def test_empty_cells_are_no_grade_and_the_default_weight():
    out = validate_table(
        graded(grade=["2", "", None, "-1"], weight=["", None, "2.5", " "]), "comparisons"
    )
    assert out["grade"].isna().tolist() == [False, True, True, False]
    assert out["weight"].tolist() == [1.0, 1.0, 2.5, 1.0]
    numeric = validate_table(
        graded(grade=[2, np.nan, 0, -1], weight=[np.nan, 3, 1, 1]), "comparisons"
    )
    assert numeric["weight"].tolist() == [1.0, 3.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("weights", "bad_rows", "shown"),
    [
        (["3", "0", "1", "1"], [2], "'0'"),
        (["-1", "3", "1", "1"], [1], "'-1'"),
        (["nan", "3", "1", "1"], [1], "'nan'"),
        (["3", "3", "inf", "-inf"], [3, 4], "'inf'"),
        (["3", "heavy", "1", "1"], [2], "'heavy'"),
        ([3.0, 3.0, 0.0, float("inf")], [3, 4], "0.0"),
        ([True, False, True, True], [1, 2, 3, 4], "True"),
    ],
)
def test_weight_that_is_not_finite_and_positive_is_refused(weights, bad_rows, shown):
    with pytest.raises(DataError) as err:
        validate_table(graded(weight=weights), "comparisons", "arena.csv")
    lines = problem_lines(err)
    assert len(lines) == len(bad_rows)
    for row, line in zip(bad_rows, lines, strict=True):
        assert line.startswith(f"arena.csv, row {row}, column 'weight': ")
        assert "finite number greater than 0" in line and "default 1" in line
    assert shown in lines[0]


@pytest.mark.parametrize("bad", ["3", "-3", "1.5", "A>>B", "much"])
def test_grade_outside_minus_two_to_two_is_refused(bad):
    line = one_problem(graded(grade=["2", bad, "0", "-1"]), "comparisons", "arena.csv")
    assert line.startswith("arena.csv, row 2, column 'grade': ")
    assert repr(bad) in line and "whole number from -2 to +2" in line


def test_grade_that_contradicts_p_first_or_the_verdict_is_refused():
    table = graded(
        p_first=[0.0, 0.0, 1.0, 0.25],  # row 1: +2 with p 0; row 3: a tie with p 1
        verdict=["A", "A", "tie", "B"],  # row 2: -2 with verdict A
    )
    with pytest.raises(DataError) as err:
        validate_table(table, "comparisons", "arena.csv")
    lines = problem_lines(err)
    assert len(lines) == 3
    assert lines[0].startswith("arena.csv, row 1, column 'grade': grade +2 says the first")
    assert "p_first 0 says the second candidate better" in lines[0]
    assert lines[1].startswith("arena.csv, row 3, column 'grade': grade 0 says a tie")
    assert lines[2].startswith("arena.csv, row 2, column 'grade': grade -2 says the second")
    assert "verdict is 'A'" in lines[2]


def test_a_tie_grade_may_come_with_a_leaning_probability():
    # a probability from label tokens leans; only a certain p_first contradicts a tie
    out = validate_table(graded(p_first=[0.9, 0.1, 0.6, np.nan]), "comparisons")
    assert out["grade"].tolist() == [2, -2, 0, -1]


def test_grade_problems_in_a_dataset_name_the_table():
    ds = Dataset(name="arena", comparisons=graded(weight=["3", "0", "1", "1"]))
    with pytest.raises(DataError) as err:
        validate_dataset(ds)
    assert problem_lines(err) == [
        "arena: comparisons, row 2, column 'weight': '0' is not a usable weight; a weight says "
        "how many games' worth the comparison counts (Arena-Hard: 3 for a strong verdict), so "
        "write a finite number greater than 0, leave the cell empty for the default 1, or drop "
        "the row"
    ]
