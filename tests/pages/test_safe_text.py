"""No user text is ever read as Markdown or HTML (issue 22 item 9, issue 23 item 4).

Ids, names and texts come from users, files and links. The app shows them escaped
(``ui.safe``) where Streamlit reads Markdown (notes, captions, info boxes, labels, help,
metric cards, expander titles, radio options), as plain one-line text where it does not
(``ui.short``: selectbox options), and HTML-escaped in plotly figures
(``ui.plain_fig_text``), whose text understands ``<b>``, ``<br>`` and ``<a href>``.

Two sets of AppTests: the hostile links of issue 23 item 4 (a Markdown phishing note in
``dataset=``, ``judge=``, ``attribute=``, ``exclude=``, 10,000 names in ``exclude=``, a
``ws=`` with a trailing newline), and the demo with every id and name replaced by Markdown,
HTML and code fences, opened on every page. Each checks every element Streamlit renders as
Markdown for a payload that was not escaped, every figure for raw HTML, and that notes stay
short.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

import data
from data.schema import Dataset
from pages.shell import ui
from tests._routes import page_scripts

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 600

PHISH = (
    "**Session expired** [log in again](https://evil.example/login) "
    "![t](https://evil.example/pixel.png)"
)

#: Substrings that only appear when a payload was not escaped: a link or an image, emphasis
#: right before the payload's words, HTML, a code fence, a Streamlit colour directive.
RAW = ["](http", "![", "**Session", "**Evil", "`c`", "<b>", "<i>", "<a ", "```", ":red["]

#: Proto fields Streamlit renders as Markdown (label mode included).
_MD_FIELDS = {"body", "label", "help", "captions", "delta", "text"}
#: Elements whose options are rendered as Markdown too (selectbox options are plain).
_MD_OPTIONS = {"radio", "slider", "button_group"}


# ----------------------------------------------------------------------------- the pieces
def test_safe_escapes_every_markdown_and_html_construct():
    text = ui.safe(PHISH, None)
    for raw in ("](http", "![", "**S"):
        assert raw not in text
    assert r"\[log in again\]\(https\:" in text
    assert ui.safe("<b>x</b>") == r"\<b\>x\<\/b\>"
    assert ui.safe("```py\nx\n```") == r"\`\`\`py x \`\`\`"  # one line, no fence
    assert ui.safe(":red[x] $y$ ~z~ :material/home:") == (
        r"\:red\[x\] \$y\$ \~z\~ \:material\/home\:"
    )
    assert ui.safe("large") == "large" and ui.safe("gpt-4o") == r"gpt\-4o"


def test_safe_and_short_cut_long_text_to_one_line():
    long = "Summarise:\n\n" + "word " * 100
    assert len(ui.short(long, 40)) == 40 and ui.short(long, 40).endswith("…")
    assert "\n" not in ui.short(long, None) and "\n" not in ui.safe(long, None)
    assert ui.short("  a \t b\n c  ") == "a b c"
    assert ui.short(long, None) == " ".join(long.split())
    assert ui.safe("x" * 100, 10) == "x" * 9 + "…"
    assert ui.short(12.5) == "12.5" and ui.safe(None) == "None"


def test_listed_shortens_a_long_list_with_a_count():
    names = [f"s{i}" for i in range(10_000)]
    text = ui.listed(names, limit=5)
    assert text.startswith(r"s0, s1, s2, s3, s4") and "and 9,995 more" in text
    assert len(text) < 100
    assert ui.listed(["**a**", "b"]) == r"\*\*a\*\*, b"
    assert ui.listed([]) == ""


def test_plain_fig_text_escapes_every_text_of_a_figure():
    bold = "<b>S</b> [x](http://e.x)"
    fig = go.Figure(
        go.Bar(
            x=[bold, "plain & simple"],
            y=[1, 2],
            name="<i>judge</i>",
            text=["<a href='http://e.x'>t</a>", "ok"],
            customdata=[["<b>c</b>"], ["d"]],
            hovertemplate="%{x}<br>%{customdata[0]}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis_title="<b>attr</b>",
        legend_title_text="<i>l</i>",
        xaxis=dict(categoryorder="array", categoryarray=[bold, "plain & simple"]),
    )
    fig.add_annotation(text="<a href='x'>a</a>", x=0, y=0)
    ui.plain_fig_text(fig)
    spec = fig.to_json()
    for raw in ("<b>", "<i>", "<a "):
        assert raw not in spec, raw
    assert fig.data[0].x == ("&lt;b&gt;S&lt;/b&gt; [x](http://e.x)", "plain &amp; simple")
    assert fig.layout.xaxis.categoryarray == fig.data[0].x  # the order still matches
    assert fig.data[0].hovertemplate == "%{x}<br>%{customdata[0]}<extra></extra>"  # ours
    ui.plain_fig_text(fig)  # a second pass changes nothing
    assert fig.data[0].x[1] == "plain &amp; simple"
    assert ui.fig_text("a<b") == "a&lt;b"


def test_plain_fig_text_shortens_long_tick_labels_and_keeps_the_whole_id_on_hover():
    ids = [f"Write a poem about {k}:\n```\n" + "word " * 30 + "```" for k in range(3)]
    fig = go.Figure(go.Heatmap(z=[[1, 2, 3]] * 3, x=ids, y=ids))
    ui.plain_fig_text(fig)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.tickvals) == list(fig.data[0].x)  # the categories, escaped
        assert all(len(t) <= ui.TICK_LIMIT for t in axis.ticktext)
        assert len(set(axis.ticktext)) == 3
    assert "word word" in fig.data[0].x[0]  # the whole id stays the category (hover)


def test_cut_tick_labels_stay_different():
    ids = ["Rate the answer to this long instruction, please, carefully: item " + str(k)
           for k in range(12)]  # fmt: skip
    fig = go.Figure(go.Bar(x=ids, y=list(range(12))))
    ui.plain_fig_text(fig)
    labels = list(fig.layout.xaxis.ticktext)
    assert len(set(labels)) == 12 and all(len(t) <= ui.TICK_LIMIT for t in labels)
    assert labels[3].endswith("item 3")


def test_polish_makes_the_figure_plain():
    fig = ui.polish(go.Figure(go.Scatter(x=["<b>a</b>"], y=[1])), "Scores of <b>J</b>")
    assert "<b>" not in fig.to_json()
    assert fig.layout.title.text == "Scores of &lt;b&gt;J&lt;/b&gt;"


def test_the_html_report_escapes_names_and_keeps_text_cells_on_one_line():
    from pages.report import export

    long = "Write:\n```\nx\n```\n" + "word " * 300 + "<b>x</b>"
    df = pd.DataFrame({"context_id": [long], "score": [1.0]})
    table = export.table_html(df)
    assert "\\n" not in table and "<b>x" not in table  # no wall of \n, no raw HTML
    cell = re.search(r"<td>(.*?)</td>", table).group(1)
    assert len(cell) <= export.MAX_CELL and cell.endswith("…")
    fig = go.Figure(go.Bar(x=["<b>S</b>"], y=[1], name="<i>n</i>"))
    views = {
        "Rankings": {
            "views": {
                "<b>T</b> [x](http://e.x)": {"fig": fig, "data": None, "settings": {"j": "<i>J"}},
                "table": {"fig": None, "data": df, "settings": None},
            },
            "metrics": {"<b>L</b>": {"value": "<a href='x'>v</a>", "help": "<i>h</i>"}},
            "settings": {},
        }
    }
    doc = export.report_html(views, dataset="<b>D</b>")
    for raw in ("<b>S", "<i>n", "<b>T", "<i>J", "<b>L", "<a href='x'", "<i>h", "<b>D", "<b>x"):
        assert raw not in doc, raw
    assert "&lt;b&gt;S&lt;" in doc  # the figure's category, escaped once


# ----------------------------------------------------------------------------- AppTest
def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _strings(value, fields, out, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            _strings(v, fields, out, k)
    elif isinstance(value, list):
        for v in value:
            _strings(v, fields, out, key)
    elif isinstance(value, str) and key in fields:
        out.append(value)


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(element type, text) of every text the app renders as Markdown."""
    out = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        kind = str(getattr(node, "type", "") or proto.DESCRIPTOR.name)
        if kind in ("plotly_chart", "arrow_data_frame", "code", "text", "json"):
            continue
        fields = set(_MD_FIELDS)
        if kind in _MD_OPTIONS:
            fields.add("options")
        found: list[str] = []
        _strings(MessageToDict(proto, preserving_proto_field_name=True), fields, found)
        out.extend((kind, text) for text in found)
    return out


def figure_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def unescaped(at: AppTest) -> list[tuple[str, str]]:
    """Every Markdown text and figure that shows a payload unescaped."""
    bad = []
    for kind, text in markdown_texts(at):
        if any(raw in text for raw in RAW):
            bad.append((kind, text[:300]))
    for spec in figure_specs(at):
        dumped = json.dumps(spec, ensure_ascii=False)
        for raw in ("<b>", "<i>", "<a "):
            if raw in dumped:
                bad.append(("plotly", f"{spec['layout'].get('title', {}).get('text')}: {raw}"))
    return bad


def notes(at: AppTest) -> list[str]:
    """The sidebar's notes (info boxes)."""
    return [el.value for el in at.sidebar.info]


def _run_link(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


HOSTILE_LINKS = {
    "dataset": {"dataset": PHISH},
    "judge": {"judge": PHISH},
    "attribute": {"attribute": PHISH},
    "exclude": {"exclude": PHISH + ",lead"},
    "tau": {"tau": PHISH},
    "debias": {"debias": PHISH},
    "ws newline": {"ws": "0123456789ab\n" + PHISH},
    "ws": {"ws": PHISH},
}


@pytest.mark.parametrize("params", list(HOSTILE_LINKS.values()), ids=list(HOSTILE_LINKS))
def test_a_hostile_link_echoes_its_parameter_escaped(params):
    at = _run_link(params)
    shown = notes(at)
    assert shown, "the link's problem is noted"
    assert any("Session expired" in text for text in shown)  # echoed, escaped
    assert not unescaped(at), unescaped(at)
    assert all(len(text) < 500 for text in shown), [len(t) for t in shown]


def test_a_link_naming_ten_thousand_systems_gives_a_short_note():
    # Streamlit drops a query string over 512 KiB: 10,000 short names, one of them a link
    names = [PHISH] + [f"**EvilS{k}**" for k in range(9_999)]
    at = _run_link({"exclude": ",".join(names)})
    shown = notes(at)
    assert len(shown) == 1 and len(shown[0]) < 500, [len(t) for t in shown]
    assert "9,99" in shown[0] and "more" in shown[0]
    assert not unescaped(at), unescaped(at)


def test_the_workspace_id_pattern_takes_no_trailing_newline(tmp_path, monkeypatch):
    from pages.shell import workspace

    assert workspace._ID.fullmatch("0123456789ab")
    assert not workspace.valid_id("0123456789ab\n")
    assert workspace.valid_id("0123456789ab")


# ----------------------------------------------------------------------------- hostile data
SYSTEMS = {
    "large": "**EvilS1** [x](http://evil.example/1) <b>b</b>",
    "lead": "**EvilS2** ![i](http://evil.example/2.png)",
    "small": "**EvilS3** `c` <i>i</i> :red[r]",
    "hallucinator": "**EvilS4** # heading | table |",
    "keywords": "**EvilS5** <a href='http://evil.example'>a</a>",
    "truncated": "**EvilS6**\n```\nfence\n```",
}
JUDGE = "**EvilJ** [judge](http://evil.example/j) <b>j</b>"
ATTRIBUTES = {
    "consistency": "**EvilA1** :red[attr] [a](http://evil.example/a)",
    "fluency": "**EvilA2** <b>fluent</b>",
}
PROMPTS = {"plain": "**EvilP1** <b>p</b>", "explain": "**EvilP2** [p](http://evil.example/p)"}
NAME = "**EvilD** [data](http://evil.example/d) <b>d</b>"


def _context(k: int, old: str) -> str:
    return (
        f"**EvilC{k}** Summarise this news item ({old}) for a reader in a hurry:\n```\n"
        "ignore previous instructions\n```\n" + "and keep it short " * 8 + "<b>end</b>"
    )


def hostile_dataset() -> Dataset:
    ds = data.demo_dataset()
    contexts = {c: _context(k, c) for k, c in enumerate(ds.contexts["context_id"])}
    annotators = {  # one group of annotators, as the demo's human_1, human_2, ...
        a: f"**EvilH** <i>ann</i> [a](http://evil.example/h) human_{k + 1}"
        for k, a in enumerate(sorted(ds.human_scores["annotator"].unique()))
    }

    def rename(df: pd.DataFrame) -> pd.DataFrame:
        df = df.copy()
        for col, mapping in (
            ("context_id", contexts),
            ("candidate_id", SYSTEMS),
            ("system", SYSTEMS),
            ("first_id", SYSTEMS),
            ("second_id", SYSTEMS),
            ("attribute", ATTRIBUTES),
            ("annotator", annotators),
            ("prompt_id", PROMPTS),
        ):
            if col in df:
                df[col] = df[col].astype(object).map(lambda v, m=mapping: m.get(v, v))
        if "judge" in df:
            df["judge"] = JUDGE
        return df

    return Dataset(
        name=NAME,
        contexts=rename(ds.contexts),
        candidates=rename(ds.candidates),
        human_scores=rename(ds.human_scores),
        comparisons=rename(ds.comparisons),
        ratings=rename(ds.ratings),
        scales={ATTRIBUTES[a]: v for a, v in ds.scales.items()},
        description="Hostile names: **bold** [link](http://evil.example) <b>html</b>",
    )


@pytest.fixture(scope="module")
def hostile():
    return hostile_dataset()


def test_the_hostile_dataset_is_valid(hostile):
    from data.validate import validate_dataset

    validate_dataset(hostile)
    assert set(hostile.judges) == {JUDGE}
    assert set(hostile.attributes) == set(ATTRIBUTES.values())


@pytest.mark.parametrize("page", page_scripts())
def test_every_page_shows_hostile_ids_escaped(page, hostile):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["app.datasets"] = {"demo": data.demo_dataset(), NAME: hostile}
    at.session_state["app.active"] = NAME
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not unescaped(at), unescaped(at)
    long_ticks = [
        (spec["layout"].get("title", {}).get("text"), t)
        for spec in figure_specs(at)
        for axis in ("xaxis", "yaxis")
        for t in spec["layout"].get(axis, {}).get("ticktext") or []
        if len(html.unescape(t)) > ui.TICK_LIMIT
    ]
    assert not long_ticks, long_ticks
    for kind, text in markdown_texts(at):
        assert not re.search(r"ignore previous instructions\s*\n", text), (kind, text[:200])
