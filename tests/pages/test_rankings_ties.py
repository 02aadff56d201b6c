"""Rankings page, tie models section: LLMFAO's pooled human verdicts (about 39 % ties) against
data.comparative.ties computed directly, and the demo judge (soft probabilities, no tie) in one line."""

from __future__ import annotations

import numpy as np

import data
from data.comparative.ties import tie_models
from pages.services.comparisons import HUMAN_POOL, select_comparisons
from pages.shell.text import unsafe
from tests.pages._analysis_apptest import (
    array,
    chart_titles,
    figures,
    metrics,
    need,
    open_page,
)

PAGE = "pages/rankings/page.py"
SECTION = "Ties: Davidson and Rao–Kupper"


def _captions(at) -> list[str]:
    """The captions as shown (ids in them are escaped, never Markdown)."""
    return [unsafe(c.value) for c in at.caption]


@need("llmfao")
def test_llmfao_human_pool_tie_models():
    at = open_page(PAGE, "llmfao")
    at.selectbox(key="app.judge").set_value(HUMAN_POOL).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(SECTION in m.value for m in at.markdown)
    ds = data.load_benchmark("llmfao")
    expected = tie_models(
        select_comparisons(ds, "overall", HUMAN_POOL),
        attribute="overall",
        judge=HUMAN_POOL,
        candidates=ds.candidates,
    )
    s = expected.summary.set_index("model")
    shown = metrics(at)
    assert shown["Observed tie rate"] == f"{s.loc['Davidson', 'observed_tie_rate']:.1%}"
    for model, sym in (("Davidson", "ν"), ("Rao–Kupper", "θ")):
        r = s.loc[model]
        assert shown[f"{model} {sym}"] == f"{r['tie_param']:.3f}"
        interval = f"95% Fisher interval [{r['tie_low']:.3f}, {r['tie_high']:.3f}]"
        assert any(interval in c for c in _captions(at)), interval
    assert 1.3 < s.loc["Davidson", "tie_param"] < 1.7
    titles = chart_titles(at)
    assert "System scores under three tie models" in titles
    # 59 systems: rank against rank, not a slope chart
    assert "Rank under half-win against Rao–Kupper" in titles
    dumbbell = figures(at)["System scores under three tie models"]["data"]
    names = [t.get("name") for t in dumbbell[1:]]
    assert names == ["half-win", "Davidson", "Rao–Kupper"]
    by_system = expected.table.set_index("system")
    y = list(dumbbell[2]["y"])
    assert y == expected.table["system"].tolist()  # best half-win first
    np.testing.assert_allclose(array(dumbbell[2]["x"]),
                               by_system.loc[y, "davidson"], atol=1e-9)  # fmt: skip
    summary = next(d.value for d in at.dataframe if "Kendall vs half-win" in d.value.columns)
    assert summary["model"].tolist() == ["half-win", "Davidson", "Rao–Kupper"]
    assert any(c.startswith("Davidson keeps the half-win order") for c in _captions(at))


def test_demo_judge_without_ties_says_so_in_one_line():
    at = open_page(PAGE)
    assert any(SECTION in m.value for m in at.markdown)
    lines = [c for c in _captions(at) if "gave no tie" in c]
    assert len(lines) == 1
    assert "demo-judge (simulated)" in lines[0] and "nothing to compare" in lines[0]
    assert "System scores under three tie models" not in chart_titles(at)
    assert "Observed tie rate" not in metrics(at)
