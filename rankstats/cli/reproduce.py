"""``rankstats reproduce STUDY``: recompute a published study's tables and compare them."""

from __future__ import annotations

from ._shared import add_output_options, check_outputs, prints_markdown, write_tables


def add(commands) -> None:
    """Add ``reproduce`` to the sub-parsers."""
    parser = commands.add_parser(
        "reproduce", help="recompute a published study's tables and compare them",
        description="Recompute every table of a published multi-prompt study that its "
                    "released data allow, find the convention that reproduces each, and "
                    "print published and recomputed values side by side with a verdict. "
                    "Table: cells (every compared cell of every table).")
    parser.add_argument("study", metavar="STUDY", help="the study (e.g. mizrahi2024)")
    parser.add_argument("--all", action="store_true", help="show every cell of large tables")
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Recompute, print and write."""
    from ..reproduce import _compare, legend
    from ..reproduce import run as recompute

    check_outputs(arguments)
    comparisons = recompute(arguments.study)
    if prints_markdown(arguments):
        print(_compare.render(comparisons, all_cells=arguments.all,
                              legend=legend(arguments.study)))
    write_tables(arguments, {"cells": _compare.cells_frame(comparisons)},
                 {"study": arguments.study})
    return 0
