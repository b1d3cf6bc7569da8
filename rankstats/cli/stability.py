"""``rankstats stability CUBE``: leaderboards with rank intervals and tie groups, per task.

A cube of per-sample scores is resampled over samples, templates or both; a
cube of per-template scores with a ``standard_error`` variable (imported from
results files) is ranked from its standard errors
(:func:`rankstats.stability.published.standard_error_leaderboard`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .._options import NAN_POLICIES
from ..errors import DimensionError, RankstatsError
from ._shared import (
    UsageError,
    add_cube_argument,
    add_output,
    add_output_options,
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
        "stability",
        help="leaderboards with rank intervals and tie groups, per task",
        description="Bootstrap the cube over samples, templates or both; print each task's "
        "leaderboard with score and rank intervals, tie groups and arena ranks; "
        "optionally draw the rank intervals, critical-difference diagrams and "
        "templates-needed curves. A cube of per-template scores with standard errors "
        "(imported from results files) is ranked from them instead, with normal rank "
        "confidence sets, unless --over templates or --by other than avgp asks for the "
        "templates to be resampled. Tables: leaderboard, left_out (the models not "
        "ranked, and the templates left out of a ranked model's score).",
    )
    add_cube_argument(parser)
    parser.add_argument(
        "--over",
        choices=("samples", "templates", "both"),
        help="what to resample (default: both with samples; without them, the cube's "
        "standard errors where it has them, else templates)",
    )
    parser.add_argument(
        "--by",
        choices=("avgp", "maxp", "saturation", "cps"),
        default="avgp",
        help="the score ranked (default avgp)",
    )
    parser.add_argument(
        "--rank-sets",
        choices=("simultaneous", "marginal", "bootstrap"),
        default="simultaneous",
        help="what the rank [interval] is: simultaneous confidence sets for "
        "all ranks (default), marginal ones per model, or percentile "
        "intervals of the bootstrap ranks",
    )
    parser.add_argument(
        "--nan-policy",
        choices=NAN_POLICIES,
        default="propagate",
        help="missing per-template scores of a model present on a task: "
        "'propagate' (default) leaves the model unranked (NaN), 'omit' "
        "scores it over its other templates, 'raise' stops with an error; "
        "the output names every template left out either way",
    )
    add_output(
        parser,
        "--figures",
        metavar="FOLDER",
        folder=True,
        help="write rank-interval, critical-difference and templates-needed figures (PNG) here",
    )
    parser.add_argument(
        "--chunks",
        metavar="DIM=SIZE",
        nargs="*",
        type=chunks,
        help="open the cube lazily with these chunks (e.g. task=1)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this dask.distributed scheduler (e.g. tcp://host:8786)",
    )
    add_output_options(parser, n_resamples=1000, confidence_level=True)
    parser.set_defaults(run=run)


def _say_unranked_tasks(board, reasons):
    """Refuse a leaderboard that ranks no model anywhere; note each task without one."""
    from .. import render

    ranked = board["rank"].notnull().any("model").values
    if not ranked.any():
        unranked = render.unranked(board, reasons)
        raise RankstatsError(
            "no task has a ranked model: "
            + "; ".join(
                f"{task}, {model}: {why}"
                for task, model, why in unranked.head(5).itertuples(index=False)
            )
            + ("; ..." if len(unranked) > 5 else "")
        )
    for task in board["task"].values[~ranked]:
        print(
            f"rankstats: note: task {task}: no model is ranked (see the markdown or the "
            "left_out table)",
            file=sys.stderr,
        )


def _leaders_markdown(leaders) -> str:
    """Each task's leader beside its winner's-curse-adjusted score."""
    level = f"{leaders.attrs['confidence_level']:.0%}"
    lines = [
        "## The leaders, adjusted for the winner's curse",
        "",
        f"A leader's score was picked for being the highest, so it is biased upwards; "
        f"the adjusted score corrects for that selection, with its {level} "
        f"interval ({leaders.attrs['method']}; covariance {leaders.attrs['covariance']}).",
        "",
        f"| task | leader | score | {level} normal interval, ignoring selection | adjusted score "
        f"| {level} interval, given selection |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in leaders.to_dataframe().reset_index().itertuples(index=False):
        if not row.model or np.isnan(row.estimate):
            continue
        lines.append(
            f"| {row.task} | {row.model} | {row.estimate:.4f} | "
            f"[{row.naive_low:.4f}, {row.naive_high:.4f}] | {row.adjusted_estimate:.4f} | "
            f"[{row.low:.4f}, {row.high:.4f}] |"
        )
    return "\n".join(lines)


def _finish(arguments, cube, board, reasons, left_out, leaders, **settings) -> int:
    """Say which tasks rank no model, write the tables and draw the figures."""
    _say_unranked_tasks(board, reasons)
    if prints_markdown(arguments):
        print()
        print(_leaders_markdown(leaders))
    write_tables(
        arguments,
        {
            "leaderboard": board.to_dataframe(),
            "left_out": left_out.set_index(["task", "model"]),
            "leaders": leaders.to_dataframe(),
        },
        {
            "cube": arguments.cube,
            "over": settings.pop("over"),
            "by": settings.pop("by"),
            "rank_sets": arguments.rank_sets,
            "nan_policy": arguments.nan_policy,
            "n_resamples": arguments.n_resamples,
            "seed": arguments.seed,
            "confidence_level": arguments.confidence_level,
            **settings,
        },
    )
    if arguments.figures:
        figures(
            cube,
            board,
            Path(arguments.figures),
            seed=arguments.seed,
            quiet=arguments.quiet,
            nan_policy=arguments.nan_policy,
        )
    return 0


def run(arguments) -> int:
    """Bootstrap, print and write."""
    from contextlib import nullcontext

    from .. import render
    from ..stability import leaderboard, replicates
    from ..stability.resampling import left_out_replicates
    from ..stability.winners import replicate_leaders

    if arguments.chunks:
        try:
            import dask.array  # noqa: F401
        except ImportError as error:  # xarray would say only that no chunk manager exists
            raise RankstatsError('--chunks needs dask: pip install "rankstats[dask]"') from error
    cube = load_cube(arguments.cube, chunks=dict(arguments.chunks or ()) or None)
    refuse_extra_dimensions(cube, "stability")
    if uses_standard_errors(cube, arguments):
        return _from_standard_errors(cube, arguments)
    over = arguments.over or ("both" if "sample" in cube["score"].dims else "templates")
    client = nullcontext()
    if arguments.scheduler:
        try:
            from distributed import Client
        except ImportError as error:
            raise RankstatsError(
                '--scheduler needs dask.distributed: pip install "rankstats[dask]"'
            ) from error
        client = Client(arguments.scheduler)
    with client:
        # the replicates first, so that what nan_policy='omit' leaves out of them can be named
        reps = noted(
            replicates,
            cube,
            n_resamples=arguments.n_resamples,
            over=over,
            seed=arguments.seed,
            by=arguments.by,
            statistics=(arguments.by, "rank"),
            nan_policy=arguments.nan_policy,
        ).compute()
        board = noted(
            leaderboard,
            reps,
            by=arguments.by,
            rank_sets=arguments.rank_sets,
            confidence_level=arguments.confidence_level,
        ).compute()
    reasons = unranked_reasons(cube, board)
    omitted = omitted_templates(cube, board)
    if arguments.nan_policy == "omit":
        omitted = _with_left_out_replicates(omitted, left_out_replicates(reps, arguments.by))
    left_out = pd.concat(
        [render.unranked(board, reasons), render.unranked(board, omitted, ranked=True)],
        ignore_index=True,
    )
    if prints_markdown(arguments):
        print(render.leaderboard_markdown(board, reasons, omitted))
    leaders = replicate_leaders(reps, confidence_level=arguments.confidence_level)
    return _finish(arguments, cube, board, reasons, left_out, leaders, over=over, by=arguments.by)


#: The note that says a leaderboard comes from the cube's standard errors.
STANDARD_ERRORS_NOTE = (
    "rank sets from the cube's standard errors (independent estimates): a task's score "
    "is the mean over its templates, with standard error sqrt(sum of se^2) / T"
)


def uses_standard_errors(cube, arguments) -> bool:
    """Whether to rank from the cube's ``standard_error`` instead of resampling.

    A cube of per-template scores with standard errors (imported from results
    files) has no samples to resample: its standard errors are the sampling
    error, used unless ``--over templates`` asks for the templates to be
    resampled or ``--by`` ranks a score other than the mean (AvgP), whose
    standard error they do not give. Either way the output says so.
    """
    if "sample" in cube["score"].dims or "standard_error" not in cube.data_vars:
        return False
    unused = None
    if arguments.over == "templates":
        unused = "--over templates resamples the templates instead"
    elif arguments.over == "both":
        return False  # refused below: there are no samples to resample
    elif arguments.by != "avgp":
        unused = (
            f"they give the standard error of the mean over templates (avgp), not of "
            f"{arguments.by}; the templates are resampled instead"
        )
    elif arguments.rank_sets == "bootstrap":
        raise UsageError(
            "--rank-sets bootstrap needs resampled scores: from the cube's standard errors "
            "the rank sets are simultaneous or marginal (pass --over templates to resample "
            "the templates)"
        )
    if unused is not None:
        print(
            f"rankstats: note: the cube's standard errors are not used: {unused}", file=sys.stderr
        )
        return False
    return True


def _from_standard_errors(cube, arguments) -> int:
    """The leaderboards from the cube's standard errors: print and write them."""
    import xarray as xr

    from .. import render
    from ..stability.published import standard_error_leaderboard
    from ..stability.winners import task_leaders

    cube = cube.compute()
    board = noted(
        standard_error_leaderboard,
        cube,
        rank_sets=arguments.rank_sets,
        confidence_level=arguments.confidence_level,
        n_resamples=arguments.n_resamples,
        seed=arguments.seed,
        nan_policy=arguments.nan_policy,
    )
    print(f"rankstats: note: {STANDARD_ERRORS_NOTE}", file=sys.stderr)
    reasons = unranked_reasons(cube, board)
    unknown = (cube["score"].notnull() & cube["standard_error"].isnull()).any("template")
    for task, model in reasons:
        if (
            bool(unknown.sel(task=task, model=model))
            and "so its score is NaN" not in reasons[task, model]
        ):
            reasons[task, model] = (
                "no standard error on a template it was scored on, so no rank set"
            )
    omitted = omitted_templates(cube, board)
    left_out = pd.concat(
        [render.unranked(board, reasons), render.unranked(board, omitted, ranked=True)],
        ignore_index=True,
    )
    if prints_markdown(arguments):
        text = render.leaderboard_markdown(board, reasons, omitted)
        rest = text.partition("\n")[2]
        level = f"{arguments.confidence_level:.0%}"
        print(
            f"# Leaderboards with {level} intervals (avgp, from the cube's standard errors; "
            f"{arguments.n_resamples} normal draws)\n{rest}"
        )
    standard_error = board["standard_error"].transpose("task", "model")
    variance = standard_error.to_numpy() ** 2
    diagonal = np.eye(variance.shape[-1])[None] * variance[:, None, :]
    diagonal = np.where(np.isnan(variance)[:, None, :], np.nan, diagonal)
    leaders = task_leaders(
        board["score"].where(board["rank"].notnull()),
        xr.DataArray(diagonal, dims=("task", "model", "model_other")),
        confidence_level=arguments.confidence_level,
        higher_is_better=bool(board.attrs.get("higher_is_better", True)),
    )
    leaders.attrs["covariance"] = "diagonal, from the standard errors"
    return _finish(
        arguments,
        cube,
        board,
        reasons,
        left_out,
        leaders,
        over="standard errors",
        by="avgp",
        standard_errors=board.attrs["standard_errors"],
    )


#: The dimensions a leaderboard per task is laid out over.
CUBE_DIMS = ("model", "task", "template", "sample")


def refuse_extra_dimensions(cube, command: str) -> None:
    """Refuse scores with a dimension beyond the cube's, naming it and what to do.

    The statistics carry an extra dimension (seeds, runs) along, but the
    command's tables and markdown are one leaderboard per task.
    """
    dims = cube["score"].dims
    extra = [d for d in dims if d not in CUBE_DIMS]
    if extra:
        shown = ", ".join(f"{d!r} (size {cube['score'].sizes[d]})" for d in extra)
        raise DimensionError(
            f"{command}: the cube's scores have the extra dimension(s) {shown}; "
            f"{command} prints one leaderboard per task: select one position "
            f"(cube.isel({extra[0]}=0)) or fold {extra[0]!r} into the task dimension first"
        )


def _with_left_out_replicates(omitted: dict, left_out) -> dict:
    """``omitted`` with the replicates each model's interval and its task's rank sets left out."""
    if not omitted:
        return omitted
    n = left_out.attrs["n_resamples"]
    per_model = left_out["model_left_out"].transpose("task", "model")
    per_task = left_out["task_left_out"]
    found = {}
    for (task, model), why in omitted.items():
        own = int(per_model.sel(task=task, model=model))
        if own:
            why += (
                f"; {own} of {n} replicates drew none of its scored templates: they are "
                "left out of its interval, and "
                f"{int(per_task.sel(task=task))} of {n} out of the task's rank sets"
            )
        found[task, model] = why
    return found


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
            why = (
                f"no score on {_named(names)}, so its score is NaN "
                f"(nan_policy={board.attrs.get('nan_policy', 'propagate')!r})"
            )
        else:
            why = "no score interval or rank"
        reasons[tasks[t], models[m]] = why
    return reasons


def _holes(cube, board):
    """Per-template scores missing where a model is present: ``(scores, observed, ids)``."""
    from ..cube import template_scores

    scores = template_scores(cube).transpose("task", "model", "template")
    observed = np.asarray(scores.notnull().values)
    ids = (
        np.asarray(scores["template_id"].transpose("task", "template").values).astype(str)
        if "template_id" in scores.coords
        else None
    )
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
            "(nan_policy='omit')"
        )
    return reasons


def figures(
    cube, board, folder: Path, *, seed: int, quiet: bool = False, nan_policy: str = "propagate"
) -> None:
    """Rank intervals, critical-difference diagrams and templates-needed curves, per task."""
    from ..plot import to_png
    from ..plot.posthoc import plot_critical_difference
    from ..plot.stability import plot_k_needed, plot_needed, plot_rank_intervals
    from ..stability import templates_needed
    from ..statistics.posthoc import nemenyi

    folder.mkdir(exist_ok=True)
    scores = noted(
        lambda: cube["score"].mean("sample") if "sample" in cube["score"].dims else cube["score"]
    )
    differences = noted(nemenyi, scores, blocks="template", nan_policy="omit").compute()
    needed = noted(templates_needed, scores.compute(), seed=seed, nan_policy=nan_policy)
    (folder / "templates_needed.png").write_bytes(to_png(plot_k_needed(needed)))
    for task in board["task"].values:
        name = str(task)
        (folder / f"rank_intervals_{name}.png").write_bytes(
            to_png(plot_rank_intervals(board, task))
        )
        one = differences.sel(task=task)
        present = one["average_rank"].notnull()
        if int(present.sum()) >= 2:
            (folder / f"critical_difference_{name}.png").write_bytes(
                to_png(
                    plot_critical_difference(
                        one.sel(model=present, model_b=present.values), title=name
                    )
                )
            )
        (folder / f"templates_needed_{name}.png").write_bytes(to_png(plot_needed(needed, task)))
    if not quiet:
        print(f"figures written to {folder}")
