"""Services of the Human agreement page: judge-human correlations and human agreement.

The tables come from ``data.agreement`` (correlations at three units with bootstrap
intervals, the human baseline, inter-annotator agreement, self-consistency, Williams tests,
pairwise accuracy, agreement with human verdicts) and ``data.group_comparison`` (two groups
of systems, Welch's t); this module labels them and lays them out for the heatmaps, the
scatter plot and the group table.

Every table is cached (``st.cache_data``) by the dataset and the page's choices;
annotator lists come as tuples (None: the only annotator group).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from data import agreement as dag
from data.group_comparison import group_comparison_table
from data.natural import natural_key
from data.schema import Dataset
from pages.services.common import cache_data, fmt, variant_label

#: Correlation choices of the agreement page: label -> (method, Kendall variant).
CORRELATIONS = {
    "Kendall tau-b": ("kendall", "b"),
    "Kendall tau-c": ("kendall", "c"),
    "Spearman": ("spearman", "b"),
    "Pearson": ("pearson", "b"),
}
#: Units of the judge-human correlations (the table's ``level`` column), in display order,
#: with one line of help each.
UNITS = {
    "item": "within each context, candidates ranked against each other; mean over contexts",
    "system": "per-system mean scores correlated across systems",
    "overall": "every rated item pooled",
}


def reference_groups(ds: Dataset) -> dict[str, list[str]]:
    """Annotator groups that can serve as the human reference (``data.agreement``)."""
    return dag.annotator_groups(ds) if len(ds.human_scores) else {}


def default_group(groups: dict[str, list[str]]) -> str | None:
    """Experts first when a data set has several groups (SummEval), else the largest one."""
    if not groups:
        return None
    experts = [g for g in groups if g.lower().startswith("expert")]
    if experts:
        return experts[0]
    return max(groups, key=lambda g: (len(groups[g]), g))


def _listed(annotators: tuple | None) -> list[str] | None:
    return list(annotators) if annotators else None


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a ``label`` column first: one readable name per (judge, prompt)."""
    if len(table):
        table.insert(
            0,
            "label",
            [variant_label(j, p) for j, p in zip(table["judge"], table["prompt_id"], strict=True)],
        )
    return table


@cache_data(show_spinner="Correlating judges with humans (bootstrap intervals)…", max_entries=16)
def correlations(
    ds: Dataset,
    method: str,
    variant: str,
    annotators: tuple | None,
    n_boot: int,
    random_state: int = 0,
) -> pd.DataFrame:
    """Judge-human correlations at every unit, with a ``label`` per (judge, prompt)."""
    table = dag.correlation_table(
        ds,
        annotators=_listed(annotators),
        units=tuple(UNITS),
        methods=(method,),
        variant=variant,
        n_boot=int(n_boot),
        random_state=random_state,
    )
    return _labelled(table)


def correlation_heatmap_frames(table: pd.DataFrame, unit: str):
    """(values, hover text) frames, judges x attributes, for one unit."""
    sel = table[table["level"] == unit]
    values = sel.pivot_table(
        index="label", columns="attribute", values="value", aggfunc="first", dropna=False
    )

    def hover(row) -> str:
        if not np.isfinite(row["value"]):
            return f"no value: {row['reason'] or 'undefined'}"
        text = f"{row['value']:.3f}"
        if np.isfinite(row["lower"]) and np.isfinite(row["upper"]):
            text += f" [{row['lower']:.3f}, {row['upper']:.3f}]"
        text += f"<br>units: {int(row['n_units']) if np.isfinite(row['n_units']) else '–'}"
        if row["reason"]:
            text += f"<br>{row['reason']}"
        return text

    sel = sel.assign(hover=[hover(r) for _, r in sel.iterrows()])
    texts = sel.pivot_table(
        index="label", columns="attribute", values="hover", aggfunc="first", dropna=False
    )
    texts = texts.reindex(index=values.index, columns=values.columns)
    return values, texts


@cache_data(show_spinner="Human baseline…", max_entries=16)
def baseline(ds: Dataset, group: str, method: str, variant: str) -> pd.DataFrame:
    """Human baseline of one annotator group (all groups if ``group`` is unknown): each
    annotator vs the mean of the others, every unit."""
    groups = reference_groups(ds)
    return dag.human_baseline_table(
        ds,
        groups={group: groups[group]} if group in groups else groups,
        units=tuple(UNITS),
        method=method,
        variant=variant,
    )


@cache_data(show_spinner="Inter-annotator agreement…", max_entries=16)
def iaa(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.iaa_table``: ICC2k, Krippendorff's alpha, share all agree per group."""
    return dag.iaa_table(ds)


@cache_data(show_spinner="Judge self-consistency…", max_entries=16)
def self_consistency(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.self_consistency_table`` with a ``label`` per (judge, prompt)."""
    return _labelled(dag.self_consistency_table(ds))


@cache_data(show_spinner=False, max_entries=16)
def scatter(
    ds: Dataset,
    judge: str,
    prompt_id: str,
    annotators: tuple | None,
    jitter: float = 0.15,
    random_state: int = 0,
) -> pd.DataFrame:
    """Judge score vs human mean per item and attribute, with jittered copies for plotting.

    Likert scores pile up on a few values; ``x_jitter`` / ``y_jitter`` add uniform noise of
    +-``jitter`` (seeded) so the density shows. The plain values stay in ``human``/``score``.
    """
    df = dag.aligned_scores(ds, judge=judge, prompt_id=prompt_id, annotators=_listed(annotators))
    rng = np.random.default_rng(random_state)
    df = df.assign(
        x_jitter=df["human"] + rng.uniform(-jitter, jitter, len(df)),
        y_jitter=df["score"] + rng.uniform(-jitter, jitter, len(df)),
    )
    return df


@cache_data(show_spinner="Williams tests between judges…", max_entries=16)
def williams(
    ds: Dataset,
    method: str,
    variant: str,
    annotators: tuple | None,
    unit: str,
    across_prompts: bool,
) -> pd.DataFrame:
    """Williams + BH table; ``across_prompts`` compares every (judge, prompt) pair together."""
    if across_prompts and len(ds.ratings):
        r = ds.ratings
        labels = [variant_label(j, p) for j, p in zip(r["judge"], r["prompt_id"], strict=True)]
        ds = dataclasses.replace(ds, ratings=r.assign(judge=labels, prompt_id="all prompts"))
    return dag.williams_table(
        ds, annotators=_listed(annotators), unit=unit, method=method, variant=variant
    )


def williams_heatmap_frames(table: pd.DataFrame, attribute: str, prompt_id: str):
    """(adjusted p, hover text) square frames for one attribute and prompt."""
    p = dag.williams_matrix_frame(table, attribute, prompt_id, "p_bh")
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    hover = pd.DataFrame("", index=p.index, columns=p.columns)
    for row in sel.itertuples(index=False):
        for a, b, ra, rb in (
            (row.judge_a, row.judge_b, row.r_a, row.r_b),
            (row.judge_b, row.judge_a, row.r_b, row.r_a),
        ):
            hover.loc[a, b] = (
                f"{a} vs {b}<br>r = {ra:.3f} vs {rb:.3f} (difference {ra - rb:+.3f})"
                f"<br>p = {row.p:.3g}, BH-adjusted {row.p_bh:.3g}<br>n = {row.n}"
                + (f"<br>{row.reason}" if row.reason else "")
            )
    return p, hover


@cache_data(show_spinner="Pairwise accuracy…", max_entries=16)
def pairwise_accuracy(ds: Dataset, annotators: tuple | None) -> pd.DataFrame:
    """Pairwise accuracy of comparative judges against the human mean scores."""
    return dag.pairwise_accuracy_table(ds, annotators=_listed(annotators))


@cache_data(show_spinner="Agreement with the human verdicts…", max_entries=16)
def verdicts(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.verdict_agreement_table``: judges against the human verdicts."""
    return dag.verdict_agreement_table(ds)


#: Above this many human annotators the verdict agreement is summarised per annotator
#: (distribution, top and bottom) instead of an annotator x annotator heatmap.
MAX_HEATMAP_ANNOTATORS = 20


@cache_data(show_spinner="Each annotator against the others…", max_entries=16)
def annotator_summary(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.annotator_summary_table``: each human annotator against the majority
    of the others, with a short ``name`` (the ``human:`` prefix dropped)."""
    table = dag.annotator_summary_table(ds)
    return table.assign(name=table["annotator"].astype(str).str.removeprefix("human:"))


def natural_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with rows and columns in natural order (worker2 before worker10), the
    "human majority" column last."""
    cols = sorted(frame.columns, key=lambda c: (c == dag.verdicts.MAJORITY, natural_key(c)))
    return frame.reindex(index=sorted(frame.index, key=natural_key), columns=cols)


def top_bottom(table: pd.DataFrame, column: str, n: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(highest, lowest) ``n`` rows of ``table`` by ``column`` (NaN left out); ties by
    annotator in natural order."""
    rows = table[table[column].notna()]
    keyed = rows.assign(_k=rows["annotator"].map(natural_key))
    high = keyed.sort_values([column, "_k"], ascending=[False, True], kind="stable").head(n)
    low = keyed.sort_values([column, "_k"], ascending=[True, True], kind="stable").head(n)
    return high.drop(columns="_k"), low.drop(columns="_k")


# ---------------------------------------------------------------------------------------
# Two groups of systems
# ---------------------------------------------------------------------------------------


def systems_of(ds: Dataset) -> list[str]:
    """The systems of the candidates, sorted (empty without system labels)."""
    cands = ds.candidates
    if "system" not in cands.columns:
        return []
    return sorted(cands["system"].dropna().astype(str).unique())


@cache_data(show_spinner="Comparing the two groups…", max_entries=32)
def group_comparison(
    ds: Dataset,
    judge: str,
    prompt_id: str,
    group_a: tuple,
    group_b: tuple,
    annotators: tuple | None,
) -> pd.DataFrame:
    """``data.group_comparison.group_comparison_table`` of one judge and prompt."""
    return group_comparison_table(
        ds, group_a, group_b, judge=judge, prompt_id=prompt_id, annotators=_listed(annotators)
    )


def group_display(table: pd.DataFrame) -> pd.DataFrame:
    """The group table as shown: per attribute and rater, "mean ± sd (n)" of each group,
    Welch's t and p (n/a with the reason when undefined)."""

    def cell(mean, sd, n) -> str:
        return f"{fmt(mean, 2)} ± {fmt(sd, 2)} (n = {int(n)})"

    return pd.DataFrame(
        {
            "attribute": table["attribute"].astype(str),
            "rater": table["rater"],
            "group A": [
                cell(*r) for r in zip(table["mean_a"], table["std_a"], table["n_a"], strict=True)
            ],
            "group B": [
                cell(*r) for r in zip(table["mean_b"], table["std_b"], table["n_b"], strict=True)
            ],
            "Welch's t": [fmt(t, 2) for t in table["statistic"]],
            "p": [fmt(p, 4) for p in table["pvalue"]],
            "note": table["reason"],
        }
    )
