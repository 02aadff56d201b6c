"""Tables with awkward cells, written and read back in every format (shared by the io tests)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa

from data.validate import validate_table


def two_candidates() -> pd.DataFrame:
    """Two candidates of context c1 with their systems (the Parquet tests write it with
    ``system`` as the pandas index, or with crafted pandas metadata)."""
    return pd.DataFrame(
        {
            "context_id": ["c1", "c1"],
            "candidate_id": ["a", "b"],
            "system": ["s1", "s2"],
            "text": ["x", "y"],
        }
    )


def swap_pandas_names(table: pa.Table, swap: dict[str, str]) -> pa.Table:
    """``table`` with crafted pandas metadata that gives its stored fields each other's names
    (``swap``: stored name -> the name pandas would read it under)."""
    meta = json.loads(table.schema.metadata[b"pandas"])
    for col in meta["columns"]:  # the names pandas gives the stored fields
        col["name"] = swap.get(col["name"], col["name"])
    return table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})


FORMATS = ["csv", "tsv", "json", "jsonl", "parquet"]

TRICKY = [
    "plain",
    "comma, inside",
    'quote " inside',
    "line\nbreak and\r\nwindows break",
    "tab\there",
    "  spaces kept  ",
    "unicode: caf\u00e9 \u6f22\u5b57 \U0001f600",
    "",
    "NA",
    "nan",
]


def tricky_tables() -> dict[str, pd.DataFrame]:
    n = len(TRICKY)
    ctx = [f"0{k}" for k in range(n)]  # leading zeros must survive
    ctx[1] = "NA"  # an id that pandas would read as missing by default
    tables = {
        "contexts": pd.DataFrame({"context_id": ctx, "text": TRICKY}),
        "candidates": pd.DataFrame(
            {
                "context_id": ctx + ctx,
                "candidate_id": [f"cand,{k}" for k in range(n)] + ["b\nc"] * n,
                "system": ["sys\u00e9"] * (2 * n - 2) + [None, None],
                "text": TRICKY + TRICKY[::-1],
            }
        ),
        "human_scores": pd.DataFrame(
            {
                "context_id": ctx,
                "candidate_id": [f"cand,{k}" for k in range(n)],
                "attribute": ["coh\u00e9rence"] * n,
                "annotator": [f"w{k % 3}" for k in range(n)],
                "score": [1.0, 2.5, np.nan, 0.1 + 0.2, 1e-17, 4.0, 5.0, 3.0, 2.0, 1.0],
            }
        ),
        "comparisons": pd.DataFrame(
            {
                "context_id": ctx,
                "attribute": ["flu"] * n,
                "judge": ['gpt, "v1"'] * n,
                "first_id": [f"cand,{k}" for k in range(n)],
                "second_id": ["b\nc"] * n,
                "p_first": [np.nan, 0.0, 1.0, 1 / 3, 0.5, np.nan, 0.25, 0.9, 0.1, 0.7],
                "verdict": ["A", None, "B", "tie", None, "A", "B", None, "tie", "A"],
                "grade": [2, -2, None, 0, 0, 1, -1, None, None, 1],
                "weight": [1, 3, 0.5, None, 2.25, 1e-9, 1, 3, 1, 1 / 3],
                "sample": list(range(n)),
                "raw": TRICKY,
            }
        ),
        "ratings": pd.DataFrame(
            {
                "context_id": ctx,
                "candidate_id": ["b\nc"] * n,
                "attribute": ["q"] * n,
                "judge": ["j"] * n,
                "prompt_id": ["p1"] * n,
                "sample": [0] * n,
                "score": [np.nan, 1.0, 2.0, 3.5, 4.0, 5.0, np.nan, 1.0, 2.0, 3.0],
                "raw": TRICKY[::-1],
            }
        ),
    }
    return {name: validate_table(df, name) for name, df in tables.items()}
