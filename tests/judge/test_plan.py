"""Planning, seen through the runners: which pairs each context gets, and bad input caught
before any model call; notes for what a plan leaves out."""

from __future__ import annotations

import pandas as pd
import pytest

from data.schema import Dataset
from judge.backends.base import BackendError
from judge.runs.plan import plan_pairwise
from judge.runs.runners import run_absolute, run_pairwise
from judge.store import RunStore
from judge.templates import TemplateError
from tests.judge.fake_openai import fake_openai_fixture  # noqa: F401  (the fake_openai fixture)
from tests.judge.judge_runs import (  # isolated_env: autouse, no user key, a cache per test
    C2,
    TEMPLATES,
    backend_for,
    isolated_env,  # noqa: F401
    run_c2,
    tiny_dataset,
)


def test_selection_and_budget(fake_openai, tmp_path):
    ds = tiny_dataset(3, 5)
    kw = dict(
        backend=backend_for(fake_openai),
        selection="no-repeat",
        budget=4,
        store=tmp_path / "s.sqlite",
    )
    result = run_c2(ds, random_state=7, **kw)
    df = result.table
    assert df.groupby("context_id").size().tolist() == [4, 4, 4]
    for _, g in df.groupby("context_id"):
        unordered = {frozenset(p) for p in zip(g["first_id"], g["second_id"], strict=True)}
        assert len(unordered) == 4  # never both orders of a pair
    same_run = run_c2(ds, random_state=7, **kw)
    same = same_run.table
    pd.testing.assert_frame_equal(df, same)
    # a context's pairs do not depend on which other contexts run
    only_run = run_c2(ds, random_state=7, contexts=["doc1"], **kw)
    only = only_run.table
    pd.testing.assert_frame_equal(
        only.reset_index(drop=True), df[df["context_id"] == "doc1"].reset_index(drop=True)
    )
    with pytest.raises(ValueError, match=r"context 'doc0' \(5 candidates\)"):
        run_c2(ds, **{**kw, "budget": 11})


def test_bad_input_before_any_call(fake_openai, tmp_path):
    ds = tiny_dataset(1, 3)
    store = RunStore(tmp_path / "s.sqlite")
    backend = backend_for(fake_openai)
    with pytest.raises(TemplateError, match=r"\{reference\}"):  # HANNA EP4 needs a reference story
        run_absolute(
            ds,
            attribute="coherence",
            template=TEMPLATES["hanna-ep4"],
            backend=backend,
            domain="story",
            store=store,
        )
    with pytest.raises(ValueError, match="is absolute, not comparative"):
        run_pairwise(
            ds, attribute="coherence", template=TEMPLATES["geval"], backend=backend, store=store
        )
    with pytest.raises(TemplateError, match="no 'adjective' for attribute 'tastiness'"):
        run_pairwise(ds, attribute="tastiness", template=C2, backend=backend, store=store)
    with pytest.raises(BackendError, match="'gpt-nope' is not served"):
        run_c2(ds, store=store, backend=backend_for(fake_openai, model="gpt-nope"))
    with pytest.raises(ValueError, match="not in dataset"):
        run_c2(ds, backend=backend, store=store, contexts=["nope"])
    no_ctx = Dataset(name="noctx", candidates=ds.candidates)
    with pytest.raises(ValueError, match="no row in the contexts table"):
        run_c2(no_ctx, backend=backend, store=store)
    assert fake_openai.n_chat_calls == 0
    assert store.count() == 0
    store.close()


def test_a_context_with_one_candidate_is_a_note_of_the_plan_and_the_result(fake_openai, tmp_path):
    ds = tiny_dataset(2, 3)
    lonely = ds.candidates[
        ~((ds.candidates["context_id"] == "doc1") & (ds.candidates["candidate_id"] != "s0"))
    ]
    ds = Dataset(name="lonely", contexts=ds.contexts, candidates=lonely)
    plan = plan_pairwise(
        ds, attribute="coherence", template=C2, backend={"kind": "x", "model": "m"}
    )
    assert plan.notes == ["context 'doc1' has 1 candidate(s); skipped"]
    assert plan.n_calls == 6 and {it.context_id for it in plan.items} == {"doc0"}
    result = run_c2(ds, backend=backend_for(fake_openai), store=tmp_path / "s")
    assert result.notes == plan.notes and result.warnings == []
    assert result.n_rows == 6 and result.summary()["notes"] == plan.notes
