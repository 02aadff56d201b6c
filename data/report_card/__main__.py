"""``python -m data.report_card``: see :mod:`data.report_card.cli`."""

from data.report_card.cli import main

raise SystemExit(main())
