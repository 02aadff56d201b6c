"""Human agreement: judges against human raters, humans against each other, judges against
themselves, which judge differences are significant, and two groups of systems compared.

This script holds the settings; each section lives in its own module under
``pages/agreement/``."""

import streamlit as st

from data.schema import HUMAN_JUDGE_PREFIX
from pages.agreement import (
    PAGE,
    SECTION_KEY,
    SECTIONS,
    Choices,
    groups,
    humans,
    judges,
    pairwise,
    paper,
    ppi,
    raters,
    williams,
)
from pages.services import agreement as svc
from pages.shell import state, ui

st.title("Human agreement")
st.markdown(
    "How closely each judge follows the human raters — within each context (**item**), over "
    "per-system means (**system**) and over all items pooled (**overall**) — next to how "
    "closely the humans follow each other (the **human baseline**)."
)

ds = state.analysed()
comps = ds.comparisons
human_verdicts = (
    bool(len(comps)) and comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX).any()
)
has_humans = len(ds.human_scores) > 0
ui.need(
    has_humans or human_verdicts,
    f"**{ui.safe(state.active_name())}** has no human scores or human verdicts, so there is "
    "nothing to "
    "agree with. Load a set with human annotations on the Data page (HANNA, SummEval, "
    "Topical-Chat, PandaLM or the demo), or upload human scores.",
)

# ------------------------------------------------------------------------------ settings
state.scope_caption()
reference_groups = svc.reference_groups(ds)
c1, c2, c3 = st.columns(3)
corr_label = c1.selectbox(
    "Correlation",
    list(svc.CORRELATIONS),
    key=f"{PAGE}.method",
    help="Kendall tau-b adjusts for ties (Likert scores have many); tau-c suits scales with "
    "few values; Spearman and Pearson are the other usual choices.",
)
method, variant = svc.CORRELATIONS[corr_label]
group = None
if reference_groups:
    names = list(reference_groups)
    default = svc.default_group(reference_groups)
    with c2:
        group = ui.select(
            "Human reference",
            names,
            key=f"{PAGE}.group",
            index=names.index(default),
            format_func=lambda g: f"{ui.short(g)} ({len(reference_groups[g])} annotator(s))",
            help="Judges are compared with the mean score of these annotators.",
        )
annotators = tuple(reference_groups[group]) if group else None
n_boot = c3.select_slider(
    "Bootstrap replicates",
    [0, 100, 200, 500, 1000, 2000],
    value=200,
    key=f"{PAGE}.n_boot",
    help="Intervals resample contexts; more replicates are steadier and slower (cached).",
)
chosen = raters.choose(ds)
reference = "all"
if has_humans and group and len(reference_groups[group]) > 1:
    reference = st.radio(
        "Human baseline",
        list(svc.BASELINES),
        format_func=svc.BASELINES.get,
        horizontal=True,
        key=state.keep(f"{PAGE}.baseline", url="baseline", parse=raters.parse_baseline),
        help="HANNA's figures correlate each annotator with the mean of all three, "
        "themselves included (an upper bound); leave-one-out is the stricter comparison.",
    )
ui.settings(
    PAGE,
    {
        "correlation": corr_label,
        "human reference": group,
        "annotators": list(annotators or []),
        "bootstrap replicates": n_boot,
        "judges": chosen.judges,
        "automatic measures": chosen.measures,
        "human baseline": svc.BASELINES[reference],
        **state.scope_settings(),
    },
)
choices = Choices(
    ds=ds,
    corr_label=corr_label,
    method=method,
    variant=variant,
    groups=reference_groups,
    group=group,
    annotators=annotators,
    n_boot=int(n_boot),
    has_humans=has_humans,
    human_verdicts=bool(human_verdicts),
    raters=chosen,
    reference=reference,
)

# ------------------------------------------------------------------------------ sections
# One tab per question; only the open tab runs (issue 26: a first visit built all nine
# sections, about 14 figures, 7-11 s; each tab now builds its own when opened).
RENDERS = {
    "judges": (judges.render,),
    "humans": (humans.render_humans, humans.render_self_consistency),
    "significance": (williams.render,),
    "paper": (paper.render_prompt_effect, paper.render_system_ratings),
    "groups": (groups.render,),
    "pairwise": (pairwise.render,),
    "ppi": (ppi.render,),
}
# without human scores the pairwise verdicts are the page's subject: their tab comes first
# (the first tab is the open one; no ``default``, which would change the widget's identity
# once the tab state is set)
order = list(SECTIONS) if has_humans else ["pairwise", *(n for n in SECTIONS if n != "pairwise")]
tabs = st.tabs([SECTIONS[n] for n in order], key=SECTION_KEY, on_change="rerun")
for tab, name in zip(tabs, order, strict=True):
    if tab.open:
        with tab:
            for render in RENDERS[name]:
                render(choices)
