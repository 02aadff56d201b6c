"""The Human agreement page's "How many human labels do I need?" section: prediction-powered
inference (PPI++, Angelopoulos, Duchi & Zrnic 2023). A judge's outputs on every item, human
labels on a few: the judge-only, human-only and PPI++ estimates per system as a forest plot,
and the interval width against the number of human labels (the labels we have, subsampled)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st

from data.natural import natural_key
from pages.agreement import PAGE, Choices, kept_index
from pages.services.agreement import ppi as svc
from pages.shell import ui

KEY = f"{PAGE}.ppi"
#: Colours of the three estimates.
COLOURS = {"judge only": "#9e9e9e", "human only": "#1f77b4", "PPI++": "#d62728"}


def _why_not(c: Choices) -> str:
    ds = c.ds
    if len(svc.systems_of(ds)) < 2:
        return (
            "its candidates are not labelled with two or more systems, and PPI estimates a "
            "quantity per system"
        )
    if not c.has_humans and not c.human_verdicts:
        return "it has no human labels"
    if not len(ds.ratings) and not len(ds.comparisons):
        return "it has human labels but no judge outputs to combine them with"
    return (
        "no judge has outputs on the items the humans labelled (ratings next to human scores of "
        "the same attribute, or verdicts on the comparisons the humans judged)"
    )


def render(c: Choices) -> None:
    st.header("How many human labels do I need?")
    st.caption(
        "Prediction-powered inference (PPI++, Angelopoulos, Duchi & Zrnic 2023): the judge "
        "scores every item, humans label a few; the judge's estimate is corrected by what the "
        "labelled items show of its bias, with a weight λ tuned to how well the judge tracks "
        "the humans (λ = 0: the humans alone, 1: plain PPI). The intervals are valid whatever "
        "the judge's bias, and its scale need not match the humans' (a 1–10 judge, an "
        "automatic measure in [0, 1]): λ absorbs it. Here the labels the benchmark has are "
        "subsampled to show what fewer would give."
    )
    attrs = svc.attributes(c.ds)
    if not attrs:
        st.info(
            f"PPI needs a judge's outputs and human labels on the same items; for this dataset "
            f"{_why_not(c)}. Load SummEval, HANNA, Topical-Chat or PandaLM, or upload judge "
            "outputs beside human scores."
        )
        return
    with ui.guard("Prediction-powered inference"):
        _section(c, attrs)


def _section(c: Choices, attrs: list[str]) -> None:
    c1, c2, c3 = st.columns(3)
    with c1:
        attribute = ui.select(
            "Attribute", attrs, key=f"{KEY}.attribute", index=kept_index(attrs, "app.attribute")
        )
    table = svc.judges(c.ds, attribute)
    labels = table["label"].tolist()
    with c2:
        label = ui.select(
            "Judge", labels, key=f"{KEY}.judge", index=kept_index(labels, "app.judge")
        )
    row = table.set_index("label").loc[label]
    kind, judge = row["kind"], row["judge"]
    prompt_id = None if kind == "verdicts" else str(row["prompt_id"])
    quantities = list(svc.dppi.KIND_QUANTITIES[kind])
    with c3:
        quantity = ui.select(
            "Quantity",
            quantities,
            key=f"{KEY}.quantity",
            format_func=svc.QUANTITY_LABELS.get,
            help="A win rate is the mean over the contexts (ratings) or comparisons "
            "(verdicts) of the system against the baseline: 1 a win, ½ a tie, 0 a loss.",
        )
    baseline = None
    if quantity == "win_rate":
        systems = svc.systems(c.ds, attribute, judge, prompt_id, c.annotators)
        baseline = ui.select("Baseline system", systems, key=f"{KEY}.baseline")
    annotators = c.annotators if kind == "ratings" else None
    pick = svc.Pick(attribute, judge, prompt_id, quantity, baseline, annotators)
    units = svc.units(c.ds, pick)
    n_all = units.n_labels
    unit = "labelled contexts" if kind == "ratings" else "labelled comparisons"
    if n_all < 4:
        st.info(f"Only {n_all} {unit} here: too few to subsample.")
        return
    n = st.slider(
        f"Human labels you have ({unit})",
        min_value=2,
        max_value=n_all,
        value=min(n_all, max(10, n_all // 5)),
        key=f"{KEY}.n_labels",
        help=f"The benchmark has {n_all}; this many are drawn at random (seeded) and the rest "
        "are treated as judged only. A context labelled means every candidate in it scored.",
    )
    shown = st.session_state.get(ui.SETTINGS, {}).get(PAGE, {})
    ui.settings(  # added to the page's settings, so the report shows them beside its views
        PAGE,
        {
            **shown,
            "PPI attribute": attribute,
            "PPI judge": label,
            "PPI quantity": svc.QUANTITY_LABELS[quantity],
            "PPI baseline": baseline,
            "PPI human labels": f"{n} of {n_all} (seed {svc.SEED})",
            "PPI draws per label count": svc.REPEATS,
        },
    )
    for note in units.notes:
        st.caption(f"ℹ️ {ui.safe(note, 400)}")
    est = svc.estimates(c.ds, pick, n)
    _forest(est, label, quantity, n)
    curve = svc.curve(c.ds, pick)
    st.markdown("**" + svc.answer(curve, n, n_all, unit) + "**")
    _curve(curve, n, n_all, unit, label)


def _forest(est, label: str, quantity: str, n: int) -> None:
    systems = sorted(est["system"].unique(), key=natural_key)
    fig = go.Figure()
    offsets = {"judge only": -0.25, "human only": 0.0, "PPI++": 0.25}
    for method, g in est.groupby("method", sort=False):
        g = g.set_index("system").reindex(systems)
        y = [i + offsets[method] for i in range(len(systems))]
        fig.add_trace(
            go.Scatter(
                x=g["estimate"],
                y=y,
                mode="markers",
                name=method,
                marker={"color": COLOURS[method], "size": 8},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": g["upper"] - g["estimate"],
                    "arrayminus": g["estimate"] - g["lower"],
                },
                customdata=g[["lam", "n_labeled", "note"]].to_numpy(),
                hovertemplate="%{x:.3f}<br>λ = %{customdata[0]:.2f}, labels %{customdata[1]}"
                "<br>%{customdata[2]}<extra>" + method + "</extra>",
            )
        )
    fig.update_layout(
        yaxis={"tickvals": list(range(len(systems))), "ticktext": systems, "autorange": "reversed"},
        xaxis_title=svc.QUANTITY_LABELS[quantity],
        height=120 + 40 * len(systems),
        legend={"orientation": "h"},
    )
    ui.figure(
        fig,
        f"{label}: judge-only, human-only and PPI++ estimates with {n} human labels",
        page=PAGE,
        data=est,
    )
    st.caption(
        "Judge only: every unit, no label (the judge's scale and bias included). Human only: "
        f"the {n} labelled units. PPI++: both; hover for λ. 95% CLT intervals."
    )
    with st.expander("The estimates as a table"):
        ui.table(est, f"{label}: PPI estimates", page=PAGE, hide_index=True)


def _curve(curve, n: int, n_all: int, unit: str, label: str) -> None:
    fig = go.Figure()
    for method, g in curve.groupby("method", sort=False):
        fig.add_trace(
            go.Scatter(
                x=g["n_labels"],
                y=g["width"],
                mode="lines+markers",
                name=method,
                line={
                    "color": COLOURS[method],
                    "dash": "dot" if method == "judge only" else "solid",
                },
                customdata=g[["coverage", "width_q25", "width_q75"]].to_numpy(),
                hovertemplate="%{x} labels: width %{y:.3f} (quartiles %{customdata[1]:.3f}–"
                "%{customdata[2]:.3f})<br>covers the full-label estimate %{customdata[0]:.0%}"
                "<extra>" + method + "</extra>",
            )
        )
    # on a log axis plotly places annotations at log10(x) but shapes at x (add_vline's text
    # lands far off), so the markers are drawn by hand
    marks = [(n, f"the labels you have ({n})", "dash")]
    if n != n_all:
        marks.append((n_all, f"all {n_all}", "dot"))
    for x, text, dash in marks:
        fig.add_shape(
            type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", line={"dash": dash, "color": "#444"}
        )
        fig.add_annotation(
            x=math.log10(x),
            y=1,
            yref="paper",
            text=text,
            showarrow=False,
            yanchor="bottom",
            xanchor="right" if x == n_all else "left",
        )
    fig.update_layout(
        xaxis={"type": "log", "title": unit},
        yaxis_title="median interval width",
        legend={"orientation": "h"},
    )
    ui.figure(
        fig, f"{label}: interval width against the number of human labels", page=PAGE, data=curve
    )
    st.caption(
        f"{svc.REPEATS} seeded draws of n labels per point; the width is the median over draws "
        "of the mean width over systems. Coverage (hover) is the share of intervals containing "
        "the estimate from every human label; points below 90% or with failed draws are too "
        "few labels for the CLT and do not answer the question above."
    )
