"""The cached service layer between the pages and ``judge/``, ``ranking/`` and ``data/``.

One module per concern; pages import the ones they need
(``from pages.services import rankings as svc``):

- :mod:`pages.services.common`: the caching decorators (``cache_data``, ``cache_resource``),
  number formatting and the names of judges and prompt variants.
- :mod:`pages.services.comparisons`: P arrays and the human reference of one attribute and
  judge, shared by every page on pairwise comparisons.
- :mod:`pages.services.calibration`: the debias setting every page shares
  (``DEBIAS_MODES``, ``resolve_debias``, ``debiased_P`` / ``debiased_outcomes``: decision
  thresholds and fitted calibrations of the judge's probabilities).
- :mod:`pages.services.rankings`: the Rankings page.
- :mod:`pages.services.leaderboard`: systems ranked over every context pooled (the
  Rankings page's systems and the Leaderboard page).
- :mod:`pages.services.bias`: the Position bias page.
- :mod:`pages.services.judge_bias`: the Judge bias page (cached views of ``data.bias``).
- :mod:`pages.services.budgets`: the Comparison budgets page.
- :mod:`pages.services.examples`: the Examples page's pair tables.
- :mod:`pages.services.judge`: the Judge page (templates, prompt preview, backends,
  background runs); :mod:`pages.services.judge_outputs`: merging and importing judge
  outputs, failure reasons.
- :mod:`pages.services.agreement`: the Human agreement page.
- :mod:`pages.services.prompts`: the Prompt sensitivity page.
- :mod:`pages.services.reproduce`: the Reproduce page's reproduction tables.
- :mod:`pages.services.report_card`: the Judge report card page (cached views of
  ``data.report_card``, the accuracy under each debias mode, the run store's usage).

Caching: the function that does the work is the cached one. It takes the
:class:`~data.schema.Dataset` itself and plain arguments (strings, numbers, tuples), e.g.
``rankings(ds, attribute, judge)``; the pages pass ``state.active()``, tests and benchmarks
any dataset, with no registry and no Streamlit session. The caches hash a dataset by
:func:`pages.shell.tokens.token` (``hash_funcs``: the object and its revision, a short string),
never by its tables, so a call costs a few short hashes; a new upload is a new object and
``state.changed(name)`` a new revision. Derived objects (``PMatrix``, ``Reference``,
arrays) are never arguments of a cached function: it gets them from the other cached
functions (``pmatrix``, ``human_reference``). Where a pure helper on arrays is useful on its
own (hand-made P in tests, the benchmarks) it does the work and the cached function calls it:
``compute_rankings(pm, ref)``, ``rerank(P, ref, tau)``, ``compute_budget(P, ref, ...)``,
``reference_for(ds, attribute, pm)``.

``st.cache_resource`` holds the P arrays and the human reference (shared, made read-only, no
copy per call: the threshold slider reads them on every update); ``st.cache_data`` holds
everything derived from them (copied out to each caller).

No maths lives here: the numbers come from ``ranking``, ``data.agreement`` and
``data.agreement.groups``; these modules only select rows, lay arrays out and shape tables
for display.
"""
