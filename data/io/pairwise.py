"""The pairwise-verdict layout: one row per judged pair, with the pair's context and the two
candidates (ids, systems, texts), a judge's verdict or probability, and a human verdict.

A :class:`PairwiseMapping` names the column of each role; :func:`guess_pairwise` guesses it
from a file's headers and cells and says why (``data.io.pairwise_guess``), and
:func:`data.io.pairwise_tables.pairwise_to_dataset` turns the file into contexts,
candidates and comparisons (``pairwise_to_comparisons`` gives the comparisons alone).

Candidate ids come from the id columns; without them from the system columns (model names
are the ids, as in Arena files: ``model_a``, ``model_b``); without those from a short hash
of the candidate texts (``text-1a2b3c4d``). A context id likewise comes from its column, else
from a hash of the context text (``ctx-1a2b3c4d``), else every row shares
``default_context``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from data.io.columns import find_alias
from data.parsing import STRENGTH_POLICIES

#: Verdict spellings of the simplest pairwise files (compared case-insensitively); the full
#: vocabulary of the field's formats (``A>>B``, ``[[A=B]]``, ``model_a``, ``m``/``M``, ...)
#: is read by ``data.parsing`` (see ``data.io.verdict_map``).
VERDICT_SPELLINGS = {
    "a": "A",
    "1": "A",
    "1.0": "A",
    "first": "A",
    "b": "B",
    "2": "B",
    "2.0": "B",
    "second": "B",
    "tie": "tie",
    "0": "tie",
    "0.0": "tie",
    "draw": "tie",
    "equal": "tie",
}


@dataclass(frozen=True)
class PairwiseMapping:
    """Columns of a pairwise-verdict table: one row per judged ordered pair (per sample).

    The first candidate was shown first (slot A). Each side needs an id, a system or a text
    column (the candidate id comes from the first of these the mapping names); the file
    needs a verdict, a probability or a human verdict column.

    Parameters
    ----------
    first, second : str, optional
        Columns of the ids of the candidates shown first and second.
    verdict : str, optional
        Column of the judge's verdicts, read with the verdict vocabulary (A / B / tie,
        ``A>>B``, ``[[A=B]]``, ``model_a``, 1 / 2 / 0, ...: ``data.parsing``); a graded verdict
        keeps its grade (-2..+2) and counts as ``strength`` says.
    probability : str, optional
        Column of P(first is better), between 0 and 1 (taken over the verdict's p_first).
    context_id : str, optional
        Column of the context id; without it the context text's hash, else
        ``default_context``.
    attribute, judge : str, optional
        Columns of the attribute and judge; without one, every row takes the default below.
    sample : str, optional
        Column numbering repeated answers (a sample, or a game as in Arena-Hard's two
        games); without it, repeated rows of the same pair become samples 0, 1, 2, ... in
        file order.
    raw : str, optional
        Column of the judge's raw answer (else the verdict as written is kept).
    context_text : str, optional
        Column of the context (instruction, prompt, question): the contexts table.
    first_text, second_text : str, optional
        Columns of the two candidates' texts: the candidates table.
    first_system, second_system : str, optional
        Columns of the two candidates' systems (``model_a``, ``model_b``): the candidates'
        ``system``, and their ids when no id column is given.
    human_verdict : str, optional
        Column of a human (gold) verdict on the same pair, read with the same vocabulary:
        one more comparison per row, by judge ``human:<annotator>`` (the
        ``data.schema.HUMAN_JUDGE_PREFIX`` convention every page reads as human labels).
    weight : str, optional
        Column of each row's weight: a positive number of games the row counts for (default
        1); multiplied by the strength policy's weight.
    default_context, default_attribute, default_judge : str
        Values used when the column is not given.
    annotator : str
        Who gave the human verdicts: their comparisons' judge is ``human:<annotator>``.
    verdict_map : mapping of str to int, str or None
        The user's reading of verdict values, overriding the vocabulary: a value as written
        (stripped) -> its grade (-2..+2; 0 = tie), ``"A"`` / ``"B"`` / ``"tie"``, or None
        (not understood: kept unparsed). See :func:`data.parsing.read_verdict_value`.
    strength : str
        How a graded verdict counts (``data.parsing.STRENGTH_POLICIES``): ``"weight"`` (a
        strong verdict is one win weighing 3, Arena-Hard's rule), ``"probability"`` (p_first
        1 / .75 / .5 / .25 / 0) or ``"collapse"`` (a win is a win).
    """

    first: str | None = None
    second: str | None = None
    verdict: str | None = None
    probability: str | None = None
    context_id: str | None = None
    attribute: str | None = None
    judge: str | None = None
    sample: str | None = None
    raw: str | None = None
    context_text: str | None = None
    first_text: str | None = None
    second_text: str | None = None
    first_system: str | None = None
    second_system: str | None = None
    human_verdict: str | None = None
    weight: str | None = None
    default_context: str = "all"
    default_attribute: str = "overall"
    default_judge: str = "uploaded"
    annotator: str = "gold"
    verdict_map: Mapping[str, int | str | None] = field(default_factory=dict)
    strength: str = "weight"

    def __post_init__(self):
        if self.strength not in STRENGTH_POLICIES:
            raise ValueError(
                f"unknown strength policy {self.strength!r}; expected one of "
                f"{', '.join(STRENGTH_POLICIES)}"
            )
        object.__setattr__(self, "verdict_map", dict(self.verdict_map or {}))

    def side(self, which: str) -> tuple[str, str] | None:
        """(role, column) the candidate ids of side ``"first"`` or ``"second"`` come from:
        the id column, else the system column, else the text column; None without any."""
        for role in (which, f"{which}_system", f"{which}_text"):
            if getattr(self, role) is not None:
                return role, getattr(self, role)
        return None


#: Role (a column field of PairwiseMapping) -> its aliases, most specific first.
PAIR_ROLES: dict[str, tuple[str, ...]] = {
    "first": ("first_id", "first", "a", "candidate_a", "first_candidate", "id_a", "candidate_1"),
    "second": (
        "second_id",
        "second",
        "b",
        "candidate_b",
        "second_candidate",
        "id_b",
        "candidate_2",
    ),
    "first_system": (
        "model_a",
        "system_a",
        "model_1",
        "system_1",
        "generator_1",
        "generator_a",
        "first_model",
        "first_system",
        "model1",
    ),
    "second_system": (
        "model_b",
        "system_b",
        "model_2",
        "system_2",
        "generator_2",
        "generator_b",
        "second_model",
        "second_system",
        "model2",
    ),
    "first_text": (
        "first_text",
        "output_1",
        "output_a",
        "response_a",
        "response_1",
        "answer_a",
        "answer_1",
        "completion_a",
        "completion_1",
        "text_a",
        "text_1",
        "output1",
        "response1",
    ),
    "second_text": (
        "second_text",
        "output_2",
        "output_b",
        "response_b",
        "response_2",
        "answer_b",
        "answer_2",
        "completion_b",
        "completion_2",
        "text_b",
        "text_2",
        "output2",
        "response2",
    ),
    "verdict": (
        "verdict",
        "winner",
        "judge_verdict",
        "judge_label",
        "prediction",
        "choice",
        "preference",
    ),
    "human_verdict": (
        "human_verdict",
        "human_label",
        "human_preference",
        "human_winner",
        "gold",
        "gold_label",
        "label",
        "human",
    ),
    "probability": ("p_first", "probability", "prob", "p", "p_a", "prob_a"),
    "context_id": (
        "context_id",
        "context",
        "question_id",
        "uid",
        "qid",
        "prompt_id",
        "doc_id",
        "document_id",
        "item_id",
        "story_id",
        "instance_id",
        "example_id",
    ),
    "context_text": (
        "context_text",
        "instruction",
        "prompt",
        "input",
        "question",
        "turns",
        "query",
        "source_text",
        "document",
        "source",
    ),
    "attribute": ("attribute", "aspect", "criterion"),
    "judge": ("judge", "evaluator", "judge_model", "judge_name"),
    "weight": ("weight", "weights"),
    "sample": ("sample", "sample_id", "game", "games", "round"),
    "raw": (
        "raw",
        "raw_output",
        "output_text",
        "judgment",
        "judgement",
        "raw_completion",
        "judge_output",
        "rationale",
        "explanation",
    ),
}

#: What each role is called in sentences.
ROLE_LABELS = {
    "first": "first candidate id",
    "second": "second candidate id",
    "first_system": "first system",
    "second_system": "second system",
    "first_text": "first candidate text",
    "second_text": "second candidate text",
    "verdict": "judge verdict",
    "human_verdict": "human verdict",
    "probability": "probability",
    "context_id": "context id",
    "context_text": "context text",
    "attribute": "attribute",
    "judge": "judge",
    "weight": "weight",
    "sample": "sample (game)",
    "raw": "raw answer",
}


def roles_by_name(columns) -> dict[str, str | None]:
    """Each role's column found by its aliases among the headers (None where none is)."""
    cols = list(columns)
    found: dict[str, str | None] = {}
    for role, aliases in PAIR_ROLES.items():
        found[role] = find_alias(cols, aliases, taken=[c for c in found.values() if c])
    return found


def complete(roles: Mapping[str, str | None]) -> bool:
    """Whether ``roles`` give both sides a candidate and the file something to read."""
    sides = all(
        any(roles.get(r) for r in (side, f"{side}_system", f"{side}_text"))
        for side in ("first", "second")
    )
    return sides and any(roles.get(r) for r in ("verdict", "probability", "human_verdict"))


def describe_pairwise(mapping: PairwiseMapping) -> str:
    """One sentence naming the column of each role of ``mapping`` and the defaults used.

    Parameters
    ----------
    mapping : PairwiseMapping
        The mapping to describe.

    Returns
    -------
    str
        ``"read as a pairwise-verdict table: context id = 'question_id', first system =
        'model_a', ..., attribute 'overall' for every row"``.
    """
    parts = [
        f"{ROLE_LABELS[role]} = '{getattr(mapping, role)}'"
        for role in ROLE_LABELS
        if getattr(mapping, role) is not None
    ]
    for role in ("attribute", "judge"):
        if getattr(mapping, role) is None and (
            role == "attribute" or mapping.verdict or mapping.probability
        ):
            parts.append(f"{role} '{getattr(mapping, f'default_{role}')}' for every row")
    if mapping.human_verdict is not None:
        parts.append(f"human verdicts by 'human:{mapping.annotator}'")
    return "read as a pairwise-verdict table: " + ", ".join(parts)
