"""The report builder (pure) and the Report page: one dataset per report, the views the
user ticks, each with its settings, headline cards and a written summary."""

import io
import re
import zipfile
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

import data
from pages.report import export
from pages.shell.text import unsafe

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _registry():
    """Two datasets' views, as the pages register them (``ui.remember`` and friends)."""
    df = pd.DataFrame({"method": ["win-ratio", "BT"], "spearman": [0.41, 0.43]})
    fig = go.Figure(go.Bar(x=df["method"], y=df["spearman"]))
    fig.update_layout(title="Spearman per method")  # as ui.figure leaves it
    wide = pd.DataFrame({f"col{k}": [k] for k in range(20)})
    rankings = {"judge": "gpt-x", "attribute": "coherence", "tau": 0.66, "methods": ["BT", "Elo"]}
    summeval = {
        "Rankings": {
            "views": {
                "Spearman per method": {"fig": fig, "data": df, "settings": rankings},
                "Wide table": {"fig": None, "data": wide, "settings": rankings},
            },
            "metrics": {
                "Spearman": {"value": "0.41", "help": "rank correlation with the humans"},
                "Pairwise accuracy": {"value": "0.62", "help": "pairs ordered as the humans"},
            },
            "settings": rankings,
        },
        "Position bias": {
            "views": {"Bias table": {"fig": None, "data": df.assign(x=[1, 2]), "settings": None}},
            "metrics": {"First-position win rate": {"value": "0.647", "help": "0.5 = balanced"}},
            "settings": {},
        },
    }
    demo = {
        "prompts": {
            "views": {
                "demo unparsed answers": {
                    "fig": None,
                    "data": pd.DataFrame({"variant": ["plain"], "n_failed": [3]}),
                    "settings": {"model": "demo-judge"},
                }
            },
            "metrics": {"Templates": {"value": "2", "help": "templates"}},
            "settings": {"model": "demo-judge"},
        }
    }
    return {"summeval": summeval, "demo": demo}


def test_report_holds_only_the_chosen_dataset():
    doc = export.report_html(_registry(), dataset="summeval")
    assert doc.startswith("<!doctype html>")
    assert "<title>JudgeScope report — summeval</title>" in doc
    assert "Spearman per method" in doc and "Bias table" in doc
    assert "demo unparsed answers" not in doc and "demo-judge" not in doc and "demo +" not in doc
    # pages in the app's order, each heading once
    assert doc.index("<h2>Rankings</h2>") < doc.index("<h2>Position bias</h2>")
    assert doc.count("<h2>Rankings</h2>") == 1
    # plotly.js embedded exactly once (opens offline), not fetched from a CDN
    assert doc.count("plotly.js v") == 1 and "<script src=" not in doc
    other = export.report_html(_registry(), dataset="demo")
    assert "demo unparsed answers" in other and "Spearman per method" not in other


def test_view_title_is_not_repeated_by_the_figure():
    doc = export.report_html(_registry(), dataset="summeval")
    assert doc.count("Spearman per method") == 1  # the h3; the figure's own title is dropped
    fig = _registry()["summeval"]["Rankings"]["views"]["Spearman per method"]["fig"]
    assert fig.layout.title.text == "Spearman per method"  # the page's figure is untouched


def test_settings_render_as_a_two_column_table():
    doc = export.report_html(_registry(), dataset="summeval")
    table = re.search(r"<table class='settings'>.*?</table>", doc).group(0)
    rows = re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", table)
    assert rows == [
        ("judge", "gpt-x"),
        ("attribute", "coherence"),
        ("tau", "0.66"),
        ("methods", "BT, Elo"),
    ]
    assert '"tau"' not in doc  # no JSON dump
    # shown once for the two views drawn with the same settings
    assert doc.count("<table class='settings'>") == 1


def test_metric_cards_and_a_summary_from_them():
    doc = export.report_html(_registry(), dataset="summeval")
    cards = re.findall(r"<div class='label'>(.*?)</div><div class='value'>(.*?)</div>", doc)
    assert cards == [
        ("Spearman", "0.41"),
        ("Pairwise accuracy", "0.62"),
        ("First-position win rate", "0.647"),
    ]
    lines = export.summary(export.sections_of(_registry(), "summeval"), "summeval")
    assert lines == [
        "On summeval, Rankings (judge gpt-x, attribute coherence): Spearman 0.41; "
        "Pairwise accuracy 0.62.",
        "On summeval, Position bias: First-position win rate 0.647.",
    ]
    assert "<div class='summary'>" in doc and lines[0] in doc


def test_only_ticked_views_and_cards_go_in():
    chosen = {("Rankings", "Wide table"), ("Position bias", export.HEADLINE)}
    doc = export.report_html(_registry(), dataset="summeval", chosen=chosen)
    assert "Wide table" in doc and "Spearman per method" not in doc and "Bias table" not in doc
    assert "First-position win rate" in doc  # the ticked cards
    assert "<div class='value'>0.41</div>" not in doc  # Rankings' cards were not ticked
    assert "plotly.js v" not in doc  # no figure, no plotly.js
    with zipfile.ZipFile(
        io.BytesIO(export.tables_zip(_registry(), dataset="summeval", chosen=chosen))
    ) as zf:
        assert zf.namelist() == ["rankings/wide-table.csv"]
    nothing = export.report_html(_registry(), dataset="summeval", chosen=set())
    assert "No views of summeval chosen" in nothing


def test_wide_tables_scroll_in_their_own_box():
    doc = export.report_html(_registry(), dataset="summeval")
    for match in re.finditer(r"<table[^>]*class=\"dataframe\"", doc):
        assert doc[: match.start()].rstrip().endswith("<div class='scroll'>")
    assert ".scroll{overflow-x:auto" in doc
    assert "First 12 of 20 columns" in doc and "col11" in doc and "col12" not in doc


def test_older_flat_views_still_export():
    df = pd.DataFrame({"judge": ["fake-judge"]})
    flat = {"judge": {"Last judge run": {"fig": None, "data": df}}}
    doc = export.report_html(flat, {"judge": {"model": "fake-judge"}}, dataset="d")
    assert "Last judge run" in doc and "<th>model</th><td>fake-judge</td>" in doc
    assert "<h2>Judge</h2>" in doc


def test_tables_zip_has_every_table_of_one_dataset():
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(_registry(), dataset="summeval"))) as zf:
        names = sorted(zf.namelist())
        assert names == [
            "position-bias/bias-table.csv",
            "rankings/spearman-per-method.csv",
            "rankings/wide-table.csv",
        ]
        back = pd.read_csv(zf.open("rankings/spearman-per-method.csv"))
        assert back["spearman"].tolist() == [0.41, 0.43]
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(_registry()))) as zf:
        assert "demo/prompts/demo-unparsed-answers.csv" in zf.namelist()  # one folder each


def test_tables_zip_neutralises_formulas_but_not_numbers():
    df = pd.DataFrame({"candidate": ["=HYPERLINK(1)", "@sum", "ok"], "shift": [-0.5, 0.1, -2.0]})
    views = {"agreement": {"Shifts": {"fig": None, "data": df}}}
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(views))) as zf:
        back = pd.read_csv(zf.open("agreement/shifts.csv"))
    assert back["candidate"].tolist() == ["'=HYPERLINK(1)", "'@sum", "ok"]
    assert back["shift"].tolist() == [-0.5, 0.1, -2.0]
    assert df["candidate"].iloc[0] == "=HYPERLINK(1)"  # the registered table is unchanged


def test_csv_download_of_every_table_is_neutralised(monkeypatch):
    from pages.shell import ui

    got = {}
    monkeypatch.setattr(ui.st, "download_button", lambda label, data, **kw: got.update(data=data))
    ui.table(pd.DataFrame({"judge": ["-cmd"], "p": [-0.25]}), "T", page="p", show=False)
    assert got["data"].decode("utf-8").splitlines() == ["judge,p", "'-cmd,-0.25"]


# ----------------------------------------------------------------------------- the page


def _report_page(registry=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    if registry is not None:
        at.session_state["app.datasets"] = {
            "demo": data.demo_dataset(),
            "summeval": data.demo_dataset(),  # any dataset object: the name is what counts
        }
    at.run()  # the app opens (st.navigation registers the pages), then the Report page
    at.session_state["app.report"] = registry or {}  # only these views (not the Data page's)
    at.switch_page("pages/report/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_report_page_empty():
    at = _report_page()
    assert any("Nothing to export yet for **demo**" in i.value for i in at.info)
    assert at.selectbox(key="report.dataset.demo").options == ["demo"]
    assert at.text_input(key="report.title.demo").value == "JudgeScope report — demo"


def test_report_page_picks_a_dataset_and_ticks_views():
    at = _report_page(_registry())
    picker = at.selectbox(key="report.dataset.demo")
    assert picker.label == "Dataset of the report"
    assert picker.value == "demo" and picker.options == ["demo", "summeval"]
    assert [c.label for c in at.checkbox] == ["Headline numbers (1 cards)", "demo unparsed answers"]
    picker.set_value("summeval").run()
    assert not at.exception
    assert _metrics(at)["Figures"] == "1" and _metrics(at)["Views"] == "3"
    labels = [c.label for c in at.checkbox]
    assert "Spearman per method" in labels and "demo unparsed answers" not in labels
    assert all(c.value for c in at.checkbox)  # everything ticked at first
    assert at.text_input(key="report.title.summeval").value == "JudgeScope report — summeval"
    assert [e.label for e in at.main.expander] == [
        "Rankings: 2 view(s)",
        "Position bias: 1 view(s)",
    ]
    summary = [unsafe(m.value) for m in at.markdown if m.value.startswith("- On ")]  # as read
    assert summary[0].splitlines() == [
        "- On summeval, Rankings (judge gpt-x, attribute coherence): Spearman 0.41; "
        "Pairwise accuracy 0.62.",
        "- On summeval, Position bias: First-position win rate 0.647.",
    ]

    at.checkbox(key="report.pick.summeval.Position bias.Bias table").uncheck().run()
    at.checkbox(key=f"report.pick.summeval.Position bias.{export.HEADLINE}").uncheck().run()
    assert [e.label for e in at.main.expander] == ["Rankings: 2 view(s)"]
    summary = [unsafe(m.value) for m in at.markdown if m.value.startswith("- On ")]  # as read
    assert "Position bias" not in summary[0] and "Rankings" in summary[0]


def test_views_drawn_on_the_prompts_page_reach_the_report_with_their_settings():
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("pages/prompts/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    sections = at.session_state["app.report"]["demo"]
    prompts = sections["prompts"]
    model = "demo-judge (simulated)"
    view = prompts["views"][f"{model}: consistency scores per template"]
    assert view["settings"] == {"model": model, "attribute": "consistency", "baseline": "explain"}
    assert prompts["metrics"]["Templates"]["value"] == "2"
    doc = export.report_html(at.session_state["app.report"], dataset="demo")
    assert "<th>baseline</th><td>explain</td>" in doc
    assert "On demo, Prompt sensitivity (model demo-judge (simulated), attribute consistency)" in (
        doc
    )
