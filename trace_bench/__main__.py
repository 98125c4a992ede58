"""``python -m trace_bench`` runs the CLI."""

from __future__ import annotations

import sys

from trace_bench.cli.entry import main

sys.exit(main())
