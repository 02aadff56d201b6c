"""WebNLG+ 2020 RDF-to-text (English) human evaluation: 178 inputs x 17 systems, per-worker
0-100 ratings on 5 criteria."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from data.benchmarks import _common as c
from data.benchmarks._sources import files_under
from data.schema import DataError, Dataset

ROOT = "webnlg2020_humeval/"
RESULTS = ROOT + "evaluation/human-evaluation/results/en/"
SUBMISSIONS = ROOT + "submissions/rdf2text/en/"
TEST_XML = ROOT + "data/en/test/rdf-to-text-generation-test-data-with-refs-en.xml"
IDS = ROOT + "data/en/test/humaneval_ids.txt"
REFERENCE = "WebNLG-2020-reference"
# JSON criterion -> attribute name.
CRITERIA = {
    "Correctness": "correctness",
    "DataCoverage": "data_coverage",
    "Fluency": "fluency",
    "Relevance": "relevance",
    "TextStructure": "text_structure",
}
SCALE = (0.0, 100.0)


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: every ``primary.json`` rating file, every submission file,
    the test-set XML and ``humaneval_ids.txt``.
    """
    ratings = tuple(r for r in files_under(RESULTS) if r.endswith("/primary.json"))
    return ratings + files_under(SUBMISSIONS) + (TEST_XML, IDS)


def _read_xml(path: Path) -> dict[str, tuple[str, str]]:
    """eid number -> (triples one per line, first reference text)."""
    out = {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise DataError(f"{path}: not valid XML ({exc})") from exc
    for entry in root.iter("entry"):
        eid = entry.get("eid", "")
        if not eid.startswith("Id"):
            raise DataError(f"{path}: entry with unexpected eid {eid!r}")
        triples = [t.text.strip() for t in entry.iter("mtriple") if t.text]
        lex = [x.text.strip() for x in entry.iter("lex") if x.text]
        out[eid[2:]] = ("\n".join(triples), lex[0] if lex else "")
    return out


def load(files: dict[str, Path]) -> Dataset:
    """178 inputs x 17 systems with each worker's 0-100 ratings on 5 criteria.

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``"Id<k>"`` for the ids of ``humaneval_ids.txt`` in file
        order (text: the triples, one per line); per rated team and context a candidate
        (candidate_id = system = team; text: line k of its submission, or the first
        reference for ``WebNLG-2020-reference``); human scores per worker id on the 5
        criteria; scales 0-100.

    Raises
    ------
    DataError
        Invalid XML or an entry id not starting with "Id"; a submission whose line count is
        not the number of test entries; an id not in the test set; a rated team without a
        submission; malformed JSON.
    """
    xml = _read_xml(files[TEST_XML])
    sample_ids = files[IDS].read_text(encoding="utf-8").split()
    outputs: dict[str, list[str]] = {}
    for rel, path in files.items():
        if rel.startswith(SUBMISSIONS):
            team = Path(rel).parent.name
            # Line k is test entry Id<k>; keep empty lines so the numbering holds.
            lines = path.read_text(encoding="utf-8").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if len(lines) != len(xml):
                raise DataError(
                    f"{path}: {len(lines)} lines, expected one per test entry ({len(xml)})"
                )
            outputs[team] = lines

    ctx = defaultdict(list)
    for sid in sample_ids:
        if sid not in xml:
            raise DataError(f"{files[IDS]}: sample id {sid} is not an entry of {TEST_XML}")
        ctx["context_id"].append(f"Id{sid}")
        ctx["text"].append(xml[sid][0])
    cand = defaultdict(list)
    hs = defaultdict(list)
    systems = []
    for rel, path in files.items():
        if not (rel.startswith(RESULTS) and rel.endswith("/primary.json")):
            continue
        team = Path(rel).parent.name
        systems.append(team)
        if team != REFERENCE and team not in outputs:
            raise DataError(f"{path}: no submission file for team {team!r} under {SUBMISSIONS}")
        ratings = c.read_json(path)
        for sid in sample_ids:
            idx = int(sid)
            text = xml[sid][1] if team == REFERENCE else outputs[team][idx - 1]
            cand["context_id"].append(f"Id{sid}")
            cand["candidate_id"].append(team)
            cand["system"].append(team)
            cand["text"].append(text)
            for worker, scores in ratings.get(sid, {}).items():
                for crit, attr in CRITERIA.items():
                    hs["context_id"].append(f"Id{sid}")
                    hs["candidate_id"].append(team)
                    hs["attribute"].append(attr)
                    hs["annotator"].append(worker)
                    hs["score"].append(float(scores[crit]))
    return Dataset(
        name="webnlg2020",
        contexts=c.table("contexts", ctx),
        candidates=c.table("candidates", cand),
        human_scores=c.table("human_scores", hs),
        scales={a: SCALE for a in CRITERIA.values()},
        description=(
            f"WebNLG+ 2020 RDF-to-text (English) human evaluation: {len(sample_ids)} test inputs "
            "(context = the modified RDF triples 'subject | property | object', one per line; "
            f"id 'Id<k>' = test entry k) x {len(systems)} systems (14 teams, 2 FORGE baselines "
            "and the human reference), each output rated 0-100 by 1-3 crowd workers (annotator "
            "= worker id) on correctness, data_coverage, fluency, relevance and text_structure. "
            "System texts are the teams' primary submissions; for 'WebNLG-2020-reference' the "
            "first <lex> reference of the entry is taken (which reference was rated is not "
            "recorded). Workers use the slider differently: z-normalise per worker before "
            "mixing. No judge outputs."
        ),
        source=(
            "WebNLG/challenge-2020 (commits 328b4c2, fa9d6e7, af4f18f; no licence stated; the "
            "WebNLG corpus is CC BY-NC-SA 4.0)."
        ),
    )
