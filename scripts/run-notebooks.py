"""Execute the notebooks headless, top to bottom, offline (what `make notebooks` runs).

    .venv/bin/python scripts/run-notebooks.py                      # every notebook in notebooks/
    .venv/bin/python scripts/run-notebooks.py notebooks/01_*.ipynb # some of them

Each notebook runs in a kernel on this interpreter (a kernelspec in a temporary ``JUPYTER_PATH``,
which outranks the user's and the system's, so whatever Jupyter setup the machine has does not
matter), with its runs in a temporary directory of its own (``TRACE_BENCH_RUNS``) unless that
variable names one.  The notebooks stay as stored (without outputs); ``--save DIR`` writes the executed copies.
Prints one line per notebook with its wall time and exits 1 if any failed, naming the cell.
Needs the ``notebooks`` extra (``make notebooks`` installs it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL = "trace-bench-notebooks"
CELL_TIMEOUT_S = 600


def kernel_dir(root: Path) -> Path:
    """A Jupyter data directory whose only kernel runs this interpreter."""
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "trace-bench", "language": "python"}), encoding="utf-8")
    return root


def execute(path: Path, save: Path | None) -> str | None:
    """Run one notebook; the error (cell source and traceback tail) or None."""
    import nbclient
    import nbformat

    book = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    client = nbclient.NotebookClient(book, timeout=CELL_TIMEOUT_S, kernel_name=KERNEL,
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        return str(exc)[-4000:]
    finally:
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            nbformat.write(book, save / path.name)  # type: ignore[no-untyped-call]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--save", type=Path, help="write the executed notebooks here")
    args = parser.parse_args(argv)
    books = args.notebooks or sorted((REPO / "notebooks").glob("*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="trace-bench-notebooks-") as scratch:
        os.environ["JUPYTER_PATH"] = str(kernel_dir(Path(scratch) / "jupyter"))
        os.environ["JUPYTER_PLATFORM_DIRS"] = "1"
        runs = os.environ.get("TRACE_BENCH_RUNS")
        os.environ.setdefault("MPLBACKEND", "Agg")
        failed = []
        start = time.perf_counter()
        for path in books:
            os.environ["TRACE_BENCH_RUNS"] = runs or str(Path(scratch) / "runs" / path.stem)
            began = time.perf_counter()
            error = execute(path.resolve(), args.save)
            print(f"{'ok    ' if error is None else 'FAILED'} {path.name}  {time.perf_counter() - began:.1f} s",
                  flush=True)
            if error is not None:
                print(error, file=sys.stderr)
                failed.append(path.name)
        print(f"{len(books) - len(failed)} of {len(books)} notebooks ran in {time.perf_counter() - start:.1f} s"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
