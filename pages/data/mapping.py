"""The column mapping forms of the Data page: every field of a wide or pairwise mapping,
pre-filled by the guess; the user's changes give the mapping the preview reads."""

from __future__ import annotations

import streamlit as st

from data import io as dio
from data.natural import natural_sorted
from pages.data import verdicts
from pages.shell import ui

PAGE = "data"
#: Session key of the form's generation: a new file (or format) gets new widgets, so the
#: browser's values for the last file never stand in for the new file's guess.
GENERATION = f"{PAGE}.map.generation"


def _k(key: str) -> str:
    return f"{PAGE}.{key}.{st.session_state.get(GENERATION, '')}"


def widget_key(key: str) -> str:
    """The session key of a widget of the current file's forms (see :data:`GENERATION`)."""
    return _k(key)


def _column(col, label: str, columns: list, guess, key: str, *, optional: bool = True):
    options = ([None] if optional else []) + columns
    index = options.index(guess) if guess in options else 0
    return col.selectbox(
        label,
        options,
        index=index,
        key=_k(key),
        format_func=lambda c: "(none)" if c is None else str(c),
    )


def wide_form(columns: list[str], guess: dio.WideMapping | None) -> dio.WideMapping:
    """Every WideMapping field as a widget, defaults from ``guess``; the mapping chosen."""
    g = guess or dio.WideMapping(
        context_id=columns[0], candidate_id=columns[min(1, len(columns) - 1)]
    )
    c1, c2, c3 = st.columns(3)
    ctx = _column(c1, "Context id column", columns, g.context_id, "map.ctx", optional=False)
    cand = _column(c2, "Candidate id column", columns, g.candidate_id, "map.cand", optional=False)
    system = _column(c3, "System column", columns, g.system, "map.system")
    c4, c5, c6 = st.columns(3)
    ctx_text = _column(c4, "Context text column", columns, g.context_text, "map.ctx_text")
    text = _column(c5, "Candidate text column", columns, g.candidate_text, "map.text")
    annotator = _column(c6, "Annotator column", columns, g.annotator, "map.annotator")
    roles = {ctx, cand, system, ctx_text, text, annotator}
    free = [c for c in columns if c not in roles]
    default = [c for c in (g.attributes or {}) if c in free]
    if _k("map.attrs") in st.session_state:  # keep the choice valid as roles change
        kept = [c for c in st.session_state[_k("map.attrs")] if c in free]
        st.session_state[_k("map.attrs")] = kept
    attrs = st.multiselect(
        "Attribute (score) columns",
        free,
        default=None if _k("map.attrs") in st.session_state else default,
        key=_k("map.attrs"),
        help="One column per attribute scored by the humans; each becomes an attribute.",
    )
    default_ann = st.text_input(
        "Default annotator",
        g.default_annotator,
        key=_k("map.default_ann"),
        help="The annotator of every score when no annotator column is chosen.",
        disabled=annotator is not None,
    )
    return dio.WideMapping(
        context_id=ctx,
        candidate_id=cand,
        system=system,
        context_text=ctx_text,
        candidate_text=text,
        annotator=annotator,
        attributes={a: (g.attributes or {}).get(a, a) for a in attrs},
        default_annotator=default_ann.strip() or "human",
    )


def pairwise_form(
    columns: list[str],
    guess: dio.PairwiseMapping | None,
    attributes: list[str],
    *,
    adding: bool = False,
) -> dio.PairwiseMapping:
    """Every PairwiseMapping column, attribute / judge as a column or one value, who gave
    the human verdicts, and the strength policy (the verdict map comes after the preview).

    The attribute for every row follows the load target: added to the active dataset
    (``adding``), the first of ``attributes``, so the verdicts meet its human scores; as a
    new dataset, the guess's. A value the user picks (or types) stays when the target
    changes."""
    g = guess or dio.PairwiseMapping(first=columns[0], second=columns[min(1, len(columns) - 1)])
    st.caption(
        "Each candidate needs an id, a system or a text column: without ids, the system names "
        "are the ids (model_a / model_b), else a short hash of the text."
    )
    c1, c2, c3 = st.columns(3)
    ctx = _column(c1, "Context id column", columns, g.context_id, "pair.ctx")
    ctx_text = _column(c2, "Context text column", columns, g.context_text, "pair.ctx_text")
    sample = _column(c3, "Sample / game column", columns, g.sample, "pair.sample")
    c1, c2, c3 = st.columns(3)
    first = _column(c1, "First candidate id column", columns, g.first, "pair.first")
    first_sys = _column(c2, "First system column", columns, g.first_system, "pair.first_sys")
    first_text = _column(
        c3, "First candidate text column", columns, g.first_text, "pair.first_text"
    )
    c1, c2, c3 = st.columns(3)
    second = _column(c1, "Second candidate id column", columns, g.second, "pair.second")
    second_sys = _column(c2, "Second system column", columns, g.second_system, "pair.second_sys")
    second_text = _column(
        c3, "Second candidate text column", columns, g.second_text, "pair.second_text"
    )
    c4, c5, c6 = st.columns(3)
    verdict = _column(c4, "Judge verdict column", columns, g.verdict, "pair.verdict")
    prob = _column(c5, "Probability column", columns, g.probability, "pair.prob")
    weight = _column(c6, "Weight column", columns, g.weight, "pair.weight")
    c7, c8, c9 = st.columns(3)
    human = _column(c7, "Human verdict column", columns, g.human_verdict, "pair.human")
    annotator = c8.text_input(
        "Human verdicts by",
        g.annotator,
        key=_k("pair.annotator"),
        disabled=human is None,
        help="The human verdicts become comparisons of the judge human:<this name>, which "
        "Human agreement and every page read as human labels.",
    )
    raw = _column(c9, "Raw answer column", columns, g.raw, "pair.raw")
    c6, c7, c8, c9 = st.columns(4)
    attr_col = _column(c6, "Attribute column", columns, g.attribute, "pair.attr_col")
    attr_key, offered = _k("pair.attr"), _k("pair.attr.offered")
    default = attributes[0] if adding and attributes else g.default_attribute
    # the default follows the load target until the user picks (or types) another value
    if st.session_state.get(attr_key, default) == st.session_state.get(offered, default):
        st.session_state[attr_key] = default
    st.session_state[offered] = default
    # the value chosen (or typed) stays an option when the active dataset changes
    chosen = st.session_state[attr_key]
    options = natural_sorted({*attributes, "overall", default, *([chosen] if chosen else [])})
    attr = c7.selectbox(
        "Attribute (for every row)",
        options,
        key=attr_key,
        accept_new_options=True,
        disabled=attr_col is not None,
        help="Pick an attribute of the active dataset so the verdicts meet its human "
        "scores, or type a new one.",
    )
    judge_col = _column(c8, "Judge column", columns, g.judge, "pair.judge_col")
    judge = c9.text_input(
        "Judge (for every row)",
        "uploaded",
        key=_k("pair.judge"),
        disabled=judge_col is not None,
        help="Who gave the verdicts: a model name, or human:<name> for human annotators.",
    )
    strength = verdicts.strength_choice(_k("pair.strength"), g.strength)
    return dio.PairwiseMapping(
        first=first,
        second=second,
        verdict=verdict,
        probability=prob,
        context_id=ctx,
        attribute=attr_col,
        judge=judge_col,
        sample=sample,
        raw=raw,
        context_text=ctx_text,
        first_text=first_text,
        second_text=second_text,
        first_system=first_sys,
        second_system=second_sys,
        human_verdict=human,
        weight=weight,
        default_attribute=str(attr or "overall").strip() or "overall",
        default_judge=judge.strip() or "uploaded",
        annotator=annotator.strip() or "gold",
        strength=strength,
    )


def scale_form(attributes: list[str]) -> dict[str, tuple[float, float]]:
    """Optional (low, high) score range per attribute; scores outside are refused."""
    scales: dict[str, tuple[float, float]] = {}
    if not attributes:
        return scales
    with st.expander("Score scales (optional)"):
        st.caption("Give an attribute's lowest and highest score to check every score against it.")
        for attr in attributes:
            c1, c2 = st.columns(2)
            low = c1.number_input(
                f"Lowest {ui.safe(attr)} score", value=None, key=_k(f"scale.{attr}.lo")
            )
            high = c2.number_input(
                f"Highest {ui.safe(attr)} score", value=None, key=_k(f"scale.{attr}.hi")
            )
            if low is not None and high is not None:
                scales[attr] = (float(low), float(high))
    return scales
