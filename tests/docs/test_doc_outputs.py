"""Every output shown in README.md and docs/ is what the code prints (see tests/docs/doc_outputs.py).

When one differs after a deliberate change, regenerate the pages with
``.venv/bin/python scripts/update-doc-outputs.py`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.doc_outputs import REPO, main, pages, report, run_page

PAGES = pages()


def test_the_pages_that_show_outputs_are_checked() -> None:
    names = {page.relative_to(REPO).as_posix() for page in PAGES}
    assert {"README.md", "docs/adding-task.md", "docs/adding-trainer.md", "docs/llm.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_documented_outputs_are_what_the_code_prints(page: Path, tmp_path: Path) -> None:
    _, results = run_page(page, tmp_path)
    assert any(ran for _, ran in results), "a marked page runs at least one command"
    differences = report(page, results)
    assert not differences, (f"{differences}\n\nIf the change is intended: .venv/bin/python "
                             f"scripts/update-doc-outputs.py {page.relative_to(REPO)}")


PAGE = '''# A page

<!-- doc-test: file data.csv -->
```
step,wall_s,score
0,0.01,-3.0
```

```console
$ echo not run: this block is not marked
```

<!-- doc-test: run -->
```console
$ cat data.csv
step,wall_s,score
0,0.5,-3.0
$ printf 'run 20261123-192608-17a82889 job 0c75eed9ae6b\\nok 0.15s\\nline 3\\nlast\\n'
run <run_id> job <job_id>
ok 2.00s
...
last
$ echo changed
unchanged
```
'''


def test_check_compares_outputs_but_not_timings_and_update_rewrites_what_differs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    _, results = run_page(page, tmp_path / "scratch")
    (block, ran), = results
    assert [c.ok for c in ran] == [True, True, False]  # wall_s, durations, ids and '...' tolerated; text is not
    assert "-unchanged\n+changed" in report(page, results)
    assert main([str(page)]) == 1
    assert main(["--update", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "$ echo changed\nchanged\n```" in text and "0,0.5,-3.0" in text and "ok 2.00s\n...\nlast" in text
    assert "$ echo not run: this block is not marked\n```" in text
    assert main([str(page)]) == 0


def test_a_changed_score_or_a_missing_tail_line_is_a_difference(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("0,0.5,-3.0", "0,0.5,-2.0").replace("...\nlast", "...\nfinal"), encoding="utf-8")
    _, results = run_page(page, tmp_path / "scratch")
    assert [c.ok for _, ran in results for c in ran] == [False, False, False]


def test_a_marker_without_a_fenced_block_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- doc-test: run -->\ntext\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must be followed by a fenced block"):
        run_page(page, tmp_path / "scratch")


def test_the_wall_time_column_of_a_markdown_table_is_not_compared() -> None:
    from tests.docs.doc_outputs import matches

    shown = ["| task | arm | score | wall s | tokens |", "|---|---|---:|---:|---:|", "| t | A | 0.5 | 0.1 | 7 |"]
    slower = [*shown[:2], "| t | A | 0.5 | 0.3 | 7 |"]
    assert matches(shown, slower)
    assert not matches(shown, [*shown[:2], "| t | A | 0.6 | 0.1 | 7 |"]), "a score is compared"
    assert not matches(shown, [*shown[:2], "| t | A | 0.5 | 0.1 | 8 |"]), "tokens are compared"
