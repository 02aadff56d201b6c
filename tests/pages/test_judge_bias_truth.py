"""AppTest: the Judge bias page's "Try it on a judge with known biases" button loads the
simulated judge (data.synthetic.bias_demo) and the page shows the true values beside the recovered
ones, every check ticked; a different dataset of the same name gets no truth section."""

from __future__ import annotations

from data.synthetic.bias_demo import NAME
from data.synthetic.simulate import simulate_with_truth
from tests.pages._analysis_apptest import assert_clean, chart_titles, open_page

PAGE = "pages/judge_bias/page.py"
TRUTH = "What the page should find"


def _truth_table(at):
    tables = [d.value for d in at.dataframe if "check" in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def test_button_loads_the_demo_and_the_truth_is_ticked():
    at = open_page(PAGE)
    assert_clean(at)
    assert TRUTH not in [s.value for s in at.subheader]  # only for the demo
    at.button(key="judge_bias.demo").click().run()
    assert_clean(at)
    assert at.session_state["app.active"] == NAME
    assert set(at.session_state["app.datasets"]) >= {"demo", NAME}  # nothing lost
    assert TRUTH in [s.value for s in at.subheader]
    table = _truth_table(at)
    assert table["check"].iloc[0] == "length coefficient"
    assert table["check"].str.startswith("first-win rate").sum() == 5
    assert table["check"].iloc[-1] == "contexts with a cycle"
    assert (table["ok"] == "✓").all(), table
    assert table["found"].iloc[-1] == "d00, d01, d02, d17, d31"
    assert "True and measured first-position win rate by gap" in chart_titles(at)
    assert f"{len(table)} of {len(table)} checks pass" in "\n".join(c.value for c in at.caption)


def test_another_dataset_of_that_name_gets_no_truth_section():
    ds, _ = simulate_with_truth(
        8, 4, length_bias=1.0, mode="soft", n_systems=4, likert=False, random_state=1
    )
    ds.name = NAME
    at = open_page(PAGE, ds)
    assert_clean(at)
    assert TRUTH not in [s.value for s in at.subheader]
    assert "Position-bias profile" in [s.value for s in at.subheader]
