"""``python -m data.bias BENCHMARK --judge J [--attribute A]``: see :mod:`data.bias.cli`."""

from data.bias.cli import main

raise SystemExit(main())
