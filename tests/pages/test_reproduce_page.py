"""The Reproduce page: published vs computed for the active benchmark's papers (issue 12)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from pages.report import export
from tests.pages._analysis_apptest import need, open_page

PAGE = "pages/reproduce/page.py"


@need("hanna")
def test_reproduce_page_on_hanna_shows_the_table_links_plot_and_report():
    at = open_page(PAGE, "hanna")
    assert not at.exception
    assert at.selectbox(key="reproduce.paper").options[:1] == [
        "Chhun, Suchanek & Clavel, TACL 2024: Do Language Models Enjoy Their Own Stories? (HANNA)"
    ]
    table = at.dataframe[0].value
    assert {"published", "computed", "abs_diff", "status", "note", "link"} <= set(table.columns)
    fig4 = table[table["quantity"].str.startswith("Beluga-13B overall")].iloc[0]
    assert abs(fig4["computed"] - 0.2463) < 6e-4 and fig4["status"] == "ok"
    url = urlsplit(fig4["link"])
    assert url.path == "/agreement"
    assert parse_qs(url.query) == {
        "dataset": ["hanna"],
        "judge": ["Beluga-13B/eval_prompt_1"],
        "exclude": ["Human"],
        "reading": ["published"],
    }
    assert "off" not in set(table.loc[table["published"].notna(), "status"])
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Within the paper's rounding"]) >= 35
    # the table and the plot are registered for the report, with the page's settings
    section = at.session_state["app.report"]["hanna"]["Reproduce"]
    assert "chhun2024: published vs computed" in section["views"]
    assert "chhun2024: computed against published" in section["views"]
    assert section["settings"]["paper"] == "chhun2024"
    doc = export.report_html(at.session_state["app.report"], dataset="hanna")
    assert "chhun2024: published vs computed" in doc and "Beluga-13B overall" in doc
    # narrowing to one figure keeps only its rows
    at.multiselect(key="reproduce.refs").set_value(["Figure 6"]).run()
    assert set(at.dataframe[0].value["status"]) <= {"ok", "noted"}
    assert len(at.dataframe[0].value) == 3
    # the other HANNA paper
    at.selectbox(key="reproduce.paper").set_value("chiang2023").run()
    assert not at.exception
    assert at.dataframe[0].value["published"].isna().all()


def test_reproduce_page_on_the_demo_offers_every_paper():
    at = open_page(PAGE)
    assert not at.exception
    assert "No paper is reproduced on **demo**" in at.info[0].value
    assert at.selectbox(key="reproduce.paper").options[0].startswith("Chhun")
    assert len(at.selectbox(key="reproduce.paper").options) == 4
    # nothing is computed before a paper is picked (its files are read on demand)
    assert at.selectbox(key="reproduce.paper").value is None
    assert not at.dataframe and not at.metric


@need("hanna")
def test_reproduce_page_on_the_demo_computes_the_paper_picked():
    at = open_page(PAGE)
    at.selectbox(key="reproduce.paper").set_value("chhun2024").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table["quantity"].str.startswith("Beluga-13B overall").any()
