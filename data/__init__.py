"""JudgeScope's data layer: canonical tables, validation, upload readers, benchmarks, demo.

The public names are listed once here; the modules behind them load on first use, so
``import data`` stays light (a page that only needs :class:`Dataset` does not parse XML or
import the simulator).

- Tables: :class:`Dataset`, :class:`DataError`, ``HUMAN_JUDGE_PREFIX`` (``data.schema``).
- Benchmarks: :func:`list_benchmarks`, :func:`load_benchmark`, :class:`BenchmarkInfo`,
  :func:`llmfao_golden` (``data.benchmarks``).
- Validation: :func:`validate_dataset`, :func:`validate_table` (``data.validate``).
- Uploads: :func:`read_upload`, :func:`read_table`, :func:`write_table`,
  :func:`load_dataset`, :func:`save_dataset`, ... (``data.io``).
- Arrays for ranking: :func:`comparisons_to_P`, :class:`PMatrix`, ... (``data.arrays``).
- Parsing judge answers: :func:`parse_verdict`, :func:`parse_likert`, ... (``data.parsing``).
- Synthetic data: :func:`simulate_with_truth` (``data.simulate``), :func:`demo_dataset`.
"""

from __future__ import annotations

import importlib

from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

# name -> module that defines it. The simulator function ``simulate`` is reached as
# ``data.simulate.simulate``: exporting it here would clash with the submodule's name.
_LAZY = {
    "BenchmarkInfo": "data.benchmarks",
    "list_benchmarks": "data.benchmarks",
    "load_benchmark": "data.benchmarks",
    "llmfao_golden": "data.benchmarks",
    "validate_dataset": "data.validate",
    "validate_table": "data.validate",
    "read_upload": "data.io",
    "read_table": "data.io",
    "read_frame": "data.io",
    "write_table": "data.io",
    "load_dataset": "data.io",
    "save_dataset": "data.io",
    "detect_kind": "data.io",
    "WideMapping": "data.io",
    "PairwiseMapping": "data.io",
    "guess_wide_mapping": "data.io",
    "guess_pairwise_mapping": "data.io",
    "wide_to_dataset": "data.io",
    "pairwise_to_comparisons": "data.io",
    "comparisons_to_P": "data.arrays",
    "PMatrix": "data.arrays",
    "flat_comparisons": "data.arrays",
    "FlatComparisons": "data.arrays",
    "scores_to_matrix": "data.arrays",
    "simulate_with_truth": "data.simulate",
    "demo_dataset": "data.demo",
    "Parsed": "data.parsing",
    "parse_verdict": "data.parsing",
    "parse_likert": "data.parsing",
    "parse_choice_letter": "data.parsing",
    "data_dirs": "data.paths",
    "user_cache_dir": "data.paths",
}

__all__ = ["Dataset", "DataError", "HUMAN_JUDGE_PREFIX", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'data' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
