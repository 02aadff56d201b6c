"""Services of the Human agreement page's "How many human labels do I need?" section:
prediction-powered inference (``data.ppi``) cached per dataset and choice, with the judges
labelled as the rest of the page labels them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from data import ppi as dppi
from data.schema import Dataset
from data.scope.systems import systems_of
from pages.services.agreement.raters import rater_label
from pages.services.common import cache_data

#: Quantities as the page offers them: quantity -> label.
QUANTITY_LABELS = {
    "mean": "system mean score",
    "win_rate": "win rate against a baseline",
    "bradley_terry": "Bradley–Terry score",
}
#: Seed of every draw of the section (the labels used, the subsamples of the curve).
SEED = 0
#: Draws per label count of the width curve.
REPEATS = 30


@cache_data(show_spinner=False, max_entries=16)
def judges(ds: Dataset, attribute: str) -> pd.DataFrame:
    """Judges usable by PPI on ``attribute``: columns label, kind, judge, prompt_id."""
    table = dppi.ppi_judges(ds, attribute)
    labels = [
        rater_label(j, p) if k == "ratings" else f"{j} (verdicts)"
        for k, j, p in zip(table["kind"], table["judge"], table["prompt_id"], strict=True)
    ]
    return table.assign(label=labels)[["label", "kind", "judge", "prompt_id"]]


def attributes(ds: Dataset) -> list[str]:
    """Attributes with at least one judge PPI can use (none without systems to estimate)."""
    if len(systems_of(ds)) < 2:
        return []
    names = set(ds.human_scores["attribute"].astype(str)) if len(ds.human_scores) else set()
    if len(ds.comparisons):
        names |= set(ds.comparisons["attribute"].astype(str))
    return [a for a in sorted(names) if len(judges(ds, a))]


@dataclass(frozen=True)
class Pick:
    """What the section estimates, the key of its cached services: ``judge`` on
    ``attribute`` (its ratings under ``prompt_id``; None: its verdicts), the ``quantity``
    (a key of :data:`QUANTITY_LABELS`) against ``baseline`` (win rate only), with the
    human labels of ``annotators`` (None: all)."""

    attribute: str
    judge: str
    prompt_id: str | None
    quantity: str
    baseline: str | None = None
    annotators: tuple | None = None


@cache_data(show_spinner="Matching the judge with the human labels…", max_entries=16)
def units(ds: Dataset, pick: Pick) -> dppi.PPIUnits:
    """``data.ppi.ppi_units`` of ``pick``."""
    return dppi.ppi_units(
        ds,
        pick.attribute,
        pick.judge,
        pick.prompt_id,
        quantity=pick.quantity,
        baseline=pick.baseline,
        annotators=list(pick.annotators) if pick.annotators else None,
    )


def systems(
    ds: Dataset, attribute: str, judge: str, prompt_id: str | None, annotators: tuple | None
) -> list[str]:
    """The systems the judge's units cover (natural order): the baseline's choices."""
    if prompt_id is None:
        return units(ds, Pick(attribute, judge, None, "bradley_terry")).systems
    return units(ds, Pick(attribute, judge, prompt_id, "mean", None, annotators)).systems


@cache_data(show_spinner="Judge-only, human-only and PPI++ estimates…", max_entries=32)
def estimates(ds: Dataset, pick: Pick, n_labels: int) -> pd.DataFrame:
    """The three estimates per system with ``n_labels`` human labels (seeded draw)."""
    return dppi.ppi_estimates(units(ds, pick), n_labels=n_labels, seed=SEED)


@cache_data(show_spinner="Interval width against the number of human labels…", max_entries=16)
def curve(ds: Dataset, pick: Pick) -> pd.DataFrame:
    """``data.ppi.width_curve`` with :data:`REPEATS` seeded draws per label count."""
    return dppi.width_curve(units(ds, pick), repeats=REPEATS, seed=SEED)


def answer(table: pd.DataFrame, n: int, n_all: int, unit: str) -> str:
    """One sentence answering "how many human labels do I need?" at ``n`` labels."""
    n_eff = dppi.effective_labels(table, n)
    need = dppi.labels_needed(table, n)
    if not math.isfinite(n_eff) or not math.isfinite(need):
        return (
            f"Too few {unit} give trustworthy intervals here to say how much the judge saves; "
            "more labels are needed."
        )
    if n >= n_all:
        return (
            f"With every one of the {n_all} {unit} labelled the judge has nothing left to add: "
            "pick fewer labels to see what it saves."
        )
    if need >= n * 0.98:
        return (
            f"With ~{n} {unit} PPI++ is about as narrow as human labels alone: this judge "
            "adds little (its outputs track the humans' too loosely)."
        )
    saving = 1 - need / n
    return (
        f"With ~{need:.0f} {unit} PPI++ is as narrow as {n} human labels alone "
        f"({saving:.0%} fewer labels); your {n} labels with the judge are worth "
        f"~{n_eff:.0f} human labels alone."
    )
