"""Regenerate the outputs shown in README.md and docs/*.md from the code (stub mode, offline).

    .venv/bin/python scripts/update-doc-outputs.py              # every marked page
    .venv/bin/python scripts/update-doc-outputs.py docs/llm.md  # one page
    .venv/bin/python scripts/update-doc-outputs.py --check      # compare only (what tests/docs does)

How a page marks its blocks: tests/docs/doc_outputs.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.docs.doc_outputs import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main([a for a in args if a != "--check"] if "--check" in args else ["--update", *args]))
