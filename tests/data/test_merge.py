"""data.io.merge.add_to_dataset (files joined into one dataset) and data.overview (what each
table holds, human verdicts, both presentation orders)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from data.io import read_upload
from data.io.merge import add_to_dataset
from data.overview import both_orders_share, human_verdicts, table_summary
from data.schema import DataError

CANDIDATES = b"context_id,candidate_id,system,text\nc1,a,m1,\nc1,b,m2,\nc2,a,m1,\nc2,b,m2,\n"
SCORES = (
    b"context_id,candidate_id,attribute,annotator,score\n"
    b"c1,a,coherence,h1,4\nc1,b,coherence,h1,2\nc2,a,coherence,h1,5\nc2,b,coherence,h1,3\n"
)


def _base():
    return read_upload("cands.csv", CANDIDATES)


def test_human_scores_join_a_candidates_only_dataset():
    base = _base()
    merged, notes = add_to_dataset(base, read_upload("scores.csv", SCORES))
    assert merged.name == "cands"  # a short name: the dataset's own
    assert len(merged.candidates) == 4 and len(merged.human_scores) == 4
    assert merged.sources == {"candidates": ["cands.csv"], "human_scores": ["scores.csv"]}
    assert "Added scores.csv: 4 human score(s)." in merged.description
    assert notes == ["scores.csv: 4 human score(s) added"]
    assert len(base.human_scores) == 0  # the dataset given is not changed
    summary = table_summary(merged)
    assert summary.to_dict("records") == [
        {
            "table": "candidates",
            "rows": 4,
            "contexts": 2,
            "attributes": "",
            "judges or annotators": "",
            "files": "cands.csv",
        },
        {
            "table": "human_scores",
            "rows": 4,
            "contexts": 2,
            "attributes": "coherence",
            "judges or annotators": "h1",
            "files": "scores.csv",
        },
    ]


def test_candidate_texts_fill_the_empty_ones_and_new_candidates_are_added():
    texts = b"context_id,candidate_id,text\nc1,a,hello\nc1,b,world\nc3,z,new\n"
    merged, notes = add_to_dataset(_base(), read_upload("texts.csv", texts, kind="candidates"))
    assert merged.candidates["text"].tolist() == ["hello", "world", "", "", "new"]
    assert merged.candidates["system"].tolist()[:4] == ["m1", "m2", "m1", "m2"]
    assert notes == ["texts.csv: 1 new candidate(s), 2 empty field(s) filled, 2 already there"]
    again = b"context_id,candidate_id,text\nc1,a,other\n"
    with pytest.raises(DataError, match=r"again.csv \(candidates\), row 1: .*different 'text'"):
        add_to_dataset(merged, read_upload("again.csv", again, kind="candidates"))


def test_duplicates_and_unknown_candidates_name_the_files_rows():
    merged, _ = add_to_dataset(_base(), read_upload("scores.csv", SCORES))
    with pytest.raises(DataError) as err:
        add_to_dataset(merged, read_upload("scores2.csv", SCORES))
    assert "scores2.csv (human_scores), rows 1–4: already in cands" in str(err.value)
    unknown = SCORES + b"c9,q,coherence,h1,1\n"
    with pytest.raises(DataError) as err:
        add_to_dataset(_base(), read_upload("u.csv", unknown))
    assert "u.csv (human_scores), row 5, column 'candidate_id': unknown candidate 'q'" in str(
        err.value
    )


def test_judge_outputs_replace_the_same_judge_when_asked():
    pairs = b"context,first,second,verdict,judge,attribute\nc1,a,b,A,j,coherence\nc1,b,a,B,j,coherence\n"
    merged, _ = add_to_dataset(_base(), read_upload("p.csv", pairs))
    assert len(merged.comparisons) == 2
    with pytest.raises(DataError, match="already in cands"):
        add_to_dataset(merged, read_upload("p2.csv", pairs))
    again, notes = add_to_dataset(merged, read_upload("p2.csv", pairs), replace_outputs=True)
    assert len(again.comparisons) == 2 and "p2.csv: replaces 2 comparison(s)" in notes
    assert again.sources["comparisons"] == ["p.csv", "p2.csv"]


def test_both_orders_and_human_verdicts():
    c = pd.DataFrame(
        {
            "context_id": ["c1"] * 3,
            "attribute": ["q"] * 3,
            "judge": ["human:a", "human:a", "human:b"],
            "first_id": ["x", "y", "x"],
            "second_id": ["y", "x", "z"],
        }
    )
    # (x, y) by human:a in both orders, (x, z) by human:b in one: half the pairs
    assert both_orders_share(c) == 0.5
    assert both_orders_share(c.iloc[:2]) == 1.0
    assert both_orders_share(c.iloc[2:]) == 0.0
    assert math.isnan(both_orders_share(c.iloc[:0]))
    assert human_verdicts(c) == (3, 2)
    assert human_verdicts(c.assign(judge="gpt")) == (0, 0)


def test_reference_systems_are_kept_and_joined():
    import dataclasses

    base = dataclasses.replace(_base(), reference_systems=("m1",))
    scores = read_upload("scores.csv", SCORES)
    merged, _ = add_to_dataset(base, scores)
    assert merged.reference_systems == ("m1",)
    more = dataclasses.replace(scores, reference_systems=("m2", "m1"))
    merged, _ = add_to_dataset(base, more)
    assert merged.reference_systems == ("m1", "m2")
