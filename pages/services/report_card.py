"""Services of the Judge report card page: cached views of ``data.report_card``.

Every table comes from the data layer (``data.report_card``); this module caches it per
(dataset, attribute, how unparsed verdicts count, ...), keyed like the other services (a
dataset argument is hashed by its token). The accuracy under each debias mode goes through
the shared setting's own rules (:func:`pages.services.calibration.debiased_dataset`): the
card of each mode reads the comparisons as that mode decides them. The cost reads the run
store (``judge.runs.usage``), which changes while judges run, so it is cached for a few
seconds only.
"""

from __future__ import annotations

import pandas as pd

from data import report_card as rc
from data.schema import DataError, Dataset
from pages.services.calibration import DEBIAS_MODES, debiased_dataset
from pages.services.common import cache_data


@cache_data(show_spinner=False, max_entries=16)
def gold_attributes(ds: Dataset) -> list[str]:
    """Attributes with human pairwise verdicts (``data.report_card.gold_attributes``)."""
    return rc.gold_attributes(ds)


@cache_data(show_spinner="Scoring the judges against the known answers…", max_entries=16)
def card(ds: Dataset, attribute: str, unparsed: str = "wrong") -> rc.Card:
    """``data.report_card.card`` of one attribute."""
    return rc.card(ds, attribute, unparsed=unparsed)


@cache_data(show_spinner=False, max_entries=16)
def judge_table(ds: Dataset, attribute: str, unparsed: str = "wrong") -> pd.DataFrame:
    """The judge table (``data.report_card.judge_table``), best first."""
    return rc.judge_table(card(ds, attribute, unparsed))


@cache_data(show_spinner=False, max_entries=16)
def problems(ds: Dataset, attribute: str, unparsed: str = "wrong") -> list[str]:
    """What the card could not use, each with its count (``data.report_card.problems``)."""
    c = card(ds, attribute, unparsed)
    return rc.problems(c, judge_table(ds, attribute, unparsed))


@cache_data(show_spinner=False, max_entries=16)
def categories(ds: Dataset, attribute: str, unparsed: str, level: str) -> pd.DataFrame:
    """Accuracy per judge and category (``data.report_card.category_table``)."""
    return rc.category_table(card(ds, attribute, unparsed), level=level)


@cache_data(show_spinner="Deciding every judge under each debias mode…", max_entries=8)
def modes(ds: Dataset, attribute: str, unparsed: str, tau: float) -> tuple[pd.DataFrame, list]:
    """Accuracy of every judge under each mode of :data:`DEBIAS_MODES` (the shared tau for
    the modes that take one), and one note per mode or judge that could not be applied."""
    base = card(ds, attribute, unparsed)
    cards, notes = {}, []
    for mode in DEBIAS_MODES:
        try:
            dds, why = debiased_dataset(ds, mode, float(tau))
        except DataError as err:
            notes.append(f"{DEBIAS_MODES[mode]}: {err}")
            continue
        notes += [f"{DEBIAS_MODES[mode]}: {w}" for w in why]
        cards[mode] = rc.card(dds, attribute, unparsed=unparsed, gold=base.gold)
    return rc.mode_table(cards), notes


@cache_data(show_spinner=False, max_entries=32)
def calibration(
    ds: Dataset, attribute: str, unparsed: str, judge: str, n_bins: int = 10
) -> rc.Calibration:
    """A judge's reliability diagram, ECE and accuracy against confidence."""
    return rc.calibration(card(ds, attribute, unparsed), judge, n_bins=n_bins)


@cache_data(show_spinner=False, max_entries=32)
def failures(ds: Dataset, attribute: str, unparsed: str, judge: str) -> pd.DataFrame:
    """The pairs a judge got wrong, worst first, with the instruction (context text)."""
    out = rc.failures(card(ds, attribute, unparsed), judge)
    if len(out) and len(ds.contexts):
        text = ds.contexts.assign(context_id=ds.contexts["context_id"].astype(str))
        text = text.drop_duplicates("context_id").set_index("context_id")["text"]
        out = out.assign(context=out["context_id"].map(text).fillna(""))
    return out


@cache_data(show_spinner=False, max_entries=16)
def lengths(ds: Dataset, attribute: str, unparsed: str) -> pd.DataFrame:
    """Accuracy when the gold is the shorter or the longer answer (``length_table``)."""
    return rc.length_table(card(ds, attribute, unparsed), ds.candidates)


@cache_data(show_spinner=False, max_entries=32)
def compare(
    ds: Dataset, attribute: str, unparsed: str, judge_a: str, judge_b: str, unit: str
) -> rc.Comparison:
    """McNemar's exact test of two judges on the pairs both judged."""
    return rc.compare(card(ds, attribute, unparsed), judge_a, judge_b, unit=unit)


@cache_data(show_spinner=False, ttl=5, max_entries=8)
def usage(judges: tuple[str, ...]) -> pd.DataFrame:
    """Calls, tokens and dollars of the judges run here (``judge.runs.usage``); empty when
    none was (or the run store cannot be read)."""
    from judge.runs.usage import COLUMNS, judge_usage

    try:
        return judge_usage(judges)
    except Exception:  # a locked or damaged store must not break the page
        return pd.DataFrame(columns=COLUMNS)


def with_cost(ds: Dataset, attribute: str, unparsed: str) -> pd.DataFrame:
    """The judge table with the cost per 1,000 judgments of the judges run here."""
    c = card(ds, attribute, unparsed)
    return rc.with_cost(judge_table(ds, attribute, unparsed), c, usage(tuple(c.judges)))
