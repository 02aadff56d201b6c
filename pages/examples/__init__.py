"""The Examples page (``page.py``): any pair up close; its detail view is :mod:`.detail`."""
