"""Real evaluation sets with human annotations and published LLM-judge outputs, by name.

>>> from data.benchmarks import list_benchmarks, load_benchmark
>>> [b.name for b in list_benchmarks()]            # doctest: +SKIP
>>> ds = load_benchmark("hanna")                    # doctest: +SKIP

Files are read from the folders of :func:`data.paths.data_dirs` (``JUDGESCOPE_DATA``, default
``../shared/data``, then the per-user cache); missing ones are downloaded from the public
source pinned in ``_sources.py`` and checked against ``checksums.json`` (see
:mod:`data.benchmarks.download`). A parsed benchmark is kept in memory per (name, files, their
modification times and sizes), so a second load is immediate; edit or replace a file and the
next load reads it again.

Beside the loaders (one module per benchmark): ``download`` (find a file in the data folders,
or fetch it from its pinned source and check it) and ``fetch`` (check or fetch every file of
the named benchmarks at once: ``python -m data check|fetch [NAME ...]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from data.benchmarks import (
    hanna,
    llmbar,
    llmfao,
    newsroom,
    pandalm,
    summeval,
    topicalchat,
    webnlg,
)
from data.benchmarks._sources import remote_file
from data.benchmarks.download import resolve_files
from data.schema import DataError, Dataset

__all__ = [
    "BenchmarkInfo",
    "list_benchmarks",
    "benchmark_info",
    "benchmark_files",
    "load_benchmark",
    "llmfao_golden",
    "evalica_toy",
    "clear_cache",
]


@dataclass(frozen=True)
class BenchmarkInfo:
    """What a benchmark holds, for listing and choosing.

    Attributes
    ----------
    name : str
        The name :func:`load_benchmark` takes.
    title : str
        A short label for menus.
    description : str
        What the set is: contexts, candidates, human ratings, scales.
    judge_outputs : tuple of str
        The published judge outputs it carries (empty when none), one line per judge group,
        with the ``judge`` names used in the comparisons / ratings tables.
    files : tuple of str
        The files read, relative to a data folder.
    source : str
        Repositories, commits and licences.
    loader : callable
        Builds the (not yet validated) Dataset from ``{relpath: local Path}`` of ``files``;
        left out of ``repr`` and of comparisons.
    """

    name: str
    title: str
    description: str
    judge_outputs: tuple[str, ...]
    files: tuple[str, ...]
    source: str
    loader: Callable[[dict[str, Path]], Dataset] = field(repr=False, compare=False)


_SUMMEVAL_JUDGES = (
    "gpt-3.5-turbo-0301/ab-choice: ChatGPT pairwise A/B/C (C = tie) verdicts on 11 adjacent "
    "system pairs x 4 attributes x 100 documents, both presentation orders (8,800 comparisons)",
    "gpt-3.5-turbo-0301/{rts,altrts,mcq,altmcq,stareval}: ChatGPT absolute 1-5 scores, "
    "5 prompt methods x 12 systems x 4 attributes x 100 documents (24,000 ratings)",
    "gpt-4-0314/rts: GPT-4 reason-then-score 1-5 (4,800 ratings)",
    "llama-2-{7b,13b,70b}-chat-hf/rts: Llama-2-chat reason-then-score 1-5 (3 x 4,800 ratings)",
)

_INFOS = (
    BenchmarkInfo(
        name="summeval",
        title="SummEval (100 docs x 16 systems, expert means)",
        description=(
            "CNN/DailyMail summarisation: 100 articles x 16 systems, 1-5 expert-mean ratings of "
            "coherence, consistency, fluency and relevance."
        ),
        judge_outputs=_SUMMEVAL_JUDGES,
        files=summeval.files_summeval(),
        source="neulab/BARTScore, DAMO-NLP-SG/LLM_summeval, maiush/PPairS",
        loader=summeval.load_summeval,
    ),
    BenchmarkInfo(
        name="summeval_annotators",
        title="SummEval per annotator (12 systems, 3 experts + 5 crowd)",
        description=(
            "The 12 abstractive SummEval systems on the same 100 articles with every rating: "
            "3 experts and 5 crowd workers per summary and attribute (1-5)."
        ),
        judge_outputs=_SUMMEVAL_JUDGES,
        files=summeval.files_annotators(),
        source="DAMO-NLP-SG/LLM_summeval",
        loader=summeval.load_summeval_annotators,
    ),
    BenchmarkInfo(
        name="hanna",
        title="HANNA stories (96 prompts x 11 systems, 3 annotators)",
        description=(
            "Story generation: 96 WritingPrompts x 11 systems (incl. the human story), 1-5 "
            "ratings by 3 annotators on relevance, coherence, empathy, surprise, engagement "
            "and complexity."
        ),
        judge_outputs=(
            "<LLM>/eval_prompt_{1..4} for LLM in Beluga-13B, OrcaPlatypus, Mistral-7B, "
            "Llama-13B, ChatGPT: 1-5 ratings on all 6 criteria, the published mean over tries "
            "(126,720 ratings; 1,051 means pulled below 1 by failed tries are NaN)",
        ),
        files=hanna.files(),
        source="dig-team/hanna-benchmark-asg, maiush/PPairS",
        loader=hanna.load,
    ),
    BenchmarkInfo(
        name="topicalchat",
        title="Topical-Chat USR (60 dialogues x 6 responses)",
        description=(
            "Knowledge-grounded dialogue: 60 contexts x 6 responses, 3-annotator means on 6 "
            "attributes with scales 0-1, 1-3 and 1-5."
        ),
        judge_outputs=(
            "gpt-3.5-turbo/geval: 20 sampled G-Eval-style answers per item for coherence, "
            "engagingness, groundedness and naturalness (28,600 ratings, raw text kept)",
        ),
        files=topicalchat.files(),
        source="maszhongming/UniEval, d223302/A-Closer-Look-To-LLM-Evaluation",
        loader=topicalchat.load,
    ),
    BenchmarkInfo(
        name="newsroom",
        title="Newsroom (60 articles x 7 summaries, 3 annotators)",
        description=(
            "News summarisation: 60 articles x 7 summaries (systems unknown), 1-5 ratings by 3 "
            "crowd annotators on informativeness, relevance, fluency and coherence."
        ),
        judge_outputs=(),
        files=newsroom.files(),
        source="dmg-illc/JUDGE-BENCH",
        loader=newsroom.load,
    ),
    BenchmarkInfo(
        name="webnlg2020",
        title="WebNLG+ 2020 (178 inputs x 17 systems, per-worker 0-100)",
        description=(
            "RDF-to-text: 178 triple sets x 17 systems (incl. the reference), 0-100 ratings "
            "by 1-3 crowd workers (worker ids kept) on 5 criteria."
        ),
        judge_outputs=(),
        files=webnlg.files(),
        source="WebNLG/challenge-2020",
        loader=webnlg.load,
    ),
    BenchmarkInfo(
        name="pandalm",
        title="PandaLM test set (999 pairs, 3 annotators + 2 judges)",
        description=(
            "Instruction following: 999 response pairs over 170 prompts and 5 models, "
            "3 human verdicts each (judges 'human:annotator1..3')."
        ),
        judge_outputs=(
            "gpt-3.5-turbo: one verdict per pair (1/2/Tie; 25 'garbage' left unparsed)",
            "pandalm-7b: one verdict per pair (1/2/0 = tie)",
        ),
        files=pandalm.files(),
        source="WeOpenML/PandaLM",
        loader=pandalm.load,
    ),
    BenchmarkInfo(
        name="llmfao",
        title="LLMFAO crowd votes (59 LLMs, 8,931 comparisons)",
        description=(
            "8,931 crowd pairwise votes (judges 'human:worker<id>') on the answers of 59 LLMs "
            "to 13 prompts; votes only, no texts. Reference ranking scores: llmfao_golden()."
        ),
        judge_outputs=(),
        files=llmfao.files(),
        source="dustalov/evalica",
        loader=llmfao.load,
    ),
    BenchmarkInfo(
        name="llmbar",
        title="LLMBar (885 pairs with a known answer, 22 judges)",
        description=(
            "Instruction following: 885 pairs of outputs whose better one is known (judge "
            "'human:gold'), in 8 subsets (LLMBar Natural and Adversarial, processed MT-Bench, "
            "FairEval, LLMEval²); a pair benchmark for the Judge report card."
        ),
        judge_outputs=(
            "<model>/<strategy> for GPT-4, ChatGPT, ChatGPT-0301, LLaMA2, PaLM2, Falcon under "
            "Vanilla, Vanilla_NoRules, CoT (and Rating, Rating_NoRules for GPT-4 and ChatGPT): "
            "the authors' verdicts in both orders (22,164 verdicts, 130 unparsed)",
        ),
        files=llmbar.files(),
        source="princeton-nlp/LLMBar",
        loader=llmbar.load,
    ),
)

_REGISTRY: dict[str, BenchmarkInfo] = {info.name: info for info in _INFOS}


def list_benchmarks() -> list[BenchmarkInfo]:
    """Every benchmark :func:`load_benchmark` knows, in a fixed order.

    Returns
    -------
    list of BenchmarkInfo
        A new list on each call, always in the same order.
    """
    return list(_INFOS)


def benchmark_info(name: str) -> BenchmarkInfo:
    """The :class:`BenchmarkInfo` of ``name``.

    Parameters
    ----------
    name : str
        A benchmark name, as in :func:`list_benchmarks`.

    Returns
    -------
    BenchmarkInfo

    Raises
    ------
    DataError
        ``name`` is not a known benchmark; the message lists the known ones.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise DataError(f"unknown benchmark {name!r}; known benchmarks: {known}") from None


def benchmark_files(name: str, data_dir: str | os.PathLike | None = None) -> dict[str, Path]:
    """Local paths of the files of ``name``, downloading missing ones (see module docs).

    Parameters
    ----------
    name : str
        A benchmark name, as in :func:`list_benchmarks`.
    data_dir : path, optional
        As for :func:`load_benchmark`.

    Returns
    -------
    dict of str to Path
        relpath -> path of an existing local file, in the order of ``BenchmarkInfo.files``.

    Raises
    ------
    DataError
        Unknown name; a file found in no data folder that could not be downloaded (offline,
        ``JUDGESCOPE_OFFLINE`` set, network error) or whose download failed its checksum.
    """
    info = benchmark_info(name)
    return _resolve(info.files, data_dir, f"benchmark '{name}'", names=[name])


def _resolve(relpaths, data_dir, what: str, names=()) -> dict[str, Path]:
    return resolve_files([remote_file(rel) for rel in relpaths], data_dir, what=what, names=names)


def _stamp(files: dict[str, Path]) -> tuple[tuple[str, str, int, int], ...]:
    out = []
    for rel, path in files.items():
        st = os.stat(path)
        out.append((rel, os.path.abspath(path), st.st_mtime_ns, st.st_size))
    return tuple(out)


def _validate(ds: Dataset) -> Dataset:
    from data.validate import validate_dataset

    return validate_dataset(ds)


@lru_cache(maxsize=16)
def _load_cached(name: str, stamp: tuple[tuple[str, str, int, int], ...]) -> Dataset:
    files = {rel: Path(path) for rel, path, _mtime, _size in stamp}
    ds = _REGISTRY[name].loader(files)
    return _validate(ds)


def _fresh_copy(ds: Dataset) -> Dataset:
    # Shallow copies: with pandas copy-on-write a caller's edits never reach the cached tables.
    tables = {
        name: ds.table(name).copy(deep=False)
        for name in ("contexts", "candidates", "human_scores", "comparisons", "ratings")
    }
    return replace(ds, scales=dict(ds.scales), **tables)


def load_benchmark(name: str, data_dir: str | os.PathLike | None = None) -> Dataset:
    """Load a benchmark by name as a validated :class:`~data.schema.Dataset`.

    Parameters
    ----------
    name : str
        One of the names in :func:`list_benchmarks` (``"summeval"``, ``"hanna"``, ...).
    data_dir : path, optional
        Folder holding the benchmark files (same layout as ``../shared/data``); default the
        ``JUDGESCOPE_DATA`` setting, else ``../shared/data`` beside the repository. The
        per-user cache folder is searched after it and receives downloads.

    Returns
    -------
    Dataset
        Contexts, candidates, human scores and the published judge outputs (comparisons and
        ratings, ``judge`` naming model and prompt). A fresh shallow copy each call; the
        parsed tables are cached per file set and modification time.

    Raises
    ------
    DataError
        Unknown name; a file missing and not downloadable (the message names the file, the
        folders searched and where to put it); a checksum mismatch on download; a malformed
        file.
    """
    files = benchmark_files(name, data_dir)
    return _fresh_copy(_load_cached(name, _stamp(files)))


def clear_cache() -> None:
    """Forget every parsed benchmark (the next load reads the files again).

    Clears the in-memory caches of :func:`load_benchmark`, :func:`llmfao_golden` and the
    SummEval judge tables that both SummEval benchmarks share.

    Returns
    -------
    None
    """
    _load_cached.cache_clear()
    _golden_cached.cache_clear()
    summeval._judge_tables.cache_clear()


@lru_cache(maxsize=8)
def _golden_cached(stamp: tuple[tuple[str, str, int, int], ...]) -> pd.DataFrame:
    ((_rel, path, _mtime, _size),) = stamp
    return llmfao.load_golden(Path(path))


def llmfao_golden(data_dir: str | os.PathLike | None = None, which: str = "llmfao") -> pd.DataFrame:
    """Evalica's reference ranking scores on the LLMFAO votes (or a toy set).

    Parameters
    ----------
    data_dir : path, optional
        As for :func:`load_benchmark`.
    which : {"llmfao", "simple", "food"}
        ``"llmfao"``: scores on the 8,931 LLMFAO votes (59 items per algorithm);
        ``"simple"`` / ``"food"``: on Evalica's toy tables (:func:`evalica_toy`).

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm`` (average_win_rate, bradley_terry, counting, eigen, elo,
        newman, pagerank), ``item`` and ``score``. Evalica's own defaults produced them (tie
        handling, Elo K and order, BT tolerance; BT scores sum to 1): compare rankings or
        normalised scores. A copy of the cached table.

    Raises
    ------
    DataError
        ``which`` is none of the three; the file is missing and could not be downloaded, or
        failed its checksum; it lacks a column or holds a score that is not a number.
    """
    if which not in ("llmfao", *llmfao.TOY_SETS):
        raise DataError(f"which must be 'llmfao', 'simple' or 'food', got {which!r}")
    files = _resolve(llmfao.golden_files(which), data_dir, f"Evalica reference scores '{which}'")
    return _golden_cached(_stamp(files)).copy()


def evalica_toy(which: str, data_dir: str | os.PathLike | None = None) -> Dataset:
    """Evalica's toy vote table ``"simple"`` or ``"food"`` as a one-context Dataset.

    Repeated votes on the same ordered pair are numbered as samples; the judge is
    ``"human:unknown"``. Reference scores: ``llmfao_golden(which=which)``.

    Parameters
    ----------
    which : {"simple", "food"}
        The toy table.
    data_dir : path, optional
        As for :func:`load_benchmark`.

    Returns
    -------
    Dataset
        Validated: one context named ``which``, the voted items as candidates (system = the
        item, empty texts), one comparison per vote on attribute ``"overall"`` (left shown
        first). Read afresh on each call (not cached).

    Raises
    ------
    DataError
        ``which`` is not a toy set; the file is missing and could not be downloaded, or
        failed its checksum; it lacks a column or has a winner other than left/right/tie.
    """
    if which not in llmfao.TOY_SETS:
        raise DataError(f"which must be one of {llmfao.TOY_SETS}, got {which!r}")
    files = _resolve(llmfao.toy_files(which), data_dir, f"Evalica toy set '{which}'")
    ((rel, path),) = files.items()
    return _validate(llmfao.load_toy(which, path))
