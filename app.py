"""JudgeScope: explore how LLM judges behave.

Run with ``streamlit run app.py``. This file only routes; every page lives in ``pages/``
and all maths in ``judge/``, ``ranking/`` and ``data/``.
"""

import streamlit as st

from pages import state

st.set_page_config(page_title="JudgeScope", page_icon="⚖️", layout="wide")

PAGES = {
    "Data": [
        st.Page("pages/home.py", title="Data", icon="📂", default=True, url_path="data"),
        st.Page("pages/judge_run.py", title="Judge", icon="🤖", url_path="judge"),
    ],
    "Explore": [
        st.Page("pages/rankings.py", title="Rankings", icon="🏆", url_path="rankings"),
        st.Page("pages/position_bias.py", title="Position bias", icon="↔️", url_path="bias"),
        st.Page("pages/budgets.py", title="Comparison budgets", icon="📈", url_path="budgets"),
        st.Page("pages/agreement.py", title="Human agreement", icon="🤝", url_path="agreement"),
        st.Page("pages/prompts.py", title="Prompt sensitivity", icon="🧪", url_path="prompts"),
    ],
    "Share": [
        st.Page("pages/report.py", title="Report", icon="📄", url_path="report"),
    ],
}

page = st.navigation(PAGES)
state.sidebar()
page.run()
