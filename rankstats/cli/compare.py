"""``rankstats compare A B``: two runs item by item, with intervals, tests and a verdict."""

from __future__ import annotations

from .._kernels.multitest import ADJUST_METHODS
from ._shared import (
    UsageError,
    add_input,
    add_output_options,
    fraction,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
)


def add(commands) -> None:
    """Add ``compare`` to the sub-parsers."""
    parser = commands.add_parser(
        "compare",
        help="two runs item by item: differences, intervals, McNemar, verdicts",
        description="Pair two runs (cube files, e.g. two imported lm-evaluation-harness runs) "
        "on the models, tasks, templates and items both have; per model and task print the "
        "difference A - B with its bootstrap interval, McNemar's exact test (binary scores, "
        "one template) or the bootstrap test, the p-values adjusted across tasks, the minimum "
        "detectable effect and a verdict. What only one run has is dropped and listed. "
        "Tables: comparison, dropped.",
    )
    add_input(parser, "a", metavar="A", help="the first run: a cube file or embedded example")
    add_input(
        parser,
        "b",
        metavar="B",
        nargs="?",
        help="the second run; omit it with --between to compare two runs inside A",
    )
    parser.add_argument(
        "--between",
        nargs=3,
        metavar=("DIM", "LABEL_A", "LABEL_B"),
        help="compare two labels of one dimension of A (template ids, models, ...), e.g. "
        "--between template 1 2",
    )
    parser.add_argument(
        "--p-adjust",
        choices=ADJUST_METHODS,
        default="holm",
        help="multiple-testing adjustment across tasks (default holm; bh: Benjamini-Hochberg)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=0.05,
        help="significance level of the tests and of the minimum detectable effect (default 0.05)",
    )
    parser.add_argument(
        "--power",
        type=fraction,
        default=0.8,
        help="power at which the minimum detectable effect is computed (default 0.8)",
    )
    add_output_options(parser, n_resamples=1000, minimum=2, confidence_level=True)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Load both runs, compare, print and write."""
    from ..analyses.compare import compare, compare_markdown, compare_tables

    if (arguments.b is None) == (arguments.between is None):
        raise UsageError("give two runs A B, or one run A with --between DIM LABEL_A LABEL_B")
    first = load_cube(arguments.a)
    options = {
        "p_adjust": arguments.p_adjust,
        "alpha": arguments.alpha,
        "power": arguments.power,
        "confidence_level": arguments.confidence_level,
        "n_resamples": arguments.n_resamples,
        "seed": arguments.seed,
    }
    if arguments.between:
        dim, label_a, label_b = arguments.between
        result = noted(compare, first, between={dim: (label_a, label_b)}, **options)
    else:
        result = noted(compare, first, load_cube(arguments.b), **options)
        result.attrs.update(a=arguments.a, b=arguments.b)
    if prints_markdown(arguments):
        print(compare_markdown(result))
    write_tables(arguments, compare_tables(result), dict(result.attrs))
    return 0
