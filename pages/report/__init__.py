"""The Report page (``page.py``) and the one-file HTML report and ZIP of tables it writes
(:mod:`.export`)."""
