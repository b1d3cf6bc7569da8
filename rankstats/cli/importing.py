"""``rankstats import FORMAT PATH... -o CUBE``: result files to a cube file, through an importer.

Importers are found only through the entry-point group ``rankstats.importers``
(``name = "package.module:load"``), where this distribution declares its own
and any other package can add one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..errors import UnknownNameError
from ._shared import UsageError, check_inputs, check_outputs, describe

#: The entry-point group importers are registered in.
GROUP = "rankstats.importers"


def add(commands) -> None:
    """Add ``import`` to the sub-parsers."""
    parser = commands.add_parser(
        "import", help="turn result files into a cube file",
        description=f"Read result files with an importer (found through the entry-point "
                    f"group '{GROUP}') and write the cube, atomically.")
    parser.add_argument("format", metavar="FORMAT", help="the importer, e.g. mizrahi2024")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to read")
    parser.add_argument("-o", "--output", required=True, metavar="CUBE",
                        help="the cube file to write (.nc, or .zarr)")
    parser.add_argument("--option", "-O", action="append", default=[], metavar="NAME=VALUE",
                        dest="options",
                        help="an importer option (repeatable); VALUE is read as JSON when it "
                             "parses (numbers, true/false, lists), else as text")
    parser.set_defaults(run=run)


def importers() -> dict:
    """Importer name → entry point, as installed."""
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group=GROUP)}


def parse_options(specs: Sequence[str]) -> dict:
    """``NAME=VALUE`` pairs as keyword arguments; values parsed as JSON where they parse.

    Examples
    --------
    >>> from rankstats.cli.importing import parse_options
    >>> parse_options(["metric=acc", "n=3", "sample-id=doc"])
    {'metric': 'acc', 'n': 3, 'sample_id': 'doc'}
    """
    options = {}
    for spec in specs:
        name, equals, value = spec.partition("=")
        name = name.strip().replace("-", "_")
        if not equals or not name.isidentifier():
            raise UsageError(f"--option {spec!r}: expected NAME=VALUE (e.g. metric=acc)")
        try:
            options[name] = json.loads(value)
        except ValueError:
            options[name] = value
    return options


def _check_signature(name: str, load, paths, options: dict) -> None:
    """A usage error naming the option when the importer does not take it."""
    import inspect

    try:
        signature = inspect.signature(load)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return
    try:
        signature.bind(paths, **options)
    except TypeError as error:
        taken = [p.name for p in list(signature.parameters.values())[1:]
                 if p.kind is not p.VAR_KEYWORD]
        raise UsageError(f"importer {name!r}: {error} (its options: "
                         f"{', '.join(taken) or 'none'})") from None


def run(arguments) -> int:
    """Import and write the cube."""
    from ..io import save

    check_outputs(arguments, output=arguments.output)
    options = parse_options(arguments.options)
    found = importers()
    if arguments.format not in found:
        known = ", ".join(sorted(found)) or "none installed"
        raise UnknownNameError(f"no importer named {arguments.format!r} (importers: {known})")
    load = found[arguments.format].load()
    paths = arguments.paths[0] if len(arguments.paths) == 1 else arguments.paths
    _check_signature(arguments.format, load, paths, options)
    check_inputs({"PATH": arguments.paths})
    cube = load(paths, **options)
    save(cube, arguments.output)
    summary = cube.attrs.get("import_summary")
    if summary:
        print(summary)
    print(f"wrote {arguments.output} ({describe(cube)})")
    return 0
