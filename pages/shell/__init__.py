"""The app shell: what every page stands in. Imports run one way, from the bottom up:

- :mod:`~pages.shell.text`: user text (ids, names, URL parameters) as one safe line:
  escaped for Markdown, cut with an ellipsis (pages use it as ``ui.safe``, ``ui.short``);
- :mod:`~pages.shell.tokens`: a short token per dataset object and revision (the service
  caches' key);
- :mod:`~pages.shell.session`: the loaded datasets, the active one, kept settings and the
  settings a link names;
- :mod:`~pages.shell.scope`: the sidebar's analysis scope (systems left out, reading);
- :mod:`~pages.shell.ui`: figures (their text made plain: ``ui.plain_fig_text``), metrics,
  tables with downloads, errors, the report's registry of views;
- :mod:`~pages.shell.report_store`: the report's views as JSON, kept with the workspace;
- :mod:`~pages.shell.workspace`: workspace files and autosave;
- :mod:`~pages.shell.url`: links in (a new session opens what its URL names) and out;
- :mod:`~pages.shell.state`: what pages call (``state.keep``, ``state.active``,
  ``state.add``), the once-per-run sync and the sidebar;
- widgets shared by several pages, above the state: :mod:`~pages.shell.choices` (attribute
  and judge pickers), :mod:`~pages.shell.debias` (the shared debias setting),
  :mod:`~pages.shell.example_link` (open a pair on Examples),
  :mod:`~pages.shell.system_groups` (two groups of systems compared);
- :mod:`~pages.shell.warmup`: background compilation of the numba kernels.
"""
