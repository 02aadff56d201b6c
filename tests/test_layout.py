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

from tests._routes import routed_pages

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


def _from_name(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` in ``package`` imports from
    (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, node.module] if node.module else base)


def imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``source`` of module ``module``."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, _from_name(node, package)))
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
        "import sys; import judge, judge.templates, judge.runs.runners; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert not set(out.stdout.split()) & {"torch", "transformers", "openai", "streamlit"}


# ------------------------------------------------------------------ cycles inside a package
def _module_files(package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` (packages as __init__)."""
    return {_module_name(p): p for p in sorted((REPO / package).rglob("*.py"))}


def import_graph(package: str, files: dict[str, str] | None = None) -> dict[str, set[str]]:
    """module -> the modules of the same top-level package it imports (function-level ones
    too). ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to
    ``a.b``; the parent packages Python loads on the way are not edges."""
    if files is None:
        files = {m: p.read_text(encoding="utf-8") for m, p in _module_files(package).items()}
        inits = {m for m, p in _module_files(package).items() if p.name == "__init__.py"}
    else:
        inits = {m for m in files if m.endswith(".__init__")}
        files = {m.removesuffix(".__init__"): s for m, s in files.items()}
        inits = {m.removesuffix(".__init__") for m in inits}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, source in files.items():
        tree = ast.parse(source)
        pkg = mod if mod in inits else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                name = _from_name(node, pkg)
                subs = [f"{name}.{a.name}" for a in node.names if f"{name}.{a.name}" in files]
                targets = subs + ([name] if len(subs) < len(node.names) else [])
            for target in targets:
                if target in files and target != mod:
                    graph[mod].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_cycle_inside_a_package(package):
    assert cycles(import_graph(package)) == []


def test_cycle_checker_catches_a_lazy_cycle():
    files = {
        "pages.shell.__init__": "",
        "pages.shell.state": "from pages.shell import url\n",
        "pages.shell.url": "def f():\n    from pages.shell import state\n",
        "pages.shell.ui": "from pages.shell import state\n",
    }
    assert cycles(import_graph("pages", files)) == [["pages.shell.state", "pages.shell.url"]]
    files["pages.shell.url"] = "from . import ui\n"
    assert cycles(import_graph("pages", files)) == [
        ["pages.shell.state", "pages.shell.ui", "pages.shell.url"]
    ]


# ------------------------------------------------------------------ the pages folder
def test_pages_folder_holds_packages_only():
    """Streamlit's legacy discovery of a ``pages/`` folder beside the main script runs any
    ``pages/*.py`` bare (no navigation, no sidebar) when a fresh server's first request names
    it: only ``__init__.py`` may stand there, every page is ``pages/<folder>/page.py``."""
    stray = [p.name for p in (REPO / "pages").glob("*.py") if p.name != "__init__.py"]
    assert stray == []
    routed = sorted(folder for _, _, folder, _, _ in routed_pages())
    scripts = sorted(p.parent.name for p in (REPO / "pages").glob("*/page.py"))
    assert routed == scripts, "every page.py is routed by app.py, and only those"


def test_nothing_in_the_app_exits_the_process():
    """A module that a server may import or run (app.py, pages/) never ends the process."""
    bad = []
    for path in [REPO / "app.py", *sorted((REPO / "pages").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = (
                    f"{f.value.id}.{f.attr}"
                    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    else getattr(f, "id", "")
                )
                if name in {"os._exit", "sys.exit", "exit", "quit", "os.abort", "SystemExit"}:
                    bad.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
            elif isinstance(node, ast.Raise) and "SystemExit" in ast.dump(node.exc or node):
                bad.append(f"{path.relative_to(REPO)}:{node.lineno} raise SystemExit")
    assert bad == []
