"""Report: one dataset's views, with the settings that produced them and the headline
numbers, as one HTML file (and every table as CSV). The user ticks what goes in."""

import pandas as pd
import streamlit as st

from data.natural import natural_key
from pages.report import export
from pages.shell import state, ui

PAGE = "report"

st.title("Report")
st.markdown(
    "What you opened on the analysis pages — figures (interactive), tables, the settings "
    "behind each and the headline numbers — for **one dataset**, in one self-contained HTML "
    "file that opens offline. Send it to collaborators; no server needed."
)

registry = st.session_state.get(ui.REPORT, {})
active = state.active_name()
names = sorted({active, *(d for d, pages in registry.items() if pages)}, key=natural_key)
# The picker's key carries the active dataset, so it starts on it after a switch.
dataset = st.selectbox(
    "Dataset of the report",
    names,
    index=names.index(active),
    key=f"{PAGE}.dataset.{active}",
    format_func=ui.short,
    help="A report covers one dataset; views drawn on other datasets stay out of it.",
)
sections = export.sections_of(registry, dataset)
n_views = sum(len(s["views"]) for s in sections.values())
n_figs = sum(1 for s in sections.values() for v in s["views"].values() if v.get("fig") is not None)

c1, c2, c3 = st.columns(3)
with c1:
    ui.metric("Pages", len(sections), f"pages opened on {ui.safe(dataset)}")
with c2:
    ui.metric("Figures", n_figs, "interactive plotly figures available")
with c3:
    ui.metric("Views", n_views, "figures and tables in total")

chosen: set = set()
if not sections:
    st.info(
        f"Nothing to export yet for **{ui.safe(dataset)}**. Open Rankings, Position bias, "
        "Comparison "
        "budgets, Human agreement or Prompt sensitivity on it first; their figures, tables "
        "and headline numbers are collected here."
    )
else:
    st.subheader("What goes in")
    st.caption("Everything is ticked at first; untick what the reader does not need.")
    cols = st.columns(2)
    # a page that kept only its settings (Examples) has nothing to tick
    filled = {p: sec for p, sec in sections.items() if sec.get("metrics") or sec["views"]}
    for n, (page, sec) in enumerate(filled.items()):
        with cols[n % 2]:
            st.markdown(f"**{export.page_name(page)}**")
            items = ([export.HEADLINE] if sec.get("metrics") else []) + list(sec["views"])
            for title in items:
                label = ui.safe(title, 100)  # a view's title holds ids and names
                if title == export.HEADLINE:
                    label = f"{export.HEADLINE} ({len(sec['metrics'])} cards)"
                if st.checkbox(
                    label,
                    value=True,
                    key=f"{PAGE}.pick.{dataset}.{page}.{title}",
                    help=ui.whole(title, 100),
                ):
                    chosen.add((page, title))

    st.subheader("Preview")
    lines = export.summary(sections, dataset, chosen)
    if lines:
        st.markdown("\n".join(f"- {ui.safe(line, 500)}" for line in lines))
    for page, sec in sections.items():
        titles = [t for t in sec["views"] if (page, t) in chosen]
        cards = (page, export.HEADLINE) in chosen
        if not titles and not cards:
            continue
        with st.expander(f"{export.page_name(page)}: {len(titles)} view(s)"):
            if cards:
                metrics = list(sec["metrics"].items())
                for start in range(0, len(metrics), 4):
                    row = st.columns(4)
                    for col, (label, m) in zip(row, metrics[start : start + 4], strict=False):
                        col.metric(
                            ui.safe(label, 80),
                            ui.safe(m["value"]),
                            help=ui.safe(m.get("help") or "", None) or None,
                        )
            shown = None
            for title in titles:
                given = sec["views"][title].get("settings")
                if given and given != shown:
                    st.caption("Settings of the views below")
                    st.dataframe(
                        pd.DataFrame(
                            {
                                "setting": list(given),
                                "value": [export.setting_text(v) for v in given.values()],
                            }
                        ),
                        hide_index=True,
                    )
                    shown = given
                st.markdown(f"- {ui.safe(title, 200)}")

title = st.text_input(
    "Report title", f"JudgeScope report — {dataset}", key=f"{PAGE}.title.{dataset}"
)
stem = ui.slug(title)[:80].strip("-")  # a long dataset name makes no 200-character file name
with ui.guard("Building the report"):
    html_doc = export.report_html(sections, dataset=dataset, title=title, chosen=chosen)
    st.download_button(
        "⬇ Download the HTML report",
        html_doc.encode("utf-8"),
        file_name=f"{stem}.html",
        mime="text/html",
        type="primary",
        key=f"{PAGE}.html",
        on_click="ignore",
        disabled=not chosen,
    )
    st.download_button(
        "⬇ Download every table (zip of CSVs)",
        export.tables_zip(sections, dataset=dataset, chosen=chosen),
        file_name=f"{stem}-tables.zip",
        mime="application/zip",
        key=f"{PAGE}.zip",
        on_click="ignore",
        disabled=not chosen,
    )
