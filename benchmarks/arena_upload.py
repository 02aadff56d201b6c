"""A seeded Arena-Hard-style upload (issue 22 item 5): many models, each judged against one
baseline on every question, both games, graded verdicts, written as Arena-Hard-Auto writes it.

Files (the v2.0 record shape of ``gen_judgment.py``; see ``data.importers.arena_hard``)::

    <out>/question.jsonl                          uid, category, prompt
    <out>/model_judgment/<judge>/<model>.jsonl    one line per question: uid, category, judge,
                                                  model, baseline, games = two
                                                  {"score", "judgment": {"answer"}}
    <out>/model_answer/<model>.jsonl              (--texts) uid, model, messages

Game 1 shows the baseline as Assistant A, game 2 the model. Each model has a strength theta
~ N(0, 1) (the baseline 0); a game's label is drawn from a graded Bradley–Terry: the model's
win probability sigmoid(theta_model - theta_baseline) shifted by a position bias towards
Assistant A, then "strong" (>>) with probability 0.35 of a decisive verdict and a tie with
probability 0.15. The baseline's own file judges it against itself (``A=B``, as
arena-hard-auto leaves it when the baseline is in the model list): the self-comparison rows
the reader skips. Question ids are 32-hex uids like Arena-Hard's; ``--long-ids`` makes them
the question text itself (instruction-long ids, as a pairwise CSV keyed by instruction has).

Usage::

    python benchmarks/arena_upload.py OUT [--models 76] [--questions 500] [--texts]

:func:`upload_files` returns the files as the Data page's uploader hands them on (name ->
bytes), and :func:`load` reads them through the same reader (``read_upload_result`` with
the first judgment file as the upload and the rest as its companions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

JUDGE = "gpt-4-1106-preview"
BASELINE = "gpt-4-0314"
#: Words the question texts are made of (seeded), so that texts have lengths and style.
_WORDS = (
    "explain write python function list table compare why how data model test error code "
    "design story summary proof algorithm memory string sort graph query network plan"
).split()


def _uid(k: int) -> str:
    return hashlib.md5(f"question {k}".encode()).hexdigest()


def _question(rng, k: int) -> str:
    n = int(rng.integers(12, 40))
    return f"Q{k}: " + " ".join(rng.choice(_WORDS, n)) + "?"


def build(
    n_models: int = 76,
    n_questions: int = 500,
    *,
    texts: bool = False,
    long_ids: bool = False,
    seed: int = 0,
) -> tuple[dict[str, bytes], np.ndarray]:
    """The upload's files (relative path -> bytes) and the models' true strengths.

    ``n_models`` counts the baseline: ``n_models - 1`` judged models plus the baseline,
    whose own file holds its self-comparisons. The strengths come back in the order of
    :func:`model_names` (the baseline first, at 0).
    """
    rng = np.random.default_rng(seed)
    models = model_names(n_models)
    theta = np.concatenate([[0.0], rng.normal(size=n_models - 1)])
    questions = [_question(rng, k) for k in range(n_questions)]
    ids = questions if long_ids else [_uid(k) for k in range(n_questions)]
    files: dict[str, bytes] = {}
    files["question.jsonl"] = "".join(
        json.dumps({"uid": q, "category": "arena-hard-v0.1", "prompt": text}) + "\n"
        for q, text in zip(ids, questions, strict=True)
    ).encode()
    labels_a = np.array(["A>>B", "A>B"])
    labels_b = np.array(["B>>A", "B>A"])
    for m, model in enumerate(models):
        lines = []
        # P(model wins) per question and game; game 1: the model is B, game 2: A
        p_model = 1.0 / (1.0 + np.exp(-(theta[m] - theta[0])))
        for q in ids:
            games = []
            for g in range(2):
                model_is_a = g == 1
                p_a = p_model if model_is_a else 1.0 - p_model
                p_a = min(1.0, max(0.0, p_a + 0.05))  # a little position bias towards A
                if m == 0 or rng.random() < 0.15:
                    score = "A=B"
                else:
                    strong = int(rng.random() >= 0.35)  # 0: strong (>>), 1: weak
                    score = labels_a[strong] if rng.random() < p_a else labels_b[strong]
                games.append(
                    {
                        "score": str(score),
                        "judgment": {"answer": f"My final verdict is: [[{score}]]"},
                    }
                )
            lines.append(
                json.dumps(
                    {
                        "uid": q,
                        "category": "arena-hard-v0.1",
                        "judge": JUDGE,
                        "model": model,
                        "baseline": BASELINE,
                        "games": games,
                    }
                )
            )
        files[f"model_judgment/{JUDGE}/{model}.jsonl"] = ("\n".join(lines) + "\n").encode()
        if texts:
            files[f"model_answer/{model}.jsonl"] = "".join(
                json.dumps(
                    {
                        "uid": q,
                        "model": model,
                        "messages": [
                            {"role": "user", "content": text},
                            {
                                "role": "assistant",
                                "content": {
                                    "answer": " ".join(
                                        rng.choice(_WORDS, int(rng.integers(20, 200)))
                                    )
                                },
                            },
                        ],
                    }
                )
                + "\n"
                for q, text in zip(ids, questions, strict=True)
            ).encode()
    return files, theta


def model_names(n_models: int) -> list[str]:
    """The baseline, then ``model-01`` ... (natural order)."""
    return [BASELINE] + [f"model-{k:02d}" for k in range(1, n_models)]


def upload_files(files: dict[str, bytes]) -> tuple[str, bytes, dict[str, bytes]]:
    """(name, content, companions) as the Data page hands a multi-file upload on: the first
    judgment file is the upload, every other file a companion."""
    judged = sorted(p for p in files if p.startswith("model_judgment/"))
    first = judged[-1]
    # answer files share their model's file name: keep them apart by their folder
    companions = {p: b for p, b in files.items() if p != first}
    return first, files[first], companions


def load(files: dict[str, bytes]):
    """The upload read through the Data page's reader (``data.io.read_upload_result``)."""
    sys.path.insert(0, str(ROOT))
    from data.io import read_upload_result

    name, data, companions = upload_files(files)
    return read_upload_result(name, data, companions=companions)


def write(files: dict[str, bytes], out: Path) -> None:
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def read_folder(folder: Path) -> dict[str, bytes]:
    """The files written by :func:`write`, relative path -> bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.jsonl"))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--models", type=int, default=76, help="systems, the baseline included")
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--texts", action="store_true", help="write model_answer files too")
    ap.add_argument("--long-ids", action="store_true", help="question text as the id")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    files, _ = build(
        args.models, args.questions, texts=args.texts, long_ids=args.long_ids, seed=args.seed
    )
    write(files, args.out)
    size = sum(len(b) for b in files.values())
    print(f"{len(files)} files, {size / 1e6:.1f} MB under {args.out}")


if __name__ == "__main__":
    main()
