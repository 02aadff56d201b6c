"""JudgeScope's data layer: canonical tables, validation, upload readers, benchmarks, demo.

The public names are listed once here (importing them all costs about as much as pandas
itself, which every module needs). The simulator function ``simulate`` is reached as
``data.synthetic.simulate.simulate``.

- Tables: :class:`Dataset`, :class:`DataError`, ``HUMAN_JUDGE_PREFIX`` (``data.schema``).
- Benchmarks: :func:`list_benchmarks`, :func:`load_benchmark`, :class:`BenchmarkInfo`,
  :func:`llmfao_golden` (``data.benchmarks``).
- Validation: :func:`validate_dataset`, :func:`validate_table` (``data.validate``).
- Uploads: :func:`read_upload`, :func:`read_upload_result`, :func:`preview_upload`,
  :func:`read_table`, :func:`write_table`, :func:`load_dataset`, :func:`save_dataset`, ...
  (``data.io``); joining a file to a dataset: :func:`add_to_dataset` (``data.io.merge``);
  what each table holds: :func:`table_summary` (``data.overview``).
- Arrays for ranking: :func:`comparisons_to_P`, :class:`PMatrix`, ... (``data.arrays``).
- Parsing judge answers: :func:`parse_verdict`, :func:`parse_likert`, ... (``data.parsing``).
- Synthetic data: :func:`simulate_with_truth` (``data.synthetic.simulate``),
  :func:`demo_dataset` (``data.synthetic.demo``).
- The papers' published numbers beside computed ones: :func:`reproduce` (``data.reproduce``;
  its ``rows`` and ``papers_for`` are reached as ``data.reproduce.rows`` too).

The analysis tables built on ``ranking`` are reached through their subpackages:
``data.agreement``, ``data.comparative``, ``data.bias``, ``data.jury``, ``data.ppi``,
``data.rationales``, ``data.report_card``; what an analysis looks at (systems left out,
reading) is ``data.scope``.
"""

from __future__ import annotations

from data.arrays import PMatrix, comparisons_to_P, scores_to_matrix
from data.benchmarks import BenchmarkInfo, list_benchmarks, llmfao_golden, load_benchmark
from data.flat import FlatComparisons, flat_comparisons
from data.io import (
    PairwiseMapping,
    WideMapping,
    detect_kind,
    guess_pairwise_mapping,
    guess_wide_mapping,
    load_dataset,
    pairwise_to_comparisons,
    preview_upload,
    read_frame,
    read_table,
    read_upload,
    read_upload_result,
    save_dataset,
    wide_to_dataset,
    write_table,
)
from data.io.merge import add_to_dataset
from data.overview import table_summary
from data.parsing import Parsed, parse_choice_letter, parse_likert, parse_verdict
from data.paths import data_dirs, user_cache_dir
from data.reproduce import reproduce  # the function; ``python -m data.reproduce`` runs the package
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from data.synthetic.demo import demo_dataset
from data.synthetic.simulate import simulate_with_truth
from data.validate import validate_dataset, validate_table

__all__ = [
    "Dataset",
    "DataError",
    "HUMAN_JUDGE_PREFIX",
    "BenchmarkInfo",
    "list_benchmarks",
    "load_benchmark",
    "llmfao_golden",
    "validate_dataset",
    "validate_table",
    "read_upload",
    "read_upload_result",
    "preview_upload",
    "add_to_dataset",
    "table_summary",
    "read_table",
    "read_frame",
    "write_table",
    "load_dataset",
    "save_dataset",
    "detect_kind",
    "WideMapping",
    "PairwiseMapping",
    "guess_wide_mapping",
    "guess_pairwise_mapping",
    "wide_to_dataset",
    "pairwise_to_comparisons",
    "comparisons_to_P",
    "PMatrix",
    "flat_comparisons",
    "FlatComparisons",
    "scores_to_matrix",
    "simulate_with_truth",
    "demo_dataset",
    "Parsed",
    "parse_verdict",
    "parse_likert",
    "parse_choice_letter",
    "data_dirs",
    "user_cache_dir",
    "reproduce",
]
