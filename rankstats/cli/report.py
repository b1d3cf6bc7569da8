"""``rankstats report CUBE``: the full multi-prompt analysis of a cube."""

from __future__ import annotations

import sys

from ._shared import (
    add_cube_argument,
    add_output_options,
    check_outputs,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
    write_text,
)


def add(commands) -> None:
    """Add ``report`` to the sub-parsers."""
    parser = commands.add_parser(
        "report", help="the full multi-prompt analysis of a cube",
        description="Agreement across templates, significance, divergence of the original "
                    "templates, MaxP/AvgP/saturation/CPS and rankings, per task and benchmark, "
                    "and how stable each ranking is. Markdown to the terminal; HTML, JSON and "
                    "CSV on request. Tables: one per report section (agreement, pairs, "
                    "metrics, ...).")
    add_cube_argument(parser)
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="score above which a model counts as working (default 0.05)")
    parser.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    parser.add_argument("--no-figures", action="store_true",
                        help="leave the figures out of the HTML report")
    add_output_options(parser, n_resamples=200, minimum=0,
                       resamples_help="bootstrap replicates of the stability section; 0 leaves "
                                      "it out")
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Analyse, print and write."""
    from .. import render
    from ..analyses.report import report

    check_outputs(arguments, html=arguments.html)
    analysis = noted(report, load_cube(arguments.cube), threshold=arguments.threshold,
                     n_resamples=arguments.n_resamples, seed=arguments.seed)
    if prints_markdown(arguments):
        print(render.to_markdown(analysis))
    if arguments.html:
        figures = None
        if not arguments.no_figures:
            try:
                from ..plot.report import figures as make_figures
            except ImportError:  # pragma: no cover - without the plot extra
                print('rankstats: no figures: pip install "rankstats[plot]"', file=sys.stderr)
            else:
                figures = make_figures(analysis)
        write_text(arguments.html, render.to_html(analysis, figures))
    write_tables(arguments, {section.key: section.table
                             for section in render.sections(analysis)},
                 {"cube": arguments.cube, "threshold": arguments.threshold,
                  "n_resamples": arguments.n_resamples, "seed": arguments.seed,
                  **analysis.attrs})
    return 0
