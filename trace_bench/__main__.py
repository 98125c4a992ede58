"""``python -m trace_bench`` runs the CLI."""

from __future__ import annotations

import sys

from trace_bench.cli.main import main

sys.exit(main())
