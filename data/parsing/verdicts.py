"""Verdicts and choice letters read from a judge's answer: which option label it names.

:func:`parse_verdict` reads A / B / tie from answers such as ``"A"``, ``" B"``, ``"A."``,
``"Summary A"``, ``"B: Summary #2 is more coherent."``, ``"Response 1"`` (with aliases),
``"Tie"``, and the published judge formats exactly: Arena-Hard's final ``[[A>>B]]`` ...
``[[B>>A]]`` (the grade kept: :class:`ParsedVerdict`), MT-Bench's ``[[A]]`` / ``[[B]]`` /
``[[C]]``, AlpacaEval's ``m`` / ``M`` and rankings, PandaLM's ``1`` / ``2`` / ``Tie`` first
line, JudgeLM's score pair ``"8 6"``, LLMBar's ``"Output (a)"`` and its concluding
"Therefore, Output (b) is better."; a refusal or an answer naming both options without
saying which is better gives ``None``. :func:`parse_choice_letter` reads a multiple-choice
letter as a 1-based index with the first rules (leading label, refusal, named options).
"""

from __future__ import annotations

import ast
import json
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
        rf"^\s*(?:(?i:{_NOUNS})\s*)?(?:#(?=\S)|no\.?\s*)?[(\[\"'“]?\s*(?:{bare})\s*[)\]\"'”]?"
        rf"\s*(?:$|[:.,;!)\]\n]|\s+[-–—]\s)",
        flags,
    )
    return mention, leading


def _clean_answer(text: str, labels_first: Sequence[re.Pattern] = ()) -> str:
    # Markdown emphasis and surrounding quotes carry no meaning for the label.
    out = text.replace("**", "").replace("__", "").strip()
    out = out.strip("\"'“”`").strip()
    # An answer prefix ("Answer:", "My verdict is") goes, but not when the answer starts
    # with a label that begins with such a word ("Output (a) is better.", LLMBar's labels).
    if not any(p.match(out) for p in labels_first):
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


# A conclusion before an option: "Therefore, Output (a) is better", "Overall, B is the best".
_CONNECTIVE = (
    r"(?:therefore|thus|hence|so|overall|consequently|ultimately|finally|in\s+conclusion"
    r"|in\s+summary|in\s+short|to\s+conclude|to\s+sum\s+up|all\s+in\s+all|in\s+the\s+end"
    r"|as\s+a\s+result|based\s+on\s+[^.,;:\n]{1,60})"
)
_CONCLUSION_BEFORE = re.compile(
    r"(?:[.!?:;][\"'”’)\]]*\s+|\n)\s*(?:(?P<conn>"
    + _CONNECTIVE
    + r")\s*(?:,[^.!?,;:\n]{1,80},)?\s*,?\s*)?(?:the\s+)?[*\"'(\[]*$",
    re.IGNORECASE,
)
# ... and the claim after it: "is better", "is the better output", "was clearly superior".
_CONCLUSION_AFTER = re.compile(
    r"\s*(?:\)|\])?[*\"']*\s*(?:is|was)\s+(?:\w+ly\s+|much\s+|far\s+|a\s+bit\s+)?(?:the\s+)?"
    r"(?:better|best|superior|preferable|preferred|winner|stronger)\b"
    r"(?P<rest>(?:\s+(?:one|output|choice|response|answer|option|summary))?"
    r"(?:\s*(?:[.!]|\n|$)|\s+(?:because|since)\b))?",
    re.IGNORECASE,
)


_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+[^\n]{1,40}:[ \t]*$")


def _concluded(body: str, found: Sequence[tuple[int, int, Any]]) -> tuple[Any, Any]:
    """(strong, plain): the options an answer concludes for, each None when there is none.

    A conclusion names one option as better at the start of a sentence. Strong: after a
    connective ("Therefore, Output (a) is better", LLMBar's required last sentence); the
    last such sentence gives it. Plain: without a connective, as a whole sentence
    ("Output (b) is better."); given when every such sentence names the same option.
    """
    strong: list[tuple[int, Any]] = []
    plain: set = set()
    for start, end, value in found:
        after = _CONCLUSION_AFTER.match(body, end)
        # a sentence start within the last 200 characters (the answer's start as a newline)
        lo = max(0, start - 200)
        before = _CONCLUSION_BEFORE.search(("\n" if lo == 0 else "") + body[lo:start])
        if not (after and before):
            continue
        if before.group("conn"):
            strong.append((start, value))
        elif after.group("rest") is not None:
            plain.add(value)
    last_strong = max(strong, key=lambda sv: sv[0])[1] if strong else None
    return last_strong, (next(iter(plain)) if len(plain) == 1 else None)


def _match_label(
    text: Any,
    entries: Sequence[tuple[str, Any]],
    tie_value: Any = None,
    *,
    verdict_rules: bool = False,
) -> Parsed:
    raw = as_text(text)
    if raw is None:
        return fail("missing", "no answer (None/NaN)")
    compiled = []
    for surface, value in entries:
        mention, leading = _surface_patterns(surface)
        compiled.append((surface, value, mention, leading))
    starts = [m for s, _v, m, _l in compiled if len(s) > 1] if verdict_rules else []
    body = _clean_answer(raw, starts)
    if not body:
        return fail("empty", "empty answer")
    by_length = sorted(compiled, key=lambda c: -len(c[0]))

    # 1. An answer that starts with a label followed by punctuation or the end decides.
    #    Longer surfaces first so that "Response 1" wins over "1".
    for _surface, value, _mention, leading in by_length:
        if leading.match(body):
            return Parsed(value)

    # 1b. (verdicts) An answer whose last line is a label alone decides (AlpacaEval's
    #     chain-of-thought judges end with the identifier of the best output).
    if verdict_rules:
        lines = [ln.strip(" \t*_`") for ln in body.splitlines() if ln.strip(" \t*_`")]
        last = lines[-1] if len(lines) > 1 else ""
        for _surface, value, _mention, leading in by_length:
            m = leading.match(last)
            if m and not last[m.end() :].strip(" .!:\"'”)]"):
                return Parsed(value)

    # (verdicts) a Markdown heading that names an option ("# Output (a):") echoes the
    # prompt's layout; it names no choice
    named = _HEADING.sub(lambda m: " " * len(m.group(0)), body) if verdict_rules else body
    found = _mentions(named, [(s, v, m) for s, v, m, _ in compiled])
    values = {v for _, _, v in found}
    strong, plain = _concluded(body, found) if verdict_rules else (None, None)
    # 1c. (verdicts) A concluding sentence decides ("Therefore, Output (a) is better.").
    if strong is not None:
        return Parsed(strong)

    # 2. A refusal is a refusal even when it names the options.
    if REFUSAL.search(body):
        return fail("refusal", "the judge declined to answer", raw)

    # 3. Otherwise the options the answer names.
    if len(values) == 1:
        return Parsed(values.pop())
    if len(values) > 1 and plain is not None:
        return Parsed(plain)
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
    require_bracketed: bool = False,
) -> ParsedVerdict:
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
    require_bracketed : bool
        Read only a bracketed verdict (rule 1 below), as the formats that ask for one do
        (Arena-Hard, MT-Bench): an answer without one is ``no-label`` however it reads.

    Returns
    -------
    ParsedVerdict
        A :class:`Parsed` (it compares and unpacks as ``(value, reason)``) with ``grade``:
        -2 ... +2 for a graded answer (``[[A>>B]]``), else None. ``value`` in {"A", "B",
        "tie"} or None; ``reason`` codes: ``missing``, ``empty``, ``refusal``,
        ``ambiguous`` (both options named, none chosen), ``no-label``.

    Notes
    -----
    In order, the first rule that applies decides:

    1. The last bracketed verdict, whatever words come before or after it: ``[[A>>B]]``,
       ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]`` and the mirror forms ``[[B<A]]``
       ... (Arena-Hard; graded, with the two labels in place of A and B, case ignored as
       arena-hard-auto upper-cases the answer), a label or tie label in double brackets
       (MT-Bench ``[[A]]``, ``[[B]]``, ``[[C]]`` when ``"C"`` is a tie label), and on the
       last line FastChat's score pair ``[[8, 6]]`` (scores within
       :data:`PAIR_TIE_DELTA` are a tie). Without any double-bracketed verdict,
       Arena-Hard's fallback: the last graded form in single brackets (``[A>B]``).
    2. AlpacaEval's ranking answer (JSON or a Python literal, also under
       ``"ordered_models"``): the one of ``model_1`` / ``model_2`` ranked 1; a ranking
       without both ranked 1 and 2 is ``no-label``.
    3. Two scores alone on the first line (JudgeLM, FastChat/AlpacaEval ``lmsys``: ``"8 6"``
       or ``"8, 6"``, the first for the first-shown answer): the higher wins, equal scores
       are a tie; a plain verdict (no grade), as JudgeLM itself compares the scores only.
       Not read when the labels are numbers.
    4. An answer that starts with a label (optionally after "Summary"/"Response" and an
       "Answer:" prefix that is not the start of a label, as in ``"Output (a)"``) followed
       by punctuation or the end ("B: Summary #2 is more coherent." -> B; PandaLM's first
       line ``1`` / ``2`` / ``Tie``).
    5. An answer whose last line is a label alone (AlpacaEval's chain-of-thought judges end
       with ``m`` or ``M``).
    6. A concluding sentence: an option said to be better right after "Therefore",
       "Thus", "Overall", "In conclusion", ... ("Therefore, Output (a) is better.", the
       sentence LLMBar's CoT prompt ends with); the last one decides.
    7. A refusal gives None.
    8. The labels the answer names (Markdown headings such as ``# Output (a):`` that echo
       the prompt name nothing): one option named -> that option; several -> the one a
       whole sentence says is better ("Output (b) is better."), else the one said to be
       better ("Summary #2 is more coherent than Summary #1"), else a tie when the answer
       says "equally", else ``ambiguous``.

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
    raw = as_text(text)
    if raw is not None and raw.strip():
        rules = (_bracketed_verdict,)
        if not require_bracketed:
            rules += (_ranking_verdict, _score_pair_verdict)
        for rule in rules:
            decided = rule(raw, labels, entries)
            if decided is not None:
                return decided
        if require_bracketed:
            return ParsedVerdict(
                *fail("no-label", "no bracketed verdict ([[A>B]], [[A]], ...)", raw)
            )
    found = _match_label(text, entries, tie_value="tie", verdict_rules=True)
    return ParsedVerdict(found.value, found.reason)


class ParsedVerdict(Parsed):
    """A parsed pairwise verdict: a :class:`Parsed` that also carries the grade.

    Compares, unpacks and indexes as the ``(value, reason)`` pair it is.

    Attributes
    ----------
    grade : int or None
        -2 ... +2 for a graded answer (``[[A>>B]]`` +2, ``[[A>B]]`` +1, ``[[A=B]]`` 0,
        ``[[B>A]]`` -1, ``[[B>>A]]`` -2; + = the first-shown option better), the same
        grades as ``data.parsing.vocabulary``; None for a plain verdict or a failure.
    """

    def __new__(cls, value: Any, reason: str | None = None, grade: int | None = None):
        self = super().__new__(cls, value, reason)
        self.grade = grade
        return self

    def __getnewargs__(self):
        return (self.value, self.reason, self.grade)

    def __repr__(self) -> str:
        return f"ParsedVerdict(value={self.value!r}, reason={self.reason!r}, grade={self.grade!r})"


_VERDICT_OF_GRADE_SIGN = {1: "A", 0: "tie", -1: "B"}
# The grade of "X <op> Y" when X is the first label (a second-label X turns the sign).
_OPERATOR_GRADE = {">>": 2, ">": 1, "=": 0, "<": -1, "<<": -2}
_DOUBLE_BRACKETS = re.compile(r"\[\[([^\[\]\n]{1,60})\]\]")
_SINGLE_BRACKETS = re.compile(r"(?<!\[)\[([^\[\]\n]{1,60})\](?!\])")
_NUMBER = r"(\d+(?:\.\d+)?)"
_BRACKETED_PAIR = re.compile(rf"^\s*{_NUMBER}\s*,\s*{_NUMBER}\s*$")
_FIRST_LINE_PAIR = re.compile(rf"^\s*{_NUMBER}\s*(?:,\s*|\s+){_NUMBER}\s*$")
#: FastChat's llm_judge tie margin for "[[rating_a, rating_b]]" answers (TIE_DELTA).
PAIR_TIE_DELTA = 0.1


def _symbolic(content: str, labels: tuple[str, ...]) -> int | None:
    """The grade of ``"A>>B"``-style content with the two labels, else None."""
    first, second = (re.escape(x) for x in labels)
    m = re.fullmatch(
        rf"\s*({first}|{second})\s*(>>|>|=|<<|<)\s*({first}|{second})\s*",
        content,
        re.IGNORECASE,
    )
    if not m:
        return None
    left, op, right = m.group(1).casefold(), m.group(2), m.group(3).casefold()
    if left == right:
        return None  # "A>A" says nothing
    grade = _OPERATOR_GRADE[op]
    return grade if left == labels[0].casefold() else -grade


def _entry_value(content: str, entries: Sequence[tuple[str, Any]]) -> Any:
    """The value of a bracketed label (``[[A]]``, ``[[C]]`` when C is a tie label), else None."""
    text = content.strip().strip("*").strip()
    for surface, value in entries:
        same = text == surface if len(surface) == 1 else text.casefold() == surface.casefold()
        if same:
            return value
    return None


def _bracketed_verdict(raw: str, labels: tuple[str, ...], entries) -> ParsedVerdict | None:
    """The last bracketed verdict of an answer decides, whatever words come before it.

    ``[[A>>B]]`` ... ``[[B>>A]]`` (Arena-Hard; graded), ``[[A]]`` / ``[[B]]`` / a tie label
    such as ``[[C]]`` (MT-Bench), FastChat's score pair ``[[8, 6]]`` when it ends the answer
    (elsewhere ``[[0, 1]]`` is as likely an index in code). Without any double bracket,
    Arena-Hard's fallback: the last single-bracketed graded form (``[A>B]``).
    """
    decided = None
    for m in _DOUBLE_BRACKETS.finditer(raw):
        if _INDEXED.match(raw, max(m.start() - 1, 0), m.start()):
            continue  # x[[0, 1]], df[["A"]]: an index in code, not a verdict
        content = m.group(1)
        grade = _symbolic(content, labels)
        if grade is not None:
            decided = ParsedVerdict(_VERDICT_OF_GRADE_SIGN[(grade > 0) - (grade < 0)], None, grade)
            continue
        value = _entry_value(content, entries)
        if value is not None:
            decided = ParsedVerdict(value)
            continue
        pair = _BRACKETED_PAIR.match(content)
        if pair and not raw[m.end() :].strip():  # a score pair counts on the last line only
            a, b = float(pair.group(1)), float(pair.group(2))
            value = "tie" if abs(a - b) <= PAIR_TIE_DELTA else ("A" if a > b else "B")
            decided = ParsedVerdict(value)
    if decided is not None:
        return decided
    for m in _SINGLE_BRACKETS.finditer(raw):
        grade = _symbolic(m.group(1), labels)
        if grade is not None:
            decided = ParsedVerdict(_VERDICT_OF_GRADE_SIGN[(grade > 0) - (grade < 0)], None, grade)
    return decided


_INDEXED = re.compile(r"[\w)\]]")
_FENCE = re.compile(r"^```[\w-]*\s*|\s*```$")
_RANKED_NAMES = {"model_1": "A", "model_2": "B"}


def _ranking_verdict(raw: str, labels: tuple[str, ...], entries) -> ParsedVerdict | None:
    """AlpacaEval's ranking answers: ``[{'model': 'model_1', 'rank': 1}, ...]`` (also under
    an ``"ordered_models"`` key): the model ranked 1 wins. None when the answer is no
    ranking; a failure when it is one without model_1 and model_2 ranked 1 and 2."""
    body = _FENCE.sub("", raw.strip()).strip()
    if body[:1] not in ("[", "{") or len(body) > 20_000:
        return None
    try:
        loaded = json.loads(body)
    except ValueError:
        try:
            loaded = ast.literal_eval(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    if isinstance(loaded, dict):
        loaded = next(
            (loaded[k] for k in ("ordered_models", "rank", "ranking") if k in loaded), None
        )
    if not isinstance(loaded, list) or not all(
        isinstance(d, dict) and "model" in d and "rank" in d for d in loaded
    ):
        return None
    names = {**_RANKED_NAMES, labels[0]: "A", labels[1]: "B"}
    ranks = {names.get(str(d["model"]).strip()): d["rank"] for d in loaded}
    if set(ranks) == {"A", "B"} and sorted(ranks.values()) == [1, 2]:
        return ParsedVerdict("A" if ranks["A"] == 1 else "B")
    return ParsedVerdict(
        *fail("no-label", "a ranking without model_1 and model_2 ranked 1 and 2", raw)
    )


def _score_pair_verdict(raw: str, labels: tuple[str, ...], entries) -> ParsedVerdict | None:
    """JudgeLM / lmsys answers: two scores on the first line ("8 6"), the first for the
    first-shown answer: the higher one wins, equal scores are a tie. Not read when the
    labels themselves are numbers ("1 2" would be ambiguous)."""
    if any(label.strip().lstrip("#").isdigit() for label in labels):
        return None
    first = raw.strip().splitlines()[0]
    m = _FIRST_LINE_PAIR.match(first)
    if not m:
        return None
    a, b = float(m.group(1)), float(m.group(2))
    return ParsedVerdict("tie" if a == b else ("A" if a > b else "B"))


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
