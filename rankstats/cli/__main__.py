"""``python -m rankstats.cli``: the ``rankstats`` command."""

import sys

from . import main

sys.exit(main())
