"""``data.scope.systems`` and ``data.scope.analysis_view``: leave systems out, HANNA's human story a
reference system by default."""

from __future__ import annotations

import pandas as pd
import pytest

from data import load_benchmark
from data.schema import AUTOMATIC, DataError, Dataset
from data.scope.analysis_view import analysis_view
from data.scope.systems import default_excluded, keep_systems, systems_of
from data.synthetic.demo import demo_dataset
from data.validate import validate_dataset
from tests.data._benchmark_files import need


@pytest.fixture(scope="module")
def hanna():
    return load_benchmark("hanna")


@need("hanna")
def test_hanna_names_the_human_story_a_reference(hanna):
    assert hanna.reference_systems == ("Human",)
    assert default_excluded(hanna) == ["Human"]
    assert len(systems_of(hanna)) == 11
    # natural order, case-insensitive: "GPT" before "GPT-2" before "GPT-2 (tag)"
    assert systems_of(hanna)[:5] == ["BertGeneration", "CTRL", "Fusion", "GPT", "GPT-2"]


@need("hanna")
def test_keep_systems_on_hanna_drops_the_human_story_everywhere(hanna):
    kept = keep_systems(hanna, ["Human"])
    assert len(hanna.candidates) == 1056 and len(kept.candidates) == 960
    assert "Human" not in set(kept.candidates["system"])
    assert systems_of(kept) == [s for s in systems_of(hanna) if s != "Human"]
    for table in ("human_scores", "ratings"):
        t = kept.table(table)
        assert not (t["candidate_id"] == "Human").any()
        # exactly the other systems' rows are kept: 10/11 of them
        assert len(t) * 11 == len(hanna.table(table)) * 10
    # still a valid dataset, metadata kept (the reference system is still named)
    assert kept.name == hanna.name and kept.reference_systems == ("Human",)
    assert default_excluded(kept) == []
    validate_dataset(kept)
    # the original is untouched
    assert len(hanna.candidates) == 1056


@need("hanna")
def test_unknown_system_is_refused_by_name(hanna):
    with pytest.raises(DataError, match=r"'Humans'.*'BertGeneration'.*'XLNet'"):
        keep_systems(hanna, ["Humans"])


def test_nothing_excluded_returns_the_dataset_itself():
    ds = demo_dataset()
    assert keep_systems(ds, []) is ds
    assert default_excluded(ds) == []
    assert analysis_view(ds) is ds
    assert analysis_view(ds, exclude=[], reading="cleaned") is ds


def test_pairwise_comparisons_with_either_side_excluded_are_dropped():
    ds = demo_dataset()
    gone = {"hallucinator", "truncated"}
    kept = keep_systems(ds, sorted(gone))
    sys_of = dict(
        zip(
            zip(ds.candidates["context_id"], ds.candidates["candidate_id"], strict=True),
            ds.candidates["system"],
            strict=True,
        )
    )
    c = ds.comparisons
    side = lambda col: [sys_of[k] for k in zip(c["context_id"], c[col], strict=True)]  # noqa: E731
    keep = [
        a not in gone and b not in gone
        for a, b in zip(side("first_id"), side("second_id"), strict=True)
    ]
    assert sum(keep) < len(c)  # some comparisons involve them on each side
    assert len(kept.comparisons) == sum(keep)
    pd.testing.assert_frame_equal(
        kept.comparisons, c[keep].reset_index(drop=True), check_index_type=False
    )
    assert set(kept.candidates["system"]) == set(ds.candidates["system"]) - gone
    assert len(kept.ratings) == len(ds.ratings) * 4 // 6
    assert len(kept.human_scores) == len(ds.human_scores) * 4 // 6


def test_no_system_column():
    ds = validate_dataset(
        Dataset(
            name="plain",
            contexts=pd.DataFrame({"context_id": ["c"], "text": ["t"]}),
            candidates=pd.DataFrame({"context_id": ["c"], "candidate_id": ["a"], "text": ["x"]}),
        )
    )
    assert systems_of(ds) == []
    assert keep_systems(ds, []) is ds
    with pytest.raises(DataError, match="no 'system' column"):
        keep_systems(ds, ["a"])


@need("hanna")
def test_analysis_view_defaults_on_hanna(hanna):
    view = analysis_view(hanna)
    assert len(view.candidates) == 960
    # published reading by default: the off-scale published means are back
    assert len(view.ratings) * 11 == len(hanna.ratings) * 10
    llm = lambda d: d.ratings.loc[d.ratings["prompt_id"] != AUTOMATIC, "score"]  # noqa: E731
    assert (llm(view) < 1).any() and not (llm(hanna) < 1).any()
    # everything in: the published reading only
    full = analysis_view(hanna, exclude=[])
    assert len(full.candidates) == 1056 and (llm(full) < 1).any()
    assert analysis_view(hanna, exclude=[], reading="cleaned") is hanna
