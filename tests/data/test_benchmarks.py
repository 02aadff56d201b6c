"""Benchmark loaders on the real files (counts and known cells), the registry, the in-memory
cache, and the fetch-when-missing path (offline message, checksum check) without a network.

The real-file tests read the data folder of data.paths.data_dirs() (JUDGESCOPE_DATA, default
../shared/data) and run whenever its files are there.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import urllib.error
from pathlib import Path

import numpy as np
import pytest

import data
from data.benchmarks import (
    benchmark_info,
    download,
    evalica_toy,
    list_benchmarks,
    llmfao_golden,
    load_benchmark,
)
from data.benchmarks._sources import SOURCES, checksums, remote_file, source_of
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from tests.data._benchmark_files import DATA, go_offline, have, need

NAMES = (
    "summeval",
    "summeval_annotators",
    "hanna",
    "topicalchat",
    "newsroom",
    "webnlg2020",
    "pandalm",
    "llmfao",
    "llmbar",
)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    """No test may download: downloads are off and the user cache is a temp folder."""
    go_offline(monkeypatch, tmp_path_factory)


def load(name: str) -> Dataset:
    return load_benchmark(name, data_dir=DATA)


def _n_per(frame, keys) -> set[int]:
    return set(frame.groupby(keys).size().unique().tolist())


# ----------------------------------------------------------------------------- registry


def test_registry_names_and_info():
    infos = list_benchmarks()
    assert tuple(b.name for b in infos) == NAMES
    for b in infos:
        assert b.title and b.description and b.source and b.files
        assert all(rel in checksums() for rel in b.files)
    assert data.list_benchmarks() == infos
    assert benchmark_info("pandalm").judge_outputs
    assert benchmark_info("newsroom").judge_outputs == ()


def test_unknown_benchmark_names_the_known_ones():
    with pytest.raises(
        DataError, match=r"unknown benchmark 'sumeval'.*summeval, summeval_annotators"
    ):
        load_benchmark("sumeval")


def test_every_known_file_has_a_pinned_source():
    for rel in checksums():
        repo, commit, inner = source_of(rel)
        assert len(commit) == 40 and "/" in repo and inner
    r = remote_file("webnlg2020_humeval/submissions/rdf2text/en/Baseline-FORGE2017/primary.en")
    assert r.url == (
        "https://raw.githubusercontent.com/WebNLG/challenge-2020/"
        "fa9d6e71d1e5b835f3c0ec941c178a8603d4f7de/submissions/rdf2text/en/Baseline-FORGE2017/primary.en"
    )
    r = remote_file(
        "webnlg2020_humeval/evaluation/human-evaluation/results/en/Amazon_AI_(Shanghai)/primary.json"
    )
    assert "Amazon_AI_%28Shanghai%29/primary.json" in r.url and "328b4c2" in r.url
    assert source_of("topicalchat_usr/results/topical_chat/gpt3.5_coh_geval.json")[0] == (
        "d223302/A-Closer-Look-To-LLM-Evaluation"
    )
    assert {s[0] for s in SOURCES} == {rel.split("/")[0] for rel in checksums()}


@pytest.mark.skipif(not (DATA / "llmfao_evalica/simple.csv").is_file(), reason="no data folder")
def test_checksums_match_the_reference_copy():
    # Small files only (the whole set is checked by `python -m data.benchmarks.download checksums`).
    for rel in (
        "llmfao_evalica/simple.csv",
        "llmfao_evalica/food-golden.csv",
        "hanna/data/hanna.jsonl",
    ):
        sha, n_bytes = checksums()[rel]
        assert download.sha256_file(DATA / rel) == sha
        assert (DATA / rel).stat().st_size == n_bytes


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_loads_valid(name):
    if not have(name):
        pytest.skip(f"files of {name!r} not in {DATA}")
    ds = load(name)
    assert isinstance(ds, Dataset) and ds.name == name
    # validate_dataset already ran inside load_benchmark; it must accept the result again.
    data.validate_dataset(ds)
    # Every rated attribute has its scale (pairwise-only attributes need none).
    rated = set(ds.human_scores["attribute"]) | set(ds.ratings["attribute"])
    assert rated <= set(ds.scales)
    for col in ("context_id", "candidate_id"):
        assert ds.candidates[col].map(type).eq(str).all()
    assert ds.description and ds.source


# ----------------------------------------------------------------------------- SummEval


@need("summeval")
def test_summeval_counts_and_known_cell():
    ds = load("summeval")
    assert ds.counts()["contexts"] == 100
    assert ds.candidates.groupby("context_id").size().eq(16).all()
    assert sorted(ds.candidates["system"].unique(), key=lambda s: int(s[1:])) == [
        "M0",
        "M1",
        "M2",
        "M5",
        "M8",
        "M9",
        "M10",
        "M11",
        "M12",
        "M13",
        "M14",
        "M15",
        "M17",
        "M20",
        "M22",
        "M23",
    ]
    hs = ds.human_scores
    assert len(hs) == 100 * 16 * 4
    assert set(hs["annotator"]) == {"expert_mean"}
    assert set(hs["attribute"]) == {"coherence", "consistency", "fluency", "relevance"}
    doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    cell = hs[(hs.context_id == doc) & (hs.candidate_id == "M11")].set_index("attribute")["score"]
    assert cell["consistency"] == 1.0
    assert cell["coherence"] == pytest.approx(4 / 3)
    assert cell["fluency"] == 3.0
    assert ds.scales["fluency"] == (1.0, 5.0)


@need("summeval")
def test_summeval_texts_are_the_untokenised_article_and_original_summaries():
    ds = load("summeval")
    doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    article = ds.contexts.set_index("context_id").loc[doc, "text"]
    assert article.startswith("Paul Merson has restarted his row with Andros Townsend")
    assert "team's 0-0 draw" in article  # untokenised ("team 's" in the BARTScore copy)
    cands = ds.candidates[ds.candidates.context_id == doc].set_index("candidate_id")["text"]
    assert cands["M11"].startswith("paul merson was brought on with only seven minutes")
    assert cands["M20"].startswith("Paul Merson is not happy with Andros Townsend's call-up")
    assert cands["M17"].startswith("paul merson criticised andros townsend's call-up")
    # An extractive system, matched through PPairS, keeps its original spelling.
    assert cands["M0"].startswith("paul merson has restarted his row with andros townsend")
    assert "0 summaries and 0 articles fell back" in ds.description
    assert (ds.candidates["text"].str.len() > 0).all()


@need("summeval_annotators")
def test_summeval_annotators_counts():
    ds = load("summeval_annotators")
    assert ds.counts()["contexts"] == 100
    assert ds.candidates.groupby("context_id").size().eq(12).all()
    hs = ds.human_scores
    assert len(hs) == 100 * 12 * 4 * 8
    experts = hs[hs.annotator.str.startswith("expert_")]
    crowd = hs[hs.annotator.str.startswith("crowd_")]
    keys = ["context_id", "candidate_id", "attribute"]
    assert _n_per(experts, keys) == {3} and _n_per(crowd, keys) == {5}
    assert set(experts.annotator) == {"expert_1", "expert_2", "expert_3"}
    assert set(crowd.annotator) == {f"crowd_{k}" for k in range(1, 6)}
    assert set(hs.score.unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    # The expert ratings average to the means of the 16-system set.
    if have("summeval"):
        means = experts.groupby(keys)["score"].mean()
        ref = load("summeval").human_scores.set_index(keys)["score"]
        assert np.allclose(means.to_numpy(), ref.loc[means.index].to_numpy())
    doc = "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    coh = experts[
        (experts.context_id == doc)
        & (experts.candidate_id == "M10")
        & (experts.attribute == "coherence")
    ]
    assert coh.sort_values("annotator")["score"].tolist() == [1.0, 1.0, 3.0]


@need("summeval")
def test_summeval_carries_the_same_judge_outputs_in_both_sets():
    a, b = load("summeval"), load("summeval_annotators") if have("summeval_annotators") else None
    assert len(a.comparisons) == 8800 and len(a.ratings) == 43200
    if b is not None:
        assert a.comparisons.equals(b.comparisons) and a.ratings.equals(b.ratings)


# ----------------------------------------------------------------------------- HANNA


@need("hanna")
def test_hanna_counts_and_known_cells():
    ds = load("hanna")
    hs = ds.human_scores
    assert len(hs) == 96 * 11 * 6 * 3
    assert ds.contexts["context_id"].tolist() == [f"P{i}" for i in range(96)]
    assert ds.candidates.groupby("context_id").size().eq(11).all()
    assert set(hs.annotator) == {"human_1", "human_2", "human_3"}
    assert set(hs.attribute) == {
        "relevance",
        "coherence",
        "empathy",
        "surprise",
        "engagement",
        "complexity",
    }
    first = hs[
        (hs.candidate_id == "Human") & (hs.annotator == "human_1") & (hs.attribute == "relevance")
    ]
    first = first.set_index("context_id")["score"]
    assert [first[f"P{i}"] for i in range(4)] == [4.0, 5.0, 5.0, 1.0]
    assert (
        ds.contexts.set_index("context_id")
        .loc["P0", "text"]
        .startswith("When you die the afterlife is an arena")
    )


@need("hanna")
def test_hanna_story_texts_match_the_mean_scores():
    ds = load("hanna")
    cands = ds.candidates.set_index(["context_id", "candidate_id"])["text"]
    assert (ds.candidates["text"].str.len() > 0).all()
    assert ds.candidates.groupby("context_id")["text"].nunique().eq(11).all()
    # The two stories with identical means (P76: GPT vs RoBERTa) resolved by recorded length.
    assert cands[("P76", "GPT")].startswith(".. my next question came during dinner")
    assert cands[("P76", "RoBERTa")].startswith("Her planet seemed to have no impact")
    # The join is right: every story's three annotators average to the means PPairS stored
    # with that story's text.
    stored = {}
    with open(DATA / "hanna/data/hanna.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            stored[(r["prompt_id"], r["story"])] = r
    hs = ds.human_scores
    means = hs.groupby(["context_id", "candidate_id", "attribute"])["score"].mean()
    n_checked = 0
    for (cid, sid), text in cands.items():
        row = stored[(cid, text)]
        for attr in ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity"):
            assert abs(means[(cid, sid, attr)] - row[attr]) < 0.006
            n_checked += 1
    assert n_checked == 1056 * 6


@need("hanna")
def test_hanna_judge_ratings():
    r = load("hanna").ratings
    r = r[r["prompt_id"] != "automatic"]  # the LLM judges (measures: test_hanna_measures.py)
    assert len(r) == 5 * 4 * 6 * 96 * 11
    assert r["judge"].nunique() == 20
    assert set(r.prompt_id) == {f"eval_prompt_{k}" for k in range(1, 5)}
    assert set(r["sample"]) == {0}
    # Published means pulled outside 1-5 by failed tries (coded 0 / -1) are NaN, raw kept.
    unparsed = r[r["score"].isna()]
    assert len(unparsed) == 1051
    assert (unparsed["raw"].astype(float) < 1).all()
    assert (unparsed["raw"] == "-1.0").sum() == 174
    assert r["score"].dropna().between(1, 5).all()
    assert unparsed.groupby("judge").size()["Mistral-7B/eval_prompt_1"] == 253
    cell = r[
        (r.judge == "ChatGPT/eval_prompt_4")
        & (r.candidate_id == "Human")
        & (r.attribute == "coherence")
    ]
    assert cell.set_index("context_id")["score"][[f"P{i}" for i in range(5)]].tolist() == [
        4.0,
        4.0,
        4.0,
        4.0,
        5.0,
    ]


# ----------------------------------------------------------------------------- Topical-Chat


@need("topicalchat")
def test_topicalchat_counts():
    ds = load("topicalchat")
    assert ds.contexts["context_id"].tolist() == [f"tc{i:02d}" for i in range(60)]
    assert len(ds.candidates) == 360
    assert ds.candidates.groupby("context_id").size().eq(6).all()
    assert set(ds.candidates.candidate_id) == {
        "Original Ground Truth",
        "Argmax Decoding",
        "Nucleus Decoding (p = 0.3)",
        "Nucleus Decoding (p = 0.5)",
        "Nucleus Decoding (p = 0.7)",
        "New Human Generated",
    }
    hs = ds.human_scores
    assert len(hs) == 360 * 6 and set(hs.annotator) == {"mean"}
    assert ds.scales == {
        "understandability": (0.0, 1.0),
        "naturalness": (1.0, 3.0),
        "coherence": (1.0, 3.0),
        "engagingness": (1.0, 3.0),
        "groundedness": (0.0, 1.0),
        "overall": (1.0, 5.0),
    }
    first = hs[(hs.context_id == "tc00") & (hs.candidate_id == "Original Ground Truth")]
    assert first.set_index("attribute")["score"]["overall"] == pytest.approx(4.67, abs=0.01)


# ----------------------------------------------------------------------------- Newsroom


@need("newsroom")
def test_newsroom_counts():
    ds = load("newsroom")
    assert ds.contexts["context_id"].tolist() == [f"nr{i:02d}" for i in range(60)]
    assert (
        ds.candidates.groupby("context_id")["candidate_id"]
        .apply(list)
        .map(lambda ids: ids == [f"s{k}" for k in range(1, 8)])
        .all()
    )
    hs = ds.human_scores
    assert len(hs) == 60 * 7 * 4 * 3
    assert set(hs.attribute) == {"informativeness", "relevance", "fluency", "coherence"}
    assert _n_per(hs, ["context_id", "candidate_id", "attribute"]) == {3}
    first = hs[
        (hs.context_id == "nr00") & (hs.candidate_id == "s1") & (hs.attribute == "relevance")
    ]
    assert first.sort_values("annotator")["score"].tolist() == [4.0, 5.0, 1.0]
    assert ds.candidates.iloc[0]["text"].startswith("collection of all usatoday.com coverage")
    assert ds.contexts.iloc[0]["text"].startswith("'16 & Pregnant' Couple Arrested")


# ----------------------------------------------------------------------------- WebNLG


@need("webnlg2020")
def test_webnlg_counts_and_known_cells():
    ds = load("webnlg2020")
    assert len(ds.contexts) == 178
    assert ds.candidates.candidate_id.nunique() == 17
    assert ds.candidates.groupby("context_id").size().eq(17).all()
    hs = ds.human_scores
    ratings = hs.groupby(["context_id", "candidate_id", "annotator"]).ngroups
    assert ratings == 8453 and len(hs) == 8453 * 5
    assert hs.annotator.nunique() == 88
    assert hs.score.between(0, 100).all() and ds.scales["fluency"] == (0.0, 100.0)
    cell = hs[
        (hs.context_id == "Id3") & (hs.candidate_id == "bt5") & (hs.annotator == "en_worker_8")
    ]
    assert cell.set_index("attribute")["score"].to_dict() == {
        "correctness": 98.0,
        "data_coverage": 97.0,
        "fluency": 96.0,
        "relevance": 97.0,
        "text_structure": 98.0,
    }
    cands = ds.candidates.set_index(["context_id", "candidate_id"])["text"]
    assert cands[("Id3", "bt5")] == "The MotorSport Vision is located in the city of Fawkham."
    assert (
        cands[("Id3", "WebNLG-2020-reference")]
        == "MotorSport Vision is located in the city of Fawkham."
    )
    assert (
        ds.contexts.set_index("context_id").loc["Id3", "text"]
        == "MotorSport_Vision | city | Fawkham"
    )
    # FORGE2020 has one item without any rating.
    rated = hs.groupby("candidate_id")["context_id"].nunique()
    assert rated["Baseline-FORGE2020"] == 177 and rated["bt5"] == 178


# ----------------------------------------------------------------------------- PandaLM


@need("pandalm")
def test_pandalm_counts():
    ds = load("pandalm")
    assert len(ds.contexts) == 170
    cmp = ds.comparisons
    humans = cmp[cmp.judge.str.startswith(HUMAN_JUDGE_PREFIX)]
    assert set(humans.judge) == {"human:annotator1", "human:annotator2", "human:annotator3"}
    assert len(humans) == 999 * 3
    assert _n_per(humans, ["context_id", "first_id", "second_id"]) == {3}
    assert set(ds.candidates.system) == {
        "llama-7b",
        "bloom-7b",
        "cerebras-gpt-6.7B",
        "opt-7b",
        "pythia-6.9b",
    }
    # 779 (prompt, model) cells; 17 of them have more than one response text (21 extra).
    assert len(ds.candidates) == 800
    assert ds.candidates.candidate_id.str.contains("#").sum() == 21
    first = cmp[(cmp.context_id == "pl000") & (cmp.judge == "human:annotator1")].iloc[0]
    assert (first.first_id, first.second_id, first.verdict, first.p_first) == (
        "bloom-7b",
        "llama-7b",
        "B",
        0.0,
    )


# ----------------------------------------------------------------------------- LLMFAO


@need("llmfao")
def test_llmfao_counts():
    ds = load("llmfao")
    cmp = ds.comparisons
    assert len(cmp) == 8931
    assert len(set(cmp.first_id) | set(cmp.second_id)) == 59
    assert ds.candidates.candidate_id.nunique() == 59
    assert len(ds.contexts) == 13
    assert cmp.judge.nunique() == 124 and cmp.judge.str.startswith("human:worker").all()
    assert cmp.verdict.value_counts().to_dict() == {"tie": 3471, "A": 2911, "B": 2549}
    assert cmp.p_first.value_counts().to_dict() == {0.5: 3471, 1.0: 2911, 0.0: 2549}
    assert (ds.candidates.text == "").all()
    first = cmp.iloc[0]
    assert (first.context_id, first.first_id, first.second_id, first.verdict) == (
        "p8",
        "Airoboros L2 70B",
        "Weaver 12k",
        "tie",
    )


@need("llmfao")
def test_llmfao_golden_and_toys():
    g = llmfao_golden(data_dir=DATA)
    assert list(g.columns) == ["algorithm", "item", "score"]
    assert g.groupby("algorithm").size().eq(59).all() and g.algorithm.nunique() == 7
    bt = g[g.algorithm == "bradley_terry"]
    assert bt.score.sum() == pytest.approx(1.0, abs=1e-3)
    assert bt.set_index("item")["score"]["GPT 4"] == pytest.approx(0.0412, abs=1e-4)
    toy = evalica_toy("simple", data_dir=DATA)
    assert len(toy.comparisons) == 16 and len(toy.candidates) == 5
    assert not toy.comparisons.duplicated(["first_id", "second_id", "sample"]).any()
    assert set(llmfao_golden(data_dir=DATA, which="food").algorithm) >= {"bradley_terry", "elo"}
    with pytest.raises(DataError, match="which must be"):
        llmfao_golden(which="nope")


# ----------------------------------------------------------------------------- cache


@need("llmfao")
def test_second_load_is_cached_and_isolated():
    a = load("llmfao")
    a.comparisons.loc[0, "verdict"] = "B"  # a caller's edit must not reach the cache
    b = load("llmfao")
    assert b is not a
    assert b.comparisons.loc[0, "verdict"] == "tie"


@need("llmfao")
def test_cache_follows_file_changes(tmp_path):
    folder = tmp_path / "llmfao_evalica"
    folder.mkdir()
    src = DATA / "llmfao_evalica" / "llmfao.csv"
    dst = folder / "llmfao.csv"
    shutil.copy(src, dst)
    assert len(load_benchmark("llmfao", data_dir=tmp_path).comparisons) == 8931
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dst.write_text("".join(lines[:-1]), encoding="utf-8")  # size and mtime change
    assert len(load_benchmark("llmfao", data_dir=tmp_path).comparisons) == 8930


# ----------------------------------------------------------------------------- missing files


def test_missing_file_offline_names_file_folders_and_setting(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = Path(data.user_cache_dir()) / "data"
    with pytest.raises(DataError) as err:
        load_benchmark("pandalm", data_dir=empty)
    msg = str(err.value)
    assert "benchmark 'pandalm': 3 file(s)" in msg and "in no data folder searched" in msg
    assert str(empty) in msg and str(cache) in msg
    assert f"put them under {empty} yourself" in msg
    assert "'pandalm_testset/data/testset-v1.json'" in msg
    assert "`python -m data fetch pandalm`" in msg
    assert "JUDGESCOPE_DATA" in msg and "JUDGESCOPE_OFFLINE" in msg
    # one problem per folder of missing files, which counts them
    assert err.value.problems == [
        "'pandalm_testset/data/': 3 file(s) missing (testset-v1.json, "
        "gpt-3.5-turbo-testset-v1.json, pandalm-7b-testset-v1.json)"
    ]


def test_missing_file_when_download_fails(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGESCOPE_OFFLINE")
    calls = []

    def no_network(remote, dest, progress=None):
        calls.append(remote.relpath)
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(download, "download_file", no_network)
    with pytest.raises(DataError) as err:
        load_benchmark("newsroom", data_dir=tmp_path)
    msg = str(err.value)
    assert calls == ["newsroom_judgebench/data/newsroom/newsroom.json"]
    assert "benchmark 'newsroom': 1 file(s)" in msg
    assert "'newsroom_judgebench/data/newsroom/newsroom.json'" in msg
    assert (
        "https://raw.githubusercontent.com/dmg-illc/JUDGE-BENCH/5a0bf500325029efb5dc8adff2c1e991996f0e78/data/newsroom/newsroom.json"
        in msg
    )
    assert "Temporary failure in name resolution" in msg
    assert str(tmp_path) in msg and "JUDGESCOPE_DATA" in msg


class _FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _serve(payloads: dict[str, bytes]):
    def urlopen(request, timeout=None):
        url = request.full_url
        if url not in payloads:
            raise urllib.error.HTTPError(url, 404, "Not Found", None, None)
        return _FakeResponse(payloads[url])

    return urlopen


@need("llmfao")
def test_download_fills_the_cache_and_checks_the_checksum(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGESCOPE_OFFLINE")
    rel = "llmfao_evalica/llmfao.csv"
    remote = remote_file(rel)
    monkeypatch.setattr(
        download.urllib.request, "urlopen", _serve({remote.url: (DATA / rel).read_bytes()})
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    ds = load_benchmark("llmfao", data_dir=empty)
    assert len(ds.comparisons) == 8931
    cached = Path(data.user_cache_dir()) / "data" / rel
    assert cached.is_file() and download.sha256_file(cached) == remote.sha256
    assert not list(cached.parent.glob("*.part"))
    # Found in the cache next time, without the network.
    monkeypatch.setenv("JUDGESCOPE_OFFLINE", "1")
    assert len(load_benchmark("llmfao", data_dir=empty).comparisons) == 8931


def test_download_with_wrong_checksum_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGESCOPE_OFFLINE")
    rel = "llmfao_evalica/llmfao.csv"
    remote = remote_file(rel)
    monkeypatch.setattr(
        download.urllib.request, "urlopen", _serve({remote.url: b"left,right,winner\nx,y,tie\n"})
    )
    with pytest.raises(DataError) as err:
        load_benchmark("llmfao", data_dir=tmp_path / "nothing")
    msg = str(err.value)
    assert f"checksum mismatch for '{rel}'" in msg and remote.sha256 in msg
    cached = Path(data.user_cache_dir()) / "data" / rel
    assert not cached.exists()
    assert not list(cached.parent.glob("*.part"))


def test_download_file_progress_and_atomic_write(tmp_path, monkeypatch):
    payload = b"a,b\n1,2\n" * 1000
    remote = download.RemoteFile(
        "x/y.csv", "https://example.org/y.csv", hashlib.sha256(payload).hexdigest(), len(payload)
    )
    monkeypatch.setattr(download.urllib.request, "urlopen", _serve({remote.url: payload}))

    class Bar:
        n = 0

        def update(self, k):
            self.n += k

    bar = Bar()
    out = download.download_file(remote, tmp_path / "x" / "y.csv", progress=bar)
    assert out.read_bytes() == payload and bar.n == len(payload)
