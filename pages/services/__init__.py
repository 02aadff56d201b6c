"""The cached service layer between the pages and ``judge/``, ``ranking/`` and ``data/``.

One module per concern; pages import the ones they need
(``from pages.services import rankings as svc``):

- :mod:`pages.services.common`: dataset keys (``dataset_key``, ``dataset``, ``register``),
  number formatting and the names of judges and prompt variants.
- :mod:`pages.services.comparisons`: P arrays and the human reference of one attribute and
  judge, shared by every page on pairwise comparisons.
- :mod:`pages.services.rankings`: the Rankings page.
- :mod:`pages.services.bias`: the Position bias page.
- :mod:`pages.services.budgets`: the Comparison budgets page.
- :mod:`pages.services.judge`: the Judge page (templates, backends, background runs,
  merging and importing judge outputs, failure reasons).
- :mod:`pages.services.agreement`: the Human agreement page.
- :mod:`pages.services.prompts`: the Prompt sensitivity page.

Pages call the cached functions with a *dataset key* (``common.dataset_key()``) and plain
strings, never with tables, so Streamlit hashes a few short strings per call instead of a
whole dataset. Each cached function has a pure twin (``build_*`` / ``compute_*`` /
``*_frame``) that takes the objects themselves; those are what the tests call, without
Streamlit. No maths lives here: the numbers come from ``ranking`` and ``data.agreement``;
these modules only select rows, lay arrays out and shape tables for display.

Caching: ``st.cache_resource`` for the P arrays, the human reference and loaded models
(shared, made read-only, no copy per call: the threshold slider reads them on every update),
and ``st.cache_data`` for everything derived from them.
"""
