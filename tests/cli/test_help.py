"""Every option of every subcommand has one line of help; every subcommand a description and examples."""

from __future__ import annotations

import argparse

import pytest

from tests.conftest import run_cli
from trace_bench.cli.main import build_parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


PARSER = build_parser()
COMMANDS = _subcommands(PARSER)


def test_the_tree_has_every_command() -> None:
    assert set(COMMANDS) == {"list-tasks", "list-trainers", "validate", "run", "report", "compare", "table", "power", "verdict", "ui", "fake-llm"}


def _fake_llm_parser() -> argparse.ArgumentParser:
    from trace_bench.llm.fake_server import fake_llm_parser

    parser = fake_llm_parser()
    parser.prog = "trace-bench fake-llm"
    return parser


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_and_every_command_an_example(name: str) -> None:
    # fake-llm hands its arguments to the server's own parser: that one is checked
    parser = _fake_llm_parser() if name == "fake-llm" else COMMANDS[name]
    assert parser.description and len(parser.description.strip()) > 20, name
    assert parser.epilog and "examples:" in parser.epilog and f"trace-bench {name}" in parser.epilog, name
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS, f"{name} {label} has no help"
        assert "\n" not in action.help and len(action.help) <= 120, f"{name} {label}: help is not one line"


def test_top_level_help_and_a_subcommand_help_render() -> None:
    top = run_cli("--help", check=True).stdout
    assert "examples:" in top
    run_help = run_cli("run", "--help", check=True).stdout
    assert "examples:" in run_help and "--replay RUN" in run_help and "trace-bench run --config" in run_help
