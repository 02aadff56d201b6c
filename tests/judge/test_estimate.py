"""Estimates: calls, tokens and cached answers as a run would see them, and prices."""

from __future__ import annotations

import pytest

from judge.backends.base import Decoding
from judge.store import RunStore
from tests.judge.judge_runs import C2, ChunkedBackend, c2_prompt, run_c2, tiny_dataset


def test_estimate_counts_calls_tokens_and_cache(tmp_path):
    from judge.runs.estimate import estimate

    ds = tiny_dataset(2, 4)
    backend = ChunkedBackend()
    store = RunStore(tmp_path / "s.sqlite")
    est = estimate(ds, "coherence", C2, backend, store=store)
    prompts = [
        c2_prompt(ds, f"doc{c}", f"s{i}", f"s{j}")
        for c in range(2)
        for i in range(4)
        for j in range(4)
        if i != j
    ]
    assert (est.n_prompts, est.n_cached, est.output_tokens) == (24, 0, 24)
    assert est.prompt_tokens == sum(len(p.split()) for p in prompts)
    assert est.price_usd is None and "local model" in est.note  # not an API backend
    run_c2(ds, backend=backend, store=store, selection="no-repeat", budget=3)
    est = estimate(ds, "coherence", C2, backend, store=store)
    assert est.n_cached == 6 and est.n_to_run == 18
    samples = estimate(
        ds,
        "coherence",
        C2,
        backend,
        n_samples=3,
        mode="samples",
        store=False,
        decoding=Decoding(max_new_tokens=10),
    )
    assert samples.n_prompts == 72 and samples.output_tokens == 720
    assert samples.prompt_tokens == 3 * sum(len(p.split()) for p in prompts)
    store.close()


def test_estimate_price_for_api_models(tmp_path, monkeypatch):
    from judge.runs.estimate import estimate, load_prices, price_for

    ds = tiny_dataset(1, 3)
    est = estimate(ds, "coherence", C2, "gpt-4o-mini", store=False)
    prompts = [
        c2_prompt(ds, "doc0", f"s{i}", f"s{j}") for i in range(3) for j in range(3) if i != j
    ]
    # tokens: about 4 characters each, counted on the shared prefix and the rest separately
    assert est.prompt_tokens == pytest.approx(sum(len(p) for p in prompts) / 4, rel=0.05)
    assert est.price_usd == pytest.approx((est.prompt_tokens * 0.15 + 6 * 0.60) / 1e6)
    table = load_prices()
    assert price_for("gpt-4o-mini-2024-07-18", table) == table["gpt-4o-mini"]
    assert price_for("gpt-4o-2024-08-06", table) == table["gpt-4o"]
    assert price_for("openai/gpt-4.1-nano", table) == table["gpt-4.1-nano"]
    assert price_for("llama-3-8b", table) is None
    own = tmp_path / "p.json"
    own.write_text('{"gpt-4o-mini": [1.5, 6.0]}')
    monkeypatch.setenv("JUDGESCOPE_PRICES", str(own))
    assert load_prices() == {"gpt-4o-mini": (1.5, 6.0)}
    dear = estimate(ds, "coherence", C2, "gpt-4o-mini", store=False)
    assert dear.price_usd == pytest.approx(10 * est.price_usd)
    bad = tmp_path / "bad.csv"
    bad.write_text("model,price\nx,1\n")
    with pytest.raises(ValueError, match="lacks column"):
        load_prices(bad)
    unknown = estimate(ds, "coherence", C2, "my-local-llama", store=False)
    assert unknown.price_usd is None and "not in the price table" in unknown.note
