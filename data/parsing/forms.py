"""The verdict vocabulary's table: every form a judge or an annotator writes for a pairwise
verdict (:data:`VERDICT_FORMS`), once, with its spellings, grade (-2..+2, how much better the
first-shown candidate is), whether it belongs to a graded scale, its source and meaning.
:mod:`data.parsing.vocabulary` reads values with it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class VerdictForm:
    """One row of the verdict vocabulary.

    Attributes
    ----------
    name : str
        Short name of the form (shown in the verdict map).
    spellings : tuple of str
        The values that are this form, compared ignoring case unless ``case_sensitive``
        (after the clean-up of :func:`read_verdict_value`).
    grade : int
        -2 ... +2; + means the first-shown candidate is better.
    graded : bool
        Whether the form belongs to a scale that tells strong from slight wins.
    source : str
        Who writes it (the format, benchmark or judge prompt).
    meaning : str
        What the value says, in words.
    case_sensitive : bool
        Match the spellings exactly (AlpacaEval's ``m`` is the first output, ``M`` the
        second).
    """

    name: str
    spellings: tuple[str, ...]
    grade: int
    graded: bool
    source: str
    meaning: str
    case_sensitive: bool = False


def _brackets(*forms: str) -> tuple[str, ...]:
    """Each form bare, in single and in double square brackets (Arena-Hard's two regexes)."""
    return tuple(s for f in forms for s in (f, f"[{f}]", f"[[{f}]]"))


_AH = "Arena-Hard (judge answers end in [[A>B]] etc.; the stored game 'score' is bare A>B)"
_PLAIN = "plain verdict (no strengths)"

#: The verdict vocabulary: every form once, with its grade and meaning.
VERDICT_FORMS: tuple[VerdictForm, ...] = (
    # Arena-Hard's five-level scale, and the mirror spellings its show_result.py accepts
    VerdictForm(
        "A>>B", _brackets("A>>B", "B<<A"), 2, True, _AH, "the first (A) is significantly better"
    ),
    VerdictForm("A>B", _brackets("A>B", "B<A"), 1, True, _AH, "the first (A) is slightly better"),
    VerdictForm("A=B", _brackets("A=B", "B=A"), 0, True, _AH, "tie, relatively the same"),
    VerdictForm("B>A", _brackets("B>A", "A<B"), -1, True, _AH, "the second (B) is slightly better"),
    VerdictForm(
        "B>>A", _brackets("B>>A", "A<<B"), -2, True, _AH, "the second (B) is significantly better"
    ),
    # MT-Bench (FastChat llm_judge pair-v2 prompts): [[A]], [[B]], [[C]] for a tie
    VerdictForm(
        "[[A]]", ("[[A]]", "[A]"), 1, False, "MT-Bench / FastChat pairwise judge", "A is better"
    ),
    VerdictForm(
        "[[B]]", ("[[B]]", "[B]"), -1, False, "MT-Bench / FastChat pairwise judge", "B is better"
    ),
    VerdictForm("[[C]]", ("[[C]]", "[C]"), 0, False, "MT-Bench / FastChat pairwise judge", "a tie"),
    # letters, positions, assistants, outputs
    VerdictForm(
        "A",
        ("A", "(A)", "Assistant A", "Response A", "Answer A", "Summary A", "Option A"),
        1,
        False,
        _PLAIN,
        "the first-shown candidate (A) is better",
    ),
    VerdictForm(
        "B",
        ("B", "(B)", "Assistant B", "Response B", "Answer B", "Summary B", "Option B"),
        -1,
        False,
        _PLAIN,
        "the second-shown candidate (B) is better",
    ),
    VerdictForm(
        "first",
        ("first", "1st", "the first", "first one", "Response 1", "Answer 1", "Summary 1"),
        1,
        False,
        _PLAIN,
        "the first candidate is better",
    ),
    VerdictForm(
        "second",
        ("second", "2nd", "the second", "second one", "Response 2", "Answer 2", "Summary 2"),
        -1,
        False,
        _PLAIN,
        "the second candidate is better",
    ),
    VerdictForm(
        "Output (a)",
        ("Output (a)", "Output (1)", "output_1", "Output 1"),
        1,
        False,
        "LLMBar; AlpacaEval function-calling judges ('Output (a)' / 'Output (b)')",
        "the first output is better",
    ),
    VerdictForm(
        "Output (b)",
        ("Output (b)", "Output (2)", "output_2", "Output 2"),
        -1,
        False,
        "LLMBar; AlpacaEval function-calling judges ('Output (a)' / 'Output (b)')",
        "the second output is better",
    ),
    VerdictForm(
        "model_a",
        ("model_a", "model a"),
        1,
        False,
        "Chatbot Arena / MT-Bench human judgments (winner column)",
        "model_a (the first model of the row) won",
    ),
    VerdictForm(
        "model_b",
        ("model_b", "model b"),
        -1,
        False,
        "Chatbot Arena / MT-Bench human judgments (winner column)",
        "model_b (the second model of the row) won",
    ),
    VerdictForm(
        "model_1",
        ("model_1",),
        1,
        False,
        "MT-Bench / FastChat judgment files (g1_winner / g2_winner, mapped back to the row)",
        "model_1 (the first model of the row) won",
    ),
    VerdictForm(
        "model_2",
        ("model_2",),
        -1,
        False,
        "MT-Bench / FastChat judgment files (g1_winner / g2_winner, mapped back to the row)",
        "model_2 (the second model of the row) won",
    ),
    VerdictForm(
        "m",
        ("m",),
        1,
        False,
        "AlpacaEval clf/logprob judges (model identifier m = output_1)",
        "m, the first output, is better",
        case_sensitive=True,
    ),
    VerdictForm(
        "M",
        ("M",),
        -1,
        False,
        "AlpacaEval clf/logprob judges (model identifier M = output_2)",
        "M, the second output, is better",
        case_sensitive=True,
    ),
    VerdictForm(
        "1",
        ("1", "1.0", "+1"),
        1,
        False,
        "1 / 2 / 0 codes: PandaLM, AlpacaEval preference, LLMBar winner, FastChat lmsys",
        "1: the first candidate is better",
    ),
    VerdictForm(
        "2",
        ("2", "2.0"),
        -1,
        False,
        "1 / 2 / 0 codes: PandaLM, AlpacaEval preference, LLMBar winner, FastChat lmsys",
        "2: the second candidate is better",
    ),
    VerdictForm(
        "0",
        ("0", "0.0", "1.5"),
        0,
        False,
        "1 / 2 / 0 codes (0 a tie); AlpacaEval preference 1.5 (and 0) a draw",
        "a tie",
    ),
    VerdictForm(
        "tie",
        (
            "tie",
            "Tie.",
            "tied",
            "draw",
            "equal",
            "same",
            "tie (bothbad)",
            "tie(bothbad)",
            "both bad",
            "both good",
            "neither",
        ),
        0,
        False,
        "PandaLM 'Tie'; Chatbot Arena 'tie' / 'tie (bothbad)'; plain ties",
        "a tie (neither is better)",
    ),
    # strength phrases (also after a subject: "A is much better", "Assistant B is
    # significantly better", "Response 1 is slightly worse than Response 2")
    VerdictForm(
        "much better",
        ("much better", "significantly better", "far better", "a lot better", "way better"),
        2,
        True,
        "five-level comparative scales (much better ... much worse); Arena-Hard's wording",
        "the first is much better",
    ),
    VerdictForm(
        "better",
        ("better", "slightly better", "somewhat better", "a bit better", "a little better"),
        1,
        True,
        "five-level comparative scales (much better ... much worse); Arena-Hard's wording",
        "the first is (slightly) better",
    ),
    VerdictForm(
        "about the same",
        (
            "about the same",
            "the same",
            "roughly the same",
            "relatively the same",
            "tie, relatively the same",
            "equally good",
            "as good",
            "neither better nor worse",
        ),
        0,
        True,
        "five-level comparative scales (much better ... much worse); Arena-Hard's wording",
        "about the same",
    ),
    VerdictForm(
        "worse",
        ("worse", "slightly worse", "somewhat worse", "a bit worse", "a little worse"),
        -1,
        True,
        "five-level comparative scales (much better ... much worse)",
        "the first is (slightly) worse",
    ),
    VerdictForm(
        "much worse",
        ("much worse", "significantly worse", "far worse", "a lot worse", "way worse"),
        -2,
        True,
        "five-level comparative scales (much better ... much worse)",
        "the first is much worse",
    ),
)

_PHRASES = frozenset(
    "much better|better|about the same|worse|much worse".split("|")
)  # names of the strength-phrase rows, the ones a subject may precede


def verdict_forms_table() -> pd.DataFrame:
    """:data:`VERDICT_FORMS` as a table (for documentation and the Data page's help).

    Returns
    -------
    pandas.DataFrame
        Columns ``form``, ``spellings`` (joined with " | "), ``grade``, ``graded``,
        ``source``, ``meaning``; one row per form, in the order of the vocabulary.
    """
    return pd.DataFrame(
        {
            "form": [f.name for f in VERDICT_FORMS],
            "spellings": [" | ".join(f.spellings) for f in VERDICT_FORMS],
            "grade": [f.grade for f in VERDICT_FORMS],
            "graded": [f.graded for f in VERDICT_FORMS],
            "source": [f.source for f in VERDICT_FORMS],
            "meaning": [f.meaning for f in VERDICT_FORMS],
        }
    )
