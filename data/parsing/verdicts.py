"""Verdicts and choice letters read from a judge's answer: which option label it names.

:func:`parse_verdict` reads A / B / tie from answers such as ``"A"``, ``" B"``, ``"A."``,
``"Summary A"``, ``"B: Summary #2 is more coherent."``, ``"Response 1"`` (with aliases),
``"Tie"``; a refusal or an answer naming both options without saying which is better gives
``None``. :func:`parse_choice_letter` reads a multiple-choice letter as a 1-based index with
the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from data.parsing.answers import REFUSAL, Parsed, as_text, fail

# "Summary #1" / "Response 1" style answers for templates whose options are numbered.
NUMBERED_ALIASES: dict[str, str] = {"#1": "A", "#2": "B", "1": "A", "2": "B"}

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
    raw = as_text(text)
    if raw is None:
        return fail("missing", "no answer (None/NaN)")
    body = _clean_answer(raw)
    if not body:
        return fail("empty", "empty answer")
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
    if REFUSAL.search(body):
        return fail("refusal", "the judge declined to answer", raw)

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
        return fail("ambiguous", f"names {names} without a clear choice", raw)
    if tie_value is not None and _TIE_PHRASE.search(body):
        return Parsed(tie_value)
    return fail("no-label", "no option label found", raw)


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
