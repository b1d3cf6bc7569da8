"""``rankstats validate CUBE...``: check cube files against the conventions."""

from __future__ import annotations

import sys

from ..errors import RankstatsError
from ._shared import EXIT_OK, EXIT_PROBLEMS, add_input, describe


def add(commands) -> None:
    """Add ``validate`` to the sub-parsers."""
    parser = commands.add_parser(
        "validate",
        help="check cube files against the conventions",
        description="Open each cube and check it against the cube's conventions; print "
        "'ok:' or 'invalid:' per file. Exit status 1 when any file is invalid.",
    )
    add_input(parser, "cubes", nargs="+", metavar="CUBE", help="netCDF files or zarr stores")
    parser.add_argument("--quiet", action="store_true", help="print only the invalid files")
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Check every file; 1 when any is invalid."""
    from ..io import open_cube

    failures = 0
    for path in arguments.cubes:
        try:
            cube = open_cube(path)
        except (RankstatsError, OSError) as error:
            failures += 1
            print(f"invalid: {path}: {error}", file=sys.stderr)
        else:
            if not arguments.quiet:
                print(f"ok: {path} ({describe(cube)})")
    return EXIT_PROBLEMS if failures else EXIT_OK
