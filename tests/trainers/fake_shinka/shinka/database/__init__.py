from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class DatabaseConfig:
    num_islands: int = 2
    archive_size: int = 40
    parent_selection_strategy: str = "power_law"
    parent_selection_lambda: float = 10.0
    elite_selection_ratio: float = 0.3
    num_archive_inspirations: int = 4
    num_top_k_inspirations: int = 2
    migration_interval: int = 10
    migration_rate: float = 0.1
    island_elitism: bool = True


@dataclass
class Program:
    id: str
    code: str
    generation: int
    combined_score: float | None = None
    public_metrics: dict[str, Any] = field(default_factory=dict)
    correct: bool = False
    parent_id: str | None = None
    language: str = "python"
    timestamp: float = field(default_factory=time.time)

    @property
    def solution(self) -> str:  # SkyDiscover's backend reads both names
        return self.code


class ProgramDatabase:
    def __init__(self, config: DatabaseConfig) -> None:
        self.config = config
        self.programs: list[Program] = []

    def add(self, program: Program) -> None:
        self.programs.append(program)

    def get_all_programs(self) -> list[Program]:
        return list(self.programs)

    def get_best_program(self) -> Program | None:
        correct = [p for p in self.programs if p.correct and p.combined_score is not None]
        return max(correct, key=lambda p: p.combined_score) if correct else None
