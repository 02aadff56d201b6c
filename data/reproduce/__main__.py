"""``python -m data.reproduce PAPER [--json FILE] [--data-dir DIR]``: the reproduction table."""

from data.reproduce.cli import main

raise SystemExit(main())
