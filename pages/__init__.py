"""The page layer: everything a user sees, and the only package that imports Streamlit.

- ``pages/<page>/``: one package per page; ``page.py`` is the script ``app.py`` routes to,
  the other modules are its sections (widgets and plotly figures, no maths). The folder is
  named after the page: ``data``, ``judge``, ``rankings``, ``leaderboard``, ``examples``,
  ``position_bias``, ``judge_bias``, ``report_card``, ``rationales``, ``budgets``, ``agreement``,
  ``prompts``, ``reproduce``, ``report``.
- :mod:`pages.shell`: the app shell every page uses (session state, links, analysis scope,
  workspace, shared pickers and widgets, the numba warm-up).
- :mod:`pages.services`: the cached service layer around ``data/`` and ``ranking/``.

No module stands directly in this folder: Streamlit's legacy discovery of a ``pages/``
folder beside the main script would run it bare (``tests/test_layout.py`` checks).
"""
