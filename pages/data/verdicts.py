"""The verdict map of the Data page: every distinct verdict value of the file with the reading
the vocabulary gives it (``data.parsing``), in an editable table where the user can change any
row before loading, and the strength policy as a choice."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from data.io.verdict_map import READINGS, overrides_from_table
from data.parsing import STRENGTH_POLICIES

PAGE = "data"

STRENGTH_HELP = {
    "weight": "Arena-Hard's rule: a strong verdict (A>>B) is one win that weighs 3",
    "probability": "A>>B, A>B, A=B, B>A, B>>A give p_first 1, .75, .5, .25, 0 (weight 1)",
    "collapse": "a win is a win: strong and slight verdicts count alike",
}


def strength_choice(key: str, default: str = "weight") -> str:
    """The strength policy as a radio (graded verdicts only: plain ones count once)."""
    return st.radio(
        "Strength of graded verdicts (A>>B against A>B)",
        list(STRENGTH_POLICIES),
        index=list(STRENGTH_POLICIES).index(default),
        horizontal=True,
        key=key,
        format_func=lambda p: f"{p}: {STRENGTH_HELP[p]}",
        help="How a strong verdict counts. Plain verdicts (A, B, tie, model_a, 1 / 2) are "
        "read the same under every policy.",
    )


def editor_key(prefix: str, table: pd.DataFrame) -> str:
    """A key that changes when the values to map change (another verdict column chosen)."""
    digest = hashlib.sha1(
        "\x1f".join(
            f"{c}\x1e{v}" for c, v in zip(table["column"], table["value"], strict=True)
        ).encode("utf-8", "replace")
    ).hexdigest()[:10]
    return f"{prefix}.{digest}"


def verdict_map_editor(table: pd.DataFrame | None, key: str) -> dict:
    """Show ``table`` (``data.io.verdict_map.verdict_table``) for editing; the overrides.

    Parameters
    ----------
    table : pandas.DataFrame or None
        Every distinct verdict value with the vocabulary's reading (column ``vocabulary``).
    key : str
        The widget key prefix (the table's values are added to it).

    Returns
    -------
    dict
        Value -> grade (None: left unparsed) for every row the user changed.
    """
    if table is None or not len(table):
        return {}
    base = pd.DataFrame(
        {
            "column": table["column"].astype(str),
            "value": table["value"].astype(str),
            "rows": table["rows"],
            "reading": table["vocabulary"].astype(str),
            "meaning": table["meaning"].astype(str),
        }
    )
    options = list(READINGS) + sorted(set(base["reading"]) - set(READINGS))
    unknown = int((table["vocabulary"] == "not understood (kept unparsed)").sum())
    st.markdown(
        f"**Verdict map** — {len(base)} distinct value(s)"
        + (f", {unknown} the vocabulary does not understand" if unknown else "")
        + ": change a reading to read the value otherwise"
    )
    edited = st.data_editor(
        base,
        key=editor_key(key, base),
        hide_index=True,
        num_rows="fixed",
        disabled=["column", "value", "rows", "meaning"],
        column_config={
            "reading": st.column_config.SelectboxColumn(
                "reading", options=options, required=True, width="medium"
            ),
            "value": st.column_config.TextColumn("value", help="as written in the file"),
            "rows": st.column_config.NumberColumn("rows", help="cells holding the value"),
        },
    )
    return overrides_from_table(base, edited)
