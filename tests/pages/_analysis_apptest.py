"""Shared set-up for the AppTests of the analysis pages (Rankings, Position bias, Budgets,
Human agreement, Prompt sensitivity).

The pages run inside the real app (``app.py`` with ``st.navigation``): the session's
datasets are put into session state before the first run (:func:`open_page`), or loaded
through the sidebar's benchmark loader (:func:`open_page_loaded`), then the test switches
page.
Real benchmarks are read from ``data.paths.data_dirs()``; tests that need one run whenever
its files are there.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import data
from data.benchmarks import benchmark_info
from data.paths import data_dirs
from data.schema import Dataset

APP = str(Path(__file__).resolve().parents[2] / "app.py")
# Generous: the first page run compiles (or loads) numba kernels on a slow, shared machine.
TIMEOUT = 600


def have(name: str) -> bool:
    """Whether the files of benchmark ``name`` are in the data folder (no download)."""
    folder = data_dirs()[0]
    return all((folder / rel).is_file() for rel in benchmark_info(name).files)


def need(name: str):
    return pytest.mark.skipif(not have(name), reason=f"files of {name!r} not in {data_dirs()[0]}")


def rejudged(
    ds: Dataset,
    name: str,
    comparisons: pd.DataFrame | None = None,
    ratings: pd.DataFrame | None = None,
) -> Dataset:
    """A dataset ``name`` with the contexts, candidates and human scores of ``ds`` and the
    judges' outputs ``comparisons`` and ``ratings`` (none: an empty table); the scales,
    descriptions and sources of ``ds`` are not carried."""
    outputs = {"comparisons": comparisons, "ratings": ratings}
    return Dataset(
        name=name,
        contexts=ds.contexts,
        candidates=ds.candidates,
        human_scores=ds.human_scores,
        **{table: frame for table, frame in outputs.items() if frame is not None},
    )


def summeval_with_a_hole() -> tuple[Dataset, Dataset, str]:
    """(SummEval, the same with every verdict about one document unparsed, that document's id).

    Real data with a hole (issue 9): a context whose comparisons are all NaN.
    """
    ds = data.load_benchmark("summeval")
    comps = ds.comparisons.copy()
    doc = sorted(comps["context_id"].astype(str).unique())[3]
    comps.loc[comps["context_id"].astype(str) == doc, "p_first"] = np.nan
    holes = rejudged(ds, "summeval, one document unparsed", comps, ds.ratings)
    return ds, holes, doc


def open_page(page: str, dataset: str | Dataset = "demo") -> AppTest:
    """Run the app with ``dataset`` active and switch to ``page`` (e.g. "pages/rankings/page.py").

    ``dataset``: "demo", a benchmark name, or a :class:`Dataset` (made active as its name).
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if isinstance(dataset, Dataset) or dataset != "demo":
        ds = dataset if isinstance(dataset, Dataset) else data.load_benchmark(dataset)
        at.session_state["app.datasets"] = {"demo": data.demo_dataset(), ds.name: ds}
        at.session_state["app.active"] = ds.name
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page_loaded(page: str, benchmark: str | None = None) -> AppTest:
    """Run the app, load ``benchmark`` with the sidebar's loader (none: the demo stays
    active) and switch to ``page``."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    if benchmark is not None:
        at.selectbox(key="data.benchmark").set_value(benchmark).run()
        at.button(key="data.load").click().run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def need_folder(folder: str) -> None:
    """Skip the calling test when data folder ``folder`` is absent."""
    if not (data_dirs()[0] / folder).is_dir():
        pytest.skip(f"{folder} not in {data_dirs()[0]} (real data absent)")


def assert_clean(at: AppTest) -> None:
    """The page ran without an exception and shows no error."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def info_text(at: AppTest) -> str:
    """The page's info messages, one a line."""
    return "\n".join(i.value for i in at.info)


def metrics(at: AppTest) -> dict[str, str]:
    """Metric label -> shown value (the last one of a label wins)."""
    return {m.label: m.value for m in at.metric}


def charts(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as JSON dicts."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def chart_titles(at: AppTest) -> list[str]:
    return [fig["layout"]["title"]["text"] for fig in charts(at)]


def figures(at: AppTest) -> dict[str, dict]:
    """Title -> plotly spec of every chart on the page."""
    return {fig["layout"]["title"]["text"]: fig for fig in charts(at)}


def array(value) -> np.ndarray:
    """A plotly JSON array: a list, or the binary {"dtype", "bdata", "shape"} encoding."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            out = out.reshape([int(x) for x in str(shape).split(",")])
        return out.astype(float)
    return np.asarray(value, dtype=float)


def agreement_tab(at: AppTest, name: str) -> AppTest:
    """Open the Human agreement page's tab ``name`` (a key of ``pages.agreement.SECTIONS``;
    only the open tab runs) and rerun."""
    from pages.agreement import SECTION_KEY, SECTIONS

    at.session_state[SECTION_KEY] = SECTIONS[name]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
