"""One verdict vocabulary: every form a judge or an annotator writes for a pairwise verdict,
read as a grade from -2 to +2, and the user's strength policy that turns grades into
``p_first`` and ``weight``.

One convention throughout: the **grade** says how much better the *first-shown* candidate
(slot A, ``first_id``) is: ``+2`` much better (``A>>B``), ``+1`` better (``A>B``, or a plain
win such as ``[[A]]``), ``0`` a tie, ``-1`` / ``-2`` the second better / much better. The
table :data:`VERDICT_FORMS` lists every form once with its grade, whether the form belongs
to a graded scale (one that tells a strong win from a slight one) and what it means;
:func:`read_verdict_value` reads one stored verdict *value* (a cell of a file, not a whole
judge answer: for answers see :func:`data.parsing.parse_verdict`).

Usage (what a reader of a pairwise file does)::

    from data.parsing import read_verdict_column, read_verdict_value, verdict_map

    read_verdict_value("A>>B")            # grade +2, graded: Arena-Hard's game score
    read_verdict_value("model_b").grade   # -1 (Chatbot Arena winner column)
    read_verdict_value("garbage").known   # False; .value keeps "garbage"

    shown = verdict_map(frame["score"])   # one row per distinct value with its reading,
    # for the Data page's verdict map; the user's edits come back as overrides:
    rows = read_verdict_column(
        frame["score"], policy="weight", overrides={"garbage": None, "A>>>B": 2}
    )
    # rows: verdict (A/B/tie), grade (graded forms only), p_first, weight, known, missing

    from data.parsing import apply_strength
    p_first, weight = apply_strength([2, 1, 0, -2], policy="probability")
    # p_first [1, .75, .5, 0], weight [1, 1, 1, 1]

Strength policies (:data:`STRENGTH_POLICIES`, the user's choice, for graded forms):

- ``"weight"`` (Arena-Hard): p_first by the sign (1 / 0.5 / 0), weight
  :data:`ARENA_HARD_STRONG_WEIGHT` (3) for ``|grade| = 2`` and 1 otherwise. This is
  arena-hard-auto's rule: ``show_result.py`` maps ``A>>B`` to the first model's win repeated
  ``weight=3`` times, ``A>B`` to one win, ``A=B`` to one tie (score 0.5), and the mirror forms
  (``B>>A``, ``A<<B``, ...) likewise; a judgment with no score is dropped. Here the repeat
  is a weight, so a strong verdict counts 3 times in the fit but stays one game.
- ``"probability"``: p_first 1 / 0.75 / 0.5 / 0.25 / 0 for +2 ... -2, weight 1.
- ``"collapse"``: p_first by the sign, weight 1 (strong and slight wins alike).

A plain verdict (a form with no strengths: ``[[A]]``, ``model_a``, ``1``, ``Output (a)``)
has p_first by its sign and weight 1 under every policy; its grade is +-1 or 0 in the
reading but it is not stored as a grade (the comparisons table's ``grade`` is for graded
verdicts only). A value that states a probability itself (AlpacaEval's float preference
between 1 and 2: p_first = 2 - preference) keeps that probability.

Reading a value (:func:`read_verdict_value`): missing values (None, NaN, empty text) are
*missing*, not unknown. Text is trimmed, Markdown bold and surrounding quotes are dropped,
runs of white space become one space, and spaces around ``>``, ``<``, ``=`` and inside
brackets go (``[[ A >> B ]]`` is ``[[A>>B]]``). Then, in order: the spellings of
:data:`VERDICT_FORMS` (case-sensitive first, for AlpacaEval's ``m`` / ``M``; then ignoring
case), a number (``0`` tie, ``1`` first, ``2`` second, and a float strictly between 1 and 2
as AlpacaEval's preference), and a strength phrase with an optional subject: ``"much
better"``, ``"A is slightly better"``, ``"Assistant B is significantly better"``,
``"Response 1 is much better than Response 2"`` (a subject naming the second candidate
turns the sign). Anything else is unknown, its value kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from data.parsing.forms import _PHRASES, VERDICT_FORMS, VerdictForm

#: The strength policies a user may choose (see the module docstring).
STRENGTH_POLICIES = ("weight", "probability", "collapse")
#: Arena-Hard's weight of a strong verdict (``A>>B``, ``B>>A``): show_result.py's ``weight=3``.
ARENA_HARD_STRONG_WEIGHT = 3.0
#: p_first of each grade under the ``"probability"`` policy.
PROBABILITY_OF_GRADE = {2: 1.0, 1: 0.75, 0: 0.5, -1: 0.25, -2: 0.0}
#: The verdict (A / B / tie) of each sign of a grade.
_VERDICT_OF_SIGN = {1: "A", 0: "tie", -1: "B"}


def _lookup_tables() -> tuple[dict[str, VerdictForm], dict[str, VerdictForm]]:
    exact: dict[str, VerdictForm] = {}
    folded: dict[str, VerdictForm] = {}
    for form in VERDICT_FORMS:
        for spelling in form.spellings:
            key = _clean(spelling)
            table, key = (exact, key) if form.case_sensitive else (folded, key.casefold())
            if key in table and table[key] is not form:
                raise AssertionError(f"spelling {spelling!r} is in two verdict forms")
            table[key] = form
    return exact, folded


_MARKUP = re.compile(r"\*\*|__|`")
_SPACES = re.compile(r"\s+")
_AROUND_SYMBOLS = re.compile(r"\s*([<>=\[\]])\s*")
_SYMBOLIC = re.compile(r"^[\[\]ABCab<>= ]+$")


def _clean(text: str) -> str:
    """A value as it is looked up (see the module docstring)."""
    out = _MARKUP.sub("", text).strip().strip("\"'“”‘’").strip()
    out = _SPACES.sub(" ", out)
    if _SYMBOLIC.match(out):
        out = _AROUND_SYMBOLS.sub(r"\1", out).strip()
    return out.rstrip(".!") if len(out) > 1 else out


_EXACT, _FOLDED = _lookup_tables()

# Subjects of a strength phrase: the first candidate or the second.
_FIRST_SUBJECT = (
    r"(?:a|\(a\)|1|#1|first|the\s+first(?:\s+one)?|(?:assistant|response|answer|output|"
    r"summary|option|model|candidate)\s*(?:a|\(a\)|1|#1|_1|_a))"
)
_SECOND_SUBJECT = (
    r"(?:b|\(b\)|2|#2|second|the\s+second(?:\s+one)?|(?:assistant|response|answer|output|"
    r"summary|option|model|candidate)\s*(?:b|\(b\)|2|#2|_2|_b))"
)
_PHRASE = re.compile(
    rf"^(?:(?P<first>{_FIRST_SUBJECT})|(?P<second>{_SECOND_SUBJECT}))"
    r"(?:\s+(?:is|was|seems|looks))?\s+(?P<phrase>.+?)"
    rf"(?:\s+than\s+(?:(?P<other1>{_FIRST_SUBJECT})|(?P<other2>{_SECOND_SUBJECT})))?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class VerdictReading:
    """What one stored verdict value says.

    Attributes
    ----------
    value : object
        The value as given (kept for unknown values, so they can be named and mapped).
    grade : int or None
        -2 ... +2 (+ = the first-shown candidate better); None when unknown or missing.
    graded : bool
        Whether the value comes from a graded scale (its grade is kept in the comparisons
        table's ``grade``; a plain verdict's is not).
    p_first : float or None
        A probability the value states itself (AlpacaEval's float preference), else None.
    form : str
        The name of the :data:`VERDICT_FORMS` row read, ``"number"`` (an AlpacaEval float
        preference), ``"override"`` (the user's mapping), ``"missing"`` or ``"unknown"``.
    meaning : str
        What the value says, for the verdict map.
    """

    value: Any
    grade: int | None
    graded: bool = False
    p_first: float | None = None
    form: str = "unknown"
    meaning: str = ""

    @property
    def known(self) -> bool:
        """True when the value was read as a grade."""
        return self.grade is not None

    @property
    def missing(self) -> bool:
        """True for a missing value (None, NaN or empty text)."""
        return self.form == "missing"

    @property
    def verdict(self) -> str | None:
        """``"A"``, ``"B"`` or ``"tie"`` by the sign of the grade; None when unknown."""
        return None if self.grade is None else _VERDICT_OF_SIGN[int(np.sign(self.grade))]


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _unknown(value: Any, why: str) -> VerdictReading:
    return VerdictReading(value, None, form="unknown", meaning=why)


def _of_form(value: Any, form: VerdictForm) -> VerdictReading:
    return VerdictReading(value, form.grade, form.graded, None, form.name, form.meaning)


def _of_number(value: Any, x: float) -> VerdictReading:
    if not math.isfinite(x):
        return _unknown(value, f"{x} is not a verdict")
    key = repr(float(x)) if not float(x).is_integer() else str(int(x))
    form = _FOLDED.get(key)
    if form is not None:
        return _of_form(value, form)
    if 1.0 < x < 2.0:
        p_first = 2.0 - x
        grade = int(np.sign(round(p_first - 0.5, 12)))
        return VerdictReading(
            value,
            grade,
            False,
            p_first,
            "number",
            f"AlpacaEval preference {x:g}: P(first better) = 2 - {x:g} = {p_first:g}",
        )
    return _unknown(
        value, f"the number {x:g} is not a verdict code (1 first, 2 second, 0 or 1.5 a tie)"
    )


def _read(value: Any) -> VerdictReading:
    """The vocabulary's reading of one value (no overrides)."""
    if _is_missing(value):
        return VerdictReading(value, None, form="missing", meaning="no verdict (empty cell)")
    if isinstance(value, bool | np.bool_):
        return _unknown(value, "a true/false value is not a verdict")
    if isinstance(value, int | np.integer | float | np.floating):
        return _of_number(value, float(value))
    if isinstance(value, bytes):
        value_text = value.decode("utf-8", errors="replace")
    else:
        value_text = str(value)
    key = _clean(value_text)
    if not key:
        return VerdictReading(value, None, form="missing", meaning="no verdict (empty cell)")
    form = _EXACT.get(key) or _FOLDED.get(key.casefold())
    if form is not None:
        return _of_form(value, form)
    try:
        number = float(key)
    except ValueError:
        number = None
    if number is not None:
        return _of_number(value, number)
    m = _PHRASE.match(key)
    if m:
        phrase = _FOLDED.get(_clean(m.group("phrase")).casefold())
        other_first = m.group("other1") is not None
        other_second = m.group("other2") is not None
        subject_first = m.group("first") is not None
        # "A is better than A" says nothing
        consistent = not ((subject_first and other_first) or (not subject_first and other_second))
        if phrase is not None and phrase.name in _PHRASES and consistent:
            grade = phrase.grade if subject_first else -phrase.grade
            who = "the first" if subject_first else "the second"
            return VerdictReading(
                value,
                grade + 0,
                True,
                None,
                phrase.name,
                f"{who} is {phrase.spellings[0] if phrase.grade else 'about the same'}",
            )
    return _unknown(value, "not a verdict of the vocabulary")


def _override_reading(value: Any, target: Any) -> VerdictReading:
    """The reading the user chose for ``value`` (an int grade, A/B/tie, or None)."""
    if target is None or (isinstance(target, float) and math.isnan(target)):
        return _unknown(value, "left unparsed by the verdict map")
    if isinstance(target, str) and target.strip().casefold() in ("a", "b", "tie"):
        grade = {"a": 1, "b": -1, "tie": 0}[target.strip().casefold()]
        return VerdictReading(value, grade, False, None, "override", f"mapped to {target.strip()}")
    if isinstance(target, bool | np.bool_) or not isinstance(
        target, int | np.integer | float | np.floating
    ):
        raise ValueError(
            f"the verdict map gives {value!r} the reading {target!r}; give a grade from -2 to "
            "+2, 'A', 'B', 'tie', or None to leave it unparsed"
        )
    if float(target) not in (-2.0, -1.0, 0.0, 1.0, 2.0):
        raise ValueError(
            f"the verdict map gives {value!r} the grade {target!r}; a grade is a whole number "
            "from -2 to +2 (+2 the first much better, 0 a tie, -2 the second much better)"
        )
    grade = int(target)
    return VerdictReading(
        value, grade, abs(grade) == 2, None, "override", f"mapped to grade {grade:+d}"
    )


def _override_target(value: Any, overrides: Mapping | None) -> tuple[bool, Any]:
    if not overrides:
        return False, None
    try:
        if value in overrides:
            return True, overrides[value]
    except TypeError:  # an unhashable value
        pass
    if not _is_missing(value):
        text = str(value).strip()
        if text in overrides:
            return True, overrides[text]
    return False, None


def read_verdict_value(value: Any, overrides: Mapping[Any, Any] | None = None) -> VerdictReading:
    """Read one stored verdict value as a grade, or say it is unknown (keeping the value).

    Parameters
    ----------
    value : object
        A cell of a verdict column: text (``"A>>B"``, ``"[[C]]"``, ``"model_a"``,
        ``"Output (b)"``, ``"Tie"``, ``"m"``, ``"much worse"``), a number (``1``, ``2``,
        ``0``, ``1.3``), or missing (None, NaN, empty text).
    overrides : mapping, optional
        The user's verdict map: value (as stored, or as its trimmed text) -> a grade
        (-2 ... +2), ``"A"`` / ``"B"`` / ``"tie"`` (a plain verdict), or None (leave the
        value unparsed). Wins over the vocabulary. An overriding grade of +-2 is graded;
        +-1 and 0 are plain here (:func:`verdict_map` and :func:`read_verdict_column` count
        them graded when the column holds graded forms).

    Returns
    -------
    VerdictReading
        ``grade`` None with ``form`` ``"missing"`` or ``"unknown"`` when not read.

    Raises
    ------
    ValueError
        An override that is not a grade, A / B / tie or None.
    """
    hit, target = _override_target(value, overrides)
    if hit:
        return _override_reading(value, target)
    return _read(value)


def _column_readings(
    values: pd.Series, overrides: Mapping | None
) -> tuple[np.ndarray, list, list[VerdictReading]]:
    """(codes per row, distinct values, their readings) with the column's scale applied."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = list(uniques)
    readings = [read_verdict_value(v, overrides) for v in distinct]
    if (codes < 0).any():
        distinct.append(None)
        readings.append(read_verdict_value(None, overrides))
        codes = np.where(codes < 0, len(distinct) - 1, codes)
    # an override of +-1 / 0 takes the scale of the column: graded when the column is
    graded_column = any(r.graded for r in readings if r.form != "override")
    if graded_column:
        readings = [
            VerdictReading(r.value, r.grade, True, r.p_first, r.form, r.meaning)
            if r.form == "override" and r.known
            else r
            for r in readings
        ]
    return codes, distinct, readings


def _as_series(values: Iterable[Any] | pd.Series) -> pd.Series:
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    return pd.Series(list(values), dtype=object)


def verdict_map(
    values: Iterable[Any] | pd.Series, overrides: Mapping[Any, Any] | None = None
) -> pd.DataFrame:
    """Every distinct value of a verdict column with its reading (the Data page's map).

    Parameters
    ----------
    values : pandas.Series or iterable
        The verdict column as read.
    overrides : mapping, optional
        The user's edits (see :func:`read_verdict_value`).

    Returns
    -------
    pandas.DataFrame
        One row per distinct value, in order of first appearance (missing values last, as
        one row when there are any), columns: ``value`` (as stored), ``count``, ``rows``
        (numpy array of the 0-based positions, for naming the rows of unknown values),
        ``grade`` (float: -2 ... +2, NaN when not read), ``verdict`` (A / B / tie or
        None), ``graded`` (bool), ``p_first`` (the probability the value states, else
        NaN), ``form``, ``meaning``, ``known`` (bool), ``missing`` (bool).

    Raises
    ------
    ValueError
        An override that is not a grade, A / B / tie or None.
    """
    series = _as_series(values)
    codes, distinct, readings = _column_readings(series, overrides)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(distinct) + 1))
    rows = [order[bounds[i] : bounds[i + 1]] for i in range(len(distinct))]
    out = pd.DataFrame(
        {
            "value": pd.Series(distinct, dtype=object),
            "count": [len(r) for r in rows],
            "rows": pd.Series(rows, dtype=object),
            "grade": [np.nan if r.grade is None else float(r.grade) for r in readings],
            "verdict": pd.Series([r.verdict for r in readings], dtype=object),
            "graded": [r.graded for r in readings],
            "p_first": [np.nan if r.p_first is None else r.p_first for r in readings],
            "form": [r.form for r in readings],
            "meaning": [r.meaning for r in readings],
            "known": [r.known for r in readings],
            "missing": [r.missing for r in readings],
        }
    )
    return out[out["count"] > 0].reset_index(drop=True)


def apply_strength(
    grades: Iterable[Any] | np.ndarray,
    policy: str = "weight",
    *,
    graded: bool | Iterable[bool] | np.ndarray = True,
    strong_weight: float = ARENA_HARD_STRONG_WEIGHT,
) -> tuple[np.ndarray, np.ndarray]:
    """Turn grades into ``p_first`` and ``weight`` by the user's strength policy.

    Parameters
    ----------
    grades : array-like of float
        -2 ... +2 (+ = the first-shown candidate better); NaN (or None) where there is no
        grade.
    policy : {"weight", "probability", "collapse"}
        ``"weight"`` (Arena-Hard): p_first 1 / 0.5 / 0 by the sign, weight ``strong_weight``
        for |grade| = 2, else 1. ``"probability"``: p_first 1 / .75 / .5 / .25 / 0 for
        +2 ... -2, weight 1. ``"collapse"``: p_first by the sign, weight 1.
    graded : bool or array-like of bool
        Whether each grade comes from a graded form. Where False (a plain verdict such as
        ``[[A]]``), p_first is by the sign and the weight 1 under every policy.
    strong_weight : float
        The weight of a strong verdict under ``"weight"`` (Arena-Hard: 3).

    Returns
    -------
    p_first : numpy.ndarray of float64
        NaN where the grade is NaN.
    weight : numpy.ndarray of float64
        1 where the grade is NaN.

    Raises
    ------
    ValueError
        An unknown policy, a grade that is not a whole number from -2 to +2, or a
        ``strong_weight`` that is not a finite number > 0.
    """
    if policy not in STRENGTH_POLICIES:
        raise ValueError(
            f"unknown strength policy {policy!r}; choose one of {', '.join(STRENGTH_POLICIES)}"
        )
    if not (math.isfinite(strong_weight) and strong_weight > 0):
        raise ValueError(f"strong_weight must be a finite number > 0, got {strong_weight!r}")
    g = np.asarray(
        [np.nan if x is None else x for x in grades]
        if not isinstance(grades, np.ndarray)
        else grades,
        dtype=np.float64,
    ).ravel()
    has = ~np.isnan(g)
    if (has & ~np.isin(g, (-2.0, -1.0, 0.0, 1.0, 2.0))).any():
        bad = g[has & ~np.isin(g, (-2.0, -1.0, 0.0, 1.0, 2.0))][0]
        raise ValueError(f"grade {float(bad):g} is not a whole number from -2 to +2")
    is_graded = np.broadcast_to(np.asarray(graded, dtype=bool), g.shape)
    by_sign = np.where(has, 0.5 + 0.5 * np.sign(np.where(has, g, 0.0)), np.nan)
    weight = np.ones(len(g), dtype=np.float64)
    if policy == "collapse":
        p_first = by_sign
    elif policy == "weight":
        p_first = by_sign
        weight = np.where(
            has & is_graded & (np.abs(np.where(has, g, 0.0)) == 2), strong_weight, 1.0
        )
    else:
        prob = np.where(has, 0.5 + 0.25 * np.where(has, g, 0.0), np.nan)
        p_first = np.where(is_graded, prob, by_sign)
    return p_first.astype(np.float64), weight.astype(np.float64)


def read_verdict_column(
    values: Iterable[Any] | pd.Series,
    policy: str = "weight",
    overrides: Mapping[Any, Any] | None = None,
    *,
    strong_weight: float = ARENA_HARD_STRONG_WEIGHT,
) -> pd.DataFrame:
    """Read a whole verdict column into the comparisons table's verdict columns.

    Parameters
    ----------
    values : pandas.Series or iterable
        The verdict column as read (one cell per comparison).
    policy : {"weight", "probability", "collapse"}
        The strength policy for graded values (:func:`apply_strength`).
    overrides : mapping, optional
        The user's verdict map (see :func:`read_verdict_value`).
    strong_weight : float
        The weight of a strong verdict under ``"weight"``.

    Returns
    -------
    pandas.DataFrame
        One row per value, in order (a fresh RangeIndex), columns: ``verdict`` (A / B /
        tie, None when not read), ``grade`` (float64: the grade of graded values, NaN for
        plain verdicts and unread values), ``p_first`` (float64; the probability a value
        states itself wins, NaN when not read), ``weight`` (float64; 1 when not read),
        ``known`` and ``missing`` (bool). Unknown values are neither known nor missing:
        name their rows with :func:`verdict_map`.

    Raises
    ------
    ValueError
        An unknown policy or a bad override.
    """
    series = _as_series(values)
    codes, _distinct, readings = _column_readings(series, overrides)
    grade_u = np.array([np.nan if r.grade is None else r.grade for r in readings], dtype=float)
    graded_u = np.array([r.graded for r in readings], dtype=bool)
    stated_u = np.array([np.nan if r.p_first is None else r.p_first for r in readings], float)
    p_u, w_u = apply_strength(grade_u, policy, graded=graded_u, strong_weight=strong_weight)
    p_u = np.where(np.isnan(stated_u), p_u, stated_u)
    kept_grade = np.where(graded_u, grade_u, np.nan)
    verdict_u = np.empty(len(readings), dtype=object)
    verdict_u[:] = [r.verdict for r in readings]
    known_u = np.array([r.known for r in readings], dtype=bool)
    missing_u = np.array([r.missing for r in readings], dtype=bool)
    codes = codes.astype(np.intp)
    return pd.DataFrame(
        {
            "verdict": verdict_u[codes],
            "grade": kept_grade[codes],
            "p_first": p_u[codes],
            "weight": w_u[codes],
            "known": known_u[codes],
            "missing": missing_u[codes],
        }
    )
