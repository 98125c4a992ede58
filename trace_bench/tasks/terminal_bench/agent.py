"""The Harbor agent that runs a candidate template: Terminus-2 with its prompt template replaced.

Harbor imports it in *its own* process (``--agent-import-path
trace_bench.tasks.terminal_bench.agent:TraceBenchTerminus2``), so this module is only ever used
where Harbor (Python >= 3.12) is installed; trace-bench itself never imports it.  The template comes
from ``--agent-kwarg prompt_template_path=<file>`` (one file per evaluation) or
``prompt_template=<text>``.  Terminus-2 keeps its template in the private attribute
``_prompt_template``; overriding it is the only hook Harbor offers, so it is checked to exist and
fails loudly (an infrastructure error for the evaluation) if a Harbor release renames it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from harbor.agents.terminus_2 import Terminus2
except ImportError as exc:  # pragma: no cover - Harbor is optional (Python >= 3.12 only)
    _IMPORT_ERROR: ImportError | None = exc

    class Terminus2:  # type: ignore[no-redef]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise ImportError("TraceBenchTerminus2 needs Harbor: pip install 'trace-bench[terminal-bench]' "
                              "(Python >= 3.12)") from _IMPORT_ERROR
else:
    _IMPORT_ERROR = None


class TraceBenchTerminus2(Terminus2):
    """Terminus-2 whose prompt template is the candidate being evaluated."""

    def __init__(self, *args: Any, prompt_template_path: str | None = None, prompt_template: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        template = Path(prompt_template_path).read_text(encoding="utf-8") if prompt_template_path else prompt_template
        if template is None:
            return
        if not hasattr(self, "_prompt_template"):
            raise RuntimeError("this Harbor's Terminus2 has no _prompt_template; update trace-bench's agent adapter")
        self._prompt_template = template

