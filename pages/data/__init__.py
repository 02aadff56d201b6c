"""The Data page in parts: the upload tab (:mod:`.upload`, with the column mapping forms of
:mod:`.mapping`) and the view of the loaded dataset (:mod:`.loaded`); ``pages/data/page.py`` is
the routed entry."""
