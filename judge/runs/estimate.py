"""What a judge run will cost before it runs: model calls, tokens and an approximate price.

The estimate plans the run exactly as :mod:`judge.runs.runners` would
(:mod:`judge.runs.plan`) (same selection, same prompts, same store keys), so ``n_cached`` is
what a resumed run will skip. Tokens are counted with the backend's ``count_tokens`` (the real tokenizer for transformers models,
about four characters a token for API models). Prices come from a small table of USD per
million input / output tokens — approximate, check your provider — that users can edit:
``judge/runs/prices.csv`` by default, or the file named by ``JUDGESCOPE_PRICES`` / ``prices=``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from data.schema import Dataset
from judge.backends.base import Decoding, GenerateRequest, LabelRequest
from judge.runs.plan import Plan, backend_identity, plan_for
from judge.store import RunStore, open_store

DEFAULT_PRICES = Path(__file__).with_name("prices.csv")
PRICE_COLUMNS = ("model", "input_usd_per_1m", "output_usd_per_1m")


@dataclass
class Estimate:
    """Size and cost of a run.

    ``n_prompts`` model calls in all, ``n_cached`` of them already in the run store;
    ``prompt_tokens`` / ``output_tokens`` and ``price_usd`` cover the calls still to make.
    Output tokens are 1 per call for probabilities and ``max_new_tokens`` per sample when
    sampling (an upper bound). ``price_usd`` is None when the model is not in the price table
    (local models, unknown names).
    """

    n_prompts: int
    n_cached: int
    prompt_tokens: int
    output_tokens: int
    price_usd: float | None
    model: str = ""
    mode: str = ""
    note: str = ""

    @property
    def n_to_run(self) -> int:
        return self.n_prompts - self.n_cached


def prices_path() -> Path:
    """The price table in use: ``JUDGESCOPE_PRICES`` if set, else the bundled one."""
    env = os.environ.get("JUDGESCOPE_PRICES")
    return Path(env).expanduser() if env else DEFAULT_PRICES


def load_prices(path: str | os.PathLike | None = None) -> dict[str, tuple[float, float]]:
    """Read a price table: model -> (USD per 1M input tokens, USD per 1M output tokens).

    CSV with columns ``model,input_usd_per_1m,output_usd_per_1m`` (``#`` starts a comment)
    or JSON ``{"model": [input, output], ...}``.
    """
    path = Path(path) if path is not None else prices_path()
    if not path.exists():
        raise FileNotFoundError(
            f"price table {path} does not exist (set JUDGESCOPE_PRICES or pass prices=)"
        )
    if path.suffix.lower() == ".json":
        import json

        raw = json.loads(path.read_text())
        try:
            return {str(m): (float(v[0]), float(v[1])) for m, v in raw.items()}
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError(
                f"price table {path}: expected {{model: [input_usd_per_1m, output_usd_per_1m]}} ({exc})"
            ) from None
    df = pd.read_csv(path, comment="#", skipinitialspace=True)
    missing = [c for c in PRICE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(
            f"price table {path} lacks column(s) {missing}; expected {list(PRICE_COLUMNS)}"
        )
    out: dict[str, tuple[float, float]] = {}
    for n, row in enumerate(df.itertuples(index=False), start=1):
        try:
            out[str(row.model).strip()] = (
                float(row.input_usd_per_1m),
                float(row.output_usd_per_1m),
            )
        except ValueError:
            raise ValueError(f"price table {path}, row {n}: prices must be numbers") from None
    return out


def price_for(model: str, prices: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    """Exact match, else the longest table name that begins ``model`` (dated snapshots)."""
    if model in prices:
        return prices[model]
    bare = model.rsplit("/", 1)[-1]  # "openai/gpt-4o-mini" on routers
    if bare in prices:
        return prices[bare]
    hits = [name for name in prices if bare.startswith(name)]
    return prices[max(hits, key=len)] if hits else None


def _count_plan_tokens(plan: Plan, todo: list[str], count) -> int:
    """Tokens of the prompts still to send (shared prefixes counted once per text)."""
    memo: dict[str, int] = {}

    def n(text: str) -> int:
        if text not in memo:
            memo[text] = count(text) if text else 0
        return memo[text]

    total = 0
    for key in todo:
        req = plan.requests[key]
        if isinstance(req, LabelRequest):
            total += n(req.prefix) + n(req.prompt)
        elif isinstance(req, GenerateRequest):
            total += n(req.prompt) + (n(req.system) if req.system else 0)
    return total


def estimate(
    dataset: Dataset,
    attribute: str,
    template,
    backend_or_model,
    selection: str = "all",
    budget: int | None = None,
    n_samples: int | None = None,
    *,
    mode: str | None = None,
    decoding: Decoding | None = None,
    random_state=0,
    contexts=None,
    domain: str | None = None,
    values: dict | None = None,
    parse_rule: str = "chiang_lee",
    store: RunStore | str | None | bool = None,
    prices: str | os.PathLike | Mapping | None = None,
    base_url: str | None = None,
) -> Estimate:
    """Plan a run and say how many calls, tokens and (for API models) dollars it needs.

    Parameters
    ----------
    dataset, attribute, template, selection, budget, random_state, contexts, domain, values
        As for :func:`judge.runs.runners.run_pairwise` / :func:`judge.runs.runners.run_absolute`
        (the template's kind decides which).
    backend_or_model : backend object or str
        A backend (its ``describe()`` and ``count_tokens`` are used; no model call is made)
        or an API model name such as ``"gpt-4o-mini"`` (an OpenAI-compatible backend at
        ``base_url`` is assumed, tokens counted as characters / 4).
    n_samples : int, optional
        Samples per prompt when sampling (default 5 pairwise, 3 absolute).
    mode : str, optional
        Pairwise "probs" (default) or "samples"; absolute "samples" (default) or "expected".
    store : RunStore, path, None or False
        Store to look for cached answers in (None: the default store, False: none).
    prices : path or mapping, optional
        Price table (default :func:`prices_path`).

    Returns
    -------
    Estimate
    """
    if isinstance(backend_or_model, str):
        from judge.backends.openai_compat import approx_tokens, openai_describe

        backend = openai_describe(backend_or_model, base_url)
        model = backend_or_model
        count = approx_tokens
        priced = True
    else:
        backend = backend_or_model
        desc, model = backend_identity(backend)
        count = backend.count_tokens
        priced = desc.get("kind") == "openai"
    decoding = decoding or Decoding()
    plan = plan_for(
        dataset,
        attribute=attribute,
        template=template,
        backend=backend,
        mode=mode,
        n_samples=n_samples,
        selection=selection,
        budget=budget,
        random_state=random_state,
        parse_rule=parse_rule,
        decoding=decoding,
        contexts=contexts,
        domain=domain,
        values=values,
    )
    keys = list(plan.requests)
    with open_store(store) as found:
        cached = set(found.get_many(keys))
    todo = [k for k in keys if k not in cached]
    prompt_tokens = _count_plan_tokens(plan, todo, count)
    per_call = 1 if plan.request_kind == "label" else int(decoding.max_new_tokens)
    output_tokens = per_call * len(todo)
    price = None
    note = "local model: no API price"
    if priced:
        table = dict(prices) if isinstance(prices, Mapping) else load_prices(prices)
        rates = price_for(model, table)
        if rates is None:
            note = f"{model!r} is not in the price table ({prices_path() if prices is None else prices})"
        else:
            price = (prompt_tokens * rates[0] + output_tokens * rates[1]) / 1e6
            note = "approximate list price; check your provider"
    if plan.request_kind == "generate":
        note += "; output tokens are an upper bound (max_new_tokens per sample)"
    return Estimate(
        len(keys), len(cached), prompt_tokens, output_tokens, price, model, plan.mode, note
    )


__all__ = ["Estimate", "estimate", "load_prices", "price_for", "prices_path"]
