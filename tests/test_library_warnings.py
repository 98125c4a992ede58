"""An installed library's compile-time SyntaxWarnings stay out of a run's output; the user's do not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

OLD_CODE = 'def same(x):\n    return x is "recursive"\n'


def test_a_librarys_syntax_warnings_are_silenced_and_the_users_are_not(tmp_path: Path) -> None:
    installed, own = tmp_path / "lib" / "site-packages", tmp_path / "work"
    for folder, name in ((installed, "oldlib"), (own, "mine")):
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text(OLD_CODE, encoding="utf-8")
    script = ("import sys; sys.path[:0] = sys.argv[1:]\n"
              "from trace_bench._util.runtime import set_environment_defaults\n"
              "set_environment_defaults()\nimport oldlib, mine\n")
    done = subprocess.run([sys.executable, "-B", "-c", script, str(installed), str(own)], cwd=REPO,
                          capture_output=True, text=True, check=True)
    assert "oldlib.py" not in done.stderr, done.stderr
    assert "mine.py" in done.stderr and "SyntaxWarning" in done.stderr, done.stderr
