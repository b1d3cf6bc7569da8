"""The ``rankstats`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._version import __version__
from .errors import RankstatsError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rankstats",
        description="Multi-prompt evaluation statistics on score cubes.",
    )
    parser.add_argument("--version", action="version", version=f"rankstats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser("validate", help="check cube files against the conventions")
    check.add_argument("cubes", nargs="+", metavar="CUBE", help="netCDF files or zarr stores")
    info = commands.add_parser("info", help="summarise a cube: sizes, attributes, coverage")
    info.add_argument("cube", metavar="CUBE")
    return parser


def _describe(cube) -> str:
    sizes = " × ".join(f"{cube.sizes[d]} {d}s" for d in cube["score"].dims)
    return f"{sizes}, {cube.attrs.get('score_kind')} {cube.attrs.get('metric')}"


def _validate(paths: Sequence[str]) -> int:
    from .io import open_cube

    failures = 0
    for path in paths:
        try:
            cube = open_cube(path)
        except (RankstatsError, OSError) as error:
            failures += 1
            print(f"invalid: {path}: {error}", file=sys.stderr)
        else:
            print(f"ok: {path} ({_describe(cube)})")
    return 1 if failures else 0


def _info(path: str) -> int:
    from .cube import template_scores
    from .io import open_cube

    cube = open_cube(path)
    print(f"{path}: {_describe(cube)}")
    for key, value in cube.attrs.items():
        print(f"  {key}: {value}")
    scores = template_scores(cube)
    templates = (cube["template_id"] != "").sum("template")
    coverage = scores.notnull().any("template").sum("model")
    print("tasks (templates, models with scores):")
    for task in cube["task"].values:
        print(f"  {task}: {int(templates.sel(task=task))} templates, "
              f"{int(coverage.sel(task=task))} models")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankstats`` command; return its exit status.

    Examples
    --------
    >>> from rankstats.cli import main
    >>> main(["validate", "no-such-file.nc"])
    1
    """
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "validate":
            return _validate(arguments.cubes)
        return _info(arguments.cube)
    except (RankstatsError, OSError) as error:
        print(f"rankstats: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
