"""Services of the Human agreement page: judge-human correlations and human agreement.

The tables come from ``data.agreement`` (correlations at three units with bootstrap
intervals, the human baseline, inter-annotator agreement, self-consistency, Williams tests,
pairwise accuracy, agreement with human verdicts) and ``data.agreement.groups`` (two groups
of systems, Welch's t); this module labels them and lays them out for the heatmaps, the
scatter plot and the group table.

Every table is cached (``st.cache_data``) by the dataset and the page's choices;
annotator lists come as tuples (None: the only annotator group).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data import agreement as dag
from data.agreement.groups import group_comparison_table
from data.natural import natural_key
from data.schema import Dataset
from data.scope.systems import systems_of
from pages.services.agreement.raters import (
    DEFAULT_MEASURES,
    default_labels,
    labelled,
    pairs_of,
    rater_label,
    raters,
    with_raters,
)
from pages.services.common import cache_data, fmt, welch_columns

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


#: The two human baselines: reference -> what it is, as the page names it.
BASELINES = {
    "all": "each annotator vs the mean of all annotators (the paper's upper bound)",
    "others": "each annotator vs the mean of the others (leave-one-out)",
}
#: Williams sidedness: alternative -> label.
SIDES = {
    "greater": "one-sided: the row judge agrees more",
    "two-sided": "two-sided: the correlations differ",
}
#: Benjamini-Hochberg families: family -> label.
FAMILIES = {
    "attributes": "over the criteria of each comparison",
    "judges": "over the judge pairs of one criterion",
}


@cache_data(show_spinner="Correlating judges with humans (bootstrap intervals)…", max_entries=16)
def correlations(
    ds: Dataset,
    method: str,
    variant: str,
    annotators: tuple | None,
    n_boot: int,
    pairs: tuple | None = None,
    random_state: int = 0,
) -> pd.DataFrame:
    """Judge-human correlations at every unit of the raters ``pairs`` ((judge, prompt_id)
    tuples; None: every rater), with a ``label`` per rater and ``automatic``."""
    table = dag.correlation_table(
        with_raters(ds, pairs),
        annotators=_listed(annotators),
        units=tuple(UNITS),
        methods=(method,),
        variant=variant,
        n_boot=int(n_boot),
        random_state=random_state,
    )
    return labelled(table)


def correlation_heatmap_frames(table: pd.DataFrame, unit: str, order=None):
    """(values, hover text) frames, raters x attributes, for one unit; raters in ``order``
    (labels, e.g. prompted judges then automatic measures), default sorted."""
    sel = table[table["level"] == unit]
    values = sel.pivot_table(
        index="label", columns="attribute", values="value", aggfunc="first", dropna=False
    )
    if order is not None:
        present = set(values.index)
        rest = [x for x in values.index if x not in set(order)]
        values = values.reindex(index=[x for x in order if x in present] + rest)

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
def baseline(
    ds: Dataset, group: str, method: str, variant: str, reference: str = "all"
) -> pd.DataFrame:
    """Human baseline of one annotator group (all groups if ``group`` is unknown), every
    unit: each annotator vs the mean of all annotators (``reference="all"``, the paper's
    upper bound) or of the others ("others", leave-one-out); see :data:`BASELINES`."""
    groups = reference_groups(ds)
    return dag.human_baseline_table(
        ds,
        groups={group: groups[group]} if group in groups else groups,
        units=tuple(UNITS),
        method=method,
        variant=variant,
        reference=reference,
    )


@cache_data(show_spinner="Inter-annotator agreement…", max_entries=16)
def iaa(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.iaa_table``: ICC2k, Krippendorff's alpha, share all agree per group."""
    return dag.iaa_table(ds)


@cache_data(show_spinner="Judge self-consistency…", max_entries=16)
def self_consistency(ds: Dataset) -> pd.DataFrame:
    """``data.agreement.self_consistency_table`` of the prompted judges (automatic measures
    have one value per item), with a ``label`` per rater: ICC2k, Krippendorff's alpha
    (interval, ordinal) and the share of items whose samples all agree."""
    table = raters(ds)
    prompted = table.loc[~table["automatic"]]
    if not len(prompted):
        return labelled(dag.self_consistency_table(ds).iloc[0:0])
    sub = with_raters(ds, tuple(zip(prompted["judge"], prompted["prompt_id"], strict=True)))
    return labelled(dag.self_consistency_table(sub)).drop(columns="automatic", errors="ignore")


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


@cache_data(show_spinner="Comparing the two groups…", max_entries=32)
def group_comparison(
    ds: Dataset,
    judge: str,
    prompt_id: str,
    group_a: tuple,
    group_b: tuple,
    annotators: tuple | None,
) -> pd.DataFrame:
    """``data.agreement.groups.group_comparison_table`` of one judge and prompt."""
    return group_comparison_table(
        ds, group_a, group_b, judge=judge, prompt_id=prompt_id, annotators=_listed(annotators)
    )


def group_display(table: pd.DataFrame) -> pd.DataFrame:
    """The group table as shown: per attribute and rater, "mean ± sd (n)" of each group,
    Welch's t and p (n/a with the reason when undefined)."""
    return pd.DataFrame(
        {
            "attribute": table["attribute"].astype(str),
            "rater": table["rater"],
            **welch_columns(table, 2),
            "p": [fmt(p, 4) for p in table["pvalue"]],
            "note": table["reason"],
        }
    )


# The Williams tests and the paper's analyses, in their own modules (re-exported here).
from pages.services.agreement.paper import (  # noqa: E402
    annotator_pairs,
    pairs_matrix,
    prompt_effect,
    system_ratings,
    system_ratings_frames,
)
from pages.services.agreement.williams import (  # noqa: E402
    WilliamsTest,
    williams,
    williams_heatmap_frames,
    williams_versus,
    williams_versus_frames,
)

__all__ = [
    "BASELINES",
    "CORRELATIONS",
    "DEFAULT_MEASURES",
    "FAMILIES",
    "MAX_HEATMAP_ANNOTATORS",
    "SIDES",
    "UNITS",
    "WilliamsTest",
    "annotator_pairs",
    "annotator_summary",
    "baseline",
    "correlation_heatmap_frames",
    "correlations",
    "default_group",
    "default_labels",
    "group_comparison",
    "group_display",
    "iaa",
    "natural_frame",
    "pairs_matrix",
    "pairs_of",
    "pairwise_accuracy",
    "prompt_effect",
    "rater_label",
    "raters",
    "reference_groups",
    "scatter",
    "self_consistency",
    "system_ratings",
    "system_ratings_frames",
    "systems_of",
    "top_bottom",
    "verdicts",
    "williams",
    "williams_heatmap_frames",
    "williams_versus",
    "williams_versus_frames",
]
