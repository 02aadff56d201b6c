"""LLMBar (Zeng et al., ICLR 2024, "Evaluating Large Language Models at Evaluating
Instruction Following"): 885 instruction-following pairs whose better output is known, and the
authors' released verdicts of six LLM judges under five prompting strategies, both orders.

The files are read as the repository publishes them (princeton-nlp/LLMBar, ``Dataset/``):
``<subset>/dataset.json`` (``input``, ``output_1``, ``output_2``, ``label`` 1 or 2) and
``<subset>/evaluators/<judge>/<strategy>/result.json`` (the same items, each with the judge's
verdict in both presentation orders: ``"swap = False"`` shows output_1 first, ``"swap = True"``
output_2 first; ``winner`` is always in the ORIGINAL indexing, null when the authors could not
parse the answer). ``statistics.json`` beside each result holds the authors' own counts; the
reproduction (``data.reproduce.zeng2024``) checks them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from data.benchmarks import _common as c
from data.benchmarks._sources import files_under
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

SET = "llmbar"
ROOT = f"{SET}/Dataset/"
#: The subsets, as folders under ``Dataset/`` (the report card's categories).
SUBSETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
    "Processed/MT-Bench",
    "Processed/FairEval",
    "Processed/LLMEval^2",
)
#: The prompting strategies whose outputs the data folder keeps; Rating* score each output
#: on its own (``score_1``, ``score_2``) and derive the winner of both orders from the scores.
STRATEGIES = ("Vanilla", "Vanilla_NoRules", "CoT", "Rating", "Rating_NoRules")
RATING_STRATEGIES = ("Rating", "Rating_NoRules")
ATTRIBUTE = "overall"
#: The human verdict of every pair (the dataset's ``label``): the known correct answer.
GOLD_JUDGE = f"{HUMAN_JUDGE_PREFIX}gold"
#: Candidate ids of every context: the two outputs as the dataset names them.
CANDIDATES = ("output_1", "output_2")
_ORDERS = ("swap = False", "swap = True")


def files() -> tuple[str, ...]:
    """Every file of the set: the 8 ``dataset.json``, and each evaluator's ``result.json``
    and ``statistics.json``.

    Returns
    -------
    tuple of str
        Relpaths under the data folder, sorted (from ``checksums.json``).
    """
    return files_under(ROOT)


def dataset_file(subset: str) -> str:
    """The relpath of a subset's ``dataset.json``."""
    return f"{ROOT}{subset}/dataset.json"


def evaluator_of(relpath: str) -> tuple[str, str, str, str] | None:
    """(subset, judge model, strategy, file name) of an evaluator file, else None.

    Parameters
    ----------
    relpath : str
        ``llmbar/Dataset/<subset>/evaluators/<judge>/<strategy>/<file>``.
    """
    if not relpath.startswith(ROOT) or "/evaluators/" not in relpath:
        return None
    head, _, tail = relpath[len(ROOT) :].partition("/evaluators/")
    parts = tail.split("/")
    if len(parts) != 3:
        return None
    return head, parts[0], parts[1], parts[2]


def judge_name(model: str, strategy: str) -> str:
    """The ``judge`` of a model's verdicts under a strategy (``"GPT-4/Vanilla_NoRules"``)."""
    return f"{model}/{strategy}"


def context_id(subset: str, index: int) -> str:
    """``"<subset>/<index in dataset.json, 3 digits>"``: ``"LLMBar/Natural/007"``."""
    return f"{subset}/{index:03d}"


def _winner(value, path: Path, i: int, order: str) -> str | None:
    if value is None:
        return None
    if str(value) not in ("1", "2"):
        raise DataError(f"{path}, item {i}, {order!r}: winner {value!r} is not '1', '2' or null")
    return str(value)


def _score(value) -> str:
    """A Rating strategy's raw score: the completion text of ``[text, finish_reason]``."""
    if isinstance(value, list) and value:
        return str(value[0])
    return str(value)


def load(files: dict[str, Path]) -> Dataset:
    """The 885 gold pairs and every released verdict, in both orders.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. One context per pair, id ``"<subset>/<index>"`` (text: the
        instruction); candidates ``output_1`` and ``output_2`` (no systems: the models that
        wrote them are not released); comparisons on attribute ``"overall"``:

        - ``human:gold``, one per pair, output_1 shown first, A when ``label`` is 1, B when
          it is 2 (the known correct answer; raw ``"label 1"``);
        - ``<judge>/<strategy>`` (``"GPT-4/CoT"``), two per pair: output_1 first
          (``swap = False``) and output_2 first (``swap = True``), the published winner
          turned into the verdict of that order (A: the output shown first won), NaN when
          the winner is null; raw is the judge's completion (Rating strategies: the two
          scores, which decide both orders, a tie going to the output shown second).

    Raises
    ------
    DataError
        Malformed JSON; a label other than 1 or 2; a result file whose items differ from
        its subset's dataset (count, instruction, outputs or label); a winner other than
        "1", "2" or null.
    """
    ctx = defaultdict(list)
    cand = defaultdict(list)
    judged: list[tuple] = []  # (context, judge, first, second, verdict, raw)
    items_of: dict[str, list[dict]] = {}

    for subset in SUBSETS:
        rel = dataset_file(subset)
        if rel not in files:
            continue
        items = c.read_json(files[rel])
        items_of[subset] = items
        for i, item in enumerate(items):
            label = item.get("label")
            if label not in (1, 2):
                raise DataError(f"{files[rel]}, item {i}: label {label!r} is not 1 or 2")
            cid = context_id(subset, i)
            ctx["context_id"].append(cid)
            ctx["text"].append(item["input"])
            for k, name in enumerate(CANDIDATES, start=1):
                cand["context_id"].append(cid)
                cand["candidate_id"].append(name)
                cand["text"].append(item[f"output_{k}"])
            judged.append(
                (cid, GOLD_JUDGE, *CANDIDATES, "A" if label == 1 else "B", f"label {label}")
            )

    judges = set()
    n_unparsed = 0
    for rel in sorted(files):
        where = evaluator_of(rel)
        if where is None or where[3] != "result.json":
            continue
        subset, model, strategy, _ = where
        if subset not in items_of:
            raise DataError(f"{files[rel]}: no dataset.json of subset {subset!r} to match it")
        path = files[rel]
        results = c.read_json(path)
        items = items_of[subset]
        if len(results) != len(items):
            raise DataError(
                f"{path}: {len(results)} items, but {dataset_file(subset)} has {len(items)}"
            )
        judge = judge_name(model, strategy)
        judges.add(judge)
        rating = strategy in RATING_STRATEGIES
        for i, (res, item) in enumerate(zip(results, items, strict=True)):
            if any(res.get(k) != item.get(k) for k in ("input", "output_1", "output_2", "label")):
                raise DataError(
                    f"{path}, item {i}: the instruction, outputs or label differ from "
                    f"{dataset_file(subset)}; the files come from different versions"
                )
            final = res["results"][-1]
            cid = context_id(subset, i)
            scores = ""
            if rating:
                scores = (
                    f"score_1 = {_score(final.get('score_1'))}, "
                    f"score_2 = {_score(final.get('score_2'))} (each output rated on its own)"
                )
            for order, (first, second) in zip(_ORDERS, (CANDIDATES, CANDIDATES[::-1]), strict=True):
                out = final.get(order) or {}
                winner = _winner(out.get("winner"), path, i, order)
                # winner is in the original indexing: "1" is output_1 whichever is shown first
                verdict = None if winner is None else ("A" if f"output_{winner}" == first else "B")
                n_unparsed += verdict is None
                completion = out.get("completion")
                raw = scores or (_score(completion) if completion is not None else "")
                judged.append((cid, judge, first, second, verdict, raw))

    n_pairs = len(ctx["context_id"])
    return Dataset(
        name=SET,
        contexts=c.table("contexts", ctx),
        candidates=c.table("candidates", cand),
        comparisons=c.judged_pairs(judged, ATTRIBUTE),
        description=(
            f"LLMBar (Zeng et al., ICLR 2024): {n_pairs} instruction-following pairs whose "
            "better output is known (the human verdict, judge 'human:gold'): LLMBar's Natural "
            "set and its four Adversarial sets (Neighbor, GPTInst, GPTOut, Manual), and the "
            "authors' processed samples of MT-Bench, FairEval and LLMEval². Context = the "
            "instruction, id '<subset>/<index>' (the subset is the report card's category); "
            "candidates 'output_1' and 'output_2' (no systems). "
            f"{len(judges)} released judges '<model>/<strategy>' (GPT-4, ChatGPT, ChatGPT-0301, "
            "LLaMA2, PaLM2, Falcon under Vanilla, Vanilla_NoRules, CoT, Rating, "
            "Rating_NoRules), each pair in both orders (output_1 first, then output_2 first); "
            f"{n_unparsed} verdicts the authors could not parse are NaN. Rating strategies "
            "score each output on its own, and a tie goes to the output shown second."
        ),
        source=(
            "princeton-nlp/LLMBar@900616b Dataset/ (MIT); the processed sets derive from "
            "MT-Bench human judgments, FairEval and LLMEval²."
        ),
    )


def subset_of(context: str) -> str:
    """The subset of a context id (``"LLMBar/Natural/007"`` -> ``"LLMBar/Natural"``)."""
    return str(context).rpartition("/")[0]


def statistics_files() -> dict[tuple[str, str, str], str]:
    """(subset, model, strategy) -> relpath of the authors' ``statistics.json``.

    Returns
    -------
    dict
        In :func:`files` order.
    """
    out = {}
    for rel in files():
        where = evaluator_of(rel)
        if where is not None and where[3] == "statistics.json":
            out[where[:3]] = rel
    return out
