"""Likert scores read from a judge's free-text answer, by one of :data:`LIKERT_RULES`.

``rule="chiang_lee"`` is the rule of Chiang & Lee (2023): delete "1-5", "out of 5" and "/5"
(generalised to the offered scale), then take the first number, half points kept.
``rule="strict"`` takes the last number that lies on the offered scale after deleting every
mention of the scale itself. ``"keyed"`` takes the number after the last score keyword
("Final score: 4"), else falls back to strict. ``"first"`` / ``"last"`` take the first / last
number after the same deletion. A number off the scale is never clipped: it gives ``None``
with reason ``out-of-scale``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from data.parsing.answers import REFUSAL, Parsed, as_text, fail

LIKERT_RULES = ("chiang_lee", "strict", "keyed", "first", "last")

_WORD_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUM_WORD = r"(?:" + "|".join(_WORD_NUMBERS) + r")"
_NUM_DIGIT = r"\d+(?:\.\d+)?"
_NUMBER = re.compile(
    # A minus sign counts only when attached and not after a word ("-1", but "3-4" is a range).
    rf"(?:(?<![\w.\-])(?P<neg>-))?(?<![\w.])(?P<digit>{_NUM_DIGIT})(?![\d]|\.\d|[^\W\d_])"
    rf"|(?<![\w\-])(?P<word>{_NUM_WORD})(?![\w\-])(?!\s+of\b)",
    re.IGNORECASE,
)
_HALF_AFTER = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
# A spelled-out number counts only where it reads as a score ("one out of five", "Four stars",
# "a score of three"); "one of the ...", "two sentences" are not scores.
# ("one point deducted" is not a score, so "points" is not in the list.)
_WORD_SCORE_AFTER = re.compile(r"\s*(?:\x00|stars?\b|/|and\s+a\s+half\b)", re.IGNORECASE)
_WORD_SCORE_BEFORE = re.compile(
    r"\b(?:scor\w*|rat(?:e|es|ed|ing|ings)|grade[sd]?|give[sn]?|gave|award\w*|assign\w*)\b"
    r"(?:[\s:=\-]+(?:of|is|was|a|an|it|this|that|as|at|be|would|will|should|i|the|my|me|to"
    r"|with|final|overall|just|only|solid|about|summary|story|text|response|fragment))*"
    r"[\s:=\-]*$",
    re.IGNORECASE,
)
# Replaces a deleted scale mention; keeps words apart and lets "one out of five" still read as
# "one <scale>".
_MARK = " \x00 "


def _num_words(n: float) -> list[str]:
    return [w for w, v in _WORD_NUMBERS.items() if v == n]


def _alt(n: float) -> str:
    """Regex for the number n written in digits or words."""
    digits = str(int(n)) if float(n).is_integer() else repr(float(n))
    forms = [re.escape(digits)] + _num_words(n)
    return r"(?:" + "|".join(forms) + r")"


def _delete(pattern: str, text: str) -> str:
    return re.sub(pattern, _MARK, text, flags=re.IGNORECASE)


def _strip_chiang_lee(text: str, lo: float, hi: float) -> str:
    # The published rule deletes "1-5", "out of 5" and "/5"; generalised to the offered scale.
    lo_, hi_ = _alt(lo), _alt(hi)
    text = _delete(rf"(?<![\w.]){lo_}\s*[-–]\s*{hi_}(?![\w]|\.\d)", text)
    text = _delete(rf"\bout\s+of\s+{hi_}(?![\w]|\.\d)", text)
    text = _delete(rf"/\s*{hi_}(?![\w]|\.\d)", text)
    return text


def _strip_scale_mentions(text: str, lo: float, hi: float) -> str:
    # Any mention of the scale itself or of a denominator is not a score.
    lo_, hi_ = _alt(lo), _alt(hi)
    text = _delete(
        rf"(?:\bscale\s+of\s+|\bbetween\s+|\bfrom\s+)?(?<![\w.]){lo_}\s*(?:[-–]|to|and)\s*{hi_}"
        rf"(?![\w]|\.\d)",
        text,
    )
    text = _delete(rf"\bout\s+of\s+(?:{_NUM_DIGIT}|{_NUM_WORD})(?![\w]|\.\d)", text)
    text = _delete(rf"(?<=[\w\s])/\s*{_NUM_DIGIT}(?![\w]|\.\d)", text)
    return text


def _numbers(text: str) -> list[float]:
    out: list[float] = []
    for m in _NUMBER.finditer(text):
        if m.group("digit") is not None:
            value = float(m.group("digit"))
            if m.group("neg"):
                value = -value
        else:
            word = m.group("word")
            before = text[: m.start()]
            at_start = not re.search(r"[A-Za-z0-9]", before)
            if not (
                _WORD_SCORE_AFTER.match(text, m.end())
                or _WORD_SCORE_BEFORE.search(before)
                or (at_start and re.match(r"\s*(?:[.,:;!)\n]|$)", text[m.end() :]))
            ):
                continue
            value = float(_WORD_NUMBERS[word.lower()])
        if _HALF_AFTER.match(text, m.end()):
            value += 0.5
        out.append(value)
    return out


_SCORE_KEY = re.compile(
    r"\b(?:scores?|scored|scoring|ratings?|rated|rate|grades?|graded)\b", re.IGNORECASE
)
# The number that goes with a score keyword sits in the same clause, a few words on.
_KEY_WINDOW = re.compile(r"(?:[^\n.;]|\.(?=\d)){0,40}")


def _keyed_numbers(text: str) -> list[float]:
    """The first number after each score keyword ("Final score: 4", "a score of 4")."""
    out = []
    for key in _SCORE_KEY.finditer(text):
        window = _KEY_WINDOW.match(text, key.end())
        numbers = _numbers(text[key.start() : window.end()])
        if numbers:
            out.append(numbers[0])
    return out


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def parse_likert(
    text: Any,
    *,
    scale: tuple[float, float] = (1, 5),
    rule: str = "chiang_lee",
    drop: Sequence[str] = (),
) -> Parsed:
    """Parse a Likert score from a free-text answer.

    Parameters
    ----------
    text : str
        The judge's raw answer. None / NaN give reason ``missing``.
    scale : (lo, hi)
        The offered scale; a parsed number outside it is ``out-of-scale`` (never clipped).
    rule : {"chiang_lee", "strict", "keyed", "first", "last"}
        ``chiang_lee``: delete "lo-hi", "out of hi", "/hi" and the strings in ``drop``, then
        the first number (Chiang & Lee 2023). ``strict``: after deleting every mention of the
        scale ("1 to 5", "between 1 and 10", "out of N", "/N") and ``drop``, the last number
        on the scale. ``keyed``: after the same deletion, the number that follows the last
        score keyword ("score", "rating", "rated", "grade", ...) in its clause and lies on
        the scale, else as ``strict``. ``first`` / ``last``: the first / last number after
        that deletion.
    drop : sequence of str
        Extra strings deleted before reading numbers, case-insensitive
        (``("title 1", "title 2")`` for the adversarial-attack questions).

    Returns
    -------
    Parsed
        ``value`` a float (half points and other decimals kept) or None; reason codes
        ``missing``, ``empty``, ``refusal``, ``no-number``, ``out-of-scale``.

    Notes
    -----
    Digits are always numbers; spelled-out numbers ("four") only where they read as a score:
    the whole answer or its first word, before "stars"/"points"/"out of", or after
    "score"/"rate"/"give". "four and a half" reads 4.5.

    Raises
    ------
    ValueError
        ``rule`` not in :data:`LIKERT_RULES`; ``scale`` not a pair of finite numbers with
        lo < hi.
    """
    if rule not in LIKERT_RULES:
        raise ValueError(f"rule must be one of {LIKERT_RULES}, got {rule!r}")
    lo, hi = _check_scale(scale)
    raw = as_text(text)
    if raw is None:
        return fail("missing", "no answer (None/NaN)")
    body = raw.strip()
    if not body:
        return fail("empty", "empty answer")
    for s in drop:
        if s:
            body = re.sub(re.escape(s), _MARK, body, flags=re.IGNORECASE)
    if rule == "chiang_lee":
        body = _strip_chiang_lee(body, lo, hi)
    else:
        body = _strip_scale_mentions(body, lo, hi)
    numbers = _numbers(body)
    if not numbers:
        if REFUSAL.search(raw):
            return fail("refusal", "the judge declined to answer", raw)
        return fail("no-number", "no number", raw)
    if rule == "keyed":
        keyed = [x for x in _keyed_numbers(body) if lo <= x <= hi]
        if keyed:
            return Parsed(keyed[-1])
    if rule in ("strict", "keyed"):
        on_scale = [x for x in numbers if lo <= x <= hi]
        if not on_scale:
            seen = ", ".join(_fmt(x) for x in numbers[:5])
            return fail("out-of-scale", f"numbers {seen} all outside {_fmt(lo)}-{_fmt(hi)}", raw)
        return Parsed(on_scale[-1])
    value = numbers[-1] if rule == "last" else numbers[0]
    if not lo <= value <= hi:
        return fail("out-of-scale", f"{_fmt(value)} outside {_fmt(lo)}-{_fmt(hi)}", raw)
    return Parsed(value)


def _check_scale(scale: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a pair (lo, hi) of numbers, got {scale!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"scale must have finite lo < hi, got {scale!r}")
    return lo, hi
