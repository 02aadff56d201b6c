"""JudgeScope: explore how LLM judges behave.

Run with ``streamlit run app.py``. This file only routes; every page lives in ``pages/``
and all maths in ``judge/``, ``ranking/`` and ``data/``.
"""

import streamlit as st

from pages import state, warmup

st.set_page_config(page_title="JudgeScope", page_icon=":material/balance:", layout="wide")
warmup.start()  # compile numba kernels in background processes, once per server

PAGES = {
    "Data": [
        st.Page(
            "pages/home.py",
            title="Data",
            icon=":material/folder_open:",
            default=True,
            url_path="data",
        ),
        st.Page("pages/judge_run.py", title="Judge", icon=":material/smart_toy:", url_path="judge"),
    ],
    "Explore": [
        st.Page(
            "pages/rankings.py",
            title="Rankings",
            icon=":material/leaderboard:",
            url_path="rankings",
        ),
        st.Page(
            "pages/leaderboard.py",
            title="Leaderboard",
            icon=":material/emoji_events:",
            url_path="leaderboard",
        ),
        st.Page(
            "pages/examples.py",
            title="Examples",
            icon=":material/manage_search:",
            url_path="examples",
        ),
        st.Page(
            "pages/position_bias.py",
            title="Position bias",
            icon=":material/swap_horiz:",
            url_path="bias",
        ),
        st.Page(
            "pages/judge_bias.py",
            title="Judge bias",
            icon=":material/balance:",
            url_path="judge-bias",
        ),
        st.Page(
            "pages/rationales.py",
            title="Rationales",
            icon=":material/notes:",
            url_path="rationales",
        ),
        st.Page(
            "pages/budgets.py",
            title="Comparison budgets",
            icon=":material/trending_up:",
            url_path="budgets",
        ),
        st.Page(
            "pages/agreement.py",
            title="Human agreement",
            icon=":material/handshake:",
            url_path="agreement",
        ),
        st.Page(
            "pages/prompts.py",
            title="Prompt sensitivity",
            icon=":material/science:",
            url_path="prompts",
        ),
    ],
    "Share": [
        st.Page(
            "pages/reproduce.py",
            title="Reproduce",
            icon=":material/fact_check:",
            url_path="reproduce",
        ),
        st.Page(
            "pages/report.py", title="Report", icon=":material/description:", url_path="report"
        ),
    ],
}

page = st.navigation(PAGES, expanded=True)  # every page listed, Share included
state.sync()  # kept settings saved; on a new session, the URL's dataset and settings opened
state.sidebar()
try:
    page.run()
finally:  # also after st.stop / st.rerun: the URL follows the settings the page drew
    state.write_url()
