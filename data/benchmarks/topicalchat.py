"""USR Topical-Chat (Mehri & Eskenazi 2020): 60 dialogue contexts x 6 responses, 3-annotator
means on 6 attributes, with GPT-3.5's 20 sampled G-Eval-style answers per item (Chiang & Lee
2023, "A Closer Look into Automatic Evaluation Using Large Language Models")."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from data.benchmarks import _common as c
from data.parsing import parse_likert
from data.schema import DataError, Dataset

HUMAN = "topicalchat_usr/reproduce/data/dialogue/topical_chat.json"
GEVAL = "topicalchat_usr/results/topical_chat/gpt3.5_{}_geval.json"
# File key -> attribute, for the four attributes the judge was asked about.
JUDGED = {"coh": "coherence", "eng": "engagingness", "gro": "groundedness", "nat": "naturalness"}
SCALES = {
    "understandability": (0.0, 1.0),
    "naturalness": (1.0, 3.0),
    "coherence": (1.0, 3.0),
    "engagingness": (1.0, 3.0),
    "groundedness": (0.0, 1.0),
    "overall": (1.0, 5.0),
}
JUDGE = "gpt-3.5-turbo/geval"
PROMPT_ID = "geval"
N_SAMPLES = 20


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: UniEval's ``topical_chat.json`` and the four G-Eval result
    files (coherence, engagingness, groundedness, naturalness).
    """
    return (HUMAN,) + tuple(GEVAL.format(k) for k in JUDGED)


def load(files: dict[str, Path]) -> Dataset:
    """60 contexts x 6 responses (means of 3 annotators) plus GPT-3.5's 20 samples per item.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``tc00``, ``tc01``, ... per dialogue history in order of
        first appearance; candidates: candidate_id = system = ``system_id``; human scores of
        annotator ``"mean"`` on the 6 attributes; ratings of judge ``"gpt-3.5-turbo/geval"``
        (prompt_id ``"geval"``, samples 0-19, the answer as raw text), score the last number
        on the attribute's scale, NaN when none; scales as in :data:`SCALES`.

    Raises
    ------
    DataError
        Malformed JSON; a G-Eval item whose (source, system_output) is not in the human
        file; an item without exactly 20 answers.
    """
    records = c.read_json(files[HUMAN])
    # Contexts in order of first appearance: tc00..tc59.
    ctx_of: dict[str, str] = {}
    for r in records:
        if r["source"] not in ctx_of:
            ctx_of[r["source"]] = f"tc{len(ctx_of):02d}"
    ctx = {"context_id": [], "text": []}
    for source, cid in ctx_of.items():
        ctx["context_id"].append(cid)
        ctx["text"].append(source)
    cand = defaultdict(list)
    hs = defaultdict(list)
    key_to_cand: dict[tuple[str, str], tuple[str, str]] = {}
    for r in records:
        cid, sid = ctx_of[r["source"]], r["system_id"]
        key_to_cand[(r["source"], r["system_output"])] = (cid, sid)
        cand["context_id"].append(cid)
        cand["candidate_id"].append(sid)
        cand["system"].append(sid)
        cand["text"].append(r["system_output"])
        for attr in SCALES:
            hs["context_id"].append(cid)
            hs["candidate_id"].append(sid)
            hs["attribute"].append(attr)
            hs["annotator"].append("mean")
            hs["score"].append(float(r["scores"][attr]))

    rt = defaultdict(list)
    for key, attr in JUDGED.items():
        path = files[GEVAL.format(key)]
        for n_item, r in enumerate(c.read_json(path)):
            found = key_to_cand.get((r["source"], r["system_output"]))
            if found is None:
                raise DataError(
                    f"{path}, item {n_item}: its (source, system_output) is not in {HUMAN}"
                )
            answers = r["all_responses"]
            if len(answers) != N_SAMPLES:
                raise DataError(
                    f"{path}, item {n_item}: {len(answers)} responses, expected {N_SAMPLES}"
                )
            for k, text in enumerate(answers):
                rt["context_id"].append(found[0])
                rt["candidate_id"].append(found[1])
                rt["attribute"].append(attr)
                rt["sample"].append(k)
                rt["raw"].append(text)
    # G-Eval-style forms ("- Engagingness: 2", "1. Coherence: 3"): the last number on the scale.
    scores = []
    memo: dict[tuple[str, str], object] = {}
    for attr, text in zip(rt["attribute"], rt["raw"], strict=True):
        hit = memo.get((attr, text))
        if hit is None:
            hit = memo[(attr, text)] = parse_likert(text, scale=SCALES[attr], rule="strict")
        scores.append(np.nan if hit.value is None else float(hit.value))
    n = len(scores)
    rt["judge"] = [JUDGE] * n
    rt["prompt_id"] = [PROMPT_ID] * n
    n_unparsed = int(np.isnan(np.asarray(scores)).sum()) if n else 0
    return Dataset(
        name="topicalchat",
        contexts=c.table("contexts", ctx),
        candidates=c.table("candidates", cand),
        human_scores=c.table("human_scores", hs),
        ratings=c.table("ratings", {**rt, "score": scores}),
        scales=dict(SCALES),
        description=(
            "USR Topical-Chat: 60 dialogue contexts (tc00..tc59, history turns separated by "
            "newlines) x 6 responses (4 decoding systems, the original and a new human "
            "response; candidate = system_id), rated by 3 annotators; only their means exist "
            "(annotator 'mean'). Scales differ: understandability and groundedness 0-1, "
            "naturalness, coherence and engagingness 1-3, overall 1-5. Judge: gpt-3.5-turbo "
            "with G-Eval-style prompts (Chiang & Lee 2023), 20 sampled answers per item for "
            "coherence, engagingness, groundedness and naturalness (judge "
            "'gpt-3.5-turbo/geval', samples 0-19; a few items are missing from the published "
            "run). Scores are the last number on the attribute's scale; "
            f"{n_unparsed} answers did not parse and stay NaN with the raw text kept."
        ),
        source=(
            "maszhongming/UniEval@d33e7b6 reproduce/data/dialogue/topical_chat.json (MIT; "
            "annotations shikib/usr); d223302/A-Closer-Look-To-LLM-Evaluation@9008442 "
            "results/topical_chat (no licence stated)."
        ),
    )
