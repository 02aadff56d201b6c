"""A comparisons-table upload whose rows judge the baseline against itself (issue 22 item 5):
the rows are skipped with a count and their rows named, the rest is read; the table check
itself (``validate_table``) still refuses them."""

import numpy as np
import pytest

from data.io import read_upload_result
from data.schema import DataError
from data.validate import self_comparisons, validate_table


def _csv(n_self: int) -> bytes:
    lines = ["context_id,attribute,judge,first_id,second_id,sample,p_first,weight"]
    for k in range(30):
        lines.append(f"q{k},overall,j,base,m{k % 3},0,0.25,3")
        lines.append(f"q{k},overall,j,m{k % 3},base,0,0.75,1")
    for k in range(n_self):
        lines.append(f"q{k},overall,j,base,base,0,0.5,1")
    return ("\n".join(lines) + "\n").encode()


def test_self_comparisons_of_an_upload_are_skipped_with_a_count():
    result = read_upload_result("arena.csv", _csv(25))
    c = result.dataset.comparisons
    assert len(c) == 60
    assert not (c["first_id"] == c["second_id"]).any()
    assert (
        "arena.csv: 25 of 85 row(s) compare a candidate with itself (first_id = second_id, "
        "e.g. the baseline against itself) and are skipped: rows 61–85" in result.notes
    )
    assert sorted(c["weight"].unique()) == [1.0, 3.0]


def test_other_problems_are_named_by_the_file_s_rows():
    data = _csv(3).decode().splitlines()
    data.append("q9,overall,j,base,m0,1,1.5,1")  # row 64 of the file: p_first outside [0, 1]
    with pytest.raises(DataError, match=r"arena.csv, row 64, column 'p_first': 1.5"):
        read_upload_result("arena.csv", ("\n".join(data) + "\n").encode())


def test_an_upload_without_self_comparisons_has_no_such_note():
    result = read_upload_result("arena.csv", _csv(0))
    assert len(result.dataset.comparisons) == 60
    assert not any("itself" in n for n in result.notes)


def test_self_comparisons_match_ids_as_the_table_check_reads_them():
    import pandas as pd

    df = pd.DataFrame(
        {"First ID": [1, "a", " b"], "second_id": ["1", "a ", "c"], "context_id": [1, 2, 3]}
    )
    # ids are read as the table check reads them: a number and its text are one id, and
    # spaces around an id do not count
    assert self_comparisons(df).tolist() == [0, 1]
    assert self_comparisons(pd.DataFrame({"x": [1]})).size == 0
    assert isinstance(self_comparisons(df), np.ndarray)


def test_the_table_check_still_refuses_them():
    import io

    import pandas as pd

    frame = pd.read_csv(io.BytesIO(_csv(1)))
    with pytest.raises(DataError, match="compared with itself"):
        validate_table(frame, "comparisons", "arena.csv")
