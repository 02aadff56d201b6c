"""JudgeScope's LLM side: prompt templates, backends, runners, the run store, estimates.

The public names are listed once here and load on first use, so ``import judge`` imports
neither torch, transformers nor openai (a backend imports its library when constructed).

- Interface: :class:`Backend`, :class:`BackendError`, :class:`Decoding`,
  :class:`LabelRequest`, :class:`LabelResult`, :class:`GenerateRequest`,
  :class:`GenerateResult` (``judge.backends.base``).
- Backends: :class:`OpenAIBackend` (``judge.backends.openai_compat``), :class:`HFBackend`
  (``judge.backends.hf``).
- Templates: :class:`Template`, :func:`builtin_templates`, :func:`load_templates`,
  :func:`check_fields`, :func:`attribute_values` (``judge.templates``).
- Running: :func:`run_pairwise`, :func:`run_absolute`, :class:`RunResult`
  (``judge.runs.runners``); :func:`plan_pairwise`, :func:`plan_absolute` (``judge.runs.plan``);
  :func:`estimate`, :class:`Estimate` (``judge.runs.estimate``).
- The ``judge`` column: :func:`judge_name`, :func:`parse_judge_name` (``judge.names``).
- Run store: :class:`RunStore`, :func:`default_store_path` (``judge.store``).
- Probes: :func:`token_logprobs` (``judge.logprobs``), per-token log-probabilities of texts
  under a causal transformers backend.

Command line: ``python -m judge run ...`` / ``python -m judge estimate ...``.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "Backend": "judge.backends.base",
    "BackendError": "judge.backends.base",
    "Decoding": "judge.backends.base",
    "LabelRequest": "judge.backends.base",
    "LabelResult": "judge.backends.base",
    "GenerateRequest": "judge.backends.base",
    "GenerateResult": "judge.backends.base",
    "OpenAIBackend": "judge.backends.openai_compat",
    "HFBackend": "judge.backends.hf",
    "Template": "judge.templates",
    "builtin_templates": "judge.templates",
    "load_templates": "judge.templates",
    "dump_templates": "judge.templates",
    "check_fields": "judge.templates",
    "attribute_values": "judge.templates",
    "run_pairwise": "judge.runs.runners",
    "run_absolute": "judge.runs.runners",
    "RunResult": "judge.runs.runners",
    "plan_pairwise": "judge.runs.plan",
    "plan_absolute": "judge.runs.plan",
    "judge_name": "judge.names",
    "parse_judge_name": "judge.names",
    "estimate": "judge.runs.estimate",
    "Estimate": "judge.runs.estimate",
    "load_prices": "judge.runs.estimate",
    "RunStore": "judge.store",
    "default_store_path": "judge.store",
    "token_logprobs": "judge.logprobs",
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
