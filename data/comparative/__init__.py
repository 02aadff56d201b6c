"""Comparative assessment: the analysis tables of pairwise judges, built on ``ranking``.

- ``tables``: Liusie, Manakul & Gales (2024) for any loaded pairwise judge:
  :func:`~data.comparative.tables.judge_template_table` (position bias, accuracy before and
  after debiasing, Spearman of the rankings), :func:`~data.comparative.tables.subset_table`
  (self-consistency on candidate subsets), and the judge's P and human reference they are
  built from (:func:`~data.comparative.tables.judge_pmatrix`,
  :func:`~data.comparative.tables.human_scores_for`);
- ``examples``: the per-example pair table of the Examples page (both orders, flips,
  disagreement with the humans): :func:`~data.comparative.examples.pair_table`;
- ``ties``: systems ranked three ways from one judge's verdicts, ties as half a win or by the
  Davidson and Rao–Kupper models: :func:`~data.comparative.ties.tie_models`.
"""
