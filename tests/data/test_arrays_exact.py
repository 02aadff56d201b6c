"""comparisons_to_P and scores_to_matrix (integer lookups) equal their slow twins (the
string-merge code they replaced, tests/data/_slow_twins.py) bit for bit: same contexts,
candidates, floats, counts and error messages, on a simulated judge with holes, SummEval,
PandaLM and LLMFAO."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data.arrays import comparisons_to_P, scores_to_matrix
from data.schema import DataError, Dataset
from data.synthetic.simulate import simulate_with_truth
from tests.data._holes import with_holes
from tests.data._slow_twins import slow_comparisons_to_P, slow_scores_to_matrix


def holes_dataset() -> Dataset:
    """Unparsed samples, a context with nothing parsed, a candidate seen only in unparsed
    rows, a context judged in one order only."""
    ds, _ = simulate_with_truth(14, 6, n_systems=6, n_samples=3, random_state=7)
    return with_holes(ds)


def same_pm(got, want):
    assert got.context_ids == want.context_ids
    assert got.candidate_ids == want.candidate_ids
    assert got.P.tobytes() == want.P.tobytes()  # bit for bit, NaN where NaN
    assert got.counts.dtype == want.counts.dtype and np.array_equal(got.counts, want.counts)
    assert (got.attribute, got.judge) == (want.attribute, want.judge)


def both_ways(comps, candidates, **kw):
    """Every way the pages call it: all rows / parsed rows, with and without candidates."""
    parsed = comps[comps["p_first"].notna()]
    for rows in (comps, parsed):
        if not len(rows):
            continue
        for cand in (None, candidates):
            same_pm(
                comparisons_to_P(rows, candidates=cand, **kw),
                slow_comparisons_to_P(rows, candidates=cand, **kw),
            )
    return 1


def load(name):
    try:
        return data.load_benchmark(name)
    except (DataError, OSError) as err:
        pytest.skip(f"{name} not in the data folder ({err})")


def test_simulated_judge_with_holes():
    ds = holes_dataset()
    both_ways(ds.comparisons, ds.candidates, attribute="quality", judge="simulated")
    pm = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    assert np.isnan(pm.P[1]).all()  # the context with nothing parsed stays, all NaN
    order = {c: list(v)[::-1] for c, v in zip(pm.context_ids, pm.candidate_ids, strict=True)}
    same_pm(
        comparisons_to_P(ds.comparisons, candidates=order),
        slow_comparisons_to_P(ds.comparisons, candidates=order),
    )
    hs = ds.human_scores
    for ids in (pm, (pm.context_ids[::-1], [c[::-1] for c in pm.candidate_ids[::-1]])):
        got, want = scores_to_matrix(hs, ids), slow_scores_to_matrix(hs, ids)
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", ["summeval", "pandalm", "llmfao"])
def test_real_data_every_attribute_and_judge(name):
    ds = load(name)
    for (attribute, judge), rows in ds.comparisons.groupby(["attribute", "judge"]):
        both_ways(rows, ds.candidates, attribute=attribute, judge=judge)
        pm = comparisons_to_P(rows, attribute=attribute, judge=judge)
        for table in (ds.human_scores, ds.ratings):
            if len(table) and attribute in set(table["attribute"].astype(str)):
                sel = table[table["attribute"].astype(str) == attribute]
                kw = {c: str(sel[c].iloc[0]) for c in ("judge", "prompt_id") if c in sel}
                for c, v in kw.items():
                    sel = sel[sel[c].astype(str) == v]
                got = scores_to_matrix(sel, pm, attribute=attribute, **kw)
                assert (
                    got.tobytes()
                    == slow_scores_to_matrix(sel, pm, attribute=attribute, **kw).tobytes()
                )


def message(fn, *args, **kw):
    with pytest.raises(DataError) as err:
        fn(*args, **kw)
    return str(err.value)


def test_error_messages_unchanged():
    ds = holes_dataset()
    comps = ds.comparisons
    self_row = comps.copy()
    self_row.loc[0, "second_id"] = self_row.loc[0, "first_id"]
    unknown = comps.copy()
    unknown.loc[5, "second_id"] = "nobody"
    stray = comps.copy()
    stray.loc[7, "context_id"] = "no-such-context"
    cases = [
        (self_row, {}),
        (unknown, {"candidates": ds.candidates}),
        (stray, {"candidates": ds.candidates}),
        (comps, {"attribute": "nope"}),
        (comps.iloc[:0], {}),
        (comps, {"candidates": pd.DataFrame({"context_id": ["x"]})}),
    ]
    for table, kw in cases:
        assert message(comparisons_to_P, table, **kw) == message(slow_comparisons_to_P, table, **kw)
    pm = comparisons_to_P(comps)
    hs = ds.human_scores
    for kw in ({"annotators": ["ghost"]}, {"attribute": "nope"}):
        assert message(scores_to_matrix, hs, pm, **kw) == message(
            slow_scores_to_matrix, hs, pm, **kw
        )
