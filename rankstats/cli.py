"""The ``rankstats`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ._version import __version__
from .errors import RankstatsError, UnknownNameError


class UsageError(RankstatsError):
    """A command-line argument is malformed."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rankstats",
        description="Multi-prompt evaluation statistics on score cubes.",
    )
    parser.add_argument("--version", action="version", version=f"rankstats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser("validate", help="check cube files against the conventions")
    check.add_argument("cubes", nargs="+", metavar="CUBE", help="netCDF files or zarr stores")
    info = commands.add_parser("info", help="summarise a cube: sizes, attributes, coverage")
    info.add_argument("cube", metavar="CUBE")
    report = commands.add_parser(
        "report", help="the full multi-prompt analysis of a cube",
        description="Agreement across templates, significance, divergence of the original "
                    "templates, MaxP/AvgP/saturation/CPS and rankings, per task and benchmark. "
                    "Markdown to the terminal; HTML, JSON and CSV on request.")
    report.add_argument("cube", metavar="CUBE",
                        help="a cube file, or the name of an embedded example (e.g. mizrahi2024)")
    report.add_argument("--threshold", type=float, default=0.05,
                        help="score above which a model counts as working (default 0.05)")
    report.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    report.add_argument("--json", metavar="PATH", help="write every number as JSON")
    report.add_argument("--csv", metavar="FOLDER", help="write each table as CSV")
    report.add_argument("--no-figures", action="store_true",
                        help="leave the figures out of the HTML report")
    report.add_argument("--quiet", action="store_true", help="print no markdown")
    stable = commands.add_parser(
        "stability", help="leaderboards with rank intervals and tie groups, per task",
        description="Bootstrap the cube over samples, templates or both; print each task's "
                    "leaderboard with score and rank intervals, tie groups and arena ranks; "
                    "optionally draw the rank intervals, critical-difference diagrams and "
                    "templates-needed curves.")
    stable.add_argument("cube", metavar="CUBE",
                        help="a cube file, or the name of an embedded example")
    stable.add_argument("--over", choices=("samples", "templates", "both"),
                        help="what to resample (default: both with samples, else templates)")
    stable.add_argument("-B", "--resamples", type=int, default=1000, metavar="B",
                        help="bootstrap replicates (default 1000)")
    stable.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    stable.add_argument("--level", type=float, default=0.95,
                        help="confidence level of the intervals (default 0.95)")
    stable.add_argument("--by", choices=("avgp", "maxp", "saturation", "cps"), default="avgp",
                        help="the score ranked (default avgp)")
    stable.add_argument("--figures", metavar="FOLDER",
                        help="write rank-interval, critical-difference and templates-needed "
                             "figures (PNG) here")
    stable.add_argument("--csv", metavar="PATH", help="write the leaderboards as CSV")
    stable.add_argument("--chunks", metavar="DIM=SIZE", nargs="*",
                        help="open the cube lazily with these chunks (e.g. task=1)")
    stable.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on this dask.distributed scheduler (e.g. tcp://host:8786)")
    load = commands.add_parser(
        "import", help="turn result files into a cube file",
        description="Read result files with an importer (found through the entry-point "
                    "group 'rankstats.importers') and write the cube, atomically.")
    load.add_argument("format", metavar="FORMAT", help="the importer, e.g. mizrahi2024")
    load.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to read")
    load.add_argument("-o", "--output", required=True, metavar="CUBE",
                      help="the cube file to write (.nc, or .zarr)")
    load.add_argument("--option", "-O", action="append", default=[], metavar="NAME=VALUE",
                      dest="options",
                      help="an importer option (repeatable); VALUE is read as JSON when it "
                           "parses (numbers, true/false, lists), else as text")
    again = commands.add_parser(
        "reproduce", help="recompute a published study's tables and compare them",
        description="Recompute every table of a published multi-prompt study that its "
                    "released data allow, find the convention that reproduces each, and "
                    "print published and recomputed values side by side with a verdict.")
    again.add_argument("study", metavar="STUDY", help="the study (e.g. mizrahi2024)")
    again.add_argument("--all", action="store_true", help="show every cell of large tables")
    again.add_argument("--csv", metavar="PATH", help="write every cell as one CSV table")
    _edits_parser(commands)
    _add_plugin_commands(commands)
    return parser


COMMANDS_GROUP = "rankstats.commands"


def _add_plugin_commands(commands) -> None:
    """Add the commands other packages register under the entry-point group ``rankstats.commands``.

    Each entry point names a function ``add(commands)`` that adds one parser to
    ``commands`` (an argparse sub-parsers action) and sets its default ``run``
    to a function ``run(arguments) -> int``. That is how ``collectors`` adds
    ``collect`` and ``paraphrase`` without :mod:`rankstats` importing it.
    """
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        try:
            entry.load()(commands)
        except Exception as error:  # a broken plugin must not take the other commands down
            print(f"rankstats: warning: command {entry.name!r} ({entry.value}) could not be "
                  f"loaded: {error}", file=sys.stderr)


def _describe(cube) -> str:
    sizes = " × ".join(f"{cube.sizes[d]} {d}s" for d in cube["score"].dims)
    return f"{sizes}, {cube.attrs.get('score_kind')} {cube.attrs.get('metric')}"


def _validate(paths: Sequence[str]) -> int:
    from .io import open_cube

    failures = 0
    for path in paths:
        try:
            cube = open_cube(path)
        except (RankstatsError, OSError) as error:
            failures += 1
            print(f"invalid: {path}: {error}", file=sys.stderr)
        else:
            print(f"ok: {path} ({_describe(cube)})")
    return 1 if failures else 0


def _load(name_or_path: str):
    """A cube from a file, or an embedded example by name."""
    from pathlib import Path

    from .io import open_cube

    if Path(name_or_path).exists():
        return open_cube(name_or_path)
    from . import datasets

    if name_or_path in datasets.available():
        return datasets.load(name_or_path)
    raise FileNotFoundError(
        f"no cube file at {name_or_path!r}, and no embedded example of that name "
        f"(examples: {', '.join(datasets.available())})"
    )


def _check_writable(*paths) -> None:
    """Fail before any work when an output's folder does not exist."""
    from pathlib import Path

    for path in paths:
        if path and not Path(path).absolute().parent.is_dir():
            raise FileNotFoundError(f"the folder of {path!r} does not exist")


def _noted(function, *args, **kwargs):
    """Run ``function``; print its RankstatsWarnings as one-line notes on stderr."""
    import warnings

    from .errors import RankstatsWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RankstatsWarning)
        result = function(*args, **kwargs)
    for warning in caught:
        if issubclass(warning.category, RankstatsWarning):
            print(f"rankstats: note: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename,
                                 warning.lineno)
    return result


def _report(arguments) -> int:
    from . import render
    from .analyses.report import report

    _check_writable(arguments.html, arguments.json)
    analysis = _noted(report, _load(arguments.cube), threshold=arguments.threshold)
    if not arguments.quiet:
        print(render.to_markdown(analysis))
    if arguments.html:
        figures = None
        if not arguments.no_figures:
            try:
                from .plot.report import figures as make_figures
            except ImportError:  # pragma: no cover - without the plot extra
                print('rankstats: no figures: pip install "rankstats[plot]"', file=sys.stderr)
            else:
                figures = make_figures(analysis)
        _write_text(arguments.html, render.to_html(analysis, figures))
    if arguments.json:
        _write_text(arguments.json, render.to_json(analysis))
    if arguments.csv:
        render.to_csv(analysis, arguments.csv)
    return 0


def _write_text(path: str, text: str) -> None:
    """Write ``text`` atomically: a failed write leaves no partial file."""
    from .io import write_atomically

    write_atomically(path, text.encode("utf-8"))


def _importers() -> dict:
    from importlib.metadata import entry_points

    return {entry.name: entry for entry in entry_points(group="rankstats.importers")}


def _import(arguments) -> int:
    from .io import save

    _check_writable(arguments.output)
    importers = _importers()
    if arguments.format not in importers:
        known = ", ".join(sorted(importers)) or "none installed"
        raise UnknownNameError(
            f"no importer named {arguments.format!r} (importers: {known})")
    load = importers[arguments.format].load()
    paths = arguments.paths[0] if len(arguments.paths) == 1 else arguments.paths
    cube = load(paths, **_options(arguments.options))
    save(cube, arguments.output)
    summary = cube.attrs.get("import_summary")
    if summary:
        print(summary)
    print(f"wrote {arguments.output} ({_describe(cube)})")
    return 0


def _options(specs: Sequence[str]) -> dict:
    """``NAME=VALUE`` pairs as keyword arguments; values parsed as JSON where they parse."""
    import json

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


def _chunks(specs):
    if not specs:
        return None
    try:
        return {dim: int(size) for dim, size in (spec.split("=", 1) for spec in specs)}
    except ValueError as error:
        raise RankstatsError(f"--chunks takes DIM=SIZE pairs, not {' '.join(specs)!r}") from error


def _stability(arguments) -> int:
    from contextlib import nullcontext
    from pathlib import Path

    from . import render
    from .stability import bootstrap as stability

    _check_writable(arguments.csv)
    chunks = _chunks(arguments.chunks)
    if chunks and Path(arguments.cube).exists():
        from .io import open_cube

        cube = open_cube(arguments.cube, chunks=chunks)
    else:
        cube = _load(arguments.cube)
        cube = cube.chunk(chunks) if chunks else cube
    over = arguments.over or ("both" if "sample" in cube["score"].dims else "templates")
    client = nullcontext()
    if arguments.scheduler:
        try:
            from distributed import Client
        except ImportError as error:
            raise RankstatsError('--scheduler needs dask.distributed: pip install '
                                 '"rankstats[dask]"') from error
        client = Client(arguments.scheduler)
    with client:
        board = _noted(stability.leaderboard, cube, B=arguments.resamples, over=over,
                       seed=arguments.seed, by=arguments.by,
                       confidence_level=arguments.level).compute()
    print(render.leaderboard_markdown(board))
    if arguments.csv:
        frame = board.to_dataframe().reset_index()
        _write_text(arguments.csv, frame.to_csv(index=False))
    if arguments.figures:
        _stability_figures(cube, board, Path(arguments.figures))
    return 0


def _stability_figures(cube, board, folder) -> None:
    """Rank intervals, critical-difference diagrams and templates-needed curves, per task."""
    from .plot import to_png as _png
    from .plot.posthoc import plot_critical_difference
    from .plot.stability import plot_k_needed, plot_needed, plot_rank_intervals
    from .stability.needed import templates_needed
    from .statistics.posthoc import nemenyi

    folder.mkdir(parents=True, exist_ok=True)
    scores = _noted(lambda: cube["score"].mean("sample") if "sample" in cube["score"].dims
                    else cube["score"])
    differences = _noted(nemenyi, scores, blocks="template", nan_policy="omit").compute()
    needed = _noted(templates_needed, scores.compute())
    (folder / "templates_needed.png").write_bytes(_png(plot_k_needed(needed)))
    for task in board["task"].values:
        name = str(task)
        (folder / f"rank_intervals_{name}.png").write_bytes(
            _png(plot_rank_intervals(board, task)))
        one = differences.sel(task=task)
        present = one["average_rank"].notnull()
        if int(present.sum()) >= 2:
            (folder / f"critical_difference_{name}.png").write_bytes(_png(
                plot_critical_difference(one.sel(model=present, model_b=present.values),
                                         title=name)))
        (folder / f"templates_needed_{name}.png").write_bytes(
            _png(plot_needed(needed, task)))
    print(f"figures written to {folder}")


def _edits_parser(commands) -> None:
    edits = commands.add_parser(
        "edits", help="which tiny wording changes move which models",
        description="Find every pair of templates of a task within a small edit distance, "
                    "name each edit (excludes → lacks, '.' → ':', + 'using'), and print the "
                    "largest score differences and each edit's mean effect per model; with "
                    "per-sample scores, corrected McNemar tests of each difference.")
    edits.add_argument("cube", metavar="CUBE",
                       help="a cube file, or the name of an embedded example")
    edits.add_argument("--max-distance", type=int, default=1,
                       help="largest edit distance of a pair (default 1)")
    edits.add_argument("--min-distance", type=int, default=1,
                       help="smallest edit distance of a pair (default 1; 0 adds duplicates)")
    edits.add_argument("--unit", choices=("tokens", "characters"), default="tokens",
                       help="what an edit changes (default tokens: words, punctuation marks)")
    edits.add_argument("--method", choices=("exact", "midp"), default="exact",
                       help="McNemar's test (default exact)")
    edits.add_argument("--correction", choices=("holm", "bh", "bonferroni", "by"),
                       default="holm", help="multiple-testing correction (default holm)")
    edits.add_argument("--family", choices=("all", "model", "task", "model-task"),
                       default="all", help="what one corrected family holds (default all tests)")
    edits.add_argument("--top", type=int, default=20,
                       help="rows of the largest-effects and edits tables (default 20)")
    edits.add_argument("--csv", metavar="PATH",
                       help="write every (model, pair) difference as CSV")
    edits.add_argument("--figure", metavar="PATH",
                       help="write the edit × model heat map (PNG)")


def _edits(arguments) -> int:
    from . import render
    from .analyses.edits import edit_rules, largest_edits, minimal_edits

    _check_writable(arguments.csv, arguments.figure)
    family = {"all": (), "model": "model", "task": "task",
              "model-task": ("model", "task")}[arguments.family]
    try:
        edits = _noted(minimal_edits, _load(arguments.cube), max_distance=arguments.max_distance,
                       min_distance=arguments.min_distance, unit=arguments.unit,
                       method=arguments.method, correction=arguments.correction, family=family)
    except ValueError as error:
        raise UsageError(str(error)) from error
    rules = edit_rules(edits)
    print(render.edits_markdown(edits, rules, top=arguments.top))
    if arguments.csv:
        _write_text(arguments.csv, largest_edits(edits, top=None).to_csv(index=False))
    if arguments.figure:
        from .io import write_atomically
        from .plot import to_png as _png
        from .plot.edits import plot_edit_rules

        write_atomically(arguments.figure, _png(plot_edit_rules(rules, top=arguments.top)))
    return 0


def _reproduce(arguments) -> int:
    from .reproduce import _compare, legend, run

    _check_writable(arguments.csv)
    comparisons = run(arguments.study)
    print(_compare.render(comparisons, all_cells=arguments.all, legend=legend(arguments.study)))
    if arguments.csv:
        _write_text(arguments.csv, _compare.cells_frame(comparisons).to_csv(index=False))
    return 0


def _info(path: str) -> int:
    from .cube import template_scores
    from .io import open_cube

    cube = open_cube(path)
    print(f"{path}: {_describe(cube)}")
    for key, value in cube.attrs.items():
        print(f"  {key}: {value}")
    scores = template_scores(cube)
    templates = (cube["template_id"] != "").sum("template")
    coverage = scores.notnull().any("template").sum("model")
    print("tasks (templates, models with scores):")
    for task in cube["task"].values:
        print(f"  {task}: {int(templates.sel(task=task))} templates, "
              f"{int(coverage.sel(task=task))} models")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankstats`` command; return its exit status.

    Examples
    --------
    >>> from rankstats.cli import main
    >>> main(["validate", "no-such-file.nc"])
    1
    """
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "validate":
            return _validate(arguments.cubes)
        if arguments.command == "report":
            return _report(arguments)
        if arguments.command == "reproduce":
            return _reproduce(arguments)
        if arguments.command == "import":
            return _import(arguments)
        if arguments.command == "stability":
            return _stability(arguments)
        if arguments.command == "info":
            return _info(arguments.cube)
        if arguments.command == "edits":
            return _edits(arguments)
        return arguments.run(arguments)
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, as command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (RankstatsError, OSError) as error:
        print(f"rankstats: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
