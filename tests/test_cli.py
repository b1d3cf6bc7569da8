"""The ``rankstats`` command's own plumbing: importer options and plugin commands."""

from __future__ import annotations

import importlib.metadata
import sys
import types

import pytest

from rankstats import cli


def test_options_parse_json_values_and_keep_text():
    assert cli._options(["metric=acc", "n=3", "keep=[1, 2]", "strict=true", "pattern=a_(\\d+)"]) \
        == {"metric": "acc", "n": 3, "keep": [1, 2], "strict": True, "pattern": "a_(\\d+)"}


def test_options_turn_dashes_into_underscores():
    assert cli._options(["sample-id=doc_hash"]) == {"sample_id": "doc_hash"}


@pytest.mark.parametrize("spec", ["metric", "=acc", "not an identifier=1"])
def test_malformed_option_names_the_option(spec, capsys):
    assert cli.main(["import", "mizrahi2024", "x", "-o", "out.nc", "--option", spec]) == 2
    assert repr(spec) in capsys.readouterr().err


@pytest.fixture
def plugin(monkeypatch):
    """A module registering one command through the ``rankstats.commands`` entry points."""
    module = types.ModuleType("rankstats_test_plugin")

    def add(commands):
        parser = commands.add_parser("hello", help="say hello")
        parser.add_argument("name")
        parser.set_defaults(run=lambda arguments: print(f"hello {arguments.name}") or 0)

    def broken(commands):
        raise RuntimeError("cannot start")

    module.add, module.broken = add, broken
    monkeypatch.setitem(sys.modules, module.__name__, module)
    points = [
        importlib.metadata.EntryPoint("hello", f"{module.__name__}:add", cli.COMMANDS_GROUP),
        importlib.metadata.EntryPoint("broken", f"{module.__name__}:broken", cli.COMMANDS_GROUP),
    ]
    real = importlib.metadata.entry_points

    def entry_points(**selection):
        if selection.get("group") == cli.COMMANDS_GROUP:
            return points
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_plugin_commands_run_and_broken_ones_are_named(plugin, capsys):
    assert cli.main(["hello", "world"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "hello world\n"
    assert "command 'broken'" in captured.err and "cannot start" in captured.err
