"""pages.shell.ui: the house style of figures (title clear of the mode bar, 17 colours, integer
rank ticks), natural sort, and the report's registry (dataset and settings per view)."""

import plotly.express as px
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from streamlit.testing.v1 import AppTest

from data.natural import natural_key
from pages.shell import ui


def test_long_palette_starts_with_the_short_one_and_has_no_repeats():
    assert ui.PALETTE_LONG[: len(ui.PALETTE)] == ui.PALETTE
    assert len(ui.PALETTE_LONG) == len(set(ui.PALETTE_LONG)) == 17
    assert list(pio.templates["judgescope"].layout.colorway) == ui.PALETTE_LONG


def test_twelve_candidates_get_twelve_colours():
    fig = px.line(x=[0, 1] * 12, y=range(24), color=[f"M{k}" for k in range(12) for _ in (0, 1)])
    colours = [t.line.color for t in fig.data]
    assert len(colours) == 12 and len(set(colours)) == 12


def test_title_sits_below_the_mode_bar():
    fig = ui.polish(go.Figure(go.Bar(x=["a"], y=[1])), "Short title")
    title = fig.layout.title
    assert title.text == "Short title" and title.x == 0 and title.xanchor == "left"
    assert title.yref == "container" and title.pad.t >= 30  # the bar's 30 px stay free
    assert fig.layout.margin.t >= title.pad.t + 20 and title.font.size == 15
    long = "Kendall tau-b per judge: coherence, overall level, with bootstrap intervals over items"
    fig = ui.polish(go.Figure(), long)
    assert fig.layout.title.text == long and fig.layout.title.font.size == 13
    kept = go.Figure(layout=dict(margin=dict(t=120)))
    assert ui.polish(kept, "T").layout.margin.t == 120  # a page's own larger margin stays


def test_rank_axes_get_integer_ticks():
    fig = go.Figure(go.Scatter(x=["human", "BT"], y=[1, 3]))
    fig.update_layout(yaxis_title="rank (1 = best)", xaxis_title="method")
    ui.polish(fig, "Ranks")
    assert fig.layout.yaxis.tickformat == "d" and fig.layout.yaxis.dtick == 1
    assert fig.layout.xaxis.tickformat is None  # not a rank axis
    mean = go.Figure(go.Scatter(x=[1, 2], y=[1.5, 2.5]))
    mean.update_layout(yaxis_title="rank, mean over contexts")
    ui.polish(mean, "Mean ranks")
    assert mean.layout.yaxis.dtick is None  # fractional ranks: no whole-number steps


def test_hover_values_have_four_significant_digits():
    assert pio.templates["judgescope"].layout.yaxis.hoverformat == ".4~g"


@pytest.mark.parametrize(
    ("ids", "want"),
    [
        (["M10", "M2", "M1"], ["M1", "M2", "M10"]),
        (
            ["worker10", "worker1", "worker9", "Worker2"],
            ["worker1", "Worker2", "worker9", "worker10"],
        ),
        (["b", "a10", "a9x", "a9"], ["a9", "a9x", "a10", "b"]),
        ([3, 20, 100], [3, 20, 100]),
    ],
)
def test_natural_key(ids, want):
    assert sorted(ids, key=natural_key) == want


def _script():
    import plotly.graph_objects as go
    import streamlit as st

    from pages.shell import ui

    # AppTest runs this function's body as a function: a page module's global PAGE, which
    # ui.metric reads from its caller, is made by hand
    globals()["PAGE"] = "probe"
    st.session_state["app.active"] = st.session_state.get("use", "demo")
    tau = st.session_state.get("tau", 0.5)
    ui.metric("tau", f"{tau:.2f}", "threshold")
    ui.metric("Spearman", "0.1", "win-ratio")
    ui.metric("Spearman", "0.2", "Bradley–Terry")
    ui.metric("Spearman", "0.3", "per method", report_label="Elo Spearman")
    ui.figure(go.Figure(), f"Figure at {tau}", page="probe")  # drawn before its settings
    if st.session_state.get("with_table", True):
        ui.table(__import__("pandas").DataFrame({"a": [1]}), "Table", page="probe")
    ui.settings("probe", {"tau": tau})
    ui.figure(go.Figure(), "After the settings", page="probe")


def test_each_view_keeps_the_settings_and_dataset_it_was_drawn_with():
    at = AppTest.from_function(_script).run()
    assert not at.exception, [e.value for e in at.exception]
    at.session_state["tau"] = 0.66
    at.run()
    sec = at.session_state["app.report"]["demo"]["probe"]
    views = sec["views"]
    assert views["Figure at 0.5"]["settings"] == {"tau": 0.5}  # not the later run's 0.66
    assert views["Figure at 0.66"]["settings"] == {"tau": 0.66}
    assert views["After the settings"]["settings"] == {"tau": 0.66}
    assert views["Table"]["settings"] == {"tau": 0.66}
    assert sec["metrics"] == {  # this run's cards only, none lost to a repeated label
        "tau": {"value": "0.66", "help": "threshold"},
        "Spearman": {"value": "0.1", "help": "win-ratio"},
        "Spearman (2)": {"value": "0.2", "help": "Bradley–Terry"},
        "Elo Spearman": {"value": "0.3", "help": "per method"},
    }
    assert at.session_state["app.report.settings"]["probe"] == {"tau": 0.66}  # flat copy

    # another dataset active: its views go under its own name, the demo's stay as they were
    at.session_state["app.datasets"]["other"] = at.session_state["app.datasets"]["demo"]
    at.session_state["use"] = "other"
    at.session_state["tau"] = 0.7
    at.session_state["with_table"] = False
    at.run()
    registry = at.session_state["app.report"]
    assert set(registry) == {"demo", "other"}
    assert set(registry["other"]["probe"]["views"]) == {"Figure at 0.7", "After the settings"}
    assert registry["demo"]["probe"]["metrics"]["tau"]["value"] == "0.66"


def test_figure_passes_selection_options_through_and_returns_the_event(monkeypatch):
    got = {}

    def chart(fig, **kw):
        got.update(kw, fig=fig)
        return "event"

    monkeypatch.setattr(ui.st, "plotly_chart", chart)
    monkeypatch.setattr(ui, "remember", lambda *a, **k: None)
    fig = go.Figure()
    out = ui.figure(fig, "Clickable", page="p", key="k", on_select="rerun")
    assert out == "event" and got["key"] == "k" and got["on_select"] == "rerun"
    assert got["config"]["toImageButtonOptions"]["filename"] == "clickable"
    assert got["fig"].layout.title.pad.t >= 30  # polished like every figure
