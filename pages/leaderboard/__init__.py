"""The Leaderboard page (``page.py``): systems × judges, Bradley–Terry with intervals, battles
and win rates."""
