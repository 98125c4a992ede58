"""A candidate program and its trainable part: the code between ``EVOLVE-BLOCK`` markers.

OpenEvolve's examples and SkyDiscover's benchmarks mark the code a search may change with a
``# EVOLVE-BLOCK-START`` line and a ``# EVOLVE-BLOCK-END`` line (``// EVOLVE-BLOCK-START`` in Rust,
``! ...`` in Fortran, ``(* ... *)`` in Wolfram: the language's comment leader); everything else in the file is
fixed context (imports, the entry point the evaluator calls).  A file without markers is
trainable as a whole.  :class:`EvolveProgram` keeps the fixed parts and rebuilds the whole file
for any block text, byte for byte what the original file holds when the block is unchanged.

Only the first marked block is trainable (what both libraries evolve in practice); a file with
several blocks, or with a start marker and no end marker, is refused with the reason, so a task
never silently optimizes less than its author marked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trace_bench._util.errors import TraceBenchError

START = "# EVOLVE-BLOCK-START"
END = "# EVOLVE-BLOCK-END"
# A marker is a line of its own behind the program language's comment leader: ``#`` (Python, R, Julia),
# ``//`` (Rust, Go, C++, Verilog), ``!`` (Fortran), ``--`` (Lua, SQL, Haskell), ``%`` (MATLAB, LaTeX),
# ``;`` (Lisp, assembly), ``(*`` (Wolfram, OCaml), ``/*`` and ``<!--``, as the peers' examples mark
# programs in those languages; a closing ``*)``, ``*/`` or ``-->`` may follow on the line.
_LEADER = r"^[ \t]*(?:#|//+|!|--|%|;+|\(\*|/\*+|<!--)[ \t]*"
_START_LINE = re.compile(_LEADER + r"EVOLVE-BLOCK-START\b[^\n]*\n?", re.M)
_END_LINE = re.compile(_LEADER + r"EVOLVE-BLOCK-END\b[^\n]*(\n|\Z)", re.M)


class ProgramFormatError(TraceBenchError, ValueError):
    """The program's markers cannot be read (unbalanced or repeated)."""


@dataclass(frozen=True)
class EvolveProgram:
    """``prefix + block + suffix`` is the whole program; ``prefix`` ends with the start marker line
    and ``suffix`` begins with the end marker line (both empty for an unmarked file)."""

    prefix: str
    block: str
    suffix: str

    @property
    def marked(self) -> bool:
        return bool(self.prefix or self.suffix)

    def render(self, block: str) -> str:
        """The whole program with ``block`` as the trainable part."""
        if not self.marked:
            return block
        body = block if not block or block.endswith("\n") else block + "\n"
        return f"{self.prefix}{body}{self.suffix}"

    @property
    def source(self) -> str:
        return self.render(self.block)

    def block_of(self, program: str) -> str:
        """The trainable part of ``program``, a rewrite of this one (markers kept by the writer).

        ``ProgramFormatError`` when ``program`` has no readable block; the code outside it is
        taken from this program, never from the rewrite (only the block is trainable)."""
        if not self.marked:
            return program
        return parse_program(program).block


def parse_program(source: str) -> EvolveProgram:
    """Split ``source`` at its markers (see the module docstring for what is refused)."""
    starts = list(_START_LINE.finditer(source))
    ends = list(_END_LINE.finditer(source))
    if not starts and not ends:
        return EvolveProgram("", source, "")
    if len(starts) != 1 or len(ends) != 1:
        raise ProgramFormatError(f"the program must hold exactly one {START} and one {END} line "
                                 f"(found {len(starts)} and {len(ends)})")
    start, end = starts[0], ends[0]
    if end.start() < start.end():
        raise ProgramFormatError(f"{END} comes before {START}")
    prefix = source[: start.end()]
    if not prefix.endswith("\n"):
        prefix += "\n"
    return EvolveProgram(prefix, source[start.end(): end.start()], source[end.start():])
