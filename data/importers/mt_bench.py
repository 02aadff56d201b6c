"""MT-Bench judgments (lm-sys/FastChat, ``fastchat/llm_judge``), read as published.

Files written by ``gen_judgment.py`` (records from ``common.py``):

- **pairwise**, ``data/mt_bench/model_judgment/<judge>_pair.jsonl``
  (``play_a_match_pair``): ``question_id``, ``model_1``, ``model_2``, ``g1_winner``,
  ``g2_winner``, ``judge`` (``[judge model, prompt name]``), ``g1_user_prompt``,
  ``g1_judgment``, ``g2_user_prompt``, ``g2_judgment``, ``turn`` (1, or 2 for the second
  turn of the conversation), ``tstamp``. Game 1 shows model_1 as Assistant A, game 2 shows
  model_2 as A; both winners are already mapped back to ``model_1`` / ``model_2`` /
  ``tie``, or ``error`` when the judgment held no ``[[A]]`` / ``[[B]]`` / ``[[C]]``. In
  ``pairwise-baseline`` mode model_2 is the baseline (``--baseline-model``, default
  ``gpt-3.5-turbo``) in every record.
- **single**, ``data/mt_bench/model_judgment/<judge>_single.jsonl``
  (``play_a_match_single``): ``question_id``, ``model``, ``judge``, ``user_prompt``,
  ``judgment``, ``score`` (the ``[[rating]]`` on 1–10; -1 when none was found), ``turn``,
  ``tstamp``.

Read into: one context per question and turn (``81/turn1``, ``81/turn2``), its text from
``question.jsonl`` when given (turn 2: both user turns); pairwise records become two
comparisons, one per game (``first_id`` the model shown as A; ``sample`` 0 for game 1, 1 for
game 2), each winner re-expressed from the slot's side (A / B / tie; ``error`` kept
unparsed) and ``raw`` the judgment; single records become ratings (prompt_id
``mt-bench-single``, the score, -1 unparsed). Judge: the judge model; the prompt names
(``pair-v2``, ``pair-math-v1``, ``single-v1-multi-turn``, ...) are listed in the notes.
Candidates: the models, with their answers from ``model_answer/<model>.jsonl`` when given
(``choices[0].turns[turn - 1]``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import pandas as pd

from data.importers._common import (
    NO_TEXTS_NOTE,
    Fields,
    Imported,
    ImportOptions,
    Record,
    as_id,
    base_name,
    flat_to_dataset,
    lines_where,
    read_records,
    sources_label,
)
from data.io.notes import grouped
from data.io.verdict_map import verdict_table
from data.schema import DataError, Dataset
from data.validate import validate_dataset

FORMAT_PAIR = "mt-bench-pair"
FORMAT_SINGLE = "mt-bench-single"
TITLE_PAIR = "MT-Bench pairwise judgments (FastChat llm_judge)"
TITLE_SINGLE = "MT-Bench single-answer grading (FastChat llm_judge)"
#: MT-Bench's rating scale (the single-v1 prompts: "a scale of 1 to 10").
SCALE = (1.0, 10.0)
PROMPT_ID = "mt-bench-single"
_SLOT = {  # game -> winner as FastChat writes it -> the verdict from the slots' side
    0: {"model_1": "A", "model_2": "B", "tie": "tie"},
    1: {"model_2": "A", "model_1": "B", "tie": "tie"},
}


def looks_like_pair(record: dict) -> bool:
    """An MT-Bench pairwise judgment record."""
    return all(k in record for k in ("question_id", "model_1", "model_2", "g1_winner"))


def looks_like_single(record: dict) -> bool:
    """An MT-Bench single-answer grading record."""
    return (
        all(k in record for k in ("question_id", "model", "score", "judge"))
        and ("judgment" in record or "turn" in record)
        and "games" not in record
    )


def looks_like_question(record: dict) -> bool:
    """An MT-Bench ``question.jsonl`` record."""
    return (
        "question_id" in record and isinstance(record.get("turns"), list) and ("category" in record)
    )


def looks_like_answer(record: dict) -> bool:
    """An MT-Bench ``model_answer/<model>.jsonl`` record."""
    return "question_id" in record and "model_id" in record and "choices" in record


def context_id(question_id: str, turn: int) -> str:
    """The context of a question's turn: ``"81/turn1"``."""
    return f"{question_id}/turn{turn}"


def _judge(f: Fields, rec: Record) -> tuple[str, str]:
    """(judge model, prompt name) of a record (``judge`` is a JSON list of the two)."""
    value = rec[2].get("judge")
    if isinstance(value, list | tuple) and value:
        return as_id(value[0]), as_id(value[1]) if len(value) > 1 else ""
    if isinstance(value, str) and value.strip():
        return value.strip(), ""
    f.bad(rec, "judge", "missing or not [judge model, prompt name]")
    return "", ""


def _turn(f: Fields, rec: Record) -> int | None:
    turn = rec[2].get("turn", 1)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn not in (1, 2):
        f.bad(rec, "turn", f"{turn!r} is not a turn (1 or 2)")
        return None
    return int(turn)


def _texts(
    companions: Mapping[str, bytes] | None, notes: list[str], max_bytes
) -> tuple[dict, dict]:
    """(questions: (qid, turn) -> text, answers: (model, qid, turn) -> text)."""
    questions: dict = {}
    answers: dict = {}
    for comp_name, data in (companions or {}).items():
        recs = read_records(comp_name, data, max_bytes=max_bytes)
        if recs and looks_like_question(recs[0][2]):
            for _src, _line, obj in recs:
                turns = [str(t) for t in obj.get("turns") or []]
                qid = as_id(obj["question_id"])
                for t in (1, 2):
                    if len(turns) >= t:
                        questions[(qid, t)] = (
                            turns[0] if t == 1 else f"Turn 1: {turns[0]}\n\nTurn 2: {turns[1]}"
                        )
        elif recs and looks_like_answer(recs[0][2]):
            for _src, _line, obj in recs:
                choices = obj.get("choices") or [{}]
                turns = choices[0].get("turns", []) if isinstance(choices[0], dict) else []
                for t, text in enumerate(turns, start=1):
                    answers[(as_id(obj["model_id"]), as_id(obj["question_id"]), t)] = str(text)
        else:
            notes.append(
                f"{base_name(comp_name)}: neither MT-Bench questions nor model answers; left out"
            )
    return questions, answers


def read_pair(
    files: Mapping[str, bytes],
    companions: Mapping[str, bytes] | None = None,
    options: ImportOptions | None = None,
    *,
    name: str = "mt-bench",
    max_bytes: float | None = None,
) -> Imported:
    """MT-Bench pairwise judgment files read into a Dataset (see the module docstring).

    Parameters
    ----------
    files : mapping of str to bytes
        ``<judge>_pair.jsonl`` files.
    companions : mapping of str to bytes, optional
        ``question.jsonl`` and ``model_answer/<model>.jsonl``: the texts.
    options : ImportOptions, optional
        Strength policy (MT-Bench verdicts have no strengths) and verdict map.
    name, max_bytes
        The Dataset's name; each file's size limit (default: the upload limit).

    Returns
    -------
    Imported
        ``baseline``: model_2 when it is the same in every record and there are at least two
        models against it (pairwise-baseline mode).

    Raises
    ------
    DataError
        A record without question_id, model_1, model_2, g1_winner, g2_winner or a judge,
        or with a turn other than 1 or 2, naming the file, line and field; everything a
        pairwise upload checks.
    """
    options = options or ImportOptions()
    rows: list[dict] = []
    prompts: Counter = Counter()
    notes: list[str] = []
    for file_name, data in files.items():
        source = base_name(file_name)
        f = Fields(source, "MT-Bench pairwise judgment")
        for rec in read_records(file_name, data, max_bytes=max_bytes):
            obj = rec[2]
            qid = f.need(rec, "question_id", (str, int), "a question id")
            m1 = f.need(rec, "model_1", (str,), "the first model (text)")
            m2 = f.need(rec, "model_2", (str,), "the second model (text)")
            winners = [
                f.need(rec, k, (str,), "a winner (model_1, model_2, tie or error)")
                for k in ("g1_winner", "g2_winner")
            ]
            judge, prompt = _judge(f, rec)
            turn = _turn(f, rec)
            if None in (qid, m1, m2, turn, *winners):
                continue
            prompts[prompt] += 1
            from_scores = "m1_score" in obj  # a "single" judge's pair: no order, one verdict
            for game in (0,) if from_scores else (0, 1):
                first, second = (m1, m2) if game == 0 else (m2, m1)
                winner = winners[game]
                rows.append(
                    {
                        "context_id": context_id(as_id(qid), turn),
                        "first_system": as_id(first),
                        "second_system": as_id(second),
                        "winner": _SLOT[game].get(winner, winner),
                        "judge": judge,
                        "sample": game,
                        "raw": str(obj.get(f"g{game + 1}_judgment") or ""),
                        "_q": as_id(qid),
                        "_turn": turn,
                        "_m2": as_id(m2),
                        "_m1": as_id(m1),
                        "_file": source,
                        "_line": rec[1],
                    }
                )
            if from_scores:
                notes.append(
                    f"{source}, line {rec[1]}: a pair judged by single-answer scores "
                    "(m1_score, m2_score): one comparison, no presentation order"
                )
        f.raise_if_any()
    if not rows:
        raise DataError(f"{', '.join(map(base_name, files))}: no judgment records")
    flat = pd.DataFrame(rows)
    where = lines_where(flat["_file"].tolist(), flat["_line"].tolist())
    questions, answers = _texts(companions, notes, max_bytes)
    if questions:
        flat["context_text"] = [
            questions.get((q, t), "") for q, t in zip(flat["_q"], flat["_turn"], strict=True)
        ]
    if answers:
        for side in ("first", "second"):
            flat[f"{side}_text"] = [
                answers.get((s, q, t), "")
                for s, q, t in zip(flat[f"{side}_system"], flat["_q"], flat["_turn"], strict=True)
            ]
    errors = np.flatnonzero(flat["winner"].eq("error").to_numpy())
    ds, read_notes = flat_to_dataset(flat, "winner", options, name=name, files=files)
    m2s = set(flat["_m2"])
    baseline = next(iter(m2s)) if len(m2s) == 1 and flat["_m1"].nunique() >= 2 else None
    head = [
        f"Read as {TITLE_PAIR}: {flat['_line'].size:,} comparison(s), two games per record; "
        "game 1 shows model_1 as Assistant A (sample 0), game 2 model_2 (sample 1); each "
        "winner is re-expressed from the slot's side (A / B / tie)",
        f"Judge prompts: {', '.join(f'{p} ({n})' for p, n in prompts.most_common())} — read "
        f"as one judge per judge model ({', '.join(map(repr, pd.unique(flat['judge'])))})",
    ]
    if baseline:
        head.append(
            f"Baseline: '{baseline}' (model_2 of every record: gen_judgment's "
            "pairwise-baseline mode)"
        )
    if len(errors):
        head.append(
            f"{len(errors)} game(s) ended in 'error' (FastChat found no [[A]], [[B]] or [[C]]): "
            "kept as unparsed comparisons — " + where(errors)
        )
    if not companions:
        head.append(NO_TEXTS_NOTE)
    if len(errors) and set(flat.loc[~flat["winner"].isin(["A", "B", "tie"]), "winner"]) == {
        "error"
    }:
        # the note above says it in MT-Bench's words
        read_notes = [n for n in read_notes if "not understood" not in n]
    return Imported(
        dataset=ds,
        format=FORMAT_PAIR,
        title=TITLE_PAIR,
        notes=head + notes + read_notes,
        baseline=baseline,
        verdicts=verdict_table({"winner": flat["winner"]}, options.verdict_map),
    )


def read_single(
    files: Mapping[str, bytes],
    companions: Mapping[str, bytes] | None = None,
    options: ImportOptions | None = None,
    *,
    name: str = "mt-bench",
    max_bytes: float | None = None,
) -> Imported:
    """MT-Bench single-answer grading files read into ratings (see the module docstring).

    Parameters
    ----------
    files : mapping of str to bytes
        ``<judge>_single.jsonl`` files.
    companions : mapping of str to bytes, optional
        ``question.jsonl`` and ``model_answer/<model>.jsonl``: the texts.
    options : ImportOptions, optional
        Not used by ratings (no verdicts).
    name, max_bytes
        The Dataset's name; each file's size limit (default: the upload limit).

    Returns
    -------
    Imported
        Ratings: one per record (attribute ``overall``, prompt_id ``mt-bench-single``,
        sample 0; the same question, turn, model and judge twice: samples 0, 1, ...), score
        NaN for -1 (no rating found) or a score off the 1–10 scale, ``raw`` the judgment;
        ``scales`` {"overall": (1, 10)}.

    Raises
    ------
    DataError
        A record without question_id, model, score or judge, a score that is not a number,
        a turn other than 1 or 2, naming the file, line and field.
    """
    rows: list[dict] = []
    prompts: Counter = Counter()
    notes: list[str] = []
    for file_name, data in files.items():
        source = base_name(file_name)
        f = Fields(source, "MT-Bench single judgment")
        for rec in read_records(file_name, data, max_bytes=max_bytes):
            obj = rec[2]
            qid = f.need(rec, "question_id", (str, int), "a question id")
            model = f.need(rec, "model", (str,), "the model graded (text)")
            score = f.need(rec, "score", (int, float), "a number (the [[rating]], or -1)")
            judge, prompt = _judge(f, rec)
            turn = _turn(f, rec)
            if None in (qid, model, score, turn):
                continue
            prompts[prompt] += 1
            rows.append(
                {
                    "context_id": context_id(as_id(qid), turn),
                    "candidate_id": as_id(model),
                    "attribute": "overall",
                    "judge": judge,
                    "prompt_id": PROMPT_ID,
                    "score": float(score),
                    "raw": str(obj.get("judgment") or ""),
                    "_q": as_id(qid),
                    "_turn": turn,
                    "_file": source,
                    "_line": rec[1],
                }
            )
        f.raise_if_any()
    if not rows:
        raise DataError(f"{', '.join(map(base_name, files))}: no judgment records")
    flat = pd.DataFrame(rows)
    where = lines_where(flat["_file"].tolist(), flat["_line"].tolist())
    off = ~flat["score"].between(*SCALE)
    unparsed = np.flatnonzero(off.to_numpy())
    flat.loc[off, "score"] = np.nan
    keys = ["context_id", "candidate_id", "attribute", "judge", "prompt_id"]
    flat["sample"] = flat.groupby(keys, sort=False).cumcount()
    questions, answers = _texts(companions, notes, max_bytes)
    ratings = flat[[*keys, "sample", "score", "raw"]]
    cand = flat[["context_id", "candidate_id", "_q", "_turn"]].drop_duplicates(
        ["context_id", "candidate_id"]
    )
    cand = pd.DataFrame(
        {
            "context_id": cand["context_id"],
            "candidate_id": cand["candidate_id"],
            "system": cand["candidate_id"],
            "text": [
                answers.get((m, q, t), "")
                for m, q, t in zip(cand["candidate_id"], cand["_q"], cand["_turn"], strict=True)
            ],
        }
    )
    tables = {"ratings": ratings, "candidates": cand}
    if questions:
        ctx = flat[["context_id", "_q", "_turn"]].drop_duplicates("context_id")
        tables["contexts"] = pd.DataFrame(
            {
                "context_id": ctx["context_id"],
                "text": [
                    questions.get((q, t), "") for q, t in zip(ctx["_q"], ctx["_turn"], strict=True)
                ],
            }
        )
    source = sources_label(files)
    ds = validate_dataset(
        Dataset(name=name, scales={"overall": SCALE}, source=source, **tables),
        sources={t: source for t in tables},
    )
    head = [
        f"Read as {TITLE_SINGLE}: {len(flat):,} rating(s) of {flat['candidate_id'].nunique()} "
        "model(s) on 1–10 (attribute 'overall', prompt_id 'mt-bench-single')",
        f"Judge prompts: {', '.join(f'{p} ({n})' for p, n in prompts.most_common())} — read "
        f"as one prompt per judge model ({', '.join(map(repr, pd.unique(flat['judge'])))})",
    ]
    if len(unparsed):
        head.append(
            f"{len(unparsed)} score(s) are -1 (FastChat found no [[rating]]) or off the 1–10 "
            "scale: kept as unparsed ratings (score NaN, the judgment in 'raw')"
        )
        head.extend(grouped(["score -1 or off the scale"] * len(unparsed), unparsed, where))
    if not companions:
        head.append(NO_TEXTS_NOTE)
    return Imported(dataset=ds, format=FORMAT_SINGLE, title=TITLE_SINGLE, notes=head + notes)
