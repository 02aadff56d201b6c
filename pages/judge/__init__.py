"""The Judge page's tabs, one module each; the page itself is ``pages/judge/page.py``.

- :mod:`~pages.judge.run_tab`: template with live preview, comparisons and decoding,
  estimate, and the background run with progress and cancel;
- :mod:`~pages.judge.backend_column`: the backend and its model, API key or loading;
- :mod:`~pages.judge.outputs_tab`: the raw answers of a judge, unparsed ones marked;
- :mod:`~pages.judge.import_tab`: published and uploaded judge outputs;
- :mod:`~pages.judge.summary`: the last run's calls (cached, new, by another run,
  failed by reason), warnings and notes, above the tabs.

Widget keys start with ``judge.``; the keys below hold the page's state between reruns.
"""

PAGE = "judge"
JOB = f"{PAGE}.job"  # the JudgeJob of this session (thread, progress, cancel, result)
LAST = f"{PAGE}.last"  # summary of the last finished run or import, shown until the next
RAW_GEN = f"{PAGE}.raw_gen"  # counts the runs taken in: the raw outputs' widgets are new
