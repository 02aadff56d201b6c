"""The report builder (pure) and the Report page."""

import io
import zipfile
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

from pages import export

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _views():
    df = pd.DataFrame({"method": ["win-ratio", "BT"], "spearman": [0.41, 0.43]})
    fig = go.Figure(go.Bar(x=df["method"], y=df["spearman"]))
    return {
        "rankings": {"Spearman per method": {"fig": fig, "data": df}},
        "position_bias": {"Bias table": {"fig": None, "data": df.assign(x=[1, 2])}},
    }


def test_report_is_one_self_contained_file():
    doc = export.report_html(
        _views(), {"rankings": {"tau": 0.5}}, dataset="summeval", title="T & co"
    )
    assert doc.startswith("<!doctype html>")
    assert "T &amp; co" in doc and "summeval" in doc
    assert "Spearman per method" in doc and "Bias table" in doc
    # plotly.js embedded exactly once (opens offline), not fetched from a CDN
    assert doc.count("plotly.js v") == 1
    assert "<script src=" not in doc
    assert '"tau": 0.5' in doc
    assert "win-ratio" in doc  # the table without a figure is rendered


def test_tables_zip_has_every_table():
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(_views()))) as zf:
        names = sorted(zf.namelist())
        assert names == ["position-bias/bias-table.csv", "rankings/spearman-per-method.csv"]
        back = pd.read_csv(zf.open("rankings/spearman-per-method.csv"))
        assert back["spearman"].tolist() == [0.41, 0.43]


def test_report_page_empty_then_with_views():
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Nothing to export yet" in i.value for i in at.info)
    at.session_state["app.report"] = _views()
    at.run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Figures"] == "1"


def test_tables_zip_neutralises_formulas_but_not_numbers():
    df = pd.DataFrame({"candidate": ["=HYPERLINK(1)", "@sum", "ok"], "shift": [-0.5, 0.1, -2.0]})
    views = {"agreement": {"Shifts": {"fig": None, "data": df}}}
    with zipfile.ZipFile(io.BytesIO(export.tables_zip(views))) as zf:
        back = pd.read_csv(zf.open("agreement/shifts.csv"))
    assert back["candidate"].tolist() == ["'=HYPERLINK(1)", "'@sum", "ok"]
    assert back["shift"].tolist() == [-0.5, 0.1, -2.0]
    assert df["candidate"].iloc[0] == "=HYPERLINK(1)"  # the registered table is unchanged


def test_csv_download_of_every_table_is_neutralised(monkeypatch):
    from pages import ui

    got = {}
    monkeypatch.setattr(ui.st, "download_button", lambda label, data, **kw: got.update(data=data))
    ui.table(pd.DataFrame({"judge": ["-cmd"], "p": [-0.25]}), "T", page="p", show=False)
    assert got["data"].decode("utf-8").splitlines() == ["judge,p", "'-cmd,-0.25"]
