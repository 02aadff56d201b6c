"""Arena-Hard-Auto judgments (lmarena/arena-hard-auto), read as published.

Files: ``data/<bench>/model_judgment/<judge>/<model>.jsonl``, one line per question judged
for one model against the baseline, written by ``gen_judgment.py``. Two record shapes:

- **v2.0** (and the 2025 re-release of v0.1): ``uid``, ``category``, ``judge``, ``model``,
  ``baseline``, ``games``: a list of two ``{"score", "judgment": {"answer", ...},
  "prompt"}``;
- **v0.1** (2024): ``question_id``, ``model``, ``judge`` (absent in the first release),
  ``games``: a list of two ``{"user_prompt", "judgment", "score"}``; the baseline is not in
  the record (``baseline_model: gpt-4-0314`` in ``config/judge_config.yaml``).

The two games: game 1 shows the **baseline as Assistant A** and the model as B; game 2 swaps
them (``gen_judgment.py``: round 1 ``baseline=baseline, answer=answer``, round 2 the other
way; ``show_result.py`` scores game 2's label as is and game 1's as ``1 - score``, both from
the model's side). A game's ``score`` is the label the judge ended with (``A>>B``, ``A>B``,
``A=B``, ``B>A``, ``B>>A``), or null when none was found; a game may itself be null (the API
call failed).

Read into: one comparison per game (``first_id`` the system shown as A, ``sample`` the game
minus 1: 0 for game 1, 1 for game 2), the label read with the verdict vocabulary (grade
kept; p_first and weight by the strength policy: Arena-Hard's ``weight`` counts a strong
verdict 3 times, as ``show_result.py`` repeats it), ``raw`` the judgment text; a game with no
score is kept unparsed (arena-hard-auto drops it). Contexts: one per question (``uid`` /
``question_id``), its text from ``question.jsonl`` when given. Candidates: the model and the
baseline per question, with their answers from ``model_answer/<model>.jsonl`` when given
(v2.0: ``messages[-1].content.answer``; v0.1: ``choices[0].turns[0].content``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

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
    join_texts,
    lines_where,
    parent_name,
    read_records,
)
from data.io.notes import named
from data.io.verdict_map import verdict_table
from data.schema import DataError

FORMAT = "arena-hard"
TITLE = "Arena-Hard-Auto judgments"
#: The baseline of Arena-Hard v0.1 (config/judge_config.yaml ``baseline_model``), for records
#: that do not name theirs.
V01_BASELINE = "gpt-4-0314"


def looks_like(record: dict) -> bool:
    """Whether a record is an Arena-Hard judgment line."""
    return (
        isinstance(record.get("games"), list)
        and "model" in record
        and ("uid" in record or "question_id" in record)
    )


def looks_like_question(record: dict) -> bool:
    """An Arena-Hard question (``question.jsonl``) record."""
    return ("uid" in record and "prompt" in record) or (
        "question_id" in record and "turns" in record and "cluster" in record
    )


def looks_like_answer(record: dict) -> bool:
    """An Arena-Hard model answer (``model_answer/<model>.jsonl``) record."""
    return ("messages" in record and "model" in record and "uid" in record) or (
        "choices" in record and "model_id" in record and "question_id" in record
    )


def _question_id(f: Fields, rec: Record):
    obj = rec[2]
    key = "uid" if "uid" in obj else "question_id"
    value = f.need(rec, key, (str, int), "a question id ('uid' or 'question_id')")
    return None if value is None else as_id(value)


def _game(f: Fields, rec: Record, k: int, game) -> tuple[str | None, str]:
    """(score label or None, judgment text) of game ``k`` (0-based) of a record."""
    if game is None:
        return None, ""
    if not isinstance(game, dict):
        f.bad(rec, "games", f"game {k + 1} is {type(game).__name__}, not an object or null")
        return None, ""
    score = game.get("score")
    if score is not None and not isinstance(score, str | int | float):
        f.bad(rec, "games", f"game {k + 1}'s 'score' is not a label such as 'A>B' or null")
        score = None
    judgment = game.get("judgment", "")
    if isinstance(judgment, dict):  # v2.0: the completion's output {"answer": ..., ...}
        judgment = judgment.get("answer") or ""
    return (None if score is None else str(score)), str(judgment or "")


def questions_of(records: Sequence[Record]) -> dict[str, str]:
    """Question id -> text, from ``question.jsonl`` records (v2.0 ``prompt``, v0.1
    ``turns``)."""
    out: dict[str, str] = {}
    for rec in records:
        obj = rec[2]
        qid = obj.get("uid", obj.get("question_id"))
        if qid is None:
            continue
        if "prompt" in obj:
            out[as_id(qid)] = str(obj["prompt"])
        elif isinstance(obj.get("turns"), list):
            turns = [t.get("content", "") if isinstance(t, dict) else t for t in obj["turns"]]
            out[as_id(qid)] = join_texts(turns)
    return out


def answers_of(records: Sequence[Record]) -> dict[tuple[str, str], str]:
    """(model, question id) -> answer text, from model answer records (the last line of a
    question wins, as arena-hard-auto's ``load_model_answers`` keeps it)."""
    out: dict[tuple[str, str], str] = {}
    for rec in records:
        obj = rec[2]
        if "messages" in obj:
            model, qid = obj.get("model"), obj.get("uid")
            msgs = obj.get("messages") or []
            content = msgs[-1].get("content") if msgs and isinstance(msgs[-1], dict) else None
            text = content.get("answer") if isinstance(content, dict) else content
        else:
            model, qid = obj.get("model_id"), obj.get("question_id")
            choices = obj.get("choices") or [{}]
            turns = choices[0].get("turns", []) if isinstance(choices[0], dict) else []
            text = join_texts(t.get("content", "") if isinstance(t, dict) else t for t in turns)
        if model is not None and qid is not None and text is not None:
            out[(as_id(model), as_id(qid))] = str(text)
    return out


def read(
    files: Mapping[str, bytes],
    companions: Mapping[str, bytes] | None = None,
    options: ImportOptions | None = None,
    *,
    name: str = "arena-hard",
    max_bytes: float | None = None,
) -> Imported:
    """Arena-Hard judgment files (and, optionally, its question and answer files) read into
    a Dataset.

    Parameters
    ----------
    files : mapping of str to bytes
        Judgment files, ``model_judgment/<judge>/<model>.jsonl`` (the name's folder names
        the judge when the records do not).
    companions : mapping of str to bytes, optional
        ``question.jsonl`` and ``model_answer/<model>.jsonl`` files: the texts.
    options : ImportOptions, optional
        Strength policy (default ``"weight"``, Arena-Hard's), verdict map, baseline for
        records that do not name one (default ``gpt-4-0314``), judge name.
    name, max_bytes
        The Dataset's name; each file's size limit (default: the upload limit).

    Returns
    -------
    Imported
        See the module docstring for what goes where; ``baseline`` the baseline system
        (the most common one when categories have different baselines).

    Raises
    ------
    DataError
        A record without a question id, model or games list, a game that is not an object
        or null, naming the file, line and field; everything a pairwise upload checks.
    """
    options = options or ImportOptions()
    notes: list[str] = []
    assumed_baseline = False
    judges_from_path = False
    # (file, question, model, judge) -> that record's games; a re-run replaces them (the
    # last judgment is kept, as a re-read answer file keeps its last line)
    games_of: dict[tuple, list[tuple]] = {}
    line_of: dict[tuple, int] = {}
    shapes: Counter = Counter()
    for file_name, data in files.items():
        records = read_records(file_name, data, max_bytes=max_bytes)
        source = base_name(file_name)
        f = Fields(source, "Arena-Hard judgment")
        for rec in records:
            obj = rec[2]
            qid = _question_id(f, rec)
            model = f.need(rec, "model", (str,), "the model judged (text)")
            games = f.need(rec, "games", (list,), "a list of two games")
            if qid is None or model is None or games is None:
                continue
            shapes["v2.0" if "uid" in obj else "v0.1"] += 1
            baseline = obj.get("baseline")
            if baseline is None:
                baseline = options.baseline or V01_BASELINE
                assumed_baseline = True
            judge = obj.get("judge")
            if judge is None:
                judge = options.judge or parent_name(file_name) or "arena-hard-judge"
                judges_from_path = True
            baseline, model, judge = as_id(baseline), as_id(model), str(judge)
            key = (source, qid, model, judge)
            if key in line_of:
                notes.append(
                    f"{source}, line {rec[1]}: question {qid!r} of model {model!r} is judged "
                    f"again (also line {line_of[key]}); the last judgment is kept"
                )
                del games_of[key]  # re-inserted below: the rows follow the last judgment
            line_of[key] = rec[1]
            if len(games) > 2:
                f.bad(rec, "games", f"{len(games)} games; Arena-Hard records hold two")
                continue
            category = obj.get("category")
            rows = []
            for k, game in enumerate(games):
                score, judgment = _game(f, rec, k, game)
                first, second = (baseline, model) if k == 0 else (model, baseline)
                rows.append(
                    (
                        qid,
                        first,
                        second,
                        score,
                        judge,
                        k,
                        judgment,
                        category,
                        baseline,
                        model,
                        source,
                        rec[1],
                    )
                )
            games_of[key] = rows
        f.raise_if_any()
    flat = pd.DataFrame.from_records(
        [row for rows in games_of.values() for row in rows],
        columns=[
            "context_id",
            "first_system",
            "second_system",
            "score",
            "judge",
            "sample",
            "raw",
            "category",
            "baseline",
            "model",
            "_file",
            "_line",
        ],
    )
    if not len(flat):
        raise DataError(f"{', '.join(map(base_name, files))}: no judgment records")
    no_score = flat.index[flat["score"].isna()].tolist()
    where = lines_where(flat["_file"].tolist(), flat["_line"].tolist())

    questions: dict[str, str] = {}
    answers: dict[tuple[str, str], str] = {}
    for comp_name, data in (companions or {}).items():
        recs = read_records(comp_name, data, max_bytes=max_bytes)
        if recs and looks_like_question(recs[0][2]):
            questions.update(questions_of(recs))
        elif recs and looks_like_answer(recs[0][2]):
            answers.update(answers_of(recs))
        else:
            notes.append(
                f"{base_name(comp_name)}: neither Arena-Hard questions nor model answers; left out"
            )
    if questions:
        flat["context_text"] = flat["context_id"].map(questions).fillna("")
    if answers:
        for side in ("first", "second"):
            flat[f"{side}_text"] = [
                answers.get((s, q), "")
                for s, q in zip(flat[f"{side}_system"], flat["context_id"], strict=True)
            ]
    ds, read_notes = flat_to_dataset(flat, "score", options, name=name, files=files)
    baselines = flat["baseline"].value_counts()
    baseline = str(baselines.index[0]) if len(baselines) else None
    shape = " and ".join(f"{s} records" for s in sorted(shapes))
    head = [
        f"Read as {TITLE} ({shape}): {len(games_of):,} judgment(s) of "
        f"{flat['model'].nunique()} model(s), two games each; game 1 "
        "shows the baseline as Assistant A (sample 0), game 2 the model (sample 1)",
        f"Strength policy '{options.strength}'"
        + (
            " (Arena-Hard's: a strong verdict, A>>B or B>>A, weighs 3)"
            if options.strength == "weight"
            else ""
        ),
    ]
    if baseline is not None:
        if len(baselines) > 1:
            pairs = flat[["baseline", "category"]].astype(str).drop_duplicates()
            by_cat = pairs.groupby("baseline")["category"].agg(sorted)
            head.append(
                "Baselines: "
                + "; ".join(f"'{b}' ({', '.join(by_cat[b])})" for b in by_cat.index)
                + f"; '{baseline}' is taken as the baseline"
            )
        else:
            head.append(
                f"Baseline: '{baseline}'"
                + (
                    " (not in the records: arena-hard-v0.1's baseline_model; give the baseline "
                    "if yours differs)"
                    if assumed_baseline and not options.baseline
                    else ""
                )
            )
    if judges_from_path:
        head.append(
            "The judge is not in the records: named "
            + named(flat["judge"].unique(), "judges")
            + " after the folder (model_judgment/<judge>/) or as given"
        )
    if no_score:
        head.append(
            f"{len(no_score)} game(s) have no score (the judge gave no [[label]], or the call "
            "failed): kept as unparsed comparisons, where arena-hard-auto drops them — "
            f"{where(no_score)}"
        )
    if files and not companions:
        head.append(NO_TEXTS_NOTE)
    elif questions or answers:
        missing = sum(int(flat[s].eq("").sum()) for s in ("first_text", "second_text") if s in flat)
        head.append(
            f"Texts: {len(questions)} question(s), {len(answers)} answer(s) read"
            + (f"; {missing} candidate slot(s) without an answer" if answers and missing else "")
        )
    cols = {c: flat[c] for c in ("score",) if c in flat}
    return Imported(
        dataset=ds,
        format=FORMAT,
        title=TITLE,
        notes=head + notes + read_notes,
        baseline=baseline,
        verdicts=verdict_table(cols, options.verdict_map),
    )
