"""The Rankings page (``page.py``) and its sections, one module each; :mod:`.views` holds the
figures it shares with the Leaderboard page (clickable matrix, rank slope)."""
