"""``python -m decisiontrail.cli``: the command line (the benchmark and reliability harnesses serve with it)."""

from __future__ import annotations

import sys

from decisiontrail.cli import main

sys.exit(main())
