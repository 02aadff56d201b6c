"""Dataset keys and small helpers shared by every service module.

Cached functions take the key of a dataset (:func:`dataset_key`) instead of the dataset, and
look it up with :func:`dataset`; :func:`register` makes a dataset reachable without a
Streamlit session (tests, benchmarks).
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from data.schema import Dataset
from judge.names import parse_judge_name
from pages import state

_live: weakref.WeakValueDictionary[str, Dataset] = weakref.WeakValueDictionary()


# ---------------------------------------------------------------------------------------
# Dataset keys
# ---------------------------------------------------------------------------------------


def dataset_key() -> str:
    """Key of the active dataset; it changes when the active dataset (or its content) changes."""
    key = state.key()
    _live[key] = state.active()
    return key


def dataset(key: str) -> Dataset:
    """The dataset behind ``key`` (registered by :func:`dataset_key` in this server)."""
    ds = _live.get(key)
    if ds is None:
        raise ValueError(
            f"dataset {key.split('|')[0]!r} is no longer loaded; pick it again on the Data page"
        )
    return ds


def register(ds: Dataset, key: str) -> str:
    """Make ``ds`` reachable under ``key`` without a Streamlit session (tests, benchmarks)."""
    _live[key] = ds
    return key


# ---------------------------------------------------------------------------------------
# Numbers for display
# ---------------------------------------------------------------------------------------


def mean_finite(values) -> float:
    """Mean over the finite entries; NaN when there are none (no warning)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def fmt(value, digits: int = 3) -> str:
    """A number for a metric: rounded, or "n/a" when undefined (NaN / None)."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


# ---------------------------------------------------------------------------------------
# Names of rating judges (Human agreement and Prompt sensitivity pages)
# ---------------------------------------------------------------------------------------


def variant_label(judge: str, prompt_id: str) -> str:
    """One readable name for a (judge, prompt) pair: the judge alone when it names the prompt."""
    judge, prompt_id = str(judge), str(prompt_id)
    if prompt_id in judge.split("/"):
        return judge
    return f"{judge} · {prompt_id}"


def judge_model(judge: str, prompt_id: str) -> tuple[str, float | None]:
    """(model, temperature) of a ratings judge name, read by ``judge.names.parse_judge_name``.

    The prompt id and the decoding tag (``t0.7-p0.9``) are taken out of the name, so the
    ratings of one model under several templates or temperatures group together:
    ``gpt-3.5-turbo-0301/altmcq`` (prompt ``altmcq``) -> ``gpt-3.5-turbo-0301``;
    ``my-model/t0.7-p1`` -> (``my-model``, 0.7).
    """
    name = parse_judge_name(judge, prompt_id, kind="absolute")
    return name.model, name.temperature
