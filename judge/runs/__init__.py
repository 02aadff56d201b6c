"""A judge run, from plan to table: every model call planned before any is made, carried out
against the run store, resumable, and priced in advance.

- :mod:`~judge.runs.plan`: :func:`~judge.runs.plan.plan_pairwise`,
  :func:`~judge.runs.plan.plan_absolute` (a :class:`~judge.runs.plan.Plan`: the store keys,
  requests and items of every call);
- :mod:`~judge.runs.execute`: a plan carried out against a run store (every call made at most
  once, each answer stored as it arrives);
- :mod:`~judge.runs.runners`: :func:`~judge.runs.runners.run_pairwise`,
  :func:`~judge.runs.runners.run_absolute` (plan, execute, the canonical table and a
  :class:`~judge.runs.runners.RunResult`);
- :mod:`~judge.runs.estimate`: calls, tokens and an approximate price before a run, from the
  price table ``prices.csv`` beside it.

The public names are reached from ``judge`` itself (``from judge import run_pairwise``).
"""
