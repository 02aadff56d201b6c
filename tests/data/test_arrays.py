"""Tables to arrays: exact cells, padding, sample averaging, ordering, clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.arrays import PMatrix, comparisons_to_P, scores_to_matrix
from data.flat import flat_comparisons
from data.schema import DataError
from data.synthetic.simulate import simulate_with_truth
from data.validate import validate_table

NAN = np.nan


def comp_rows(rows):
    cols = ["context_id", "attribute", "judge", "first_id", "second_id", "p_first", "sample"]
    return validate_table(pd.DataFrame(rows, columns=cols), "comparisons")


@pytest.fixture
def comparisons():
    return comp_rows(
        [
            ("d1", "q", "j", "a", "b", 0.8, 0),
            ("d1", "q", "j", "a", "b", 0.6, 1),
            ("d1", "q", "j", "b", "a", 0.2, 0),
            ("d1", "q", "j", "b", "a", NAN, 1),  # unparsed: not averaged in
            ("d1", "q", "j", "a", "c", NAN, 0),  # only unparsed: stays NaN
            ("d2", "q", "j", "z", "y", 0.9, 0),
            ("d1", "f", "j", "a", "b", 0.1, 0),  # another attribute
            ("d1", "q", "k", "a", "b", 0.0, 0),  # another judge
        ]
    )


@pytest.fixture
def candidates():
    return validate_table(
        pd.DataFrame(
            {
                "context_id": ["d2", "d2", "d1", "d1", "d1"],
                "candidate_id": ["z", "y", "b", "a", "c"],
                "system": ["s1", "s2", "s2", "s1", "s3"],
                "text": [""] * 5,
            }
        ),
        "candidates",
    )


def test_P_sorted_order_without_candidates(comparisons):
    pm = comparisons_to_P(comparisons, attribute="q", judge="j")
    assert pm.context_ids == ["d1", "d2"]
    assert pm.candidate_ids == [["a", "b", "c"], ["y", "z"]]
    assert pm.P.shape == (2, 3, 3) and pm.P.dtype == np.float64
    expected = np.array(
        [
            [[NAN, 0.7, NAN], [0.2, NAN, NAN], [NAN, NAN, NAN]],
            [[NAN, NAN, NAN], [0.9, NAN, NAN], [NAN, NAN, NAN]],  # row z, col y
        ]
    )
    np.testing.assert_allclose(pm.P, expected)
    assert pm.counts[0].tolist() == [[0, 2, 0], [1, 0, 0], [0, 0, 0]]
    assert pm.attribute == "q" and pm.judge == "j"
    assert pm.n_candidates.tolist() == [3, 2]


def test_P_order_from_candidates_table(comparisons, candidates):
    pm = comparisons_to_P(comparisons, attribute="q", judge="j", candidates=candidates)
    assert pm.context_ids == ["d2", "d1"]  # table order
    assert pm.candidate_ids == [["z", "y"], ["b", "a", "c"]]
    assert pm.P[0, 0, 1] == pytest.approx(0.9)  # z first, y second
    assert pm.P[1, 1, 0] == pytest.approx(0.7)  # a first, b second: mean of 0.8 and 0.6
    assert pm.P[1, 0, 1] == pytest.approx(0.2)
    assert np.isnan(pm.P[1, 1, 2])  # a vs c: every sample unparsed
    assert np.isnan(pm.P[0, 2, :]).all() and np.isnan(pm.P[0, :, 2]).all()  # padding
    assert np.isnan(pm.P[:, [0, 1, 2], [0, 1, 2]]).all()  # diagonal


def test_P_candidates_as_mapping_includes_uncompared(comparisons):
    pm = comparisons_to_P(
        comparisons,
        attribute="q",
        judge="j",
        candidates={"d1": ["c", "b", "a", "e"], "d2": ["y", "z"]},
    )
    assert pm.candidate_ids[0] == ["c", "b", "a", "e"]
    assert pm.P.shape == (2, 4, 4)
    assert pm.P[0, 2, 1] == pytest.approx(0.7)
    assert np.isnan(pm.P[0, 3]).all()


def test_P_ambiguous_and_unknown_selection(comparisons):
    with pytest.raises(DataError, match=r"several attribute values \('f', 'q'\).*attribute="):
        comparisons_to_P(comparisons, judge="j")
    with pytest.raises(DataError, match=r"several judge values \('j', 'k'\).*judge="):
        comparisons_to_P(comparisons, attribute="q")
    with pytest.raises(DataError, match=r"no rows with attribute = 'zz'; available: 'f', 'q'"):
        comparisons_to_P(comparisons, attribute="zz", judge="j")


def test_P_unknown_candidate_or_context(comparisons, candidates):
    with pytest.raises(DataError, match=r"context\(s\) 'd2' are not in the candidates"):
        comparisons_to_P(comparisons, attribute="q", judge="j", candidates=candidates.iloc[2:])
    with pytest.raises(DataError, match=r"missing from the candidates table \(e.g. 'c'"):
        comparisons_to_P(comparisons, attribute="q", judge="j", candidates=candidates.iloc[:4])


def test_P_passes_ranking_checks():
    from ranking._core import as_P

    ds, _ = simulate_with_truth(4, 5, random_state=3)
    pm = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    arr = as_P(pm.P)
    off = ~np.eye(5, dtype=bool)
    assert np.isfinite(arr[:, off]).all()


def test_P_matches_a_loop_on_random_samples():
    ds, _ = simulate_with_truth(3, 4, mode="samples", n_samples=3, tie_rate=0.3, random_state=5)
    pm = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    c = ds.comparisons
    for ci, ctx in enumerate(pm.context_ids):
        for i, a in enumerate(pm.candidate_ids[ci]):
            for j, b in enumerate(pm.candidate_ids[ci]):
                rows = c[(c.context_id == ctx) & (c.first_id == a) & (c.second_id == b)]
                if i == j:
                    assert len(rows) == 0 and np.isnan(pm.P[ci, i, j])
                else:
                    assert len(rows) == 3
                    assert pm.P[ci, i, j] == pytest.approx(rows.p_first.mean())


def human_rows():
    return validate_table(
        pd.DataFrame(
            {
                "context_id": ["d1", "d1", "d1", "d1", "d2", "d9"],
                "candidate_id": ["a", "a", "a", "b", "y", "a"],
                "attribute": ["q"] * 6,
                "annotator": ["x", "y", "z", "x", "x", "x"],
                "score": [4, NAN, 2, 5, 1, 3],
            }
        ),
        "human_scores",
    )


def test_scores_matrix_means_and_padding(comparisons):
    pm = comparisons_to_P(comparisons, attribute="q", judge="j")
    m = scores_to_matrix(human_rows(), pm, attribute="q")
    expected = np.array([[3.0, 5.0, NAN], [1.0, NAN, NAN]])  # d1: a, b, c; d2: y, z, pad
    np.testing.assert_allclose(m, expected)
    only_x = scores_to_matrix(human_rows(), pm, attribute="q", annotators=["x"])
    np.testing.assert_allclose(only_x, [[4.0, 5.0, NAN], [1.0, NAN, NAN]])
    # explicit ids instead of a PMatrix
    m2 = scores_to_matrix(human_rows(), (["d2", "d1"], [["y"], ["b", "a"]]), attribute="q")
    np.testing.assert_allclose(m2, [[1.0, NAN], [5.0, 3.0]])


def test_scores_matrix_errors():
    h = human_rows()
    with pytest.raises(DataError, match=r"annotator\(s\) 'nobody' not found"):
        scores_to_matrix(h, (["d1"], [["a"]]), attribute="q", annotators=["nobody"])
    two = pd.concat([h, h.assign(attribute="f")])
    with pytest.raises(DataError, match=r"several attribute values"):
        scores_to_matrix(two, (["d1"], [["a"]]))


def test_scores_matrix_for_ratings_by_prompt_and_judge():
    ds, _ = simulate_with_truth(2, 3, prompts=("p1", "p2"), n_samples=4, random_state=2)
    ids = (["d0", "d1"], [["c0", "c1", "c2"], ["c0", "c1", "c2"]])
    with pytest.raises(DataError, match=r"several prompt_id values \('p1', 'p2'\)"):
        scores_to_matrix(ds.ratings, ids, attribute="quality")
    m = scores_to_matrix(ds.ratings, ids, attribute="quality", prompt_id="p2")
    r = ds.ratings
    want = r[(r.prompt_id == "p2") & (r.context_id == "d1") & (r.candidate_id == "c2")].score.mean()
    assert m[1, 2] == pytest.approx(want)
    other = r.assign(judge="other")
    with pytest.raises(DataError, match=r"several judge values"):
        scores_to_matrix(pd.concat([r, other]), ids, prompt_id="p1")


def test_flat_comparisons_candidates_and_systems(comparisons, candidates):
    flat = flat_comparisons(comparisons, attribute="q", judge="j")
    assert flat.items == ["a", "b", "y", "z"]
    # NaN rows dropped; one entry per sample
    assert flat.first.tolist() == [0, 0, 1, 3]
    assert flat.second.tolist() == [1, 1, 0, 2]
    np.testing.assert_allclose(flat.p, [0.8, 0.6, 0.2, 0.9])
    by_sys = flat_comparisons(
        comparisons, attribute="q", judge="j", item="system", candidates=candidates
    )
    assert by_sys.items == ["s1", "s2"]
    # a->s1, b->s2, z->s1, y->s2
    assert by_sys.first.tolist() == [0, 0, 1, 0]
    assert by_sys.second.tolist() == [1, 1, 0, 1]
    fixed = flat_comparisons(
        comparisons,
        attribute="q",
        judge="j",
        item="system",
        candidates=candidates,
        items=["s3", "s2", "s1"],
    )
    assert fixed.first.tolist() == [2, 2, 1, 2]
    assert fixed.first.dtype == np.int64 and fixed.p.dtype == np.float64


def test_flat_comparisons_errors(comparisons, candidates):
    with pytest.raises(DataError, match=r"needs the candidates table"):
        flat_comparisons(comparisons, attribute="q", judge="j", item="system")
    no_sys = candidates.assign(system=[NAN, "s2", "s2", "s1", "s3"])
    with pytest.raises(DataError, match=r"without a system \(e.g. 'z' in context 'd2'\)"):
        flat_comparisons(comparisons, attribute="q", judge="j", item="system", candidates=no_sys)
    with pytest.raises(DataError, match=r"not in items"):
        flat_comparisons(comparisons, attribute="q", judge="j", items=["a", "b"])


def test_flat_comparisons_drops_same_system_pairs():
    ds, _ = simulate_with_truth(5, 6, n_systems=3, random_state=0)
    flat = flat_comparisons(ds.comparisons, item="system", candidates=ds.candidates)
    assert flat.items == ["s0", "s1", "s2"]
    assert (flat.first != flat.second).all()
    sys_of = dict(
        zip(
            zip(ds.candidates.context_id, ds.candidates.candidate_id, strict=True),
            ds.candidates.system,
            strict=True,
        )
    )
    c = ds.comparisons
    differ = [
        sys_of[(x, f)] != sys_of[(x, s)]
        for x, f, s in zip(c.context_id, c.first_id, c.second_id, strict=True)
    ]
    assert len(flat.p) == sum(differ)


def test_pmatrix_is_a_plain_dataclass():
    pm = PMatrix(
        P=np.full((1, 2, 2), NAN),
        context_ids=["d"],
        candidate_ids=[["a"]],
        counts=np.zeros((1, 2, 2), int),
    )
    assert pm.n_candidates.tolist() == [1]
