"""Parts of the Examples page (pages/examples.py)."""
