"""``rankstats submission LEADERBOARD NEW``: check a new submission against a leaderboard.

LEADERBOARD and NEW are cube files, names of embedded examples, or result files and
folders that ``--format`` names the importer of (any importer of ``rankstats import``).
The markdown report (:func:`rankstats.analyses.submission.submission_markdown`) opens
with a one-line verdict: the submission's rank set, its margin over the record with the
paired test, its selection-adjusted score where it leads; then what the board can
resolve. Tables: ``board``, ``tasks``, ``margin``, ``winner``, ``resolve``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UnknownNameError
from ._shared import (
    UsageError,
    add_input,
    add_output,
    add_output_options,
    fraction,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
    write_text,
)

#: Suffixes of cube files, read without an importer.
CUBE_SUFFIXES = (".nc", ".zarr")


def add(commands) -> None:
    """Add ``submission`` to the sub-parsers."""
    parser = commands.add_parser(
        "submission",
        help="check a new submission against a leaderboard: rank set, margin over the "
        "record, winner's curse, what the board can resolve",
        description="Read a leaderboard's results and one new submission (cube files, or "
        "result files with --format naming the importer) and print a markdown report: the "
        "submission's rank set, its margin over the record (the board's best model) with "
        "the paired test, its selection-adjusted score if it leads, and what the board can "
        "resolve. Tables: board, tasks, margin, winner, resolve.",
    )
    add_input(
        parser,
        "leaderboard",
        metavar="LEADERBOARD",
        help="the board's results: a cube file (.nc, .zarr), an embedded example, or "
        "result files or a folder that --format reads",
    )
    add_input(
        parser,
        "new",
        metavar="NEW",
        help="the new submission's results, read the same way",
    )
    parser.add_argument(
        "--format",
        metavar="FORMAT",
        help="the importer of results that are not cube files (as 'rankstats import "
        "FORMAT'), e.g. lm_eval",
    )
    parser.add_argument(
        "--option",
        "-O",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="options",
        help="an importer option (repeatable), for both inputs",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the new model, where NEW holds several",
    )
    add_output(
        parser,
        "-o",
        "--output",
        metavar="PATH",
        help="also write the markdown report to PATH (e.g. for a pull-request comment)",
    )
    parser.add_argument(
        "--over",
        choices=("samples", "templates", "both"),
        default="samples",
        help="what the bootstrap resamples (default samples: the items)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=0.05,
        help="level of the tests and of the minimum detectable effect (default 0.05)",
    )
    parser.add_argument(
        "--power",
        type=fraction,
        default=0.8,
        help="power at which the minimum detectable effect is computed (default 0.8)",
    )
    add_output_options(parser, n_resamples=1000, minimum=20, confidence_level=True)
    parser.set_defaults(run=run)


def _read(path: str, arguments, what: str):
    """A cube from a cube file or an example's name, else through the ``--format`` importer."""
    from .. import _text
    from .importing import importers

    given = Path(path)
    found = importers() if arguments.format is not None else {}
    if arguments.format is not None and arguments.format not in found:
        known = ", ".join(sorted(found)) or "none installed"
        raise UnknownNameError(f"no importer named {arguments.format!r} (importers: {known})")
    if arguments.format is None or given.suffix.lower() in CUBE_SUFFIXES:
        if given.exists() and given.suffix.lower() not in CUBE_SUFFIXES:
            raise UsageError(
                f"{what} {path!r} is no cube file (.nc, .zarr): give --format, the importer "
                "that reads it (e.g. --format lm_eval)"
            )
        return load_cube(path)
    if not given.exists():
        raise UsageError(f"{what} {path!r}: no such file or folder")
    load = found[arguments.format].load()
    options = _text.parse_options(
        arguments.options, getattr(load, "options", None), function=f"importer {arguments.format!r}"
    )
    return load(path, **options)


def run(arguments) -> int:
    """Read both, check the submission, print and write the report."""
    from ..analyses.submission import check_submission, submission_markdown, submission_tables

    if arguments.options and arguments.format is None:
        raise UsageError("--option is for an importer: give --format too")
    board = _read(arguments.leaderboard, arguments, "LEADERBOARD")
    new = _read(arguments.new, arguments, "NEW")
    result = noted(
        check_submission,
        board,
        new,
        model=arguments.model,
        over=arguments.over,
        confidence_level=arguments.confidence_level,
        alpha=arguments.alpha,
        power=arguments.power,
        n_resamples=arguments.n_resamples,
        seed=arguments.seed,
    )
    text = submission_markdown(result)
    if arguments.output:
        write_text(arguments.output, text + "\n")
    if prints_markdown(arguments):
        print(text)
    attrs = {**result.attrs, "leaderboard": arguments.leaderboard, "new": arguments.new}
    write_tables(arguments, submission_tables(result), attrs)
    return 0
