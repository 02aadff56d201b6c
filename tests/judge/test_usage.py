"""judge.runs.usage: calls, tokens and dollars per judge from the run store."""

from __future__ import annotations

import math

import pytest

from judge.runs.usage import COLUMNS, judge_usage
from judge.store import RunItem, RunStore, StoredResult


def _run(store, run_id, judge, model, keys, kind="openai"):
    settings = {
        "kind": "pairwise",
        "judge": judge,
        "attribute": "overall",
        "backend": {"kind": kind, "model": model},
    }
    store.start_run(run_id, settings, [RunItem(key=k, context_id="c") for k in keys])


def test_usage_adds_distinct_calls_per_judge_and_prices_them(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        _run(store, "r1", "gpt-x/liusie-c1", "gpt-x", ["k1", "k2"])
        # a resumed run of the same judge: k2 again (paid once), k3 new
        _run(store, "r2", "gpt-x/liusie-c1", "gpt-x", ["k2", "k3"])
        _run(store, "r3", "local/liusie-c1", "local", ["k9"], kind="hf")
        store.put_many(
            [
                StoredResult("k1", "label", n_prompt_tokens=100, n_completion_tokens=1),
                StoredResult("k2", "label", n_prompt_tokens=200, n_completion_tokens=1),
                StoredResult(
                    "k3", "label", status="failed", error="http-500: x", n_prompt_tokens=None
                ),
                StoredResult("k9", "label", n_prompt_tokens=50, n_completion_tokens=1),
            ]
        )
    prices = {"gpt-x": (2.0, 8.0)}
    usage = judge_usage(store=path, prices=prices)
    assert list(usage.columns) == COLUMNS
    rec = usage.set_index("judge").loc["gpt-x/liusie-c1"]
    assert rec["n_calls"] == 3 and rec["prompt_tokens"] == 300 and rec["completion_tokens"] == 2
    assert rec["usd"] == pytest.approx(300 / 1e6 * 2.0 + 2 / 1e6 * 8.0)
    assert rec["model"] == "gpt-x"
    local = usage.set_index("judge").loc["local/liusie-c1"]
    assert local["prompt_tokens"] == 50 and math.isnan(local["usd"])  # no price for a local model
    only = judge_usage(["local/liusie-c1", "never-run"], store=path, prices=prices)
    assert only["judge"].tolist() == ["local/liusie-c1"]


def test_usage_without_a_store_is_empty(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "nothing"))
    usage = judge_usage(["x"])
    assert usage.empty and list(usage.columns) == COLUMNS
    assert not (tmp_path / "nothing").exists()  # looking does not create a store
