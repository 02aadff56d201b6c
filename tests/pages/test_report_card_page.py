"""The Judge report card page: on LLMBar (the published judges, the lazy sections, a failed
pair opened on Examples, the report), on 30 judges with probabilities and bad input (charts
that grow with the judges, every problem said with its count, calibration), on a file
uploaded with a gold column, on the demo (no gold), and a judge run from the Judge page
against the local fake OpenAI server joining the card with its cost."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from data.benchmarks import load_benchmark
from data.io import read_upload_result
from data.report_card import card, failures
from data.schema import Dataset
from pages.report import export
from pages.shell import ui
from pages.shell.text import unsafe
from tests.judge.fake_openai import FakeOpenAI
from tests.pages._analysis_apptest import charts, metrics, need, open_page

PAGE = "pages/report_card/page.py"
DOT_PLOT = "Accuracy of each judge against the known answers"
ORDERS = "The two orders: accuracy in each, agreement, consistency, first position"
LAZY = ("report_card.open.modes", "report_card.open.calibration", "report_card.open.failures")


def _titled(at, title: str) -> dict:
    (fig,) = [f for f in charts(at) if f["layout"]["title"]["text"] == title]
    return fig


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _notes(at) -> str:
    """The page's Markdown as plain text (user text in it is escaped)."""
    return unsafe(" ".join(md.value for md in at.markdown))


def _open_all(at):
    for key in LAZY:
        at.session_state[key] = True
    return _ok(at.run())


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return tmp_path / "cache"


@need("llmbar")
def test_on_llmbar_every_section_and_a_failed_pair_on_examples(cache):
    at = _ok(open_page(PAGE, "llmbar"))
    assert at.title[0].value == "Judge report card"
    m = metrics(at)
    assert m["Pairs with a known answer"] == "885" and m["Judges"] == "22"
    titles = [f["layout"]["title"]["text"] for f in charts(at)]
    assert DOT_PLOT in titles and "Accuracy per judge and subset" in titles and ORDERS in titles
    table = at.dataframe[0].value
    assert len(table) == 22 and table["judge"].iloc[0].startswith("GPT-4/")
    assert table["accuracy"].is_monotonic_decreasing
    # the judges that saw the LLMBar subsets only say so, with counts
    assert "no verdict on 466 of the 885 pairs with gold" in _notes(at)
    # the heatmap: judges x the 8 subsets
    heat = _titled(at, "Accuracy per judge and subset")["data"][0]
    assert len(heat["y"]) == 22 and len(heat["x"]) == 8
    # lazy sections: nothing computed until opened
    assert "Accuracy under each debias mode" not in titles
    at = _open_all(at)
    titles = [f["layout"]["title"]["text"] for f in charts(at)]
    assert "Accuracy under each debias mode" in titles
    assert any("gives verdicts, not probabilities" in i.value for i in at.info)
    # the report keeps the card's views under the dataset
    views = at.session_state[ui.REPORT]["llmbar"]["Judge report card"]["views"]
    assert "Judge report card" in views and DOT_PLOT in views
    report = export.report_html(
        at.session_state[ui.REPORT], at.session_state[ui.REPORT + ".settings"], dataset="llmbar"
    )
    assert "Judge report card" in report and DOT_PLOT in report
    # a failed pair, one click away on Examples
    judge = at.session_state["app.judge"]
    worst = failures(card(load_benchmark("llmbar")), judge).iloc[0]
    at.button(key="report_card.open_pair.0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Examples"]
    assert at.session_state["examples.context"] == worst["context_id"]
    assert at.session_state["examples.pair"].split("\t") == [
        worst["context_id"],
        "output_1",
        "output_2",
    ]
    assert at.session_state["app.judge"] == judge


def _many_judges(n_judges: int = 30, n_pairs: int = 60, seed: int = 0) -> Dataset:
    """Pairs in three categories with gold, 30 judges with probabilities (long names), and
    bad input: a gold value that is no verdict, a judge with one order only, a judge that
    skipped pairs."""
    rng = np.random.default_rng(seed)
    rows, cands = [], []
    for i in range(n_pairs):
        ctx = f"{['news', 'code', 'chat'][i % 3]}/{i:03d}"
        for cid, n_words in (("good", 5 + i % 7), ("bad", 9)):
            cands.append(dict(context_id=ctx, candidate_id=cid, text=" ".join(["w"] * n_words)))
        gold = np.nan if i == 0 else 1.0
        rows.append(dict(context_id=ctx, judge="human:gold", first_id="good", second_id="bad",
                         p_first=gold, raw="perhaps" if i == 0 else "A"))  # fmt: skip
        for j in range(n_judges):
            name = f"a-rather-long-provider-name/judge-model-{j:02d}/template-with-a-long-name"
            skill = 0.35 + 0.5 * j / n_judges
            if j == 1 and i % 4 == 0:
                continue  # judge 01 skipped a quarter of the pairs
            for first, second, sign in (("good", "bad", 1), ("bad", "good", -1)):
                if j == 2 and sign < 0:
                    continue  # judge 02 judged one order only
                p = 1 / (1 + np.exp(-sign * 3 * (skill - 0.5 + rng.normal(0, 0.3))))
                rows.append(dict(context_id=ctx, judge=name, first_id=first, second_id=second,
                                 p_first=float(p), raw=f"{p:.3f}"))  # fmt: skip
    comps = pd.DataFrame(rows).assign(attribute="overall", sample=0)
    ctx = sorted({r["context_id"] for r in rows})
    return Dataset(
        "thirty judges",
        contexts=pd.DataFrame({"context_id": ctx, "text": [f"Instruction {c}" for c in ctx]}),
        candidates=pd.DataFrame(cands),
        comparisons=comps,
    )


def test_thirty_judges_stay_readable_and_bad_input_is_counted(cache):
    at = _ok(open_page(PAGE, _many_judges()))
    assert metrics(at)["Judges"] == "30"
    dot = _titled(at, DOT_PLOT)
    assert dot["layout"]["height"] == 26 * 30 + 150  # grows with the judges
    ticks = dot["layout"]["yaxis"]["ticktext"]
    assert len(ticks) == 30 and max(len(t) for t in ticks) <= 40  # names cut on the axis
    assert all("judge-model-" in h for h in dot["data"][0]["customdata"])  # whole on hover
    heat = _titled(at, "Accuracy per judge and subset")
    assert heat["layout"]["height"] >= 26 * 30 and sorted(heat["data"][0]["x"]) == [
        "chat",
        "code",
        "news",
    ]
    notes = _notes(at)
    assert "1 of 60 human (gold) verdicts are not A, B or a tie" in notes
    assert "'perhaps' (1)" in notes
    assert "judge-model-02" in notes and "59 pair(s) judged in one order only" in notes
    assert "no verdict on 14 of the 59 pairs with gold" in notes  # i % 4 == 0, not i = 0
    at = _open_all(at)
    titles = [f["layout"]["title"]["text"] for f in charts(at)]
    assert any(t.startswith("Reliability diagram:") for t in titles)
    assert any(t.startswith("Accuracy against confidence:") for t in titles)
    assert "ECE of p(first wins)" in metrics(at)
    # McNemar of the two chosen judges
    m = metrics(at)
    assert "McNemar exact p" in m and "Accuracy B − A" in m


def _gold_csv() -> bytes:
    """LLMBar's layout with a gold column: a gold value that is no verdict, a pair without
    the judge's verdict, a pair judged in one order only."""
    rows = []
    for i in range(8):
        q, good, bad = f"Question {i}?", f"a good answer {i} in many words", f"bad {i}"
        label = "perhaps" if i == 7 else 1
        verdict = "" if i == 6 else ("Output (a)" if i % 3 else "Output (b)")
        rows.append(dict(input=q, output_1=good, output_2=bad, label=label, verdict=verdict))
        if i < 5:
            rows.append(dict(input=q, output_1=bad, output_2=good, label=2, verdict="Output (b)"))
    return pd.DataFrame(rows).assign(judge="judge-x").to_csv(index=False).encode()


def test_a_file_with_a_gold_column_uploaded(cache):
    ds = read_upload_result("gold.csv", _gold_csv()).dataset
    at = _ok(open_page(PAGE, ds))
    assert metrics(at)["Judges"] == "1"
    notes = _notes(at)
    assert "1 of 13 human (gold) verdicts are not A, B or a tie" in notes and "perhaps" in notes
    assert "judge-x: 2 pair(s) judged in one order only" in notes
    assert "judge-x: 1 unparsed verdict(s), counted as wrong" in notes
    assert any("No categories" in i.value for i in at.info)
    assert any("Two judges are needed" in i.value for i in at.info)


def test_on_the_demo_says_what_is_missing(cache):
    at = _ok(open_page(PAGE))
    assert "has no pair with a human verdict" in at.info[0].value
    assert "LLMBar" in at.info[0].value


def _wait_for_run(at, timeout: float = 180.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        _ok(at.run())
        if at.success or any("Cancelled" in w.value for w in at.warning):
            return
        time.sleep(0.3)
    raise AssertionError("the judge run did not finish in time")


@need("llmbar")
def test_a_judge_run_on_llmbar_joins_the_card_with_its_cost(cache):
    with FakeOpenAI(models=("fake-judge",)) as fake:
        at = open_page("pages/judge/page.py", "llmbar")
        preview = at.code[0].value
        assert "Response A:" in preview or "Output" in preview or "A:" in preview
        at.text_input(key="judge.model").input("fake-judge")
        at.text_input(key="judge.base_url").input(fake.base_url)
        at.number_input(key="judge.n_contexts").set_value(3).run()
        assert metrics(at)["Model calls"] == "6"  # 3 pairs, both orders
        at.button(key="judge.run").click().run()
        _wait_for_run(at)
        assert len(fake.answered_prompts) == 6
    judged = at.session_state["app.active"]
    assert judged == "llmbar (judged)"
    at.switch_page(PAGE).run()
    _ok(at)
    table = at.dataframe[0].value.set_index("judge")
    name = next(j for j in table.index if j.startswith("fake-judge/"))
    rec = table.loc[name]
    assert rec["n"] == 3 and rec["no verdict"] == 885 - 3
    assert rec["calls / 1k"] == pytest.approx(1000.0)  # one call per judgment
    assert rec["tokens / 1k"] > 0
    assert np.isfinite(rec["ECE"])  # label probabilities: calibration is measured
    assert len(table) == 23
    json.dumps(at.session_state[ui.REPORT][judged]["Judge report card"]["settings"])


def test_hostile_names_are_shown_escaped(cache):
    from tests.pages.test_safe_text import unescaped

    evil = "**EvilJ** [judge](http://evil.example/j) <b>j</b>"
    ds = _many_judges(n_judges=3, n_pairs=24)
    names = sorted(j for j in ds.comparisons["judge"].unique() if not j.startswith("human:"))
    comps = ds.comparisons.assign(
        judge=ds.comparisons["judge"].replace({names[-1]: evil}),
        context_id="**EvilC** <i>c</i> [c](http://evil.example/c)/" + ds.comparisons["context_id"],
    )
    cands = ds.candidates.assign(
        context_id="**EvilC** <i>c</i> [c](http://evil.example/c)/" + ds.candidates["context_id"]
    )
    hostile = Dataset("**EvilD** <b>d</b>", candidates=cands, comparisons=comps)
    at = _ok(open_page(PAGE, hostile))
    at.session_state["app.judge"] = evil
    at = _open_all(at)
    assert metrics(at)["Judges"] == "3"
    assert not unescaped(at), unescaped(at)


@need("llmbar")
def test_reproduce_page_on_llmbar_links_to_the_card(cache):
    from urllib.parse import parse_qs, urlsplit

    at = _ok(open_page("pages/reproduce/page.py", "llmbar"))
    assert at.selectbox(key="reproduce.paper").options == [
        "Zeng et al., ICLR 2024: Evaluating Large Language Models at Evaluating Instruction "
        "Following (LLMBar)"
    ]
    table = at.dataframe[0].value
    assert len(table) == 610
    both = table[table["quantity"].str.contains("(correct_both)", regex=False)]
    assert (both["status"] == "ok").all() and len(both) == 122
    url = urlsplit(both["link"].iloc[0])
    assert url.path == "/report-card"
    assert parse_qs(url.query)["dataset"] == ["llmbar"] and "judge" in parse_qs(url.query)
