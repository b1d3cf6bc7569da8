"""``rankstats report CUBE``: the full multi-prompt analysis of a cube."""

from __future__ import annotations

import sys
from pathlib import Path

from ._shared import (
    UsageError,
    add_cube_argument,
    add_input,
    add_output,
    add_output_options,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
    write_text,
)


def add(commands) -> None:
    """Add ``report`` to the sub-parsers."""
    parser = commands.add_parser(
        "report",
        help="the full multi-prompt analysis of a cube",
        description="Agreement across templates, significance, divergence of the original "
        "templates, MaxP/AvgP/saturation/CPS and rankings, per task and benchmark, "
        "and how stable each ranking is. It opens with a summary of what it found. "
        "Markdown to the terminal (only the summary when --html, --json or --csv "
        "writes the report); HTML, JSON and CSV on request. Tables: one per report "
        "section (summary, agreement, pairs, "
        "metrics, ...).",
    )
    add_cube_argument(parser)
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.05,
        help="score above which a model counts as working (default 0.05)",
    )
    add_input(
        parser,
        "--conventions",
        default="standard",
        metavar="{standard,paper,FILE}",
        keywords=("standard", "paper"),
        help="the template set, tie method and tie correction of W, Friedman "
        "and the metric ranks: 'standard' (default: every template, "
        "average ranks, tie correction), 'paper' (those under which the "
        "tables of Mizrahi et al. 2024 reproduce, as 'rankstats reproduce "
        "mizrahi2024' finds them; for the mizrahi2024 data only), or a "
        "JSON file {statistic: {option: value}}",
    )
    add_output(parser, "--html", metavar="PATH", help="write a self-contained HTML report")
    parser.add_argument(
        "--no-figures", action="store_true", help="leave the figures out of the HTML report"
    )
    add_output_options(
        parser,
        n_resamples=200,
        minimum=0,
        resamples_help="bootstrap replicates of the stability section; 0 leaves it out",
    )
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Analyse, print and write."""
    from .. import render
    from ..analyses.report import report

    cube = load_cube(arguments.cube)
    conventions = resolve_conventions(arguments.conventions, cube)
    analysis = noted(
        report,
        cube,
        threshold=arguments.threshold,
        n_resamples=arguments.n_resamples,
        seed=arguments.seed,
        conventions=conventions,
    )
    if prints_markdown(arguments):
        # beside a file the terminal shows what was found, not the whole report again
        written = arguments.html or arguments.json or arguments.csv
        print(render.summary_markdown(analysis) if written else render.to_markdown(analysis))
        if written:
            print(f"The whole report: {', '.join(map(str, _files(arguments)))}")
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
    write_tables(
        arguments,
        {section.key: section.table for section in render.sections(analysis)},
        {
            "cube": arguments.cube,
            "threshold": arguments.threshold,
            "n_resamples": arguments.n_resamples,
            "seed": arguments.seed,
            **analysis.attrs,
        },
    )
    return 0


def _files(arguments) -> list:
    """The files and folders the report is written to."""
    return [path for path in (arguments.html, arguments.json, arguments.csv) if path]


def _is_mizrahi2024(cube) -> bool:
    """Whether ``cube`` holds the mizrahi2024 data (the release's accuracy CSVs), or part of it."""
    from .. import datasets

    reference = datasets.load("mizrahi2024").attrs
    return all(cube.attrs.get(key) == reference[key] for key in ("source", "accuracies"))


def resolve_conventions(given: str, cube):
    """``--conventions``: ``standard``, ``paper`` (the mizrahi2024 data only) or a JSON file.

    ``paper`` becomes :func:`rankstats.reproduce.mizrahi2024.paper_conventions`,
    named ``paper``; a file holds a mapping as :func:`rankstats.report`
    takes it. Anything else is a usage error.
    """
    if given == "standard":
        return None
    if given == "paper":
        if not _is_mizrahi2024(cube):
            raise UsageError(
                "--conventions paper: the paper's conventions are those of Mizrahi et al. "
                "(2024), found on the mizrahi2024 data, and this cube is not that data (its "
                f"source is {cube.attrs.get('source', 'not recorded')!r}); give --conventions "
                "standard, or a JSON file of conventions"
            )
        from ..reproduce.mizrahi2024 import paper_conventions

        return {"name": "paper", **paper_conventions()}
    path = Path(given)
    if not path.is_file():
        raise UsageError(
            f"--conventions {given!r}: neither 'standard', 'paper' nor a JSON file of conventions"
        )
    from ..analyses._conventions import read_file

    return read_file(path, "--conventions")
