"""data.reproduce: the papers' published numbers beside the computed ones (issue 12)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest

import data
from data.benchmarks import load_benchmark
from data.reproduce import COLUMNS, PAPERS, ROW_COLUMNS, chhun2024, papers_for, rows
from data.reproduce.cli import main
from data.schema import DataError


@pytest.fixture(scope="module")
def chhun() -> pd.DataFrame:
    return rows("chhun2024")


def _one(table: pd.DataFrame, ref: str, contains: str) -> pd.Series:
    sel = table[(table["ref"] == ref) & table["quantity"].str.contains(contains, regex=False)]
    assert len(sel) == 1, (ref, contains, sel["quantity"].tolist())
    return sel.iloc[0]


def test_every_published_number_is_within_tolerance_or_noted(chhun):
    assert list(chhun.columns) == ROW_COLUMNS
    with_number = chhun[chhun["published"].notna()]
    assert len(with_number) > 60
    off = with_number[~with_number["status"].isin(["ok", "noted"])]
    assert off.empty, off[["ref", "quantity", "published", "computed"]].to_string()
    noted = with_number[with_number["status"] == "noted"]
    assert (noted["note"].str.len() > 20).all()
    # the rows the issue names reproduce outright
    for ref, what in [
        ("Figure 4", "Beluga-13B overall"),
        ("Figure 4", "Llama-13B overall"),
        ("Figure 4", "Mistral-7B overall"),
        ("Figure 4", "ChatGPT overall"),
        ("Figure 4", "human baseline"),
        ("Figure 5", "human baseline"),
        ("Figure 5", "BARTScore"),
        ("Figure 6", "ChatGPT, overall, one-sided Williams p (BH over the 6 criteria), min"),
        ("Figure 6", "ChatGPT, overall, one-sided Williams p (BH over the 6 criteria), max"),
    ]:
        assert _one(chhun, ref, what)["status"] == "ok", (ref, what)


def test_pinned_values(chhun):
    pins = {
        ("Figure 4", "Beluga-13B overall"): 0.2463,
        ("Figure 4", "ChatGPT overall"): 0.1792,
        ("Figure 4", "Llama-13B overall"): 0.1631,
        ("Figure 4", "Mistral-7B overall"): 0.2015,
        ("Figure 5", "Beluga-13B system-level"): 0.6938,
        ("Figure 4", "human baseline"): 0.4772,
        ("Figure 5", "human baseline"): 0.7291,
        ("Figure 5", "BARTScore (BARTScore-SH)"): 0.5654,
        ("Figure 6", "overall, one-sided Williams p (BH over the 6 criteria), min"): 0.0144,
        ("Figure 6", "overall, one-sided Williams p (BH over the 6 criteria), max"): 0.1422,
        ("Table 3", "ChatGPT mean rating, Eval-Prompt 1"): 1.5200,
        ("Table 3", "ChatGPT mean rating, Eval-Prompt 3"): 1.6195,
        ("Table 6", "of Human stories, RE"): 3.3715,
        ("Table 7", "of GPT-2 stories, RE"): 2.2465,
        ("Table 1", "human inter-annotator ICC2k, CX"): 0.5359,
    }
    for (ref, what), value in pins.items():
        assert _one(chhun, ref, what)["computed"] == pytest.approx(value, abs=6e-4), what
    # documented differences carry their explanation
    assert (
        "Llama-written stories"
        in _one(chhun, "Table 3", "Beluga-13B mean rating, Eval-Prompt 1")["note"]
    )
    assert "tried" in _one(chhun, "Table 1", "human inter-annotator ICC2k, RE")["note"]
    assert _one(chhun, "Figure 4", "best non-LLM")["bound"] == "<="
    assert _one(chhun, "Figure 6", "smallest BH-adjusted p")["bound"] == ">="


def test_beluga_system_level_note_names_the_step_that_differs(chhun):
    """Figure 5's Beluga-13B: .694 with exact ties kept; the independent .699 (paper .70)
    comes from float means that break those ties; the note says where and gives .699."""
    r = _one(chhun, "Figure 5", "Beluga-13B system-level")
    assert r["status"] == "noted"
    note = r["note"]
    assert "0.699" in note and "ties" in note
    assert "engagement: the LLM's means of GPT-2 and GPT-2 (tag) (2.6667)" in note
    assert "complexity: the humans' means of" in note
    assert "relevance: the LLM's means of BertGeneration and GPT (2.2500) (also equal" in note


def test_rows_link_to_pages_with_url_settings(chhun):
    r = _one(chhun, "Figure 4", "Beluga-13B overall")
    assert r["page"] == "agreement"
    assert r["settings"] == {
        "dataset": "hanna",
        "judge": "Beluga-13B/eval_prompt_1",
        "exclude": "Human",
        "reading": "published",
    }
    assert all(isinstance(s, dict) and s["dataset"] == "hanna" for s in chhun["settings"])
    assert set(chhun["page"]) <= {"agreement", "prompts"}


def test_including_the_human_story_moves_figure_4():
    ds = load_benchmark("hanna")
    ten = {r["quantity"]: r["computed"] for r in chhun2024.figures_4_5(chhun2024.paper_view(ds))}
    every = chhun2024.figures_4_5(chhun2024.paper_view(ds, exclude=()))
    moved = {r["quantity"]: r["computed"] - ten[r["quantity"]] for r in every}
    beluga = "Beluga-13B overall Kendall tau-b, Eval-Prompt 1, mean of 6 criteria"
    assert moved[beluga] > 0.05  # the issue: +.07 to +.14 overall with the human story
    assert all(
        moved[f"{m} overall Kendall tau-b, Eval-Prompt 1, mean of 6 criteria"] > 0.02
        for m in ("Beluga-13B", "Llama-13B", "Mistral-7B", "ChatGPT")
    )


def test_data_reproduce_is_a_call_and_a_package():
    table = data.reproduce("liusie2024")
    assert list(table.columns) == COLUMNS
    assert data.reproduce.rows is rows and data.reproduce.PAPERS is PAPERS
    assert (table["paper"] == "liusie2024").all()
    assert table["published"].isna().all() and table["computed"].notna().all()
    assert table["note"].str.contains("GPT-3.5").all()
    assert {"Tables 5/9", "Table 6", "Tables 7/10", "Table 8", "Table 11"} <= set(table["ref"])


def test_chiang_rows_compute_on_our_data():
    table = rows("chiang2023")
    assert table["published"].isna().all()
    assert (table["note"].str.len() > 0).all()
    welch = table[table["quantity"].str.contains("Welch's t")]
    assert len(welch) == 6 * 5  # humans + 4 LLM judges x 6 criteria
    assert (welch["computed"] > 0).sum() >= 24  # human-written stories rated higher
    alpha = table[table["quantity"].str.contains("Krippendorff")]
    assert len(alpha) == 4 and alpha["computed"].between(-1, 1).all()
    assert (
        table[table["ref"] == "Table 6"]["settings"].map(lambda s: s["dataset"]) == "hanna"
    ).all()


def test_papers_for():
    assert papers_for("hanna") == ["chhun2024", "chiang2023"]
    assert papers_for("hanna (judged)") == ["chhun2024", "chiang2023"]
    assert papers_for("summeval") == ["liusie2024"]
    assert papers_for("topicalchat") == ["chiang2023"]
    assert papers_for("demo") == []
    assert papers_for("llmbar") == ["zeng2024"]


def test_unknown_paper():
    with pytest.raises(DataError, match="chhun2024, liusie2024, chiang2023"):
        rows("hanna2022")
    assert main(["hanna2022"]) == 2
    done = subprocess.run(
        [sys.executable, "-m", "data.reproduce", "nope"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "chhun2024" in done.stderr


def test_cli_prints_and_writes_json(tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert main(["liusie2024", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Table 11" in printed and "published" in printed.splitlines()[1]
    recs = json.loads(out.read_text())
    assert recs and set(COLUMNS) <= set(recs[0]) and recs[0]["published"] is None
    assert all(not (isinstance(r["computed"], float) and math.isnan(r["computed"])) for r in recs)
    assert main(["liusie2024", "--json", str(tmp_path / "no" / "dir.json")]) == 2
