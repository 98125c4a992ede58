"""What a shipped config's comments tell a user to write is valid: a setting quoted in a comment
(``key: value`` in backquotes) passes validation when added to that config.

Before, configs/paper_optoprime_vs_textgrad.yaml said to add ``cache: record``, a value validation
rejects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from trace_bench.config.loader import parse_config

QUOTED = re.compile(r"`(\w+): ([^`{}]+)`")
# where a key quoted in a comment goes in the config
SECTION = {"cache": "llm", "model": "llm", "max_concurrency": "llm"}


def _quoted_settings(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#"):
            found += QUOTED.findall(line)
    return found


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_settings_named_in_comments_validate(path: Path) -> None:
    config = yaml.safe_load(path.read_text())
    for key, value in _quoted_settings(path):
        patched = dict(config)
        section = SECTION.get(key)
        if section:
            patched[section] = {**(patched.get(section) or {}), key: yaml.safe_load(value)}
        else:
            patched[key] = yaml.safe_load(value)
        parse_config(patched)  # raises ConfigError naming the key


def test_the_paper_config_names_a_cache_value_that_exists() -> None:
    settings = dict(_quoted_settings(REPO / "configs" / "paper_optoprime_vs_textgrad.yaml"))
    assert settings.get("cache") == "read_write"
