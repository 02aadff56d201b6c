"""The debias setting every page shares: a mode and a threshold tau (``app.debias.*``).

Position bias sets it (:func:`controls`), Rankings shows it and lets the user change it
(:func:`compact`); both read the same session keys through ``state.keep``, so a tau set on
one page is the tau the other uses.
"""

from __future__ import annotations

import streamlit as st

from data.schema import Dataset
from pages.services import bias
from pages.services.common import fmt
from pages.shell import state, ui

MODE = "app.debias.mode"
TAU = "app.debias.tau"
#: Labels of the widgets (the browser test finds them by these).
MODE_LABEL = "Debias position bias"
TAU_LABEL = "tau: the first candidate wins when p_first > tau"
BALANCE_LABEL = "Balance tau"

MODE_HELP = (
    "Off: the judge's probabilities as they are. Threshold tau: hard decisions, the first "
    "candidate wins when p > tau. Balanced tau per context: each context's own threshold "
    "that gives the first position half of the wins. Soft reweighting: p' = alpha p / "
    "(alpha p + 1 - p) with alpha = (1 - tau) / tau, which decides at 0.5 as tau does and "
    "keeps the probabilities soft. Swap calibration: a monotone map of p, fitted without "
    "labels on the pairs judged in both orders, so that a pair's two orders agree "
    "(p'_ij = 1 - p'_ji). Calibrated to humans: a monotone (isotonic) map of p fitted to the "
    "human pairwise preferences, cross-fitted over contexts."
)
#: Captions of the calibration modes (no slider: the map is fitted, not set).
CALIBRATION_CAPTIONS = {
    "swap": "A monotone map of p learnt without labels from the pairs judged in both orders "
    "(isotonic regression of the order average (p_ij + 1 - p_ji) / 2 on p_ij), applied to "
    "every comparison; rankings use the mapped probabilities.",
    "isotonic": "A monotone map of p fitted to the human pairwise preferences by isotonic "
    "regression, cross-fitted over contexts (each context is mapped without its own labels); "
    "rankings use the mapped probabilities.",
}


def _keys() -> tuple[str, str]:
    mode, tau = state.keep(MODE), state.keep(TAU)
    if st.session_state.get(mode) not in bias.DEBIAS_MODES:
        st.session_state[mode] = "off"
    value = st.session_state.get(tau)
    if not (isinstance(value, int | float) and 0.01 <= float(value) <= 0.99):
        st.session_state[tau] = 0.5
    return mode, tau


def shared() -> tuple[str, float]:
    """The shared (mode, tau) as set, before resolving for a judge (no widget drawn): for a
    page that applies the one setting to several judges (Leaderboard)."""
    mode, tau = _keys()
    return st.session_state[mode], float(st.session_state[tau])


def current(ds: Dataset, attribute: str, judge: str) -> bias.Debias:
    """The debias setting in force for this attribute and judge (no widget drawn)."""
    mode, tau = _keys()
    return bias.resolve_debias(
        ds, attribute, judge, st.session_state[mode], float(st.session_state[tau])
    )


def view_settings(attribute: str, judge: str, setting: bias.Debias) -> dict:
    """The settings a view under the debias setting records first (``ui.settings``): the
    dataset, attribute, judge and the setting's label; the page adds its own after them."""
    return {
        "dataset": state.active_name(),
        "attribute": attribute,
        "judge": judge,
        "debias": setting.label,
    }


def _balance(value: float) -> None:
    st.session_state[TAU] = value


def controls(ds: Dataset, attribute: str, judge: str, *, key: str) -> bias.Debias:
    """The mode radio, the tau slider with its "balance" button; the setting chosen.

    ``key`` prefixes the keys of the page's own buttons (the setting itself is shared).
    """
    mode_key, tau_key = _keys()
    mode = st.radio(
        MODE_LABEL,
        list(bias.DEBIAS_MODES),
        format_func=bias.DEBIAS_MODES.get,
        horizontal=True,
        key=mode_key,
        help=MODE_HELP,
    )
    if mode in ("tau", "alpha"):
        balanced = bias.balanced_tau(ds, attribute, judge)
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        with left:
            st.slider(TAU_LABEL, 0.01, 0.99, step=0.01, key=tau_key)
        with right:
            ok = 0.0 < float(balanced) < 1.0
            st.button(
                BALANCE_LABEL,
                key=f"{key}.balance",
                on_click=_balance,
                args=(float(balanced),),
                disabled=not ok,
                help=f"Set tau to {fmt(balanced)}, the threshold at which the first position "
                "wins half of this judge's comparisons.",
            )
    elif mode == "per_context":
        st.caption(
            "Each context is decided at its own balanced threshold "
            "(first position wins half of its comparisons)."
        )
    setting = bias.resolve_debias(ds, attribute, judge, mode, float(st.session_state[tau_key]))
    if mode in bias.CALIBRATION_MODES:
        if setting.unavailable:
            st.warning(
                f"{bias.DEBIAS_MODES[mode]} is not available for this judge and attribute: "
                f"{ui.safe(setting.unavailable, 300)}. Ranking as **off** (probabilities as "
                "they are).",
                icon=":material/info:",
            )
        else:
            st.caption(f"{CALIBRATION_CAPTIONS[mode]} In force: {setting.label}.")
    return setting


def compact(ds: Dataset, attribute: str, judge: str, *, key: str) -> bias.Debias:
    """The setting in one line, with the controls folded beneath it."""
    setting = current(ds, attribute, judge)
    with st.expander(f"Debiasing: **{setting.label}**", expanded=False):
        setting = controls(ds, attribute, judge, key=key)
        st.page_link(
            "pages/position_bias/page.py",
            label="Tune it on Position bias",
            icon=":material/swap_horiz:",
        )
    return setting
