"""``rankstats stability CUBE``: leaderboards with rank intervals and tie groups, per task."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .._options import NAN_POLICIES
from ..errors import RankstatsError
from ._shared import (
    add_cube_argument,
    add_output_options,
    check_outputs,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
)


def chunks(text: str) -> tuple[str, int]:
    """An argparse ``type``: one ``DIM=SIZE`` pair."""
    dim, equals, size = text.partition("=")
    try:
        value = int(size)
    except ValueError:
        equals = ""
    if not equals or not dim or value < 1:
        raise argparse.ArgumentTypeError(f"expected DIM=SIZE pairs such as task=1, not {text!r}")
    return dim, value


def add(commands) -> None:
    """Add ``stability`` to the sub-parsers."""
    parser = commands.add_parser(
        "stability", help="leaderboards with rank intervals and tie groups, per task",
        description="Bootstrap the cube over samples, templates or both; print each task's "
                    "leaderboard with score and rank intervals, tie groups and arena ranks; "
                    "optionally draw the rank intervals, critical-difference diagrams and "
                    "templates-needed curves. Tables: leaderboard, left_out (the models not "
                    "ranked, and the templates left out of a ranked model's score).")
    add_cube_argument(parser)
    parser.add_argument("--over", choices=("samples", "templates", "both"),
                        help="what to resample (default: both with samples, else templates)")
    parser.add_argument("--by", choices=("avgp", "maxp", "saturation", "cps"), default="avgp",
                        help="the score ranked (default avgp)")
    parser.add_argument("--rank-sets", choices=("simultaneous", "marginal", "bootstrap"),
                        default="simultaneous",
                        help="what the rank [interval] is: simultaneous confidence sets for "
                             "all ranks (default), marginal ones per model, or percentile "
                             "intervals of the bootstrap ranks")
    parser.add_argument("--nan-policy", choices=NAN_POLICIES,
                        default="propagate",
                        help="missing per-template scores of a model present on a task: "
                             "'propagate' (default) leaves the model unranked (NaN), 'omit' "
                             "scores it over its other templates, 'raise' stops with an error; "
                             "the output names every template left out either way")
    parser.add_argument("--figures", metavar="FOLDER",
                        help="write rank-interval, critical-difference and templates-needed "
                             "figures (PNG) here")
    parser.add_argument("--chunks", metavar="DIM=SIZE", nargs="*", type=chunks,
                        help="open the cube lazily with these chunks (e.g. task=1)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on this dask.distributed scheduler (e.g. tcp://host:8786)")
    add_output_options(parser, n_resamples=1000, confidence_level=True)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Bootstrap, print and write."""
    from contextlib import nullcontext

    from .. import render
    from ..stability import leaderboard

    check_outputs(arguments, figures=arguments.figures)
    cube = load_cube(arguments.cube, chunks=dict(arguments.chunks or ()) or None)
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
        board = noted(leaderboard, cube, n_resamples=arguments.n_resamples, over=over,
                      seed=arguments.seed, by=arguments.by, rank_sets=arguments.rank_sets,
                      confidence_level=arguments.confidence_level,
                      nan_policy=arguments.nan_policy).compute()
    reasons = unranked_reasons(cube, board)
    omitted = omitted_templates(cube, board)
    left_out = pd.concat([render.unranked(board, reasons), render.unranked(board, omitted,
                                                                           ranked=True)],
                         ignore_index=True)
    if prints_markdown(arguments):
        print(render.leaderboard_markdown(board, reasons, omitted))
    empty = [str(task) for task in board["task"].values
             if not bool(board["rank"].sel(task=task).notnull().any())]
    if len(empty) == board.sizes["task"]:
        unranked = render.unranked(board, reasons)
        raise RankstatsError("no task has a ranked model: " + "; ".join(
            f"{task}, {model}: {why}" for task, model, why in unranked.head(5).itertuples(
                index=False)) + ("; ..." if len(unranked) > 5 else ""))
    for task in empty:
        print(f"rankstats: note: task {task}: no model is ranked (see the markdown or the "
              "left_out table)", file=sys.stderr)
    write_tables(arguments, {"leaderboard": board.to_dataframe(),
                             "left_out": left_out.set_index(["task", "model"])},
                 {"cube": arguments.cube, "over": over, "by": arguments.by,
                  "rank_sets": arguments.rank_sets, "nan_policy": arguments.nan_policy,
                  "n_resamples": arguments.n_resamples, "seed": arguments.seed,
                  "confidence_level": arguments.confidence_level})
    if arguments.figures:
        figures(cube, board, Path(arguments.figures), seed=arguments.seed,
                quiet=arguments.quiet, nan_policy=arguments.nan_policy)
    return 0


def unranked_reasons(cube, board) -> dict:
    """Why each model without a rank has none: ``{(task, model): reason}``.

    A model absent from a task (no score on any of its templates) is left out
    by structure; under ``nan_policy='propagate'`` a model missing the score
    of some template has a NaN score, so no rank.
    """
    rank = board["rank"].transpose("task", "model")
    unranked = np.argwhere(np.isnan(np.asarray(rank.values, dtype=float)))
    if not len(unranked):  # the cube is read again only when some model has no rank
        return {}
    observed, ids = _holes(cube, board)
    present, scored = observed.any(-1), observed.any(1)
    tasks, models = list(rank["task"].values), list(rank["model"].values)
    reasons = {}
    for t, m in unranked:
        hole = scored[t] & ~observed[t, m]
        if not present[t, m]:
            why = "absent: no score on any template of the task"
        elif hole.any():
            names = (ids[t][hole] if ids is not None else np.flatnonzero(hole)).tolist()
            why = (f"no score on {_named(names)}, so its score is NaN "
                   f"(nan_policy={board.attrs.get('nan_policy', 'propagate')!r})")
        else:
            why = "no score interval or rank"
        reasons[tasks[t], models[m]] = why
    return reasons


def _holes(cube, board):
    """Per-template scores missing where a model is present: ``(scores, observed, ids)``."""
    from ..cube import template_scores

    scores = template_scores(cube).transpose("task", "model", "template")
    observed = np.asarray(scores.notnull().values)
    ids = (np.asarray(scores["template_id"].transpose("task", "template").values).astype(str)
           if "template_id" in scores.coords else None)
    return observed, ids


def _named(names: list) -> str:
    shown = ", ".join(map(str, names[:5])) + (", ..." if len(names) > 5 else "")
    return f"{len(names)} template{'s' if len(names) > 1 else ''} ({shown})"


def omitted_templates(cube, board) -> dict:
    """The templates left out of each ranked model's score: ``{(task, model): reason}``.

    Under ``nan_policy='omit'`` a model present on a task but missing the
    score of some of its templates is scored over the others; the reason
    names them.
    """
    if board.attrs.get("nan_policy") != "omit":
        return {}
    observed, ids = _holes(cube, board)
    present, scored = observed.any(-1), observed.any(1)
    hole = scored[:, None, :] & ~observed & present[..., None]
    if not hole.any():
        return {}
    tasks, models = list(board["task"].values), list(board["model"].values)
    reasons = {}
    for t, m in np.argwhere(hole.any(-1)):
        names = (ids[t][hole[t, m]] if ids is not None else np.flatnonzero(hole[t, m])).tolist()
        reasons[tasks[t], models[m]] = (
            f"no score on {_named(names)}: its score is over its other "
            f"{int(observed[t, m].sum())} of the task's {int(scored[t].sum())} templates "
            "(nan_policy='omit')")
    return reasons


def figures(cube, board, folder: Path, *, seed: int, quiet: bool = False,
            nan_policy: str = "propagate") -> None:
    """Rank intervals, critical-difference diagrams and templates-needed curves, per task."""
    from ..plot import to_png
    from ..plot.posthoc import plot_critical_difference
    from ..plot.stability import plot_k_needed, plot_needed, plot_rank_intervals
    from ..stability import templates_needed
    from ..statistics.posthoc import nemenyi

    folder.mkdir(exist_ok=True)
    scores = noted(lambda: cube["score"].mean("sample") if "sample" in cube["score"].dims
                   else cube["score"])
    differences = noted(nemenyi, scores, blocks="template", nan_policy="omit").compute()
    needed = noted(templates_needed, scores.compute(), seed=seed, nan_policy=nan_policy)
    (folder / "templates_needed.png").write_bytes(to_png(plot_k_needed(needed)))
    for task in board["task"].values:
        name = str(task)
        (folder / f"rank_intervals_{name}.png").write_bytes(
            to_png(plot_rank_intervals(board, task)))
        one = differences.sel(task=task)
        present = one["average_rank"].notnull()
        if int(present.sum()) >= 2:
            (folder / f"critical_difference_{name}.png").write_bytes(to_png(
                plot_critical_difference(one.sel(model=present, model_b=present.values),
                                         title=name)))
        (folder / f"templates_needed_{name}.png").write_bytes(
            to_png(plot_needed(needed, task)))
    if not quiet:
        print(f"figures written to {folder}")
