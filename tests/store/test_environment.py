"""meta/env.json's package list: every installed distribution with its version, read fast."""

from __future__ import annotations

from importlib.metadata import distributions
from pathlib import Path

from trace_bench.store.environment import installed_packages


def test_the_package_list_is_what_importlib_metadata_reports() -> None:
    expected: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name and name not in expected:
            expected[name] = dist.version
    assert installed_packages() == dict(sorted(expected.items(), key=lambda kv: kv[0].lower()))


def _dist(site: Path, folder: str, text: str, file: str = "METADATA") -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / file).write_text(text, encoding="utf-8")


def test_only_the_headers_name_a_package(tmp_path: Path) -> None:
    """A description that quotes headers names nothing; an egg-info's PKG-INFO counts; the first
    of two copies on the path wins, as an import would."""
    first, second = tmp_path / "a", tmp_path / "b"
    _dist(first, "Demo_Pkg-1.2.dist-info", "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.2\n\n"
          "Name: impostor\nVersion: 9.9\n")
    _dist(first, "legacy-0.3.egg-info", "Metadata-Version: 1.0\nName: legacy\nVersion: 0.3\n", file="PKG-INFO")
    _dist(second, "Demo_Pkg-2.0.dist-info", "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 2.0\n")
    assert installed_packages([str(first), str(second)]) == {"Demo_Pkg": "1.2", "legacy": "0.3"}
