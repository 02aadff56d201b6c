"""HANNA (Chhun et al. 2022, 2024): 96 story prompts x 11 systems x 6 criteria x 3 annotators,
with the ratings of 5 LLM judges x 4 Eval-Prompts.

Ratings and judge outputs come from ``hanna_metric_scores_llm.csv`` (one row per system, each
cell a list of 96 values, index i = prompt i); prompt and story texts from PPairS'
``hanna.jsonl``, whose ``story_id`` is not the system. Each story is matched to its system by
the six human mean scores of prompt i; where two systems have the same six means within a
prompt the tie is broken by the CSV's ``Text length`` metric (the longer story goes to the
system with the larger recorded length).
"""

from __future__ import annotations

import ast
import csv
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from data.benchmarks import _common as c
from data.schema import AUTOMATIC, TABLES, DataError, Dataset

CSV = "hanna/hanna_metric_scores_llm.csv"
JSONL = "hanna/data/hanna.jsonl"

# CSV criterion column -> abbreviation used in the per-annotator and LLM columns.
CRITERIA = {
    "Relevance": "RE",
    "Coherence": "CH",
    "Empathy": "EM",
    "Surprise": "SU",
    "Engagement": "EG",
    "Complexity": "CX",
}
LLM_JUDGES = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")
N_PROMPTS, N_ANNOTATORS, N_EVAL_PROMPTS = 96, 3, 4
SCALE = (1.0, 5.0)
#: The CSV ``Model`` of the human-written story: a reference, not a generator.
HUMAN_SYSTEM = "Human"
TEXT_LENGTH = "Text length ¤§"
#: The automatic measures: every CSV column from the first to the last of these (72).
MEASURES_FROM, MEASURES_TO = "BLEU Ξ§", "BARTScore-SP ¤Δ"
N_MEASURES = 72
# HANNA's suffixes: Ξ with a reference / ¤ without; § string-based, ε embedding, Δ model.
_SUFFIX = re.compile(r"\s+[^\x00-\x7f]+$")
# The CSV stores 3-annotator means rounded to a few digits and the JSONL to 2.
_MEAN_TOL = 0.006


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: the ratings CSV and PPairS' ``hanna.jsonl``."""
    return (CSV, JSONL)


def measure_name(column: str) -> str:
    """The judge name of an automatic-measure column: the symbol suffix stripped.

    Parameters
    ----------
    column : str
        A CSV header, e.g. ``"BERTScore F1 Ξε"``.

    Returns
    -------
    str
        E.g. ``"BERTScore F1"``.
    """
    return _SUFFIX.sub("", column).strip()


def _measure_columns(path: Path, header: list[str]) -> list[str]:
    """The automatic-measure columns of the CSV header, checked (count, unique names)."""
    try:
        cols = header[header.index(MEASURES_FROM) : header.index(MEASURES_TO) + 1]
    except ValueError:
        raise DataError(
            f"{path}: no automatic-measure columns {MEASURES_FROM!r} .. {MEASURES_TO!r} in the "
            "header; the file is not the published hanna_metric_scores_llm.csv (fetch it again)"
        ) from None
    names = [measure_name(c) for c in cols]
    if len(cols) != N_MEASURES or len(set(names)) != len(names):
        raise DataError(
            f"{path}: expected {N_MEASURES} automatic-measure columns with distinct names from "
            f"{MEASURES_FROM!r} to {MEASURES_TO!r}, found {len(cols)}; fetch the file again"
        )
    return cols


def _parse_list(text: str):
    try:
        return json.loads(text)  # ten times faster than literal_eval; the cells are JSON lists
    except ValueError:
        return ast.literal_eval(text)


def _read_csv(path: Path) -> tuple[dict[str, dict[str, list]], list[str]]:
    """System -> column -> 96 values, and the automatic-measure columns in file order."""
    # Cells are Python list literals of 96 numbers, far beyond csv's default field limit.
    csv.field_size_limit(sys.maxsize)
    wanted = set(CRITERIA) | {TEXT_LENGTH}
    wanted |= {f"Human {k} {a}" for k in range(1, N_ANNOTATORS + 1) for a in CRITERIA.values()}
    wanted |= {
        f"{j} {a} {p}"
        for j in LLM_JUDGES
        for a in CRITERIA.values()
        for p in range(1, N_EVAL_PROMPTS + 1)
    }
    out: dict[str, dict[str, list]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = wanted - set(reader.fieldnames or ())
        if missing:
            raise DataError(f"{path}: missing column(s) {sorted(missing)[:5]}")
        measures = _measure_columns(path, list(reader.fieldnames or ()))
        wanted |= set(measures)
        for n_row, row in enumerate(reader, start=2):
            system = row["Model"]
            cells = {}
            for col in wanted:
                try:
                    values = _parse_list(row[col])
                except (ValueError, SyntaxError, TypeError) as exc:
                    raise DataError(
                        f"{path}, row {n_row}, column {col!r}: not a list ({exc})"
                    ) from exc
                if not isinstance(values, list) or len(values) != N_PROMPTS:
                    n = len(values) if isinstance(values, list) else "not a list of"
                    raise DataError(
                        f"{path}, row {n_row}, column {col!r}: {n} values, expected {N_PROMPTS}"
                    )
                cells[col] = values
            out[system] = cells
    return out, measures


def _n_tokens(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def _assign_systems(table: dict[str, dict[str, list]], stories: list[dict]) -> tuple[dict, list]:
    """(prompt index, system) -> story row, plus the ambiguous matches resolved by length."""
    by_prompt: dict[int, list[dict]] = {}
    for r in stories:
        by_prompt.setdefault(int(r["prompt_id"][1:]), []).append(r)
    assigned: dict[tuple[int, str], dict] = {}
    resolved: list[tuple[str, str, str]] = []
    for i, rows in sorted(by_prompt.items()):
        ambiguous: list[tuple[dict, list[str]]] = []
        for r in rows:
            hits = [
                s
                for s, cells in table.items()
                if all(abs(cells[crit][i] - r[crit.lower()]) < _MEAN_TOL for crit in CRITERIA)
            ]
            if len(hits) == 1:
                assigned[(i, hits[0])] = r
            elif hits:
                ambiguous.append((r, hits))
            else:
                raise DataError(
                    f"{JSONL}: story {r['prompt_id']}/{r['story_id']} matches no system's mean scores"
                )
        if ambiguous:
            systems = sorted({s for _, hits in ambiguous for s in hits if (i, s) not in assigned})
            rows_amb = [r for r, _ in ambiguous]
            if len(systems) != len(rows_amb):
                raise DataError(
                    f"{JSONL}: prompt P{i}: cannot resolve stories {[r['story_id'] for r in rows_amb]}"
                )
            # The permutation whose token counts best follow the recorded text lengths.
            best = min(
                itertools.permutations(systems),
                key=lambda perm: sum(
                    abs(table[s][TEXT_LENGTH][i] - _n_tokens(r["story"]))
                    for s, r in zip(perm, rows_amb, strict=True)
                ),
            )
            for s, r in zip(best, rows_amb, strict=True):
                assigned[(i, s)] = r
                resolved.append((r["prompt_id"], r["story_id"], s))
    return assigned, resolved


def _strings(values: list[str], codes: np.ndarray) -> pd.Series:
    """A pandas ``str`` column holding ``values[codes]`` (an Arrow take: no Python loop)."""
    taken = pa.array(values, type=pa.large_string()).take(pa.array(codes))
    return pd.Series(taken, dtype=pd.StringDtype("pyarrow", na_value=np.nan))


def _dense(
    ctx_ids: list[str], systems: list[str], labels: dict[str, list[str]], grids: list
) -> dict[str, pd.Series | np.ndarray]:
    """The columns of a dense table: one block of (prompt, system) cells per grid.

    ``grids[b]`` is a (system, prompt) array; ``labels[col][b]`` the value of ``col`` in
    block ``b``. Rows are block-major, then prompt, then system in CSV row order.
    """
    n_sys, n_blocks = len(systems), len(grids)
    cell = np.arange(N_PROMPTS * n_sys)
    out: dict[str, pd.Series | np.ndarray] = {
        "context_id": _strings(ctx_ids, np.tile(cell // n_sys, n_blocks)),
        "candidate_id": _strings(systems, np.tile(cell % n_sys, n_blocks)),
    }
    for col, per_block in labels.items():
        values = list(dict.fromkeys(per_block))
        codes = np.array([values.index(v) for v in per_block])
        out[col] = _strings(values, np.repeat(codes, len(cell)))
    out["score"] = np.concatenate([np.asarray(g, dtype=np.float64).T.reshape(-1) for g in grids])
    return out


def load(files: dict[str, Path]) -> Dataset:
    """96 prompts x 11 systems x 6 criteria x 3 annotators, 5 LLM judges x 4 Eval-Prompts,
    and 72 automatic measures.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``P0``..``P95`` (text: the prompt); per prompt every
        system in CSV row order (candidate_id = system = the CSV ``Model``; text: the
        matched story, empty when none matched); ``reference_systems`` ``("Human",)``;
        human scores of ``human_1``..``human_3`` on the six criteria (lower-case attribute
        names); ratings of judge ``"<LLM>/eval_prompt_<k>"`` (prompt_id
        ``"eval_prompt_<k>"``, sample 0): the published mean, NaN when outside 1-5, with
        the published value as raw text; ratings of each automatic measure (judge: the
        column name without its symbol suffix, see :func:`measure_name`; prompt_id
        ``data.schema.AUTOMATIC``; sample 0; raw ``""``): the story's value, the same under
        each of the six criteria, on the measure's own scale. Every attribute on the 1-5
        scale (human scores and LLM ratings).

    Raises
    ------
    DataError
        The CSV lacks a column (or the 72 automatic-measure columns), or a cell is not a list
        of 96 values; a story matches no system's mean scores, or stories with equal means
        cannot be assigned; the JSON-lines file is malformed.
    """
    table, measures = _read_csv(files[CSV])
    stories = c.read_jsonl(files[JSONL])
    assigned, resolved = _assign_systems(table, stories)
    systems = list(table)
    prompts = {int(r["prompt_id"][1:]): r["prompt"] for r in stories}

    ctx_ids = [f"P{i}" for i in range(N_PROMPTS)]
    # Candidates: prompt-major, systems in CSV row order.
    cand_ctx, cand_id, cand_text = [], [], []
    for i in range(N_PROMPTS):
        for s in systems:
            cand_ctx.append(f"P{i}")
            cand_id.append(s)
            story = assigned.get((i, s))
            cand_text.append(story["story"] if story is not None else "")

    def grid(col: str) -> list:
        return [table[s][col] for s in systems]  # (system, prompt)

    attrs = [crit.lower() for crit in CRITERIA]
    # Human scores and ratings are dense grids; built with Arrow takes, no per-row Python.
    blocks = [(k, crit) for k in range(1, N_ANNOTATORS + 1) for crit in CRITERIA]
    human = _dense(
        ctx_ids,
        systems,
        {
            "attribute": [crit.lower() for _, crit in blocks],
            "annotator": [f"human_{k}" for k, _ in blocks],
        },
        [grid(f"Human {k} {CRITERIA[crit]}") for k, crit in blocks],
    )
    llm = [
        (j, p, crit) for j in LLM_JUDGES for p in range(1, N_EVAL_PROMPTS + 1) for crit in CRITERIA
    ]
    auto = [(m, crit) for m in measures for crit in CRITERIA]
    ratings = _dense(
        ctx_ids,
        systems,
        {
            "attribute": [crit.lower() for *_, crit in llm] + [crit.lower() for _, crit in auto],
            "judge": [f"{j}/eval_prompt_{p}" for j, p, _ in llm]
            + [measure_name(m) for m, _ in auto],
            "prompt_id": [f"eval_prompt_{p}" for _, p, _ in llm] + [AUTOMATIC] * len(auto),
        },
        [grid(f"{j} {CRITERIA[crit]} {p}") for j, p, crit in llm] + [grid(m) for m, _ in auto],
    )
    n_llm = len(llm) * N_PROMPTS * len(systems)
    scores = ratings["score"]
    published = scores[:n_llm].copy()
    # A failed try entered some published means as 0 or -1 (the authors list such tries in
    # problem_values.json): a mean outside 1-5 is no rating, so it becomes NaN with the
    # published value kept as raw text. Means inside 1-5 can still hide a failed try.
    off_scale = ~((published >= SCALE[0]) & (published <= SCALE[1]))
    scores[:n_llm][off_scale] = np.nan
    # raw: the published mean's repr for the LLMs (few distinct means), "" for the measures
    means, codes = np.unique(published, return_inverse=True)
    raws = [repr(float(v)) for v in means] + [""]
    raw_codes = np.concatenate([codes.reshape(-1), np.full(len(scores) - n_llm, len(means))])
    ratings["raw"] = _strings(raws, raw_codes)
    ratings["sample"] = np.zeros(len(scores), dtype=np.int64)
    n_off_scale = int(off_scale.sum())
    resolved_note = "; ".join(f"{p}/{sid} -> {s}" for p, sid, s in resolved) or "none"
    return Dataset(
        name="hanna",
        contexts=c.table(
            "contexts", {"context_id": ctx_ids, "text": [prompts[i] for i in range(N_PROMPTS)]}
        ),
        candidates=c.table(
            "candidates",
            {"context_id": cand_ctx, "candidate_id": cand_id, "system": cand_id, "text": cand_text},
        ),
        human_scores=pd.DataFrame(human)[list(TABLES["human_scores"])],
        ratings=pd.DataFrame(ratings)[list(TABLES["ratings"])],
        scales={a: SCALE for a in attrs},
        reference_systems=(HUMAN_SYSTEM,),
        description=_description(resolved_note, n_off_scale, measures),
        source=(
            "dig-team/hanna-benchmark-asg@282f275 hanna_metric_scores_llm.csv (MIT); "
            "maiush/PPairS@cc4ba40 data/hanna.jsonl (MIT)."
        ),
    )


def _description(resolved_note: str, n_off_scale: int, measures: list[str]) -> str:
    names = [measure_name(m) for m in measures]
    return (
        "HANNA: 96 WritingPrompts story prompts (P0..P95) x 11 systems (10 story generators "
        "and the human-written story, candidate 'Human', a reference system that analyses "
        "leave out by default as the paper does), each story rated 1-5 by 3 MTurk workers "
        "('human_1..3', position in the file, not a person across items) on relevance, "
        "coherence, empathy, surprise, engagement and complexity. Story texts are joined from "
        "PPairS by matching the six mean scores; two stories with identical means were "
        f"assigned by the recorded text length ({resolved_note}). Judge ratings (Chhun et al. "
        "2024): Beluga-13B, OrcaPlatypus, Mistral-7B, Llama-13B and ChatGPT with the four "
        "Eval-Prompts (judge '<LLM>/eval_prompt_k', prompt_id 'eval_prompt_k'); each score "
        "is the published mean over the judge's sampled tries (so not an integer), stored as "
        "sample 0 with the published value as raw text; the raw answers were not published. "
        "Tries whose rating could not be extracted entered the published means as 0 or -1: "
        f"{n_off_scale:,} means fall outside 1-5 and are left NaN in the cleaned reading (the "
        "published reading keeps them); means inside 1-5 may still include such a try. "
        f"Automatic measures (Chhun et al. 2022): {len(names)} per-story scores, each a judge "
        f"of prompt_id '{AUTOMATIC}' with the same value under all six criteria, on its own "
        "scale (not 1-5): with the human story as reference, string-based (BLEU, ROUGE-1..4/"
        "L/W/S*/SU* recall, precision and F, METEOR, chrF, CIDEr), embedding-based (ROUGE-WE-3, "
        "BERTScore, MoverScore, DepthScore, BaryScore) and model-based (S3, SummaQA, InfoLM, "
        "BARTScore-SH/HS, SUPERT-Golden, BLANC-Golden); without a reference (from the prompt "
        "or the story alone): Coverage, Density, Compression, Text length, Novelty-1..3, "
        "Repetition-1..3, SUPERT-PS/SS, BLANC-Tune/Help-PS/SS, BARTScore-PS/SP. The human "
        "story's reference-based scores compare it with itself."
    )
