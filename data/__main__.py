"""``python -m data check|fetch [NAME ...]``: see :mod:`data.benchmarks.fetch`."""

from data.benchmarks.fetch import main

raise SystemExit(main())
