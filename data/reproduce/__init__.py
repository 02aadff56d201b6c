"""The papers' published numbers beside the numbers JudgeScope computes from the same data.

>>> import data
>>> data.reproduce("chhun2024")                           # doctest: +SKIP
>>> from data.reproduce import rows, papers_for
>>> rows("chhun2024")  # + page, settings, tolerance, bound, status   # doctest: +SKIP
>>> papers_for("hanna")                                   # doctest: +SKIP
['chhun2024', 'chiang2023']

From the command line: ``python -m data.reproduce chhun2024 [--json FILE] [--data-dir DIR]``.

One row per published number the data in the data folder can reproduce (a published range is
two rows, its min and its max), plus rows for the analyses whose published numbers rest on
data that was not released (``published`` NaN, computed on the nearest data we have, the
``note`` naming it). Every computed value comes from the functions the app's pages call
(``data.agreement`` and its ``groups``, ``data.comparative``, ...), run on the
dataset as the paper analysed it (``data.scope.analysis_view`` with the paper's systems and
reading); the published numbers are data (:mod:`data.reproduce.published`), never the
computation's input.

``data.reproduce`` is both this package and, once :mod:`data` is imported, the function
:func:`reproduce` (``data/__init__.py`` exports it); the function carries ``rows``,
``papers_for`` and ``PAPERS`` as attributes, so ``data.reproduce.rows(...)`` works either way.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

import pandas as pd

from data.schema import DataError

__all__ = ["COLUMNS", "ROW_COLUMNS", "PAPERS", "Paper", "papers_for", "reproduce", "rows"]

#: Columns of :func:`reproduce`, in order.
COLUMNS = ["paper", "ref", "quantity", "published", "computed", "abs_diff", "note"]
#: Columns of :func:`rows`, in order: :data:`COLUMNS` then where the app shows the number
#: (``page``: the page's url_path; ``settings``: its URL query parameters), ``tolerance``,
#: ``bound`` ("=": |computed - published| <= tolerance; "<=": the paper gives an upper
#: bound, computed <= published + tolerance; ">=": a lower bound) and ``status`` ("ok",
#: "noted": outside the tolerance with a note explaining why, "off": outside without one,
#: "unpublished": the paper has no number for it).
ROW_COLUMNS = [*COLUMNS, "page", "settings", "tolerance", "bound", "status"]


@dataclass(frozen=True)
class Paper:
    """A paper JudgeScope reproduces.

    Attributes
    ----------
    key : str
        The name :func:`reproduce` takes ("chhun2024").
    title : str
        Authors, venue and title, for display.
    benchmarks : tuple of str
        The benchmarks (``data.load_benchmark`` names) its rows are computed on.
    module : str
        The module computing its rows (a ``compute(data_dir) -> list[dict]`` function).
    """

    key: str
    title: str
    benchmarks: tuple[str, ...]
    module: str


#: The papers, by key.
PAPERS: dict[str, Paper] = {
    p.key: p
    for p in (
        Paper(
            "chhun2024",
            "Chhun, Suchanek & Clavel, TACL 2024: Do Language Models Enjoy Their Own Stories? "
            "(HANNA)",
            ("hanna",),
            "data.reproduce.chhun2024",
        ),
        Paper(
            "liusie2024",
            "Liusie, Manakul & Gales, EACL 2024: LLM Comparative Assessment",
            ("summeval",),
            "data.reproduce.liusie2024",
        ),
        Paper(
            "chiang2023",
            "Chiang & Lee, ACL 2023: Can Large Language Models Be an Alternative to Human "
            "Evaluation?",
            ("hanna", "topicalchat"),
            "data.reproduce.chiang2023",
        ),
        Paper(
            "zeng2024",
            "Zeng et al., ICLR 2024: Evaluating Large Language Models at Evaluating Instruction "
            "Following (LLMBar)",
            ("llmbar",),
            "data.reproduce.zeng2024",
        ),
    )
}


def papers_for(benchmark_name: str) -> list[str]:
    """The papers with rows computed on a benchmark.

    Parameters
    ----------
    benchmark_name : str
        A ``data.load_benchmark`` name ("hanna"); a copy's name such as "hanna (judged)"
        counts as its benchmark.

    Returns
    -------
    list of str
        Keys of :data:`PAPERS`, in their order; empty for other datasets.
    """
    base = str(benchmark_name).split(" (", 1)[0].strip()
    return [k for k, p in PAPERS.items() if base in p.benchmarks]


def _paper(paper: str) -> Paper:
    if paper not in PAPERS:
        raise DataError(
            f"unknown paper {paper!r}; the papers JudgeScope reproduces are: " + ", ".join(PAPERS)
        )
    return PAPERS[paper]


def _status(row: pd.Series) -> str:
    pub, comp, tol, bound = row["published"], row["computed"], row["tolerance"], row["bound"]
    if pd.isna(pub):
        return "unpublished"
    if pd.notna(comp):
        if bound == "<=":
            ok = comp <= pub + tol
        elif bound == ">=":
            ok = comp >= pub - tol
        else:
            ok = abs(comp - pub) <= tol
        if ok:
            return "ok"
    return "noted" if str(row["note"]).strip() else "off"


def rows(paper: str, data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The reproduction table with where the app shows each number and how it is checked.

    Parameters
    ----------
    paper : str
        A key of :data:`PAPERS`.
    data_dir : path, optional
        The data folder (``data.load_benchmark``'s ``data_dir``); default the data-folder
        setting (``JUDGESCOPE_DATA``, else ``../shared/data``).

    Returns
    -------
    pandas.DataFrame
        :data:`ROW_COLUMNS`. ``settings`` is a dict of the page's URL query parameters
        (dataset, attribute, judge, exclude, reading); ``abs_diff`` is
        |computed - published| (NaN when either is).

    Raises
    ------
    DataError
        An unknown paper; a benchmark file missing from the data folder.
    """
    spec = _paper(paper)
    module = importlib.import_module(spec.module)
    records = module.compute(data_dir)
    df = pd.DataFrame.from_records(records)
    df.insert(0, "paper", paper)
    for col, default in (("note", ""), ("tolerance", 0.006), ("bound", "=")):
        if col not in df.columns:
            df[col] = default
        df[col] = df[col].fillna(default)
    df["published"] = pd.to_numeric(df["published"], errors="coerce").astype("float64")
    df["computed"] = pd.to_numeric(df["computed"], errors="coerce").astype("float64")
    df["abs_diff"] = (df["computed"] - df["published"]).abs()
    df["status"] = df.apply(_status, axis=1) if len(df) else pd.Series(dtype=str)
    return df[ROW_COLUMNS].reset_index(drop=True)


def reproduce(paper: str, data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """A paper's published numbers beside the ones computed from the data folder.

    Parameters
    ----------
    paper : {"chhun2024", "liusie2024", "chiang2023", "zeng2024"}
        The paper (:data:`PAPERS`).
    data_dir : path, optional
        The data folder; default the data-folder setting.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`: paper, ref ("Figure 4", "Table 3"), quantity (a readable
        label), published (NaN when the paper has no number for it), computed, abs_diff,
        note (the documented difference, or which data a row without a published number is
        computed on). :func:`rows` adds where the app shows each number.

    Raises
    ------
    DataError
        An unknown paper; a benchmark file missing from the data folder.
    """
    return rows(paper, data_dir)[COLUMNS]


# ``data.reproduce`` names this function once ``data`` is imported: keep the package's
# other entry points reachable from it.
reproduce.rows = rows  # type: ignore[attr-defined]
reproduce.papers_for = papers_for  # type: ignore[attr-defined]
reproduce.PAPERS = PAPERS  # type: ignore[attr-defined]
