"""Services of the Judge page's "Build a jury" tab: the jury and its tables, cached."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

import data.jury as dj
from data.schema import DataError, Dataset
from pages.services.common import cache_data


@dataclass(frozen=True)
class JuryView:
    """Everything the tab shows about one jury."""

    jury: dj.Jury
    agreement: pd.DataFrame  # judge x judge
    statistic: str  # what the agreement matrix holds
    shared: pd.DataFrame  # judge x judge: items both judged
    fleiss: object  # ranking.AgreementResult
    humans: pd.DataFrame  # data.jury.agreement.HUMAN_COLUMNS
    versus_best: pd.DataFrame  # the jury against its best member, per human and measure


def jury_attributes(ds: Dataset) -> list[str]:
    """Attributes with at least 2 judges (a jury needs two)."""
    return [a for a in ds.attributes if len(dj.judge_kinds(ds, a)) >= 2]


def kinds(ds: Dataset, attribute: str) -> dict[str, str]:
    """Each judge of ``attribute`` and its kind (natural order)."""
    return dj.judge_kinds(ds, attribute)


@cache_data(show_spinner="Building the jury…", max_entries=16)
def jury_view(ds: Dataset, attribute: str, judges: tuple[str, ...], method: str) -> JuryView:
    """The jury of ``judges`` with its agreement tables.

    Raises
    ------
    DataError
        A bad choice of judges or method, with what to do.
    """
    if method not in dj.jury_methods(dj.jury_kind(ds, attribute, judges))[0]:
        raise DataError(dj.jury_methods(dj.jury_kind(ds, attribute, judges))[1])
    jury = dj.build_jury(ds, attribute, judges, method)
    votes = jury.votes
    humans, versus = dj.human_comparison(ds, jury)
    return JuryView(
        jury=jury,
        agreement=dj.judge_agreement(ds, attribute, judges, votes=votes),
        statistic=dj.agreement_statistic(votes),
        shared=dj.shared_items(votes),
        fleiss=dj.fleiss_overall(votes),
        humans=humans,
        versus_best=versus,
    )


def add_to(ds: Dataset, view: JuryView) -> Dataset:
    """A copy of ``ds`` with the jury as a judge of its own."""
    return dj.with_jury(ds, view.jury)
