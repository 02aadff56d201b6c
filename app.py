"""JudgeScope: explore how LLM judges behave.

``streamlit run app.py`` serves it. Streamlit finds ``app = st.App(...)`` below and serves
the app as an ASGI application whose start-up (:func:`_serve`) turns off Streamlit's legacy
discovery of a ``pages/`` folder beside the main script: without that, the first request of
a fresh server that names a page (a shared link) would run the scripts it finds there bare,
without this file's navigation, sidebar and settings. Every session then runs this file as
its main script (``__name__ == "__main__"``; AppTest does the same), which routes to the
pages with ``st.navigation``. Each page is ``pages/<folder>/page.py``; all maths lives in
``judge/``, ``ranking/`` and ``data/``.
"""

import contextlib

import streamlit as st

#: (section, title, folder under pages/, url path, Material icon); the first is the default.
PAGES = (
    ("Data", "Data", "data", "data", "folder_open"),
    ("Data", "Judge", "judge", "judge", "smart_toy"),
    ("Explore", "Rankings", "rankings", "rankings", "leaderboard"),
    ("Explore", "Leaderboard", "leaderboard", "leaderboard", "emoji_events"),
    ("Explore", "Examples", "examples", "examples", "manage_search"),
    ("Explore", "Position bias", "position_bias", "bias", "swap_horiz"),
    ("Explore", "Judge bias", "judge_bias", "judge-bias", "balance"),
    ("Explore", "Judge report card", "report_card", "report-card", "grading"),
    ("Explore", "Rationales", "rationales", "rationales", "notes"),
    ("Explore", "Comparison budgets", "budgets", "budgets", "trending_up"),
    ("Explore", "Human agreement", "agreement", "agreement", "handshake"),
    ("Explore", "Prompt sensitivity", "prompts", "prompts", "science"),
    ("Share", "Reproduce", "reproduce", "reproduce", "fact_check"),
    ("Share", "Report", "report", "report", "description"),
)


def main() -> None:
    """One run of a session: the frame (settings, sidebar), then the page asked for."""
    from pages.shell import state, warmup

    st.set_page_config(page_title="JudgeScope", page_icon=":material/balance:", layout="wide")
    warmup.start()  # compile numba kernels in background processes, once per server
    sections: dict[str, list] = {}
    for i, (section, title, folder, url_path, icon) in enumerate(PAGES):
        sections.setdefault(section, []).append(
            st.Page(
                f"pages/{folder}/page.py",
                title=title,
                icon=f":material/{icon}:",
                url_path=url_path,
                default=i == 0,
            )
        )
    page = st.navigation(sections, expanded=True)  # every page listed, Share included
    state.sync()  # kept settings saved; on a new session, the URL's dataset and settings opened
    state.sidebar()
    try:
        page.run()
    finally:  # also after st.stop / st.rerun: the URL follows the settings the page drew
        state.write_url()


@contextlib.asynccontextmanager
async def _serve(_app):
    """Server start-up, before any request: no legacy ``pages/`` discovery in this process
    (``st.navigation`` above is the only router)."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False
    yield


if __name__ == "__main__":
    main()
else:  # imported by `streamlit run app.py` (or any ASGI server) to serve the app
    app = st.App(__file__, lifespan=_serve)
