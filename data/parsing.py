"""Turn a judge's free-text answer into a verdict or a score, strictly and visibly.

Every parser returns a :class:`Parsed` ``(value, reason)``: ``reason`` is ``None`` on success
and otherwise ``"<code>: <detail>"`` with a short code (``no-number``, ``out-of-scale``,
``no-label``, ``ambiguous``, ``refusal``, ``empty``, ``missing``) so that failures can be
counted (:func:`summarise_failures`) and shown, never replaced by a default score.

Both the importers of published judge outputs (``data.benchmarks``) and the judge runners
(``judge``) use these functions; they are pure Python (``re`` only).

Rules (see ../shared/PROMPTS.md):

- :func:`parse_verdict` reads A / B / tie from answers such as ``"A"``, ``" B"``, ``"A."``,
  ``"Summary A"``, ``"B: Summary #2 is more coherent."``, ``"Response 1"`` (with aliases),
  ``"Tie"``; a refusal or an answer naming both options without saying which is better gives
  ``None``.
- :func:`parse_likert` reads a score. ``rule="chiang_lee"`` is the rule of Chiang & Lee
  (2023): delete "1-5", "out of 5" and "/5" (generalised to the offered scale), then take the
  first number, half points kept. ``rule="strict"`` takes the last number that lies on the
  offered scale after deleting every mention of the scale itself. ``"keyed"`` takes the
  number after the last score keyword ("Final score: 4"), else falls back to strict.
  ``"first"`` / ``"last"`` take the first / last number after the same deletion. A number
  off the scale is never clipped: it gives ``None`` with reason ``out-of-scale``.
- :func:`parse_choice_letter` reads a multiple-choice letter as a 1-based index.
- :func:`sample_verdicts_to_p`, :func:`expected_score` aggregate samples / score-token
  probabilities; :func:`summarise_failures` and :class:`ParseReport` count the failures.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

__all__ = [
    "NUMBERED_ALIASES",
    "LIKERT_RULES",
    "Parsed",
    "ParseReport",
    "parse_verdict",
    "parse_likert",
    "parse_choice_letter",
    "sample_verdicts_to_p",
    "expected_score",
    "reason_code",
    "summarise_failures",
]

LIKERT_RULES = ("chiang_lee", "strict", "keyed", "first", "last")

# "Summary #1" / "Response 1" style answers for templates whose options are numbered.
NUMBERED_ALIASES: dict[str, str] = {"#1": "A", "#2": "B", "1": "A", "2": "B"}


class Parsed(NamedTuple):
    """A parsed answer: ``value`` (None when unparsed) and ``reason`` (None on success).

    Attributes
    ----------
    value : object
        The verdict (``"A"``, ``"B"``, ``"tie"``), score (float) or choice index (int); None
        when the answer did not parse.
    reason : str or None
        None on success, else ``"<code>: <detail>"`` (see :func:`reason_code`).
    ok : bool
        True when ``reason`` is None.
    """

    value: Any
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when the answer parsed (``reason`` is None)."""
        return self.reason is None


def reason_code(reason: str | None) -> str | None:
    """The short code of a failure reason (``"no-number: ..."`` -> ``"no-number"``).

    Parameters
    ----------
    reason : str or None
        A :attr:`Parsed.reason`.

    Returns
    -------
    str or None
        The text before the first ``":"``, stripped (the whole reason when there is no
        colon); None for None.
    """
    if reason is None:
        return None
    return reason.split(":", 1)[0].strip()


def _fail(code: str, detail: str, text: str | None = None) -> Parsed:
    if text is not None:
        shown = " ".join(text.split())
        if len(shown) > 60:
            shown = shown[:57] + "..."
        detail = f"{detail} in {shown!r}"
    return Parsed(None, f"{code}: {detail}")


def _as_text(text: Any) -> str | None:
    """The answer as a string; None for a missing answer (None / NaN)."""
    if text is None:
        return None
    if isinstance(text, float) and math.isnan(text):
        return None
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    return str(text)


# --------------------------------------------------------------------------- refusals

_REFUSAL = re.compile(
    r"\b(?:i\s*(?:'|’)?\s*m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|as\s+an\s+ai\b"
    r"|i\s+(?:cannot|can\s*(?:'|’)?\s*t|can\s+not|am\s+unable\s+to|(?:'|’)m\s+unable\s+to"
    r"|won\s*(?:'|’)?\s*t|will\s+not|am\s+not\s+able\s+to)\s+"
    r"(?:provide|determine|choose|decide|compare|evaluate|rate|score|make|answer|assist"
    r"|help|judge|assess|give|select|pick|do)"
    r"|(?:unable|impossible|not\s+possible)\s+to\s+(?:determine|choose|decide|compare"
    r"|evaluate|rate|score|judge|assess|say)"
    r"|cannot\s+be\s+(?:determined|decided|evaluated|rated|compared))",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------- labels

# Words a judge puts before an option label ("Summary A", "Response #2", "Output (a)").
_NOUNS = (
    r"(?:summary|summaries|response|responses|output|answer|option|candidate|choice|story"
    r"|text|assistant|model|passage|system|completion|continuation|translation|title"
    r"|article|sentence|paragraph|letter)"
)
# Words that may follow a bare capital letter label without making it the article "A".
_LABEL_VERBS = frozenset(
    "is was seems appears wins has provides does better more and or vs than because "
    "since as would should".split()
)
# Answer prefixes a judge may echo before the label.
_ANSWER_PREFIX = re.compile(
    r"^(?:(?:my|the|your)\s+)?(?:final\s+)?"
    r"(?:answer|verdict|choice|decision|judge?ment|result|prediction|selection|preference"
    r"|output|rating|evaluation)\b"
    r"(?:\s*\([^)]{3,}\))?\s*(?:is\s*)?[:\-=]?\s*",
    re.IGNORECASE,
)
_COMPARATIVE_AFTER = re.compile(
    r"\s*(?:\)|\])?\s*(?:is|was|seems|appears|looks|reads)\s+(?:\w+ly\s+|much\s+|a\s+bit\s+"
    r"|somewhat\s+|far\s+)?(?:more\b|better\b|superior\b|preferable\b|preferred\b"
    r"|the\s+(?:better|best|winner|stronger|preferred|superior)\b|stronger\b|clearer\b"
    r"|the\s+more\b)",
    re.IGNORECASE,
)
_COMPARATIVE_BEFORE = re.compile(
    r"(?:\bprefer|\bchoose|\bchose|\bselect|\bpick|\bvote\s+for|\bgo\s+with"
    r"|\b(?:answer|choice|verdict|winner|decision|selection)\s+(?:is|would\s+be)"
    r"|\bbetter\s+(?:one|option|summary|response|output|story|text)\s+is"
    r"|\b(?:i\s+think|i\s+believe|therefore|thus|so)\s*,?)"
    r"\s*:?\s*(?:the\s+)?(?:" + _NOUNS + r"\s*)?[\s#(\[\"'*]*$",
    re.IGNORECASE,
)
_TIE_PHRASE = re.compile(
    r"\b(?:equally|are\s+equal|is\s+a\s+tie|it'?s\s+a\s+tie|tied|the\s+same\s+quality"
    r"|neither\s+is\s+(?:more|better))\b",
    re.IGNORECASE,
)
_TIE_WORDS = ("tie", "draw")


@lru_cache(maxsize=512)
def _surface_patterns(surface: str) -> tuple[re.Pattern, re.Pattern]:
    """(mention pattern, leading-answer pattern) for one label surface form."""
    esc = re.escape(surface)
    if len(surface) == 1 and surface.isalpha():
        # Case-sensitive: a lower-case "a" is the article; the upper-case "A" may be too and
        # is filtered in _mentions by the word that follows it.
        bare = rf"(?<![\w#'’]){esc}(?![\w'’])"
        flags = 0
    elif surface.isdigit() or (surface.startswith("#") and surface[1:].isdigit()):
        # A number label must not be part of "1.5", "1-5", "10" or "#1" (when "1" is asked).
        guard = r"(?<![\w.#/\-])" if not surface.startswith("#") else r"(?<!\w)"
        bare = rf"{guard}{esc}(?![\w]|[.,/\-]\d)"
        flags = 0
    else:
        bare = rf"(?<!\w){esc}(?!\w)"
        flags = re.IGNORECASE
    noun = rf"(?i:\b{_NOUNS})\s*(?:#|no\.?\s*|number\s*)?[(\[]?\s*(?:{bare})"
    mention = re.compile(rf"(?P<noun>{noun})|(?P<bare>{bare})", flags)
    leading = re.compile(
        rf"^\s*(?:(?i:{_NOUNS})\s*)?(?:#|no\.?\s*)?[(\[\"'“]?\s*(?:{bare})\s*[)\]\"'”]?"
        rf"\s*(?:$|[:.,;!)\]\n]|\s+[-–—]\s)",
        flags,
    )
    return mention, leading


def _clean_answer(text: str) -> str:
    # Markdown emphasis and surrounding quotes carry no meaning for the label.
    out = text.replace("**", "").replace("__", "").strip()
    out = out.strip("\"'“”`").strip()
    out = _ANSWER_PREFIX.sub("", out, count=1).strip()
    return out


def _mentions(
    text: str, entries: Sequence[tuple[str, Any, re.Pattern]]
) -> list[tuple[int, int, Any]]:
    found: list[tuple[int, int, Any]] = []
    for surface, value, pattern in entries:
        for m in pattern.finditer(text):
            if m.group("bare") is not None and len(surface) == 1 and surface.isalpha():
                nxt = re.match(r"\s+([A-Za-z]+)", text[m.end() :])
                if nxt and nxt.group(1)[0].islower() and nxt.group(1) not in _LABEL_VERBS:
                    continue  # "A good summary ..." uses the article, not the label
            found.append((m.start(), m.end(), value))
    return found


def _match_label(text: Any, entries: Sequence[tuple[str, Any]], tie_value: Any = None) -> Parsed:
    raw = _as_text(text)
    if raw is None:
        return _fail("missing", "no answer (None/NaN)")
    body = _clean_answer(raw)
    if not body:
        return _fail("empty", "empty answer")
    compiled = []
    for surface, value in entries:
        mention, leading = _surface_patterns(surface)
        compiled.append((surface, value, mention, leading))

    # 1. An answer that starts with a label followed by punctuation or the end decides.
    #    Longer surfaces first so that "Response 1" wins over "1".
    for _surface, value, _mention, leading in sorted(compiled, key=lambda c: -len(c[0])):
        if leading.match(body):
            return Parsed(value)

    # 2. A refusal is a refusal even when it names the options.
    if _REFUSAL.search(body):
        return _fail("refusal", "the judge declined to answer", raw)

    # 3. Otherwise the options the answer names.
    found = _mentions(body, [(s, v, m) for s, v, m, _ in compiled])
    values = {v for _, _, v in found}
    if len(values) == 1:
        return Parsed(values.pop())
    if len(values) > 1:
        winners = set()
        for start, end, value in found:
            if _COMPARATIVE_AFTER.match(body, end) or _COMPARATIVE_BEFORE.search(body[:start]):
                winners.add(value)
        if len(winners) == 1:
            return Parsed(winners.pop())
        if not winners and tie_value is not None and _TIE_PHRASE.search(body):
            return Parsed(tie_value)
        names = ", ".join(sorted({str(v) for v in values}))
        return _fail("ambiguous", f"names {names} without a clear choice", raw)
    if tie_value is not None and _TIE_PHRASE.search(body):
        return Parsed(tie_value)
    return _fail("no-label", "no option label found", raw)


def parse_verdict(
    text: Any,
    *,
    labels: Sequence[str] = ("A", "B"),
    tie_labels: Sequence[str] = (),
    aliases: Mapping[str, str] | None = None,
) -> Parsed:
    """Parse a pairwise verdict into ``"A"`` (first shown), ``"B"`` (second) or ``"tie"``.

    Parameters
    ----------
    text : str
        The judge's raw answer. None / NaN give reason ``missing``.
    labels : pair of str
        The label words of the first and second option as the prompt offered them
        (``("A", "B")``, ``("1", "2")``, ``("Response 1", "Response 2")``). The value
        returned is positional: ``labels[0]`` -> ``"A"``, ``labels[1]`` -> ``"B"``.
    tie_labels : sequence of str
        Label words that mean a tie (``("C",)`` for the SummEval A/B/C prompt, ``("Tie",)``).
        The words "tie" and "draw" always mean a tie.
    aliases : mapping str -> str, optional
        Other ways the answer may name an option, mapped to ``"A"``, ``"B"``, ``"tie"`` or to
        one of the labels (:data:`NUMBERED_ALIASES` maps "#1"/"1" -> A and "#2"/"2" -> B).

    Returns
    -------
    Parsed
        ``value`` in {"A", "B", "tie"} or None; ``reason`` codes: ``missing``, ``empty``,
        ``refusal``, ``ambiguous`` (both options named, none chosen), ``no-label``.

    Notes
    -----
    In order: an answer that starts with a label (optionally after "Summary"/"Response" and
    an "Answer:" prefix) followed by punctuation or the end decides ("B: Summary #2 is more
    coherent." -> B). Then a refusal gives None. Then the labels the answer names: one option
    named -> that option; several -> the one said to be better ("Summary #2 is more coherent
    than Summary #1"), else a tie when the answer says "equally", else ``ambiguous``.
    Single capital letters are matched case-sensitively and not where they read as the
    article ("A good summary").

    Raises
    ------
    ValueError
        Not exactly two ``labels``; a label or tie label that is not a non-empty string, or
        one given twice (case-insensitively for labels longer than one character); an alias
        that maps to something other than "A", "B", "tie" or one of the labels.
    """
    labels = tuple(labels)
    if len(labels) != 2:
        raise ValueError(f"parse_verdict needs exactly two labels, got {labels!r}")
    _check_surfaces(labels + tuple(tie_labels), "labels/tie_labels")
    entries: list[tuple[str, Any]] = [(labels[0], "A"), (labels[1], "B")]
    entries += [(t, "tie") for t in tie_labels]
    entries += [(w, "tie") for w in _TIE_WORDS if w.lower() not in {s.lower() for s, _ in entries}]
    for alias, target in (aliases or {}).items():
        entries.append((alias, _resolve_alias(alias, target, labels, tuple(tie_labels))))
    return _match_label(text, entries, tie_value="tie")


def _check_surfaces(surfaces: Sequence[str], what: str) -> None:
    for s in surfaces:
        if not isinstance(s, str) or not s.strip():
            raise ValueError(f"{what} must be non-empty strings, got {s!r}")
    lowered = [s.strip().lower() if len(s) > 1 else s for s in surfaces]
    dup = sorted({s for s in lowered if lowered.count(s) > 1})
    if dup:
        raise ValueError(f"{what} must be distinct, {dup} appear more than once")


def _resolve_alias(
    alias: str, target: str, labels: tuple[str, ...], tie_labels: tuple[str, ...]
) -> str:
    if target in ("A", "B", "tie"):
        return target
    if target == labels[0]:
        return "A"
    if target == labels[1]:
        return "B"
    if target in tie_labels:
        return "tie"
    raise ValueError(
        f"alias {alias!r} maps to {target!r}; map it to 'A', 'B', 'tie' or one of the labels {labels}"
    )


def parse_choice_letter(text: Any, letters: str | Sequence[str] = "ABCDE") -> Parsed:
    """Parse a multiple-choice answer into the 1-based index of the chosen letter.

    ``"D"`` -> 4, ``"(B)"`` -> 2, ``"E: All sentences are fluent. Score: Five."`` -> 5.
    Uses the same rules as :func:`parse_verdict` (leading label, refusal, named options).

    Parameters
    ----------
    text : str
        The judge's raw answer. None / NaN give reason ``missing``.
    letters : str or sequence of str
        The offered choices in order; a string is read as one choice per character.

    Returns
    -------
    Parsed
        ``value`` the 1-based index (int) of the chosen letter or None; reason codes
        ``missing``, ``empty``, ``refusal``, ``ambiguous`` (several named, none said to be
        better), ``no-label``.

    Raises
    ------
    ValueError
        Fewer than two letters; a letter that is not a non-empty string, or one given twice.
    """
    letters = tuple(letters)
    if len(letters) < 2:
        raise ValueError(f"parse_choice_letter needs at least two letters, got {letters!r}")
    _check_surfaces(letters, "letters")
    return _match_label(text, [(s, i + 1) for i, s in enumerate(letters)])


# --------------------------------------------------------------------------- numbers

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
    raw = _as_text(text)
    if raw is None:
        return _fail("missing", "no answer (None/NaN)")
    body = raw.strip()
    if not body:
        return _fail("empty", "empty answer")
    for s in drop:
        if s:
            body = re.sub(re.escape(s), _MARK, body, flags=re.IGNORECASE)
    if rule == "chiang_lee":
        body = _strip_chiang_lee(body, lo, hi)
    else:
        body = _strip_scale_mentions(body, lo, hi)
    numbers = _numbers(body)
    if not numbers:
        if _REFUSAL.search(raw):
            return _fail("refusal", "the judge declined to answer", raw)
        return _fail("no-number", "no number", raw)
    if rule == "keyed":
        keyed = [x for x in _keyed_numbers(body) if lo <= x <= hi]
        if keyed:
            return Parsed(keyed[-1])
    if rule in ("strict", "keyed"):
        on_scale = [x for x in numbers if lo <= x <= hi]
        if not on_scale:
            seen = ", ".join(_fmt(x) for x in numbers[:5])
            return _fail("out-of-scale", f"numbers {seen} all outside {_fmt(lo)}-{_fmt(hi)}", raw)
        return Parsed(on_scale[-1])
    value = numbers[-1] if rule == "last" else numbers[0]
    if not lo <= value <= hi:
        return _fail("out-of-scale", f"{_fmt(value)} outside {_fmt(lo)}-{_fmt(hi)}", raw)
    return Parsed(value)


def _check_scale(scale: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a pair (lo, hi) of numbers, got {scale!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"scale must have finite lo < hi, got {scale!r}")
    return lo, hi


# --------------------------------------------------------------------------- aggregates


def sample_verdicts_to_p(verdicts: Iterable[Any]) -> tuple[float, int]:
    """p_first from K sampled verdicts: the share of "A", a tie counting half.

    Parameters
    ----------
    verdicts : iterable of {"A", "B", "tie", None} or Parsed
        Unparsed samples (None, NaN, or a Parsed with value None) are left out of both the
        numerator and ``n_valid``.

    Returns
    -------
    (p_first, n_valid)
        ``p_first`` is NaN when no sample is valid.

    Raises
    ------
    ValueError
        A verdict other than "A", "B", "tie" or unparsed.
    """
    n_a = n_tie = n_valid = 0
    for v in verdicts:
        if isinstance(v, Parsed):
            v = v.value
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if v == "A":
            n_a += 1
        elif v == "tie":
            n_tie += 1
        elif v != "B":
            raise ValueError(f"verdicts must be 'A', 'B', 'tie' or None, got {v!r}")
        n_valid += 1
    if n_valid == 0:
        return math.nan, 0
    return (n_a + 0.5 * n_tie) / n_valid, n_valid


def expected_score(score_probs: Mapping[float, float]) -> float:
    """G-Eval expected score: sum over s of s * P(s), P renormalised over the score tokens.

    Parameters
    ----------
    score_probs : mapping score -> probability
        Probabilities (not log-probabilities) of the score tokens, e.g. ``{1: .1, 2: .2, ...}``;
        they need not sum to one (the rest of the vocabulary is dropped).

    Returns
    -------
    float
        NaN when every probability is zero (the model put no mass on a score token).

    Raises
    ------
    ValueError
        An empty mapping; a probability that is negative or not finite; a score that is
        not finite.
    """
    if not score_probs:
        raise ValueError("expected_score needs at least one score probability")
    total = weighted = 0.0
    for s, p in score_probs.items():
        s, p = float(s), float(p)
        if not math.isfinite(p) or p < 0:
            raise ValueError(f"probability of score {s:g} must be finite and >= 0, got {p!r}")
        if not math.isfinite(s):
            raise ValueError(f"scores must be finite numbers, got {s!r}")
        total += p
        weighted += s * p
    if total == 0.0:
        return math.nan
    return weighted / total


def summarise_failures(parsed: Iterable[Parsed]) -> dict[str, int]:
    """Count failures by reason code, most frequent first (successes are not counted).

    Parameters
    ----------
    parsed : iterable of Parsed
        Parser results.

    Returns
    -------
    dict of str to int
        Reason code (:func:`reason_code`) -> number of answers, most frequent first (equal
        counts in order of first appearance).
    """
    counts = Counter(reason_code(p.reason) for p in parsed if p.reason is not None)
    return dict(counts.most_common())


@dataclass(frozen=True)
class ParseReport:
    """How many answers parsed, and why the others did not, with a few examples each.

    Attributes
    ----------
    n_total : int
        Number of answers.
    n_parsed : int
        Number that parsed.
    failures : dict of str to int
        Reason code -> count, most frequent first (:func:`summarise_failures`).
    examples : dict of str to list of str
        Reason code -> a few failed answers (their raw text, or the reasons when no raw
        text was given to :meth:`from_parsed`).
    n_failed : int
        ``n_total - n_parsed``.
    parse_rate : float
        ``n_parsed / n_total``; NaN when there are no answers.
    """

    n_total: int
    n_parsed: int
    failures: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_failed(self) -> int:
        """Number of answers that did not parse."""
        return self.n_total - self.n_parsed

    @property
    def parse_rate(self) -> float:
        """Share of answers that parsed; NaN when there are none."""
        return self.n_parsed / self.n_total if self.n_total else math.nan

    @classmethod
    def from_parsed(
        cls, parsed: Sequence[Parsed], raw: Sequence[Any] | None = None, n_examples: int = 3
    ) -> ParseReport:
        """Build a report; ``raw`` (same length) supplies the example answers per failure.

        Parameters
        ----------
        parsed : sequence of Parsed
            Parser results.
        raw : sequence, optional
            The raw answers, in the order of ``parsed``; without it the examples are the
            failure reasons.
        n_examples : int
            Most examples kept per reason code, the first ones met.

        Returns
        -------
        ParseReport

        Raises
        ------
        ValueError
            ``raw`` and ``parsed`` differ in length.
        """
        parsed = list(parsed)
        if raw is not None and len(raw) != len(parsed):
            raise ValueError(f"raw has {len(raw)} answers but parsed has {len(parsed)}")
        examples: dict[str, list[str]] = {}
        for i, p in enumerate(parsed):
            code = reason_code(p.reason)
            if code is None:
                continue
            bucket = examples.setdefault(code, [])
            if len(bucket) < n_examples:
                bucket.append(str(raw[i]) if raw is not None else p.reason)
        n_parsed = sum(p.reason is None for p in parsed)
        return cls(len(parsed), n_parsed, summarise_failures(parsed), examples)

    def summary(self) -> str:
        """One line: "812/820 parsed; no-number 6, out-of-scale 2".

        Returns
        -------
        str
            The counts, then the failures by code when there are any.
        """
        head = f"{self.n_parsed}/{self.n_total} parsed"
        if not self.failures:
            return head
        return head + "; " + ", ".join(f"{k} {v}" for k, v in self.failures.items())
