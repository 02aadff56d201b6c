"""The Reproduce page (``page.py``): the papers' published numbers beside the ones JudgeScope
computes."""
