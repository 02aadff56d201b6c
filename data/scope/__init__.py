"""The analysis scope: which part of a dataset the analyses look at.

- ``systems``: list a dataset's systems, name the default exclusions (its reference systems,
  e.g. HANNA's human-written story), keep or leave out systems;
- ``readings``: the two readings of judge ratings, as published and cleaned;
- ``analysis_view``: :func:`~data.scope.analysis_view.analysis_view`, a dataset with systems
  left out and a reading chosen, as every analysis sees it.
"""
