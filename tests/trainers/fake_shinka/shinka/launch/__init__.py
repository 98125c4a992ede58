from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LocalJobConfig:
    eval_program_path: str = "evaluate.py"
    time: str | None = None
