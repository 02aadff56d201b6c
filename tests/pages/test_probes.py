"""AppTest of the Judge bias page's "Self-preference and contamination" section with a tiny
random-weight Llama saved to a temporary folder (offline): the guidance without a model, a
run with progress, the tables and figures, the own-family win rate, the AUC against a direct
computation, and the results kept per (dataset, model, texts)."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("transformers")

import data  # noqa: E402
from data.bias import probes as dp  # noqa: E402
from pages.services import probes as svc  # noqa: E402
from tests.judge.tiny_models import tiny_model_dirs  # noqa: E402
from tests.pages._analysis_apptest import assert_clean, chart_titles, metrics, open_page  # noqa: E402

PAGE = "pages/judge_bias/page.py"
SECTION = "Self-preference and contamination"
CAP = 24


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    return tiny_model_dirs(tmp_path_factory)


def test_without_a_model_the_section_says_what_to_name():
    at = open_page(PAGE)
    assert_clean(at)
    assert SECTION in [s.value for s in at.subheader]
    info = "\n".join(i.value for i in at.info)
    assert "local folder" in info and "save_pretrained" in info


def test_run_on_the_tiny_model(model_dirs):
    path = str(model_dirs["llama-nochat"])
    at = open_page(PAGE)
    at.text_input(key="judge_bias.probe_model").set_value(path)
    at.number_input(key="judge_bias.probe_cap").set_value(CAP).run()
    assert_clean(at)
    assert "judge_bias.probe_run" in [b.key for b in at.button]
    at.button(key="judge_bias.probe_run").click().run()
    assert_clean(at)
    titles = chart_titles(at)
    assert "Judge preference against log-likelihood difference" in titles
    assert "Min-K% Prob of the two groups" in titles
    assert any("scored 24 of 72 candidates" in c.value for c in at.caption)
    frames = [d.value for d in at.dataframe]
    by_sys = next(f for f in frames if "n_texts" in f.columns)
    assert by_sys["n_texts"].sum() == CAP
    assert (by_sys["perplexity"] > 1).all() and (by_sys["min_k_prob"] < 0).all()
    summary = next(f for f in frames if "spearman" in f.columns)
    assert summary["pairs"].iloc[0] == "all pairs" and summary["n"].iloc[0] > 0

    # the AUC shown equals the one computed here from the model's log-probabilities
    from judge import token_logprobs
    from judge.backends.hf import HFBackend

    ds = data.demo_dataset()
    texts, _ = dp.probe_texts(ds, CAP)
    prefixes = [c + svc.CONTEXT_SEP for c in texts["context_text"]]
    lps = token_logprobs(HFBackend(path), texts["text"].tolist(), prefixes)
    table = dp.score_table(texts, lps, 0.2)
    systems = sorted(table["system"].unique(), key=data.natural.natural_key)
    want, _ = dp.contamination(table, "system", systems[:1], systems[1:], n_boot=0)
    shown = metrics(at)["AUC (A above B)"]
    assert float(shown) == pytest.approx(want["auc"], abs=6e-4)

    # own family: a win-rate table appears
    at.multiselect(key="judge_bias.probe_own").set_value(systems[:2]).run()
    assert_clean(at)
    wins = next(d.value for d in at.dataframe if "win_rate" in d.value.columns)
    assert list(wins["system"]) == [*systems[:2], "all own-family"]

    # kept: a rerun shows the results without pressing the button; k changes Min-K%
    at.slider(key="judge_bias.probe_k").set_value(1.0).run()
    assert_clean(at)
    by_sys_k1 = next(d.value for d in at.dataframe if "n_texts" in d.value.columns)
    assert by_sys_k1["min_k_prob"].to_numpy() == pytest.approx(by_sys_k1["mean_logprob"].to_numpy())
    assert [b.label for b in at.button if b.key == "judge_bias.probe_run"] == ["Score again"]

    # leaving a system out of the analysis scope needs no new run: its texts leave the tables
    at.multiselect(key="app.exclude").set_value([systems[0]]).run()
    assert_clean(at)
    by_sys_scoped = next(d.value for d in at.dataframe if "n_texts" in d.value.columns)
    assert list(by_sys_scoped["system"]) == list(by_sys_k1["system"])[1:]
    assert [b.label for b in at.button if b.key == "judge_bias.probe_run"] == ["Score again"]


def test_a_seq2seq_model_gets_a_clear_message(model_dirs):
    at = open_page(PAGE)
    at.text_input(key="judge_bias.probe_model").set_value(str(model_dirs["t5"]))
    at.number_input(key="judge_bias.probe_cap").set_value(6).run()
    at.button(key="judge_bias.probe_run").click().run()
    assert not at.exception
    shown = "\n".join(e.value for e in at.error)
    assert re.search("causal", shown), shown
