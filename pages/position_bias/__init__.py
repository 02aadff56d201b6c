"""The Position bias page (``page.py``): first-slot win rate, swap consistency and the debias
threshold tuned live."""
