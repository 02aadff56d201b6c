"""The dependency rules of DESIGN.md: ranking is pure numpy/numba/scipy; importing judge is cheap."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_ranking_imports_no_pandas_torch_or_streamlit():
    loaded = _loaded_after("import ranking")
    assert not loaded & {"pandas", "torch", "streamlit", "data", "judge", "pages"}


def test_importing_judge_loads_no_heavy_backend():
    loaded = _loaded_after("import judge, judge.templates, judge.runners")
    assert not loaded & {"torch", "transformers", "openai", "streamlit"}


def test_data_does_not_import_judge_or_pages():
    loaded = _loaded_after("import data, data.io, data.arrays, data.benchmarks")
    assert not loaded & {"judge", "pages", "streamlit", "torch"}
