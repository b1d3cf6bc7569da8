"""``rankstats reproduce STUDY``: recompute a published study's tables and compare them."""

from __future__ import annotations

from ._shared import add_output, add_output_options, prints_markdown, write_tables


def add(commands) -> None:
    """Add ``reproduce`` to the sub-parsers."""
    parser = commands.add_parser(
        "reproduce",
        help="recompute a published study's tables and compare them",
        description="Recompute every table of a published multi-prompt study that its "
        "released data allow, find the convention that reproduces each, and "
        "print published and recomputed values side by side with a verdict. "
        "Table: cells (every compared cell of every table).",
    )
    parser.add_argument("study", metavar="STUDY", help="the study (e.g. mizrahi2024)")
    parser.add_argument("--all", action="store_true", help="show every cell of large tables")
    add_output(
        parser,
        "--audit",
        metavar="PATH.csv",
        help="write every contradiction found in the release's own files to "
        "this CSV file (one row each)",
    )
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Recompute, print and write."""
    from ..io import write_atomically
    from ..reproduce import _audit, _compare, audit, legend
    from ..reproduce import run as recompute

    comparisons = recompute(arguments.study)
    found = audit(arguments.study)
    if prints_markdown(arguments):
        section = (
            "## Release audit\n\n"
            + _audit.summarize(found)
            + ("\n\nEvery one of them: --audit PATH.csv.")
        )
        print(
            _compare.render(
                comparisons,
                all_cells=arguments.all,
                legend=legend(arguments.study),
                extra=[section],
            )
        )
    if arguments.audit:
        write_atomically(arguments.audit, lambda path: found.to_csv(path, index=False))
    write_tables(
        arguments, {"cells": _compare.cells_frame(comparisons)}, {"study": arguments.study}
    )
    return 0
