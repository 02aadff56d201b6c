"""Sections of the Rankings page (``pages/rankings.py``), one module each."""
