"""Outputs shown in the docs, run and compared (``tests/docs``) or regenerated (``--update``).

A page opts a fenced block in with an HTML comment on the line just before it (invisible when
rendered):

- ``<!-- doc-test: file PATH -->``: the block's text is written to PATH in the page's scratch
  directory (a task module, a config, a script the page goes on to run);
- ``<!-- doc-test: run -->``: a console block.  Each line starting with ``$ `` is a command, run by
  bash in the scratch directory; the lines after it, up to the next command, are its output
  (stdout and stderr together, as a terminal shows them).  One line ``...`` in an output stands for
  any number of lines; what comes before it must start the output and what comes after must end it.

Blocks run in page order, one scratch directory per page, offline and in stub mode (no key
reaches the commands).  The scratch directory links ``.venv`` and ``configs`` to the repository's,
and the venv's ``bin`` is first on PATH, so ``trace-bench`` and ``.venv/bin/python`` work as written.
Outputs are stored with run ids, job ids and the scratch path as ``<run_id>``, ``<job_id>``,
``<tmp>``; durations (``0.15s``) and timing columns of CSV output (``wall_s``, ``time_seconds``)
are kept as measured but not compared.  ``--update`` rewrites only the outputs that differ.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*doc-test:\s*(?:file\s+(?P<path>\S+)|(?P<run>run))\s*-->\s*$")
FENCE = re.compile(r"^(`{3,}|~{3,})")
ELLIPSIS = "..."
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{8}\b")
JOB_ID = re.compile(r"(?<![0-9A-Za-z_])[0-9a-f]{12}(?![0-9A-Za-z_])")
DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?s\b")
TIMING_COLUMNS = {"wall_s", "time_seconds", "wall s"}
PASSED_ENV = ("HOME", "LANG", "LC_ALL", "USER", "LOGNAME")
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "GRADIO_ANALYTICS_ENABLED": "False", "RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1",
               "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "120"}


@dataclass
class Block:
    kind: str  # "file" or "run"
    path: str  # target file of a "file" block
    start: int  # index of the block's first content line in the page
    end: int  # index of its closing fence
    lines: list[str]


@dataclass
class Command:
    text: str
    expected: list[str]
    actual: list[str] = field(default_factory=list)
    returncode: int = 0

    @property
    def ok(self) -> bool:
        return matches(self.expected, self.actual)


def parse(page: list[str]) -> list[Block]:
    blocks: list[Block] = []
    for i, line in enumerate(page):
        marker = MARKER.match(line.strip())
        if not marker:
            continue
        fence = FENCE.match(page[i + 1]) if i + 1 < len(page) else None
        if fence is None:
            raise ValueError(f"line {i + 1}: a doc-test marker must be followed by a fenced block")
        end = next((j for j in range(i + 2, len(page)) if page[j].strip() == fence.group(1)), None)
        if end is None:
            raise ValueError(f"line {i + 2}: the fenced block is not closed")
        kind = "run" if marker.group("run") else "file"
        blocks.append(Block(kind, marker.group("path") or "", i + 2, end, page[i + 2:end]))
    return blocks


def commands(block: Block) -> list[Command]:
    found: list[Command] = []
    for line in block.lines:
        if line.startswith("$ "):
            found.append(Command(line[2:], []))
        elif not found:
            raise ValueError(f"line {block.start + 1}: a console block must start with a '$ ' command")
        else:
            found[-1].expected.append(line)
    for command in found:
        _trim(command.expected)
    return found


def _trim(lines: list[str]) -> list[str]:
    lines[:] = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def placeholders(text: str, scratch: Path) -> str:
    for path in {str(scratch.resolve()), str(scratch)}:
        text = text.replace(path, "<tmp>")
    return JOB_ID.sub("<job_id>", RUN_ID.sub("<run_id>", text))


def mask(lines: list[str]) -> list[str]:
    """What is compared: durations and timing columns of CSV and Markdown tables blanked."""
    masked: list[str] = []
    timing: set[int] = set()
    width = 0
    for line in lines:
        sep = "|" if line.startswith("|") else ","
        cells = line.split(sep)
        names = {cell.strip() for cell in cells}
        if TIMING_COLUMNS & names:
            timing, width = {i for i, cell in enumerate(cells) if cell.strip() in TIMING_COLUMNS}, len(cells)
        elif timing and len(cells) == width:
            line = sep.join("<time>" if i in timing else cell for i, cell in enumerate(cells))
        else:
            timing = set()
        masked.append(DURATION.sub("<time>", line))
    return masked


def _split(expected: list[str]) -> tuple[list[str], list[str] | None]:
    if ELLIPSIS not in expected:
        return expected, None
    at = expected.index(ELLIPSIS)
    return expected[:at], expected[at + 1:]


def matches(expected: list[str], actual: list[str]) -> bool:
    head, tail = _split(mask(expected))
    got = mask(actual)
    if tail is None:
        return head == got
    return len(got) >= len(head) + len(tail) and got[:len(head)] == head and got[len(got) - len(tail):] == tail


def regenerate(expected: list[str], actual: list[str]) -> list[str]:
    """``actual`` cut to the documented shape: as many leading and trailing lines around ``...``."""
    head, tail = _split(expected)
    if tail is None:
        return list(actual)
    return [*actual[:len(head)], ELLIPSIS, *(actual[len(actual) - len(tail):] if tail else [])]


def environment(scratch: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    env.update(OFFLINE_ENV, TMPDIR=str(scratch / "tmp"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    return env


def run_page(page_path: Path, scratch: Path) -> tuple[list[str], list[tuple[Block, list[Command]]]]:
    """Run every marked block of a page in ``scratch``; the page's lines and each run block's commands."""
    page = page_path.read_text(encoding="utf-8").splitlines()
    (scratch / "tmp").mkdir(parents=True, exist_ok=True)
    for name, target in ((".venv", Path(sys.prefix)), ("configs", REPO / "configs"), ("scripts", REPO / "scripts")):
        if not (scratch / name).exists():
            (scratch / name).symlink_to(target, target_is_directory=True)
    env = environment(scratch)
    results = []
    for block in parse(page):
        if block.kind == "file":
            target = scratch / block.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(block.lines) + "\n", encoding="utf-8")
            continue
        ran = commands(block)
        for command in ran:
            proc = subprocess.run(["bash", "-c", command.text], cwd=scratch, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            command.returncode = proc.returncode
            command.actual = _trim(placeholders(proc.stdout, scratch).splitlines())
        results.append((block, ran))
    return page, results


def report(page_path: Path, results: list[tuple[Block, list[Command]]]) -> str:
    """A diff of every documented output that differs from what the code prints."""
    parts = []
    for block, ran in results:
        for command in (c for c in ran if not c.ok):
            diff = difflib.unified_diff(mask(command.expected), mask(command.actual), "documented", "printed",
                                        lineterm="")
            parts.append(f"{page_path.name}:{block.start + 1}: $ {command.text} (exit {command.returncode})\n"
                         + "\n".join(diff))
    return "\n\n".join(parts)


def update_page(page_path: Path, page: list[str], results: list[tuple[Block, list[Command]]]) -> bool:
    """Rewrite the outputs that differ; False when every output already matches."""
    if all(c.ok for _, ran in results for c in ran):
        return False
    for block, ran in sorted(results, key=lambda item: -item[0].start):
        lines: list[str] = []
        for command in ran:
            lines += [f"$ {command.text}",
                      *(command.expected if command.ok else regenerate(command.expected, command.actual))]
        page[block.start:block.end] = lines
    page_path.write_text("\n".join(page) + "\n", encoding="utf-8")
    return True


def pages() -> list[Path]:
    """Every page of README.md and docs/ that has a doc-test marker."""
    candidates = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [p for p in candidates if "<!-- doc-test:" in p.read_text(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check (default) or regenerate the outputs shown in the docs.")
    parser.add_argument("pages", nargs="*", type=Path, help="pages to process (default: every marked page)")
    parser.add_argument("--update", action="store_true", help="rewrite the outputs that differ")
    args = parser.parse_args(argv)
    failed = 0
    for page_path in args.pages or pages():
        with tempfile.TemporaryDirectory(prefix="trace-bench-docs-") as scratch:
            page, results = run_page(page_path.resolve(), Path(scratch))
        if args.update:
            print(f"{page_path}: {'updated' if update_page(page_path, page, results) else 'up to date'}")
        elif text := report(page_path, results):
            failed += 1
            print(text)
        else:
            print(f"{page_path}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
