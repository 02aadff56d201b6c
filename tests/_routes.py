"""The pages ``app.py`` routes to, read from its source (importing app.py would build the
ASGI app): one (section, title, folder under pages/, url path, icon) per page."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def routed_pages() -> list[tuple[str, str, str, str, str]]:
    tree = ast.parse((REPO / "app.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAGES":
            return list(ast.literal_eval(node.value))
    raise AssertionError("app.py has no PAGES table")


def page_scripts() -> list[str]:
    """``pages/<folder>/page.py`` of every routed page, in the navigation's order."""
    return [f"pages/{folder}/page.py" for _, _, folder, _, _ in routed_pages()]
