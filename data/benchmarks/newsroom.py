"""Newsroom summary human evaluation (Grusky et al. 2018) in JUDGE-BENCH's format:
60 articles x 7 summaries, 3 crowd annotators, 4 criteria (1-5)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from data.benchmarks import _common as c
from data.schema import DataError, Dataset

JSON = "newsroom_judgebench/data/newsroom/newsroom.json"
SUMMARY_HEAD = "### Generated Summary\n\n"
ARTICLE_HEAD = "\n\n### Source Article\n\n"
N_ANNOTATORS = 3


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: JUDGE-BENCH's ``newsroom.json``."""
    return (JSON,)


def _split(instance: str, path: Path, item_id) -> tuple[str, str]:
    if not instance.startswith(SUMMARY_HEAD) or ARTICLE_HEAD not in instance:
        raise DataError(
            f"{path}, instance id {item_id}: expected '### Generated Summary' then "
            f"'### Source Article' in the 'instance' text"
        )
    summary, article = instance[len(SUMMARY_HEAD) :].split(ARTICLE_HEAD, 1)
    return summary, article


def load(files: dict[str, Path]) -> Dataset:
    """60 articles x 7 summaries with 3 annotators on 4 criteria.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Instances in id order; contexts ``nr00``, ``nr01``, ... per
        distinct article in order of first appearance (text: the article); candidates
        ``s1``..``s7`` by position within the article (text: the summary; no system);
        human scores of ``human_1``..``human_3`` per metric (lower-cased); scales from the
        file's worst/best per metric.

    Raises
    ------
    DataError
        Malformed JSON; an instance text without "### Generated Summary" then
        "### Source Article"; a metric without exactly 3 individual scores.
    """
    path = files[JSON]
    doc = c.read_json(path)
    scales = {
        a["metric"].lower(): (float(a["worst"]), float(a["best"])) for a in doc["annotations"]
    }
    ctx_of: dict[str, str] = {}
    n_in_ctx: dict[str, int] = defaultdict(int)
    cand = defaultdict(list)
    hs = defaultdict(list)
    # Instances are in id order; the 7 summaries of an article are consecutive.
    for item in sorted(doc["instances"], key=lambda r: int(r["id"])):
        summary, article = _split(item["instance"], path, item["id"])
        if article not in ctx_of:
            ctx_of[article] = f"nr{len(ctx_of):02d}"
        cid = ctx_of[article]
        n_in_ctx[cid] += 1
        sid = f"s{n_in_ctx[cid]}"
        cand["context_id"].append(cid)
        cand["candidate_id"].append(sid)
        cand["text"].append(summary)
        for metric, ann in item["annotations"].items():
            scores = ann["individual_human_scores"]
            if len(scores) != N_ANNOTATORS:
                raise DataError(
                    f"{path}, instance id {item['id']}, {metric}: {len(scores)} individual scores, "
                    f"expected {N_ANNOTATORS}"
                )
            for k, score in enumerate(scores, start=1):
                hs["context_id"].append(cid)
                hs["candidate_id"].append(sid)
                hs["attribute"].append(metric.lower())
                hs["annotator"].append(f"human_{k}")
                hs["score"].append(float(score))
    return Dataset(
        name="newsroom",
        contexts=c.table("contexts", {"context_id": list(ctx_of.values()), "text": list(ctx_of)}),
        candidates=c.table("candidates", cand),
        human_scores=c.table("human_scores", hs),
        scales=scales,
        description=(
            "Newsroom human evaluation: 60 news articles (nr00..nr59, in file order; the text "
            "still holds some HTML such as </p><p>) x 7 summaries each, rated 1-5 by 3 crowd "
            "annotators ('human_1..3', position in the file, not a person across items) on "
            "informativeness, relevance, fluency and coherence. Which system wrote which summary "
            "is not recorded: candidates are 's1'..'s7' in file order within the article. No "
            "judge outputs."
        ),
        source=(
            "dmg-illc/JUDGE-BENCH@5a0bf50 data/newsroom/newsroom.json (licence table: Apache-2.0; "
            "original lil-lab/newsroom humaneval)."
        ),
    )
