"""One name per idea: every public callable and command speaks the glossary (docs/glossary.md)."""

from __future__ import annotations

import argparse
import importlib
import inspect

import pytest

import rankstats

PUBLIC_MODULES = (
    "rankstats",
    "rankstats.statistics",
    "rankstats.stability",
    "rankstats.plot",
    "rankstats.analyses.budget",
    "rankstats.analyses.edits",
    "rankstats.analyses.verbalizer",
    "rankstats.analyses.report",
)

#: Names the glossary replaced, and the name that replaced them.
RETIRED = {
    "B": "n_resamples",
    "draws": "n_resamples",
    "resamples": "n_resamples",
    "trials": "n_resamples",
    "repetitions": "n_resamples",
    "level": "confidence_level",
    "correction": "tie_correction or p_adjust",
    "pairs": "pairs_over",
}
RETIRED_FLAGS = {
    "-B": "--n-resamples",
    "--resamples": "--n-resamples",
    "--trials": "--n-resamples",
    "--repetitions": "--n-resamples",
    "--level": "--confidence-level",
    "--correction": "--p-adjust",
}


def public_callables():
    seen = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or (callable(obj) and hasattr(obj, "__wrapped__")):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(seen.items())


CALLABLES = public_callables()


def test_the_public_surface_is_found():
    names = {qualified.rsplit(".", 1)[1] for qualified, _ in CALLABLES}
    assert {"kendall_w", "friedman", "leaderboard", "templates_needed", "report"} <= names


@pytest.mark.parametrize(("qualified", "function"), CALLABLES, ids=[q for q, _ in CALLABLES])
def test_no_retired_parameter_name(qualified, function):
    parameters = inspect.signature(function).parameters
    retired = {name: RETIRED[name] for name in parameters if name in RETIRED}
    assert not retired, f"{qualified}: rename {retired}"


@pytest.mark.parametrize(("qualified", "function"), CALLABLES, ids=[q for q, _ in CALLABLES])
def test_shared_ideas_have_their_defaults(qualified, function):
    parameters = inspect.signature(function).parameters
    if "seed" in parameters:
        assert parameters["seed"].default is None, f"{qualified}: seed defaults to None"
    if "confidence_level" in parameters:
        assert parameters["confidence_level"].default == 0.95
    if "nan_policy" in parameters:
        assert parameters["nan_policy"].default in ("propagate", "omit")
    if "tie_correction" in parameters:
        assert isinstance(parameters["tie_correction"].default, bool)
    if "p_adjust" in parameters:
        assert isinstance(parameters["p_adjust"].default, str)


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for inner, subsub in _subparsers(sub):
                    yield f"{name} {inner}", subsub


def _command_parser() -> argparse.ArgumentParser:
    from rankstats import cli

    for candidate in ("build_parser", "parser", "_parser"):
        if hasattr(cli, candidate):
            return getattr(cli, candidate)()
    raise AssertionError("rankstats.cli offers no parser builder")


def test_no_retired_command_line_flag():
    found = {}
    for command, parser in _subparsers(_command_parser()):
        for action in parser._actions:
            for flag in action.option_strings:
                if flag in RETIRED_FLAGS:
                    found[f"{command} {flag}"] = RETIRED_FLAGS[flag]
    assert not found, f"rename {found}"


def test_every_command_with_randomness_takes_seed_and_n_resamples_together():
    for command, parser in _subparsers(_command_parser()):
        flags = {flag for action in parser._actions for flag in action.option_strings}
        if "--n-resamples" in flags:
            assert "--seed" in flags, command


def test_glossary_page_lists_every_name():
    from pathlib import Path

    page = Path(rankstats.__file__).resolve().parents[1] / "docs" / "glossary.md"
    text = page.read_text(encoding="utf-8")
    for name in (
        "n_resamples",
        "seed",
        "confidence_level",
        "alpha",
        "tie_correction",
        "p_adjust",
        "over",
        "nan_policy",
        "pairs_over",
        "--n-resamples",
        "--confidence-level",
        "--p-adjust",
    ):
        assert f"`{name}`" in text, name
