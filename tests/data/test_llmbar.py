"""LLMBar on the real files: the loader (counts, both orders in the original indexing, the
Rating strategies' tie rule), the report card on it, its command line, and the authors'
statistics.json reproduced by data.reproduce.zeng2024. Skipped when the files are absent."""

from __future__ import annotations

import json

import numpy as np
import pytest

from data.benchmarks import benchmark_info, llmbar, load_benchmark
from data.report_card import card, category_table, judge_table
from data.report_card.cli import main
from tests.data._benchmark_files import DATA, go_offline, need

pytestmark = need("llmbar")

#: PROVENANCE.md's verified counts: pairs, label 1, label 2.
COUNTS = {
    "LLMBar/Natural": (100, 42, 58),
    "LLMBar/Adversarial/Neighbor": (134, 75, 59),
    "LLMBar/Adversarial/GPTInst": (92, 45, 47),
    "LLMBar/Adversarial/GPTOut": (47, 22, 25),
    "LLMBar/Adversarial/Manual": (46, 22, 24),
    "Processed/MT-Bench": (200, 101, 99),
    "Processed/FairEval": (66, 41, 25),
    "Processed/LLMEval^2": (200, 92, 108),
}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    go_offline(monkeypatch, tmp_path_factory)


@pytest.fixture(scope="module")
def ds():
    return load_benchmark("llmbar", data_dir=DATA)


def test_files_are_the_published_ones():
    files = benchmark_info("llmbar").files
    assert len(files) == 252
    assert sum(f.endswith("/dataset.json") for f in files) == 8
    assert sum(f.endswith("/result.json") for f in files) == 122
    assert len(llmbar.statistics_files()) == 122


def test_counts_gold_and_judges(ds):
    comps = ds.comparisons
    gold = comps[comps["judge"] == llmbar.GOLD_JUDGE]
    assert len(ds.contexts) == 885 and len(ds.candidates) == 1770 and len(gold) == 885
    subset = gold["context_id"].map(llmbar.subset_of)
    for name, (n, n1, n2) in COUNTS.items():
        mine = gold[subset == name]
        assert len(mine) == n, name
        assert ((mine["verdict"] == "A").sum(), (mine["verdict"] == "B").sum()) == (n1, n2)
    judged = comps[comps["judge"] != llmbar.GOLD_JUDGE]
    assert judged["judge"].nunique() == 22 and len(judged) == 22_164
    assert int(judged["p_first"].isna().sum()) == 130
    assert set(ds.candidates["candidate_id"]) == set(llmbar.CANDIDATES)


def test_both_orders_in_the_original_indexing(ds):
    c = ds.comparisons.set_index(["context_id", "judge", "first_id"])
    # Natural item 3, GPT-4/CoT: winner "1" in both orders (label 1)
    assert c.loc[("LLMBar/Natural/003", "GPT-4/CoT", "output_1"), "verdict"] == "A"
    assert c.loc[("LLMBar/Natural/003", "GPT-4/CoT", "output_2"), "verdict"] == "B"
    # Natural item 6, GPT-4/Rating: scores 8 and 8, winner "2" then "1": the second shown
    # wins in both orders (the authors' tie rule)
    for first in llmbar.CANDIDATES:
        row = c.loc[("LLMBar/Natural/006", "GPT-4/Rating", first)]
        assert row["verdict"] == "B" and "score_1 = 8, score_2 = 8" in row["raw"]
    # an unparsed answer stays NaN with its (empty) completion
    row = c.loc[("Processed/LLMEval^2/002", "PaLM2/Vanilla_NoRules", "output_1")]
    assert np.isnan(row["p_first"]) and row["raw"] == ""


def test_report_card_on_llmbar(ds):
    c = card(ds)
    assert len(c.gold.scored) == 885 and len(c.judges) == 22
    t = judge_table(c).set_index("judge")
    assert t.loc["GPT-4/Vanilla_NoRules", "n"] == 885 and t.loc["GPT-4/CoT", "n"] == 419
    assert t.loc["LLaMA2/CoT", "n_gold_not_judged"] == 885 - 419
    assert t["n_one_order"].eq(0).all() and not t["probabilities"].any()
    assert t.index[0].startswith("GPT-4/")
    cats = category_table(c)
    natural = cats[
        (cats["judge"] == "GPT-4/Vanilla_NoRules") & (cats["category"] == "LLMBar/Natural")
    ]
    assert natural["accuracy"].iloc[0] == pytest.approx(0.935)  # statistics.json: 93.5%
    assert natural["positional_agreement"].iloc[0] == pytest.approx(0.92)


def test_statistics_json_reproduce_exactly():
    from data.reproduce import rows

    table = rows("zeng2024", DATA)
    assert len(table) == 122 * 5
    assert table["ref"].nunique() == 8
    key = table["quantity"].str.extract(r"\((\w+)\)$")[0]
    exact = table[key != "equal"]
    # accuracy (each order and the mean) and positional agreement equal the authors' numbers
    assert (exact["status"] == "ok").all(), exact[exact["status"] != "ok"][["quantity"]]
    assert (exact["abs_diff"] <= 1e-9).all()
    equal = table[key == "equal"]
    noted = equal[equal["status"] != "ok"]
    assert (noted["status"] == "noted").all()
    assert noted["note"].str.contains("= the published value", regex=False).all()
    assert set(table["page"]) == {"report-card"}
    gpt4 = table[
        (table["ref"] == "statistics.json: LLMBar/Natural")
        & table["quantity"].str.startswith("GPT-4/Vanilla_NoRules:")
    ]
    assert gpt4["published"].tolist() == pytest.approx([0.92, 0.95, 0.935, 0.92, 0.97])


def test_published_values_are_read_from_the_strings():
    from data.reproduce.zeng2024 import published_value
    from data.schema import DataError

    assert published_value("92 / 100 = 92.0%") == 0.92
    assert published_value("46.73913043478261%") == pytest.approx(0.4673913043478261)
    with pytest.raises(DataError):
        published_value("n/a")
    rel = llmbar.statistics_files()[("LLMBar/Natural", "GPT-4", "Vanilla_NoRules")]
    stats = json.loads((DATA / rel).read_text())
    assert published_value(stats["correct_both"]) == 0.92


def test_command_line_prints_the_table(capsys):
    assert main(["--benchmark", "llmbar", "--data-dir", str(DATA), "--categories", "source"]) == 0
    out = capsys.readouterr().out
    assert "885 pairs with a gold winner, 22 judges" in out
    for head in ("accuracy [95% CI]", "pos. agreement", "consistency", "first-pos. rate", "ECE"):
        assert head in out
    line = next(x for x in out.splitlines() if x.startswith("GPT-4/Vanilla_NoRules "))
    assert " 885 " in line and "[" in line
    assert "accuracy per source" in out and "Processed" in out


def test_command_line_reads_a_usage_table(tmp_path, capsys):
    usage = tmp_path / "usage.csv"
    usage.write_text(
        "judge,model,n_calls,prompt_tokens,completion_tokens,usd\nGPT-4/CoT,gpt-4,838,1000,10,0.838\n"
    )
    assert main(["--benchmark", "llmbar", "--data-dir", str(DATA), "--usage", str(usage)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("GPT-4/CoT "))
    assert line.rstrip().endswith("1.0000")  # $0.838 over 838 judgments -> $1 per 1,000
    bad = tmp_path / "bad.csv"
    bad.write_text("judge\nx\n")
    assert main(["--benchmark", "llmbar", "--data-dir", str(DATA), "--usage", str(bad)]) == 2
    assert "needs columns" in capsys.readouterr().err
