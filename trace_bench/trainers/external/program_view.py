"""The task's trainable parameters as one program, the currency of program-evolving libraries
(OpenEvolve, SkyDiscover).

A discovery task (its problem carries ``discovery_program``) is shown as what it is: the task's
own program file, with its real ``EVOLVE-BLOCK`` markers and the fixed code around them; only the
block is read back (code a library changes outside it is not trainable and is dropped).  Any
other task's parameters become one ``EVOLVE-BLOCK`` each, labelled ``name:kind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trace_bench.llm.stub_formats import BLOCK
from trace_bench.trainers.external.bridge import TextParameter


def render_program(parameters: list[TextParameter], texts: dict[str, str]) -> str:
    """The parameters as one program: a comment naming each, then its EVOLVE-BLOCK."""
    parts = []
    for p in parameters:
        note = f"# {p.name} ({p.kind}): {p.description}" if p.description else f"# {p.name} ({p.kind})"
        parts.append(f"{note}\n# EVOLVE-BLOCK-START {p.name}:{p.kind}\n{texts[p.name]}\n# EVOLVE-BLOCK-END")
    return "\n\n".join(parts) + "\n"


def parse_program(parameters: list[TextParameter], code: str) -> dict[str, str]:
    """Parameter texts from a program; ``ValueError`` when a block is missing."""
    found = {m.group("label").strip().split(":")[0]: m.group("body") for m in BLOCK.finditer(code)}
    missing = [p.name for p in parameters if p.name not in found]
    if missing:
        raise ValueError(f"the program must keep one EVOLVE-BLOCK per parameter; missing: {', '.join(missing)}")
    return {p.name: found[p.name] for p in parameters}


@dataclass
class ProgramView:
    parameters: list[TextParameter]
    program: Any = None  # the task's EvolveProgram, for discovery tasks
    program_language: str = ""  # the task's own program's language (a prompt folder's: text)

    @property
    def native(self) -> bool:
        """True when the program shown is the task's own file."""
        return self.program is not None

    @property
    def language(self) -> str:
        if self.native:
            return self.program_language or "python"
        return "python" if all(p.kind == "code" for p in self.parameters) else "text"

    def render(self, texts: dict[str, str]) -> str:
        if self.native:
            return str(self.program.render(texts[self.parameters[0].name]))
        return render_program(self.parameters, texts)

    def parse(self, code: str) -> dict[str, str]:
        """Parameter texts of a program; ``ValueError`` (with the reason) when it has no readable block."""
        if self.native:
            from trace_bench.tasks.discovery.program import ProgramFormatError

            try:
                return {self.parameters[0].name: self.program.block_of(code)}
            except ProgramFormatError as exc:
                raise ValueError(str(exc)) from None
        return parse_program(self.parameters, code)


def program_view(problem: Any, parameters: list[TextParameter]) -> ProgramView:
    extras = getattr(problem, "extras", {})
    program = extras.get("discovery_program")
    if program is not None and len(parameters) == 1:
        return ProgramView(parameters, program, str(extras.get("discovery_language") or ""))
    return ProgramView(parameters)


def system_message(problem: Any) -> str:
    """The task's own system message (a discovery task's ``config.yaml``), or empty."""
    return str(getattr(problem, "extras", {}).get("discovery_system_message") or "")


DEFAULT_ITERATIONS = 10


def suggested_iterations(problem: Any, params: Any) -> int:
    """``params.iterations``, else the task's own ``max_iterations``, else :data:`DEFAULT_ITERATIONS`."""
    if params.iterations is not None:
        return int(params.iterations)
    suggested = (getattr(problem, "metadata", {}) or {}).get("suggested_iterations")
    return suggested if isinstance(suggested, int) and suggested > 0 else DEFAULT_ITERATIONS


def task_metrics(problem: Any, state: list[Any]) -> dict[str, float]:
    """The evaluator's own metrics of a one-parameter state (discovery tasks; cached by the guide)."""
    metrics_for = getattr(problem.guide, "metrics_for", None)
    if not callable(metrics_for) or len(state) != 1:
        return {}
    return {k: v for k, v in metrics_for(state[0]).items() if k != "combined_score"}
