"""``python -m decisiontrail``: the command line."""

from __future__ import annotations

import sys

from decisiontrail.cli import main

sys.exit(main())
