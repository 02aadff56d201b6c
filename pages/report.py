"""Report: export the views opened in this session as one HTML file, and every table as CSV."""

import streamlit as st

from pages import export, state, ui

PAGE = "report"

st.title("Report")
st.markdown(
    "Everything you opened on the analysis pages in this session — figures (interactive), tables "
    "and the settings behind them — in one self-contained HTML file that opens offline. "
    "Send it to collaborators; no server needed."
)

views = st.session_state.get(ui.REPORT, {})
settings = st.session_state.get(ui.REPORT + ".settings", {})
n_views = sum(len(v) for v in views.values())
n_figs = sum(1 for v in views.values() for item in v.values() if item.get("fig") is not None)

c1, c2, c3 = st.columns(3)
with c1:
    ui.metric("Pages", len(views), "analysis pages visited in this session")
with c2:
    ui.metric("Figures", n_figs, "interactive plotly figures in the report")
with c3:
    ui.metric("Views", n_views, "figures and tables in total")

if not views:
    st.info(
        "Nothing to export yet. Open Rankings, Position bias, Comparison budgets, Human "
        "agreement or Prompt sensitivity first; their figures and tables are collected here."
    )
else:
    for page, items in views.items():
        st.markdown(f"**{page}**: " + ", ".join(items))

title = st.text_input(
    "Report title", f"JudgeScope report — {state.active_name()}", key=f"{PAGE}.title"
)
with ui.guard("Building the report"):
    html_doc = export.report_html(views, settings, dataset=state.active_name(), title=title)
    st.download_button(
        "⬇ Download the HTML report",
        html_doc.encode("utf-8"),
        file_name=f"{ui.slug(title)}.html",
        mime="text/html",
        type="primary",
        key=f"{PAGE}.html",
        on_click="ignore",
    )
    st.download_button(
        "⬇ Download every table (zip of CSVs)",
        export.tables_zip(views),
        file_name=f"{ui.slug(title)}-tables.zip",
        mime="application/zip",
        key=f"{PAGE}.zip",
        on_click="ignore",
        disabled=not views,
    )
