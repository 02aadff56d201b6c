"""PandaLM test set (Wang et al. 2024): 999 human-annotated response pairs (3 annotators) over
170 prompts and 5 models, with the GPT-3.5 and PandaLM-7B verdicts on the same pairs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from data.benchmarks import _common as c
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

TESTSET = "pandalm_testset/data/testset-v1.json"
GPT = "pandalm_testset/data/gpt-3.5-turbo-testset-v1.json"
PANDALM = "pandalm_testset/data/pandalm-7b-testset-v1.json"
MODELS = ("llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b")
ATTRIBUTE = "overall"
N_ANNOTATORS = 3
GPT_JUDGE = "gpt-3.5-turbo"
PANDALM_JUDGE = "pandalm-7b"
# Published labels: 1 = response1 (shown first) better, 2 = response2 better, 0 / "Tie" = tie.
# GPT-3.5's "garbage" marks an answer its authors could not parse.
_LABEL = {1: "A", 2: "B", 0: "tie", "1": "A", "2": "B", "Tie": "tie", "0": "tie"}


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: the test set and of the GPT-3.5 and PandaLM-7B verdict
    files.
    """
    return (TESTSET, GPT, PANDALM)


def _split_key(key: str, path: Path, idx) -> tuple[str, str]:
    for m in MODELS:
        if key.startswith(m + "_") and key[len(m) + 1 :] in MODELS:
            return m, key[len(m) + 1 :]
    raise DataError(f"{path}, idx {idx}: cmp_key {key!r} is not '<model>_<model>' of {MODELS}")


def _prompt_text(instruction: str, inp: str) -> str:
    return instruction if not inp.strip() else f"{instruction}\n\n{inp}"


def load(files: dict[str, Path]) -> Dataset:
    """170 prompts, the 5 models' responses, 3 human + 2 LLM verdicts per pair.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``pl000``, ``pl001``, ... per distinct (instruction,
        input) in file order (text: the instruction, then the input after a blank line when
        there is one); candidates named after the model (system = model), a model's later
        distinct texts in the same context as ``"<model>#2"``, ``"#3"``; comparisons on
        attribute ``"overall"`` with response1 shown first, by ``"human:annotator1..3"``,
        ``"gpt-3.5-turbo"`` and ``"pandalm-7b"``: 1 -> A, 2 -> B, 0 / "Tie" -> tie, any other
        label (GPT-3.5's "garbage") NaN; raw text is the label, then the judge's reason when
        there is one; sample 0.

    Raises
    ------
    DataError
        Malformed JSON; a ``cmp_key`` that is not ``"<model>_<model>"`` of the 5 models; an
        annotator label other than 0, 1 or 2; a judge verdict whose idx is not in the test
        set.
    """
    pairs = c.read_json(files[TESTSET])
    ctx_of: dict[tuple[str, str], str] = {}
    # (context, model) -> distinct response texts in order of appearance.
    variants: dict[tuple[str, str], list[str]] = defaultdict(list)
    pair_rows = []
    for r in pairs:
        key = (r["instruction"], r["input"])
        if key not in ctx_of:
            ctx_of[key] = f"pl{len(ctx_of):03d}"
        cid = ctx_of[key]
        m1, m2 = _split_key(r["cmp_key"], files[TESTSET], r["idx"])
        ids = []
        for model, text in ((m1, r["response1"]), (m2, r["response2"])):
            seen = variants[(cid, model)]
            if text not in seen:
                seen.append(text)
            k = seen.index(text)
            # A model answered some prompts with more than one text across pairs; later
            # variants get their own candidate so each comparison keeps the text judged.
            ids.append(model if k == 0 else f"{model}#{k + 1}")
        pair_rows.append((r, cid, ids[0], ids[1]))

    cand = defaultdict(list)
    for (cid, model), texts in variants.items():
        for k, text in enumerate(texts):
            cand["context_id"].append(cid)
            cand["candidate_id"].append(model if k == 0 else f"{model}#{k + 1}")
            cand["system"].append(model)
            cand["text"].append(text)
    n_variant_candidates = sum(len(t) - 1 for t in variants.values())
    n_models_with_variants = sum(len(t) > 1 for t in variants.values())

    by_idx = {r["idx"]: (cid, a, b) for r, cid, a, b in pair_rows}
    judged: list[tuple] = []  # (context, judge, first, second, verdict, raw)

    def add(idx, judge, verdict, raw):
        cid, a, b = by_idx[idx]
        judged.append((cid, judge, a, b, verdict, raw))

    for r, _cid, _a, _b in pair_rows:
        for k in range(1, N_ANNOTATORS + 1):
            label = r[f"annotator{k}"]
            if label not in (0, 1, 2):
                raise DataError(
                    f"{files[TESTSET]}, idx {r['idx']}: annotator{k} = {label!r}, expected 0, 1 or 2"
                )
            add(r["idx"], f"{HUMAN_JUDGE_PREFIX}annotator{k}", _LABEL[label], str(label))
    for rel, field, judge in ((GPT, "gpt", GPT_JUDGE), (PANDALM, "pandalm", PANDALM_JUDGE)):
        for r in c.read_json(files[rel]):
            if r["idx"] not in by_idx:
                raise DataError(f"{files[rel]}: idx {r['idx']} is not in {TESTSET}")
            result = r[f"{field}_result"]
            reason = (r.get(f"{field}_reason") or "").strip()
            raw = f"{result}\n{reason}" if reason else str(result)
            add(r["idx"], judge, _LABEL.get(result), raw)
    comparisons = c.judged_pairs(judged, ATTRIBUTE)
    n_unparsed = int(comparisons["p_first"].isna().sum())
    return Dataset(
        name="pandalm",
        contexts=c.table(
            "contexts",
            {"context_id": list(ctx_of.values()), "text": [_prompt_text(*k) for k in ctx_of]},
        ),
        candidates=c.table("candidates", cand),
        comparisons=comparisons,
        description=(
            f"PandaLM test set: 999 response pairs over {len(ctx_of)} instruction prompts "
            "(context = instruction, then the input when there is one) from 5 models "
            f"({', '.join(MODELS)}); candidate = model name. {n_models_with_variants} "
            "(prompt, model) cells have more than one response text across pairs; the later "
            f"texts are separate candidates '<model>#2', '#3' ({n_variant_candidates} extra, "
            "system = the model). Each pair has 3 human verdicts (judges 'human:annotator1..3') "
            "and the verdicts of GPT-3.5 ('gpt-3.5-turbo') and PandaLM-7B ('pandalm-7b') on "
            "the same order (response1 shown first; no swapped order exists): 1 -> A, 2 -> B, "
            f"tie -> tie; {n_unparsed} GPT-3.5 answers marked 'garbage' stay NaN with the raw "
            "label kept. The authors kept 1k of 2.5k pairs, dropping those with large annotator "
            "disagreement, so agreement is inflated."
        ),
        source="WeOpenML/PandaLM@3871806 data/ (Apache-2.0).",
    )
