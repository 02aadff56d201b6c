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

The package, one module per seam (every name below is reached as ``data.parsing.<name>``):
``answers`` (:class:`Parsed`, :func:`reason_code`, missing answers and refusals),
``verdicts`` (:func:`parse_verdict` and its :class:`ParsedVerdict` with the grade of a
graded answer, :func:`parse_choice_letter`, ``NUMBERED_ALIASES``),
``likert`` (:func:`parse_likert`, ``LIKERT_RULES``), ``counts``
(:func:`sample_verdicts_to_p`, :func:`expected_score`, :func:`summarise_failures`,
:class:`ParseReport`) and ``vocabulary`` (the one verdict vocabulary of stored verdict
*values*, ``A>>B``, ``[[C]]``, ``model_a``, ``Output (b)``, ``m``, ... read as grades -2..+2:
:data:`VERDICT_FORMS`, :func:`read_verdict_value`, :func:`verdict_map`,
:func:`read_verdict_column`, and the strength policy :func:`apply_strength`). The
vocabulary's column functions use pandas; everything else is pure Python.
"""

from __future__ import annotations

from data.parsing.answers import Parsed, reason_code
from data.parsing.counts import (
    ParseReport,
    expected_score,
    sample_verdicts_to_p,
    summarise_failures,
)
from data.parsing.forms import VERDICT_FORMS, VerdictForm, verdict_forms_table
from data.parsing.likert import LIKERT_RULES, parse_likert
from data.parsing.verdicts import (
    NUMBERED_ALIASES,
    ParsedVerdict,
    parse_choice_letter,
    parse_verdict,
)
from data.parsing.vocabulary import (
    ARENA_HARD_STRONG_WEIGHT,
    STRENGTH_POLICIES,
    VerdictReading,
    apply_strength,
    read_verdict_column,
    read_verdict_value,
    verdict_map,
)

__all__ = [
    "NUMBERED_ALIASES",
    "LIKERT_RULES",
    "Parsed",
    "ParsedVerdict",
    "ParseReport",
    "parse_verdict",
    "parse_likert",
    "parse_choice_letter",
    "sample_verdicts_to_p",
    "expected_score",
    "reason_code",
    "summarise_failures",
    "ARENA_HARD_STRONG_WEIGHT",
    "STRENGTH_POLICIES",
    "VERDICT_FORMS",
    "VerdictForm",
    "VerdictReading",
    "apply_strength",
    "read_verdict_column",
    "read_verdict_value",
    "verdict_forms_table",
    "verdict_map",
]
