"""The zip of the report's tables keeps every table (issue 23, item 7): entry names are
unique, capped in length and readable in any script."""

import io
import zipfile

import pandas as pd

from pages.report import export


def _views(titles, page="Rankings"):
    return {
        page: {
            "views": {
                t: {"fig": None, "data": pd.DataFrame({"k": [n]}), "settings": None}
                for n, t in enumerate(titles)
            },
            "metrics": {},
            "settings": {},
        }
    }


def _entries(views, **kw) -> dict[str, int]:
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(views, **kw))) as zf:
        return {n: int(pd.read_csv(zf.open(n))["k"].iloc[0]) for n in zf.namelist()}


def test_titles_in_other_scripts_keep_their_own_files():
    titles = ["Spearman per context — 连贯性", "Spearman per context — 流畅性"]
    entries = _entries(_views(titles), dataset="d")
    assert sorted(entries) == [
        "rankings/spearman-per-context-流畅性.csv",
        "rankings/spearman-per-context-连贯性.csv",
    ]
    assert sorted(entries.values()) == [0, 1]  # both tables, not one written twice


def test_long_and_alike_titles_get_unique_short_names():
    long = "Ranks of " + "a-system-with-a-very-long-name, " * 12
    titles = [long + "first", long + "second", "P(A) — judge", "P(A) - judge", "CON", "**"]
    entries = _entries(_views(titles), dataset="d")
    assert len(entries) == len(titles) and sorted(entries.values()) == list(range(len(titles)))
    for name in entries:
        for part in name.split("/"):
            assert len(part.encode("utf-8")) <= export.MAX_ENTRY_BYTES + len(".csv"), name
    stems = [n.split("/")[1].removesuffix(".csv") for n in entries]
    assert "con" not in stems and "con-table" in stems  # a Windows device name is not used
    assert "table" in stems  # a title with no letters still gets a readable name


def test_dataset_folders_are_unique_and_capped_too():
    registry = {
        "summeval — 连贯性": _views(["t"]),
        "summeval — 流畅性": _views(["t"]),
        "x" * 400: _views(["t"]),
    }
    entries = _entries(registry)
    folders = {n.split("/")[0] for n in entries}
    assert len(entries) == 3 and len(folders) == 3
    assert all(len(f.encode()) <= export.MAX_ENTRY_BYTES for f in folders)
