"""The Rankings page's systems section: every context pooled, systems ranked by
Bradley–Terry (Fisher or bootstrap intervals) and Elo, raw and debiased side by side; then how
sure that ranking is (``intervals``) and what a tie model changes (``ties``)."""

import streamlit as st

from pages.rankings import baseline, intervals, ties
from pages.rankings.views import interval_figure, rank_slope
from pages.services import common
from pages.services import rankings as svc
from pages.shell import state, ui

PAGE = "Rankings"

#: The interval choice: label -> (intervals, resample) of ``system_ranking``.
INTERVALS = {
    "Fisher": ("fisher", "comparisons"),
    "Bootstrap over comparisons": ("bootstrap", "comparisons"),
    "Bootstrap over contexts": ("bootstrap", "contexts"),
}


def render(ds, attribute: str, judge: str, setting, delta) -> None:
    """Draw the systems section for one judge of ``attribute`` under the debias ``setting``;
    ``delta(after, before)`` formats a metric's change from the raw ranking."""
    st.subheader("Systems")
    choice = ui.select(
        "Intervals",
        list(INTERVALS),
        key=state.keep("rank.intervals"),
        help="Bradley–Terry intervals, and the rank intervals below: from the Fisher "
        "information, or percentile intervals from 200 bootstrap refits that resample single "
        "comparisons or whole contexts (all comparisons of a context in or out together). "
        "Elo's band over shuffled orders of the games is the toggle below.",
    )
    interval, resample = INTERVALS[choice]
    boot = interval == "bootstrap"
    # the band replays every game in 200 orders (a compiled kernel; seconds on an arena's
    # tens of thousands of games): computed when asked for, not on the page's first paint
    band = st.toggle(
        "Elo band over 200 game orderings",
        key=state.keep("rank.elo_band"),
        help="Elo depends on the order of the games, which is arbitrary here: its 95% band "
        "replays every game in 200 shuffled orders. Off, Elo shows the ratings of one seeded "
        "order.",
    )
    result = svc.system_ranking(
        ds, attribute, judge, interval, rule=setting.rule, resample=resample, elo_band=band
    )
    if result is None:
        st.caption(ui.safe(svc.system_items(ds, attribute, judge)[1], 400))
    else:
        table = result.table
        if setting.active:
            raw = svc.system_ranking(
                ds,
                attribute,
                judge,
                interval,
                rule=setting.raw_rule,
                resample=resample,
                elo_band=False,  # only its Bradley–Terry scores are shown
            )
            side, change = svc.compare_systems(raw, result)
            st.markdown(f"**Raw ({setting.raw_label}) and debiased ({setting.label})**")
            m = st.columns(4)
            with m[0]:
                ui.metric("Systems moved", change.n_moved, f"of {len(side)} changed rank")
            with m[1]:
                ui.metric(
                    "Spearman raw vs debiased",
                    common.fmt(change.spearman),
                    "rank correlation of the Bradley–Terry scores before and after",
                )
            with m[2]:
                ui.metric(
                    "Kendall raw vs debiased",
                    common.fmt(change.kendall),
                    "Kendall's tau-b of the two orders",
                )
            with m[3]:
                ui.metric(
                    "System-level Spearman with humans",
                    common.fmt(result.spearman_bt),
                    "debiased Bradley–Terry scores vs the systems' human reference",
                    delta=delta(result.spearman_bt, raw.spearman_bt),
                )
            d_left, d_right = st.columns([3, 2])
            with d_left:
                ui.table(side, "Systems: raw and debiased ranks", page=PAGE, hide_index=True)
            with d_right:
                moves = side.melt(
                    id_vars="system",
                    value_vars=["raw rank", "debiased rank"],
                    var_name="ranking",
                    value_name="rank",
                ).rename(columns={"system": "candidate"})
                moves["ranking"] = moves["ranking"].str.removesuffix(" rank")
                fig = rank_slope(moves, "ranking", ["raw", "debiased"], "")
                fig.update_layout(legend_title_text="system")
                ui.figure(fig, "Ranks of the systems, raw and debiased", page=PAGE, data=moves)
        bt_fig = interval_figure(
            table,
            "bt_score",
            "lower",
            "upper",
            "Bradley–Terry",
            ui.PALETTE[0],
            "Bradley–Terry score (log-strength)",
            result.reference,
        )
        elo_fig = interval_figure(
            table,
            "elo",
            "elo_lower",
            "elo_upper",
            "Elo",
            ui.PALETTE[2],
            "Elo rating",
            result.reference,
        )
        shown = (
            "Fisher"
            if not boot
            else "bootstrap" + (" (contexts)" if resample == "contexts" else "")
        )
        s_left, s_right = st.columns([3, 1])
        with s_left:
            ui.figure(
                bt_fig,
                f"Systems by Bradley–Terry with 95% {shown} intervals",
                page=PAGE,
                data=table,
            )
            elo_title = (
                "Systems by Elo with 95% bands over game orderings"
                if band
                else "Systems by Elo (one seeded game ordering)"
            )
            ui.figure(elo_fig, elo_title, page=PAGE, data=table)
        with s_right:
            ui.metric(
                "System-level Spearman",
                common.fmt(result.spearman_bt),
                "rank correlation between the systems' Bradley–Terry scores and their "
                f"human reference ({ui.safe(result.reference or 'none', 200)})",
            )
            ui.metric(
                "System-level Spearman (Elo)",
                common.fmt(result.spearman_elo),
                "rank correlation between the systems' Elo ratings and their human reference",
            )
            ui.metric("Systems", len(table), "systems compared across all contexts")
        st.caption(
            "Elo (k = 4, start 1000) plays every comparison once as a game, in one seeded "
            "random order; its band spans 200 seeded shuffles of that order, since Elo depends "
            "on the order of games, which is arbitrary here."
            + ("" if band else " The band is off (the toggle above computes it).")
            + (" Both use the debiased outcomes." if setting.active else "")
        )
        for note in result.notes:
            st.caption(f"ℹ️ {ui.safe(note, 400)}")

    if result is not None:
        st.markdown("**Win rates against a baseline**")
        baseline.render(
            ds,
            attribute,
            judge,
            intervals=interval,
            rule=setting.rule,
            resample=resample,
            elo_band=band,
            page=PAGE,
        )
        intervals.render(ds, attribute, judge, setting, result)
    ties.render(ds, attribute, judge, setting)
