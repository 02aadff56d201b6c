"""The layers of DESIGN.md, checked on the source: ``pages -> judge -> data -> ranking``.

Every ``import`` and ``from ... import`` in every module of a package is read with :mod:`ast`,
function-level and conditional ones included (a lazy import breaks a layer as surely as one at
the top), and so are ``importlib.import_module("...")`` calls with a literal name. Relative
imports are resolved against the module's own package.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("pages", "judge", "data", "ranking")  # each may import only those after it
THIRD_PARTY_BANNED = {
    "ranking": {"pandas", "torch", "streamlit", "transformers", "openai", "pyarrow", "plotly"},
    "data": {"streamlit", "torch", "transformers", "openai", "plotly"},
    "judge": {"streamlit", "plotly"},
    "pages": set(),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``source`` of module ``module``."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def violations(package: str, files: dict[str, str] | None = None) -> list[str]:
    """Every import in ``package`` that breaks a layer: 'file:line imports name'."""
    allowed_own = set(LAYERS[LAYERS.index(package) :])
    banned = THIRD_PARTY_BANNED[package]
    if files is None:
        files = {
            str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
            for p in sorted((REPO / package).rglob("*.py"))
        }
    out = []
    for rel, source in files.items():
        path = REPO / rel
        mod = _module_name(path)
        for line, name in imported_modules(source, mod, path.name == "__init__.py"):
            top = name.split(".")[0]
            if (top in LAYERS and top not in allowed_own) or top in banned:
                out.append(f"{rel}:{line} imports {name}")
    return out


@pytest.mark.parametrize("package", LAYERS)
def test_package_imports_only_layers_below_it(package):
    assert violations(package) == []


@pytest.mark.parametrize(
    ("package", "rel", "source"),
    [
        # the violations this test was written against: a lazy streamlit import in judge,
        # a function-level pandas import in ranking, data reaching up into judge, a relative
        # import that climbs into pages, and importlib with a literal name
        ("judge", "judge/backends/x.py", "def f():\n    import streamlit as st\n"),
        (
            "ranking",
            "ranking/x.py",
            "def f():\n    if True:\n        from pandas import DataFrame\n",
        ),
        ("data", "data/x.py", "def f():\n    from judge.runners import run_pairwise\n"),
        ("judge", "judge/x.py", "from ..pages import ui\n"),
        ("ranking", "ranking/x.py", "import importlib\nm = importlib.import_module('torch')\n"),
        ("data", "data/sub/x.py", "try:\n    import torch\nexcept ImportError:\n    pass\n"),
    ],
)
def test_checker_catches_hidden_imports(package, rel, source):
    assert violations(package, {rel: source}), f"{rel} should break the {package} layer"


def test_checker_allows_lower_layers_and_own_relative_imports():
    files = {
        "judge/x.py": "from data.schema import Dataset\nimport ranking\nfrom . import store\n",
        "data/sub/x.py": "from ..schema import Dataset\nfrom ranking.metrics import spearman\n",
    }
    assert violations("judge", {"judge/x.py": files["judge/x.py"]}) == []
    assert violations("data", {"data/sub/x.py": files["data/sub/x.py"]}) == []


def test_importing_judge_loads_no_heavy_backend():
    """Lazy imports stay lazy: the CLI and the pages import judge without torch or openai."""
    code = (
        "import sys; import judge, judge.templates, judge.runners; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert not set(out.stdout.split()) & {"torch", "transformers", "openai", "streamlit"}
