"""``python -m judge run|estimate ...`` (see :mod:`judge.cli`)."""

import sys

from judge.cli import main

sys.exit(main())
