"""The Comparison budgets page (``page.py``): ranking quality against the number of
comparisons, per selection strategy."""
