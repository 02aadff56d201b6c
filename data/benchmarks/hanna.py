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
import re
import sys
from pathlib import Path

import numpy as np

from data.benchmarks import _common as c
from data.schema import DataError, Dataset

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
# The CSV stores 3-annotator means rounded to a few digits and the JSONL to 2.
_MEAN_TOL = 0.006


def files() -> tuple[str, ...]:
    """The files :func:`load` reads.

    Returns
    -------
    tuple of str
        Relpaths of the ratings CSV and PPairS' ``hanna.jsonl``.
    """
    return (CSV, JSONL)


def _read_csv(path: Path) -> dict[str, dict[str, list]]:
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
        for n_row, row in enumerate(reader, start=2):
            system = row["Model"]
            cells = {}
            for col in wanted:
                try:
                    values = ast.literal_eval(row[col])
                except (ValueError, SyntaxError) as exc:
                    raise DataError(
                        f"{path}, row {n_row}, column {col!r}: not a list ({exc})"
                    ) from exc
                if len(values) != N_PROMPTS:
                    raise DataError(
                        f"{path}, row {n_row}, column {col!r}: {len(values)} values, expected {N_PROMPTS}"
                    )
                cells[col] = values
            out[system] = cells
    return out


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


def load(files: dict[str, Path]) -> Dataset:
    """96 prompts x 11 systems x 6 criteria x 3 annotators, plus 5 LLM judges x 4 Eval-Prompts.

    Parameters
    ----------
    files : dict of str to Path
        relpath -> local path of every file of :func:`files`.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``P0``..``P95`` (text: the prompt); per prompt every
        system in CSV row order (candidate_id = system = the CSV ``Model``; text: the
        matched story, empty when none matched); human scores of ``human_1``..``human_3``
        on the six criteria (lower-case attribute names); ratings of judge
        ``"<LLM>/eval_prompt_<k>"`` (prompt_id ``"eval_prompt_<k>"``, sample 0): the
        published mean, NaN when outside 1-5, with the published value as raw text. Every
        attribute on the 1-5 scale.

    Raises
    ------
    DataError
        The CSV lacks a column, or a cell is not a list of 96 values; a story matches no
        system's mean scores, or stories with equal means cannot be assigned; the JSON-lines
        file is malformed.
    """
    table = _read_csv(files[CSV])
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

    n_sys = len(systems)
    attrs = [crit.lower() for crit in CRITERIA]
    # Human scores and judge ratings are dense grids; build them with numpy repeats.
    hs_ctx, hs_cand, hs_attr, hs_ann, hs_score = [], [], [], [], []
    for k in range(1, N_ANNOTATORS + 1):
        for crit, abbr in CRITERIA.items():
            grid = np.array(
                [table[s][f"Human {k} {abbr}"] for s in systems], dtype=np.float64
            )  # (sys, prompt)
            hs_ctx.append(np.repeat(ctx_ids, n_sys))
            hs_cand.append(np.tile(systems, N_PROMPTS))
            hs_attr.append(np.full(N_PROMPTS * n_sys, crit.lower()))
            hs_ann.append(np.full(N_PROMPTS * n_sys, f"human_{k}"))
            hs_score.append(grid.T.reshape(-1))
    r_ctx, r_cand, r_attr, r_judge, r_prompt, r_score = [], [], [], [], [], []
    for judge in LLM_JUDGES:
        for p in range(1, N_EVAL_PROMPTS + 1):
            for crit, abbr in CRITERIA.items():
                grid = np.array(
                    [table[s][f"{judge} {abbr} {p}"] for s in systems], dtype=np.float64
                )
                r_ctx.append(np.repeat(ctx_ids, n_sys))
                r_cand.append(np.tile(systems, N_PROMPTS))
                r_attr.append(np.full(N_PROMPTS * n_sys, crit.lower()))
                r_judge.append(np.full(N_PROMPTS * n_sys, f"{judge}/eval_prompt_{p}"))
                r_prompt.append(np.full(N_PROMPTS * n_sys, f"eval_prompt_{p}"))
                r_score.append(grid.T.reshape(-1))
    n_ratings = sum(len(x) for x in r_score)
    published = np.concatenate(r_score)
    # A failed try entered some published means as 0 or -1 (the authors list such tries in
    # problem_values.json): a mean outside 1-5 is no rating, so it becomes NaN with the
    # published value kept as raw text. Means inside 1-5 can still hide a failed try.
    off_scale = ~((published >= SCALE[0]) & (published <= SCALE[1]))
    scores = np.where(off_scale, np.nan, published)
    raw = [repr(float(v)) for v in published]
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
        human_scores=c.table(
            "human_scores",
            {
                "context_id": np.concatenate(hs_ctx),
                "candidate_id": np.concatenate(hs_cand),
                "attribute": np.concatenate(hs_attr),
                "annotator": np.concatenate(hs_ann),
                "score": np.concatenate(hs_score),
            },
        ),
        ratings=c.table(
            "ratings",
            {
                "context_id": np.concatenate(r_ctx),
                "candidate_id": np.concatenate(r_cand),
                "attribute": np.concatenate(r_attr),
                "judge": np.concatenate(r_judge),
                "prompt_id": np.concatenate(r_prompt),
                "sample": np.zeros(n_ratings, dtype=np.int64),
                "score": scores,
                "raw": raw,
            },
        ),
        scales={a: SCALE for a in attrs},
        reference_systems=(HUMAN_SYSTEM,),
        description=(
            "HANNA: 96 WritingPrompts story prompts (P0..P95) x 11 systems (10 story generators "
            "and the human-written story, candidate 'Human'), each story rated 1-5 by 3 MTurk "
            "workers ('human_1..3', position in the file, not a person across items) on relevance, "
            "coherence, empathy, surprise, engagement and complexity. Story texts are joined from "
            "PPairS by matching the six mean scores; two stories with identical means were "
            f"assigned by the recorded text length ({resolved_note}). Judge ratings (Chhun et al. "
            "2024): Beluga-13B, OrcaPlatypus, Mistral-7B, Llama-13B and ChatGPT with the four "
            "Eval-Prompts (judge '<LLM>/eval_prompt_k', prompt_id 'eval_prompt_k'); each score "
            "is the published mean over the judge's sampled tries (so not an integer), stored as "
            "sample 0 with the published value as raw text; the raw answers were not published. "
            "Tries whose rating could not be extracted entered the published means as 0 or -1: "
            f"{n_off_scale:,} means fall outside 1-5 and are left NaN; means inside 1-5 may "
            "still include such a try."
        ),
        source=(
            "dig-team/hanna-benchmark-asg@282f275 hanna_metric_scores_llm.csv (MIT); "
            "maiush/PPairS@cc4ba40 data/hanna.jsonl (MIT)."
        ),
    )
