"""The program's entry point (the ``trace-bench`` console script, ``python -m trace_bench``).

A local ``run`` first becomes the same command with ``PYTHONHASHSEED=0``
(:func:`trace_bench._util.hash_seed.fix_hash_seed`), before the parser, typing or any model is
imported: the interpreter that does so is thrown away.  A ``run`` this cannot tell from its words
alone (an abbreviated option, "ray" in a path) is decided after parsing, in
:func:`trace_bench.cli.main.main`.
"""

from __future__ import annotations

import sys


def plainly_local_run(argv: list[str]) -> bool:
    """Whether ``argv`` is a ``run`` on the local executor, told without parsing it: the command
    first and no word mentioning ray."""
    return argv[:1] == ["run"] and not any("ray" in word for word in argv)


def main() -> int:
    if plainly_local_run(sys.argv[1:]):
        from trace_bench._util.hash_seed import fix_hash_seed

        fix_hash_seed()
    from trace_bench.cli.main import main as parse_and_run

    return parse_and_run()
