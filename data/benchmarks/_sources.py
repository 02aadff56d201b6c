"""Where every benchmark file comes from (pinned public sources) and its checksum.

The data folder keeps each set under its own folder (``hanna/``, ``summeval_llm_eval/`` ...)
with the same relative paths as in the source repository; the set's PROVENANCE.md names the
repository and commit. ``checksums.json`` holds ``[sha256, n_bytes]`` per file, computed from
the reference copy with ``python -m data.benchmarks.download checksums ROOT``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from data.benchmarks.download import RemoteFile, raw_github_url

# (set folder, path prefix inside it, repository, commit); the longest matching prefix wins.
# Paths inside the repository equal the paths inside the set folder (see each PROVENANCE.md).
SOURCES: tuple[tuple[str, str, str, str], ...] = (
    (
        "hanna",
        "hanna_metric_scores_llm.csv",
        "dig-team/hanna-benchmark-asg",
        "282f27536a5d05ad4ce14298abcd70c45668fed2",
    ),
    ("hanna", "data/hanna.jsonl", "maiush/PPairS", "cc4ba407ba0ece35214d286345371a60ee028230"),
    ("llmbar", "", "princeton-nlp/LLMBar", "900616bff90b6c6c8e1681f7d079250637c55992"),
    ("llmfao_evalica", "", "dustalov/evalica", "2ebe79e3a191875aa0c4cc295c7f1c192e24214b"),
    ("newsroom_judgebench", "", "dmg-illc/JUDGE-BENCH", "5a0bf500325029efb5dc8adff2c1e991996f0e78"),
    ("pandalm_testset", "", "WeOpenML/PandaLM", "3871806e72b4832f815ecafd24d3503c73403f48"),
    ("summeval_bartscore", "", "neulab/BARTScore", "248f511cb34ae3753fc81f7d7a945de5bfe33458"),
    (
        "summeval_llm_eval",
        "",
        "DAMO-NLP-SG/LLM_summeval",
        "bd7dde15817a88940c17574973ff03e750356daa",
    ),
    ("summeval_ppairs", "", "maiush/PPairS", "cc4ba407ba0ece35214d286345371a60ee028230"),
    (
        "topicalchat_usr",
        "reproduce/",
        "maszhongming/UniEval",
        "d33e7b6cfebe97b2bafe435adbd818230d5a416a",
    ),
    (
        "topicalchat_usr",
        "results/",
        "d223302/A-Closer-Look-To-LLM-Evaluation",
        "90084422bb32e89f77109dce578d0bd1db3912c4",
    ),
    ("webnlg2020_humeval", "", "WebNLG/challenge-2020", "328b4c252abd9ca36471f390f9fcbd2650798088"),
    (
        "webnlg2020_humeval",
        "submissions/rdf2text/en/Baseline-FORGE2017/",
        "WebNLG/challenge-2020",
        "fa9d6e71d1e5b835f3c0ec941c178a8603d4f7de",
    ),
    (
        "webnlg2020_humeval",
        "submissions/rdf2text/en/Baseline-FORGE2020/",
        "WebNLG/challenge-2020",
        "fa9d6e71d1e5b835f3c0ec941c178a8603d4f7de",
    ),
    (
        "webnlg2020_humeval",
        "data/",
        "WebNLG/challenge-2020",
        "af4f18f01c718592b2358277bc52e955d0d49cf8",
    ),
)

CHECKSUMS_FILE = Path(__file__).with_name("checksums.json")


@cache
def checksums() -> dict[str, tuple[str, int]]:
    """relpath -> (sha256, n_bytes) of every known benchmark file.

    Returns
    -------
    dict of str to (str, int)
        Read from ``checksums.json`` once per process (cached).
    """
    raw = json.loads(CHECKSUMS_FILE.read_text(encoding="utf-8"))
    return {rel: (str(v[0]), int(v[1])) for rel, v in raw.items()}


def source_of(relpath: str) -> tuple[str, str, str]:
    """(repository, commit, path in repository) of a file under the data folder.

    Parameters
    ----------
    relpath : str
        ``"<set folder>/<path inside it>"``, as in ``checksums.json``.

    Returns
    -------
    (repository, commit, path)
        From the entry of :data:`SOURCES` for the set folder with the longest prefix that the
        path inside the set starts with; ``path`` is that inner path.

    Raises
    ------
    KeyError
        No entry of :data:`SOURCES` matches.
    """
    folder, _, inner = relpath.partition("/")
    best = None
    for set_folder, prefix, repo, commit in SOURCES:
        if set_folder == folder and inner.startswith(prefix):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, repo, commit)
    if best is None:
        raise KeyError(f"no public source is registered for '{relpath}'")
    return best[1], best[2], inner


def remote_file(relpath: str) -> RemoteFile:
    """The :class:`~data.benchmarks.download.RemoteFile` for a known benchmark file.

    Parameters
    ----------
    relpath : str
        Path relative to a data folder, a key of ``checksums.json``.

    Returns
    -------
    RemoteFile
        The raw GitHub URL at the pinned commit and the expected SHA-256 and size.

    Raises
    ------
    KeyError
        ``relpath`` is not in ``checksums.json``, or no source is registered for it.
    """
    table = checksums()
    if relpath not in table:
        raise KeyError(f"'{relpath}' is not a known benchmark file (see {CHECKSUMS_FILE.name})")
    repo, commit, inner = source_of(relpath)
    sha, n_bytes = table[relpath]
    return RemoteFile(relpath, raw_github_url(repo, commit, inner), sha, n_bytes)


def files_under(prefix: str, *, exclude_suffixes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Known files whose relpath starts with ``prefix``, sorted, minus excluded endings.

    Parameters
    ----------
    prefix : str
        Start of the relpath (``"summeval_llm_eval/comp_res/"``).
    exclude_suffixes : tuple of str
        Relpaths ending in one of these are left out.

    Returns
    -------
    tuple of str
        Relpaths from ``checksums.json``, sorted.
    """
    return tuple(
        rel
        for rel in sorted(checksums())
        if rel.startswith(prefix) and not rel.endswith(exclude_suffixes)
    )
