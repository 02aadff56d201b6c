"""Comparison budgets: how well the judge ranks with R comparisons per context, for each way of
choosing the comparisons, with and without debiasing."""

import plotly.graph_objects as go
import streamlit as st

from pages.services import bias, comparisons
from pages.services import budgets as svc
from pages.shell import choices, debias, state, ui, warmup

PAGE = "Comparison budgets"
BANDS = {"p10_p90": "10–90 % of draws", "sd": "±1 sd"}
DEFAULT_STRATEGIES = ["random", "no-repeat", "symmetric", "poe-max-info"]
WARMUP_PAGE = "pages/budgets/page.py"
DASHES = {"raw": "solid", "debiased": "dot", svc.AS_SET: "dash"}

st.title("Comparison budgets")
st.caption(
    "Each curve: draw R comparisons per context with a strategy, rank, correlate with the "
    "humans per context, average over contexts; repeated over seeded draws (band)."
)
state.scope_caption()

ds, attribute, judge = choices.attribute_and_judge(
    "budget",
    " to subsample. Run a pairwise judge on the **Judge** page, or load the demo, SummEval "
    "(ChatGPT verdicts) or PandaLM on the **Data** page.",
)

with ui.guard("Computing the budget curves"):
    ref = comparisons.human_reference(ds, attribute, judge)
    ui.need(
        ref is not None,
        f"No human reference for **{ui.safe(attribute)}** in this dataset, so the curves have "
        "nothing "
        "to correlate with. Load a dataset with human scores or human verdicts (the demo, "
        "SummEval, PandaLM) on the **Data** page.",
    )
    st.caption(f"Reference: {ui.safe(ref.source, 300)}.")
    setting = debias.current(ds, attribute, judge)
    as_set = setting.mode in bias.CALIBRATION_MODES
    debias_options = ["raw", "debiased"] + ([svc.AS_SET] if as_set else [])

    c1, c2, c3 = st.columns(3)
    with c1:
        strategies = st.multiselect(
            "Strategies",
            list(svc.STRATEGIES),
            default=DEFAULT_STRATEGIES,
            format_func=svc.STRATEGIES.get,
            key="budget.strategies",
            help="random: any ordered pair; no-repeat: never both orders of a pair; symmetric: "
            "always both orders (so even budgets only); adaptive: the next comparison is chosen "
            "from the answers so far.",
        )
        debias_shown = st.multiselect(
            "Debiasing",
            debias_options,
            default=debias_options,
            key=f"budget.debias|{as_set}",
            help="debiased: the threshold is re-balanced (first-position win rate 0.5) from the "
            "comparisons drawn so far. as set: the judge's P calibrated as the shared debias "
            "setting says (a swap or human calibration chosen on Position bias or Judge bias).",
        )
    with c2:
        method = ui.select(
            "Ranking method",
            list(svc.BUDGET_METHODS),
            format_func=svc.BUDGET_METHODS.get,
            key="budget.method",
        )
        correlation = st.radio(
            "Correlation",
            ["spearman", "kendall"],
            horizontal=True,
            format_func=str.capitalize,
            key="budget.correlation",
        )
    with c3:
        n_draws = st.number_input(
            "Draws",
            2,
            200,
            20,
            key="budget.draws",
            help="seeded repetitions per strategy; the band spans them",
        )
        seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="budget.seed")
        full = st.checkbox(
            "Every budget",
            False,
            key="budget.full",
            help=f"every budget from 1 to the most comparisons a context has, instead of a "
            f"geometric grid of about {svc.MAX_BUDGET_POINTS} budgets",
        )
        band = st.radio(
            "Band", list(BANDS), format_func=BANDS.get, horizontal=True, key="budget.band"
        )
    if as_set:
        st.caption(f"as set: {setting.label}. The map is fitted once on all the comparisons.")
    elif setting.unavailable:
        st.caption(
            "The shared debias setting asks for a calibration that is unavailable here "
            f'({ui.safe(setting.unavailable, 300)}): no "as set" curve.'
        )
    if method == "bradley_terry":
        st.caption(
            "Bradley–Terry fits every context at every budget and draw, each fit warm started "
            "from the previous budget's scores: seconds, even for every budget."
        )
    weighted = svc.weights_note(ds, attribute, judge, method)
    if weighted:
        st.caption(f"ℹ️ {ui.safe(weighted, 400)}")
    ui.need(
        bool(strategies) and bool(debias_shown),
        "Pick at least one strategy and one debiasing setting.",
    )
    ui.settings(
        PAGE,
        {
            "dataset": state.active_name(),
            "attribute": attribute,
            "judge": judge,
            "method": svc.BUDGET_METHODS[method],
            "correlation": correlation,
            "draws": int(n_draws),
            "seed": int(seed),
            "budgets": "every budget" if full else f"about {svc.MAX_BUDGET_POINTS} budgets",
            "strategies": ", ".join(svc.STRATEGIES[s] for s in strategies),
            "debiasing": ", ".join(debias_shown),
            **({"as set": setting.label} if as_set and svc.AS_SET in debias_shown else {}),
            **state.scope_settings(),
        },
    )

    # A fresh install's first visit would compile the curves' kernels (about 20 s); while
    # the app's background warm-up is on its way to this page, wait for it (the curves
    # come by themselves when it has them on disk) unless asked to compile here now.
    deb = any(d != "raw" for d in debias_shown)
    st.session_state["budget.waiting"] = False
    if not svc.kernels_ready(method, strategies, deb) and warmup.pending(WARMUP_PAGE):
        st.info(
            "The budget curves' compiled code is being built in the background (the first "
            "start of a fresh install, about 20 s): the curves appear here as soon as it is "
            "ready."
        )
        compile_now = st.button(
            "Compute now", key="budget.compile_now", help="compile here (about 20 s) instead"
        )
        if not compile_now:
            st.session_state["budget.waiting"] = True

            @st.fragment(run_every=2)
            def _wait_for_warmup():
                if svc.kernels_ready(method, strategies, deb) or not warmup.pending(WARMUP_PAGE):
                    st.rerun(scope="app")

            _wait_for_warmup()
            st.stop()

    progress = st.progress(0.0, text="Computing budget curves…")
    curves, labels = [], []
    for k, strategy in enumerate(strategies):
        progress.progress(
            k / len(strategies),
            text=f"Budget curves: {svc.STRATEGIES[strategy]} ({k + 1}/{len(strategies)})",
        )
        args = (method, correlation, int(n_draws), int(seed), bool(full))
        curves.append(svc.budget(ds, attribute, judge, strategy, *args))
        labels.append(None)
        if as_set and svc.AS_SET in debias_shown:
            curves.append(svc.budget_as_set(ds, attribute, judge, strategy, setting.rule, *args))
            labels.append(svc.AS_SET)
    progress.empty()

    frame = svc.budget_frame(curves, labels)
    frame = frame[frame["debiasing"].isin(debias_shown)]
    if band == "sd":
        frame = frame.assign(lower=frame["mean"] - frame["std"], upper=frame["mean"] + frame["std"])
    else:
        frame = frame.assign(lower=frame["p10"], upper=frame["p90"])

    fig = go.Figure()
    names = list(svc.STRATEGIES.values())
    for (strategy, debiasing), sub in frame.groupby(["strategy", "debiasing"], sort=False):
        colour = ui.PALETTE[names.index(strategy) % len(ui.PALETTE)]
        label = f"{strategy}, {debiasing}"
        sub = sub.dropna(subset=["mean"])
        fig.add_trace(
            go.Scatter(
                x=list(sub["budget"]) + list(sub["budget"])[::-1],
                y=list(sub["upper"]) + list(sub["lower"])[::-1],
                fill="toself",
                fillcolor=colour,
                opacity=0.15,
                line=dict(width=0),
                hoverinfo="skip",
                showlegend=False,
                legendgroup=label,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=sub["budget"],
                y=sub["mean"],
                name=label,
                legendgroup=label,
                mode="lines",
                line=dict(color=colour, dash=DASHES.get(debiasing, "solid")),
            )
        )
    fig.update_layout(
        xaxis_title="comparisons per context",
        xaxis_tickformat="d",
        yaxis_tickformat=".2f",
        height=460,
        yaxis_title=f"{correlation.capitalize()} with humans (mean over contexts)",
    )
    ui.figure(
        fig, f"{correlation.capitalize()} against the number of comparisons", page=PAGE, data=frame
    )

    st.subheader("Comparisons needed")
    rho = st.number_input(
        f"Target {correlation.capitalize()} rho",
        -1.0,
        1.0,
        svc.default_target(frame),
        0.01,
        key=f"budget.rho|{state.token(ds)}|{attribute}|{judge}|{correlation}",
        help="default: 90 % of the best mean value on the curves",
    )
    n_available = svc.available_comparisons(comparisons.pmatrix(ds, attribute, judge).P)
    needed = svc.needed_frame(curves, rho, n_available, labels)
    needed = needed[needed["debiasing"].isin(debias_shown)]
    ui.table(
        needed,
        f"Comparisons per context needed to reach rho = {rho:.2f}",
        page=PAGE,
        hide_index=True,
    )
    st.caption(
        f"None: the mean curve never reaches rho. At most {n_available} comparisons per "
        "context exist for this judge and attribute."
    )
