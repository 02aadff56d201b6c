"""``python -m data.agreement``: see :mod:`data.agreement.cli`."""

from data.agreement.cli import main

raise SystemExit(main())
