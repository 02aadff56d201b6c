"""``python -m data check|fetch [NAME ...]``: see :mod:`data.fetch`."""

from data.fetch import main

raise SystemExit(main())
