"""Leaderboards of systems from flat comparisons pooled over contexts (the Chatbot Arena way).

- ``tallies``: the win matrix (battles and win shares of every pair), competition ranks, and
  how two orders of the same items differ (``rank_change``);
- ``elo``: Elo ratings, with a bootstrap over the order of the games;
- ``rank_intervals``: rank intervals, the Arena's rank rule and "significantly better" from
  bootstrap replicates or score intervals;
- ``baseline``: every system's win rate against a baseline, sigmoid(theta - theta_baseline),
  with bootstrap (Arena-Hard) or Fisher intervals.

The Bradley–Terry scores themselves come from :mod:`ranking.bradley_terry`.
"""

from .baseline import BaselineWinRates, baseline_win_rates
from .elo import EloResult, elo
from .rank_intervals import RankIntervals, rank_intervals
from .tallies import RankChange, WinMatrix, competition_ranks, rank_change, win_matrix

__all__ = [
    "BaselineWinRates",
    "EloResult",
    "RankChange",
    "RankIntervals",
    "WinMatrix",
    "baseline_win_rates",
    "competition_ranks",
    "elo",
    "rank_change",
    "rank_intervals",
    "win_matrix",
]
