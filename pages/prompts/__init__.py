"""The Prompt sensitivity page (``page.py``): the same judge across templates and temperatures."""
