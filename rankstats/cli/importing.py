"""``rankstats import FORMAT PATH... -o CUBE``: result files to a cube file, through an importer.

Importers are found only through the entry-point group ``rankstats.importers``
(``name = "package.module:load"``), where this distribution declares its own
and any other package can add one.
"""

from __future__ import annotations

from ..errors import UnknownNameError
from ._shared import add_input, add_output, describe

#: The entry-point group importers are registered in.
GROUP = "rankstats.importers"


def add(commands) -> None:
    """Add ``import`` to the sub-parsers."""
    parser = commands.add_parser(
        "import",
        help="turn result files into a cube file",
        description=f"Read result files with an importer (found through the entry-point "
        f"group '{GROUP}') and write the cube, atomically.",
    )
    parser.add_argument("format", metavar="FORMAT", help="the importer, e.g. mizrahi2024")
    add_input(parser, "paths", nargs="+", metavar="PATH", help="files or folders to read")
    add_output(
        parser,
        "-o",
        "--output",
        required=True,
        metavar="CUBE",
        help="the cube file to write (.nc, or .zarr)",
    )
    parser.add_argument(
        "--option",
        "-O",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="options",
        help="an importer option (repeatable); each importer parses its own "
        "values (booleans: true/false/yes/no/1/0) and refuses unknown "
        "names with the list of its options",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a write-protected output file or a symbolic link",
    )
    parser.set_defaults(run=run)


def importers() -> dict:
    """Importer name → entry point, as installed."""
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=GROUP)}


def run(arguments) -> int:
    """Import and write the cube: the output and the options are checked before any reading."""
    from ..io import import_files

    found = importers()
    if arguments.format not in found:
        known = ", ".join(sorted(found)) or "none installed"
        raise UnknownNameError(f"no importer named {arguments.format!r} (importers: {known})")
    load = found[arguments.format].load()
    paths = arguments.paths[0] if len(arguments.paths) == 1 else arguments.paths
    cube = import_files(
        load,
        paths,
        arguments.output,
        options=arguments.options,
        force=arguments.force,
        importer=arguments.format,
    )
    summary = cube.attrs.get("import_summary")
    if summary:
        print(summary)
    errors = ", with standard errors" if "standard_error" in cube.data_vars else ""
    print(f"wrote {arguments.output} ({describe(cube)}{errors})")
    return 0
