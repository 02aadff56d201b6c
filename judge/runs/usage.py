"""What the judges run here cost: calls, tokens and dollars from the run store.

Every answer in the run store keeps the prompt and completion tokens its provider reported
(``n_prompt_tokens``, ``n_completion_tokens``); every run keeps its judge name, its backend
and its items. :func:`judge_usage` adds up, per judge name, the distinct calls of all its
runs (a call shared by two runs, or asked again by a resumed run, counts once: it was paid
once) and prices the tokens with the estimate's price table
(:func:`judge.runs.estimate.load_prices`, :func:`~judge.runs.estimate.price_for`). The result
is the usage table ``data.report_card.with_cost`` reads (``data.report_card.USAGE_COLUMNS``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import pandas as pd

from judge.runs.estimate import load_prices, price_for
from judge.runs.plan import backend_identity
from judge.store import RunStore, open_store

COLUMNS = ["judge", "model", "n_calls", "prompt_tokens", "completion_tokens", "usd"]


def judge_usage(
    judges: Iterable[str] | None = None,
    *,
    store: RunStore | str | os.PathLike | None = None,
    prices: str | os.PathLike | Mapping | None = None,
) -> pd.DataFrame:
    """Calls, tokens and dollars per judge name, from the runs in the store.

    Parameters
    ----------
    judges : iterable of str, optional
        Judge names to report (default: every judge with a run in the store); a name with no
        run is left out.
    store : RunStore or path, optional
        The run store (default: the default store, which is not created when missing).
    prices : path or mapping, optional
        Price table (default: the estimate's, ``JUDGESCOPE_PRICES`` or the bundled one).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`: judge, model (of its latest run), n_calls (distinct calls answered,
        failures included), prompt_tokens and completion_tokens (as reported; 0 where a
        backend reports none), usd (NaN when a model has no price or is not an API model).
    """
    wanted = None if judges is None else {str(j) for j in judges}
    if store is None:
        from judge.store import default_store_path

        path = default_store_path()
        if not path.exists():
            return pd.DataFrame(columns=COLUMNS)
        store = path
    if isinstance(prices, Mapping):
        table = dict(prices)
    else:
        try:
            table = load_prices(prices)
        except (OSError, ValueError):
            table = {}
    rows = []
    with open_store(store) as st:
        runs = st.runs()
        if wanted is not None:
            runs = runs[runs["judge"].astype(str).isin(wanted)]
        for judge, group in runs.groupby("judge", sort=True):
            keys: dict[str, str] = {}  # call key -> model of the run that planned it
            model = ""
            priced_models: dict[str, bool] = {}
            for run_id in group.sort_values("updated_at")["run_id"]:
                settings = st.run_settings(run_id)
                desc, model = backend_identity(settings.get("backend") or {})
                priced_models[model] = desc.get("kind") == "openai"
                for item in st.run_items(run_id):
                    keys.setdefault(item.key, model)
            results = st.get_many(keys, include_failed=True)
            n_prompt = n_completion = 0
            usd = 0.0
            unpriced = False
            for key, res in results.items():
                p_tok = int(res.n_prompt_tokens or 0)
                c_tok = int(res.n_completion_tokens or 0)
                n_prompt += p_tok
                n_completion += c_tok
                m = keys[key]
                price = price_for(m, table) if priced_models.get(m) else None
                if price is None:
                    unpriced = True
                else:
                    usd += p_tok / 1e6 * price[0] + c_tok / 1e6 * price[1]
            rows.append(
                {
                    "judge": str(judge),
                    "model": model,
                    "n_calls": len(results),
                    "prompt_tokens": n_prompt,
                    "completion_tokens": n_completion,
                    "usd": float("nan") if unpriced or not results else usd,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)
