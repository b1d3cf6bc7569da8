"""``rankstats edits CUBE``: which tiny wording changes move which models."""

from __future__ import annotations

from .._kernels.multitest import ADJUST_METHODS
from ._shared import (
    UsageError,
    add_cube_argument,
    add_output,
    add_output_options,
    integer,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
)

#: ``--family`` → the dimensions one adjusted family is taken within.
FAMILIES = {"all": (), "model": "model", "task": "task", "model-task": ("model", "task")}


def add(commands) -> None:
    """Add ``edits`` to the sub-parsers."""
    parser = commands.add_parser(
        "edits",
        help="which tiny wording changes move which models",
        description="Find every pair of templates of a task within a small edit distance, "
        "name each edit (excludes → lacks, '.' → ':', + 'using'), and print the "
        "largest score differences and each edit's mean effect per model; with "
        "per-sample scores, adjusted McNemar tests of each difference. Tables: "
        "differences (every model and pair), rules (every edit and model).",
    )
    add_cube_argument(parser)
    parser.add_argument(
        "--max-distance",
        type=integer(0),
        default=1,
        help="largest edit distance of a pair (default 1)",
    )
    parser.add_argument(
        "--min-distance",
        type=integer(0),
        default=1,
        help="smallest edit distance of a pair (default 1; 0 adds duplicates)",
    )
    parser.add_argument(
        "--unit",
        choices=("tokens", "characters"),
        default="tokens",
        help="what an edit changes (default tokens: words, punctuation marks)",
    )
    parser.add_argument(
        "--method",
        choices=("exact", "midp"),
        default="exact",
        help="McNemar's test (default exact)",
    )
    parser.add_argument(
        "--p-adjust",
        choices=ADJUST_METHODS,
        default="holm",
        help="multiple-testing adjustment (default holm)",
    )
    parser.add_argument(
        "--family",
        choices=tuple(FAMILIES),
        default="all",
        help="what one adjusted family holds (default all tests)",
    )
    parser.add_argument(
        "--top",
        type=integer(1),
        default=20,
        help="rows of the largest-effects and edits tables (default 20)",
    )
    add_output(parser, "--figure", metavar="PATH", help="write the edit × model heat map (PNG)")
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Find the edits, print and write."""
    from .. import render
    from ..analyses.edits import edit_rules, largest_edits, minimal_edits

    if arguments.min_distance > arguments.max_distance:
        raise UsageError(
            f"--min-distance {arguments.min_distance} is larger than "
            f"--max-distance {arguments.max_distance}"
        )
    edits = noted(
        minimal_edits,
        load_cube(arguments.cube),
        max_distance=arguments.max_distance,
        min_distance=arguments.min_distance,
        unit=arguments.unit,
        method=arguments.method,
        p_adjust=arguments.p_adjust,
        family=FAMILIES[arguments.family],
    )
    rules = edit_rules(edits)
    if prints_markdown(arguments):
        print(render.edits_markdown(edits, rules, top=arguments.top))
    write_tables(
        arguments,
        {"differences": largest_edits(edits, top=None), "rules": rules.to_dataframe()},
        {
            "cube": arguments.cube,
            "max_distance": arguments.max_distance,
            "min_distance": arguments.min_distance,
            "unit": arguments.unit,
            "method": arguments.method,
            "p_adjust": arguments.p_adjust,
            "family": arguments.family,
        },
    )
    if arguments.figure:
        from ..io import write_atomically
        from ..plot import to_png
        from ..plot.edits import plot_edit_rules

        write_atomically(arguments.figure, to_png(plot_edit_rules(rules, top=arguments.top)))
    return 0
