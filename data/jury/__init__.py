"""Juries: several judges of one attribute combined into one judge of their own.

Majority vote, mean, or Dawid–Skene's reliability-weighted vote (``ranking.agreement.jury``) over
pairwise judges, absolute (Likert) judges or automatic measures; each member's reliability,
the members' agreement with each other (Cohen's / Fleiss' kappa) and the jury's and its
members' agreement with the humans. :func:`add_jury` adds the jury's rows to a copy of the
dataset under :func:`jury_name` ("jury:..."), so every page can select it.

Modules: ``votes`` (the members' outputs items x judges), ``build`` (the jury, its rows,
reliability), ``agreement`` (kappa matrix, Fleiss' kappa, humans).
"""

from __future__ import annotations

from data.jury.agreement import (
    agreement_statistic,
    fleiss_overall,
    human_comparison,
    judge_agreement,
    shared_items,
)
from data.jury.build import (
    JURY_METHODS,
    JURY_PREFIX,
    Jury,
    add_jury,
    build_jury,
    is_jury,
    jury_methods,
    jury_name,
    with_jury,
)
from data.jury.votes import JuryVotes, judge_kinds, jury_kind, jury_votes


def reliabilities(ds, attribute, judges, method):
    """Each member's reliability (:attr:`Jury.reliability`) of the jury of ``judges``."""
    return build_jury(ds, attribute, judges, method).reliability


__all__ = [
    "JURY_METHODS",
    "JURY_PREFIX",
    "Jury",
    "JuryVotes",
    "add_jury",
    "agreement_statistic",
    "build_jury",
    "fleiss_overall",
    "human_comparison",
    "is_jury",
    "judge_agreement",
    "judge_kinds",
    "jury_kind",
    "jury_methods",
    "jury_name",
    "jury_votes",
    "reliabilities",
    "shared_items",
    "with_jury",
]
