"""``rankstats frontier SOURCE --cost FILE``: the cost-accuracy frontier, and who may be on it.

SOURCE is a score cube (a file, or an embedded example by name), whose mean
over tasks of AvgP is bootstrapped, or, with ``--estimates``, a table of
published estimates and standard errors, one row per model. The cost file
holds one cost per model (columns ``model`` and ``cost``) or, with a cube,
one per model and item (columns ``model``, ``task``, ``sample`` and
``cost``; ``sample`` is the item's ``sample_id``). Prints each model's
accuracy, cost, whether it is on the frontier of the estimates and whether it
can be excluded from the true frontier
(:func:`rankstats.stability.cost_frontier`). Table: ``frontier``.
"""

from __future__ import annotations

import sys

from ..errors import InputTypeError, MissingValueError
from ._shared import (
    UsageError,
    add_input,
    add_output,
    add_output_options,
    label_column,
    load_cube,
    prints_markdown,
    read_table,
    table_column,
    write_tables,
)

COLUMNS = (
    "model",
    "accuracy",
    "standard_error",
    "accuracy_low",
    "accuracy_high",
    "cost",
    "on_frontier",
    "frontier_set",
    "excluded_by",
    "statistic",
)


def add(commands) -> None:
    """Add ``frontier`` to the sub-parsers."""
    parser = commands.add_parser(
        "frontier",
        help="the cost-accuracy frontier, and the models that cannot be excluded from it",
        description="The cost-accuracy frontier: the models that no model at most as "
        "costly beats, on the estimates; and the models that cannot be excluded from "
        "the true frontier at the confidence level (all models tested at once, "
        "stepwise max-t). Table: frontier.",
    )
    add_input(
        parser,
        "source",
        metavar="SOURCE",
        help="a cube file (.nc, .zarr) or the name of an embedded example; with "
        "--estimates, a CSV table of estimates (a .tsv file is read tab-separated)",
    )
    add_input(
        parser,
        "--cost",
        required=True,
        metavar="FILE",
        help="a CSV file of costs: columns model and cost (one per model), or, with a "
        "cube, model, task, sample and cost (one per model and item; the cost of a "
        "model is then its mean per evaluation)",
    )
    table = parser.add_argument_group("a table of published estimates")
    table.add_argument(
        "--estimates", metavar="COLUMN", help="read SOURCE as a table: the column of estimates"
    )
    table.add_argument("--standard-errors", metavar="COLUMN", help="the column of standard errors")
    table.add_argument(
        "--labels",
        metavar="COLUMN",
        help="the column naming the models (default: the first column of text)",
    )
    parser.add_argument("--lower-is-better", action="store_true", help="smaller scores are better")
    parser.add_argument("--benchmark", metavar="NAME", help="only this benchmark's tasks (a cube)")
    parser.add_argument(
        "--over",
        choices=("samples", "templates", "both"),
        help="what a cube's bootstrap resamples (default: samples where the cube has "
        "them, else templates)",
    )
    add_output(
        parser,
        "--figure",
        metavar="PATH",
        help="draw accuracy against cost with the frontier (PNG; needs the plot extra)",
    )
    add_output_options(
        parser,
        n_resamples=1000,
        minimum=20,
        resamples_help="bootstrap replicates (a cube) or normal draws (estimates)",
        confidence_level=True,
    )
    parser.set_defaults(run=run)


def _estimates(arguments):
    """The table as (estimates, standard errors): Series labelled by model."""
    import pandas as pd

    if not arguments.standard_errors:
        raise UsageError("--estimates needs --standard-errors COLUMN")
    table = read_table(arguments.source)
    estimates = pd.to_numeric(
        table_column(table, arguments.estimates, "--estimates"), errors="coerce"
    )
    errors = pd.to_numeric(
        table_column(table, arguments.standard_errors, "--standard-errors"), errors="coerce"
    )
    labels = label_column(table, arguments.labels, {arguments.estimates, arguments.standard_errors})
    if labels is None:
        raise UsageError("the table has no column of text to name the models; give --labels")
    index = pd.Index(labels.astype(str).to_numpy(), name="model")
    if index.has_duplicates:
        raise UsageError(f"the model labels repeat: {', '.join(index[index.duplicated()][:5])}")
    return pd.Series(estimates.to_numpy(), index=index), pd.Series(errors.to_numpy(), index=index)


def _cost(path, cube=None):
    """The costs: a Series per model, or a DataArray per model and item joined by sample_id."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    table = read_table(path)
    for name in ("model", "cost"):
        if name not in table.columns:
            raise InputTypeError(
                f"{path}: a cost file needs the columns model and cost (columns: "
                f"{', '.join(map(str, table.columns))})"
            )
    cost = pd.to_numeric(table["cost"], errors="coerce")
    if cost.isnull().any():
        row = int(np.argmax(cost.isnull().to_numpy()))
        raise InputTypeError(
            f"{path}, row {row + 2}: cost {table['cost'].iloc[row]!r} is no number"
        )
    item = [c for c in ("task", "sample") if c in table.columns]
    if not item:
        frame = pd.Series(cost.to_numpy(), index=table["model"].astype(str))
        if frame.index.has_duplicates:
            raise InputTypeError(
                f"{path}: model {frame.index[frame.index.duplicated()][0]!r} has two costs"
            )
        return frame
    if item != ["task", "sample"] or cube is None:
        raise InputTypeError(
            f"{path}: a cost per item needs both columns task and sample, and a cube as SOURCE"
        )
    if "sample_id" not in cube.coords or "sample" not in cube["score"].dims:
        raise InputTypeError(f"{path}: a cost per item needs a cube with samples and sample_id")
    ids = cube["sample_id"].transpose("task", "sample").to_pandas()
    position = {
        (str(task), str(sid)): k
        for task, row in ids.iterrows()
        for k, sid in enumerate(row.to_numpy())
        if isinstance(sid, str) and sid != ""
    }
    keys = list(zip(table["task"].astype(str), table["sample"].astype(str), strict=True))
    unknown = [key for key in keys if key not in position]
    if unknown:
        raise MissingValueError(f"{path}: no sample {unknown[0][1]!r} in task {unknown[0][0]!r}")
    models = [str(m) for m in cube["model"].to_numpy()]
    tasks = [str(t) for t in cube["task"].to_numpy()]
    grid = np.full((len(models), len(tasks), cube.sizes["sample"]), np.nan)
    model_at = {m: i for i, m in enumerate(models)}
    task_at = {t: i for i, t in enumerate(tasks)}
    rows = [
        (model_at.get(m, -1), task_at[t], position[(t, s)])
        for m, (t, s) in zip(table["model"].astype(str), keys, strict=True)
    ]
    kept = [i for i, (m, _, _) in enumerate(rows) if m >= 0]
    index = np.array([rows[i] for i in kept], dtype=int).reshape(-1, 3)
    grid[index[:, 0], index[:, 1], index[:, 2]] = cost.to_numpy()[kept]
    return xr.DataArray(
        grid,
        dims=("model", "task", "sample"),
        coords={"model": cube["model"].values, "task": cube["task"].values},
    )


def _benchmark(cube, name):
    """The tasks of one benchmark (the cube's ``benchmark`` coordinate), or all."""
    if name is None:
        return cube
    if "benchmark" not in cube.coords:
        raise UsageError("--benchmark: the cube has no 'benchmark' coordinate")
    keep = (cube["benchmark"] == name).values
    if not keep.any():
        known = ", ".join(sorted(set(map(str, cube["benchmark"].values))))
        raise UsageError(f"--benchmark {name!r}: no such benchmark (benchmarks: {known})")
    return cube.isel(task=keep)


def run(arguments) -> int:
    """Find the frontier and print it."""
    from ..stability import cost_frontier

    common = {
        "confidence_level": arguments.confidence_level,
        "n_resamples": arguments.n_resamples,
        "seed": arguments.seed,
    }
    if arguments.estimates:
        if arguments.over or arguments.benchmark:
            raise UsageError("--over and --benchmark are for a cube, not a table of estimates")
        estimates, errors = _estimates(arguments)
        result = cost_frontier(
            estimates,
            _cost(arguments.cost),
            standard_errors=errors,
            higher_is_better=not arguments.lower_is_better,
            **common,
        )
    else:
        for option in ("standard_errors", "labels"):
            if getattr(arguments, option):
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} is for a table of estimates; give --estimates too")
        cube = _benchmark(load_cube(arguments.source), arguments.benchmark)
        result = cost_frontier(
            cube,
            _cost(arguments.cost, cube),
            over=arguments.over,
            higher_is_better=False if arguments.lower_is_better else None,
            **common,
        )
    frame = result.to_dataframe().reset_index()
    frame = frame[list(COLUMNS)].sort_values(["cost", "model"], kind="stable")
    if prints_markdown(arguments):
        print(_markdown(frame, result.attrs, arguments.source))
    attrs = {**result.attrs, "source": arguments.source, "data": result.attrs["source"]}
    write_tables(arguments, {"frontier": frame}, attrs)
    if arguments.figure:
        from ..io import write_atomically
        from ..plot._figure import to_png
        from ..plot.frontier import plot_cost_frontier

        write_atomically(arguments.figure, to_png(plot_cost_frontier(result)))
        if prints_markdown(arguments):
            print(f"figure written to {arguments.figure}", file=sys.stderr)
    return 0


def _number(value) -> str:
    return f"{value:.4g}" if value == value else ""


def _markdown(frame, attrs, source) -> str:
    lines = [
        f"Cost-accuracy frontier ({attrs['confidence_level']:.0%}; {attrs['source']}, "
        f"{attrs['n_resamples']} draws, seed {attrs['seed']}), from {source}; cost "
        f"{attrs['cost'].split(':')[0]}:",
        "",
        "| model | cost | accuracy | interval | on frontier | cannot be excluded | excluded by |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in frame.itertuples(index=False):
        if row.accuracy != row.accuracy:  # NaN: left out
            lines.append(f"| {row.model} | {_number(row.cost)} | left out |  |  |  |  |")
            continue
        lines.append(
            f"| {row.model} | {_number(row.cost)} | {_number(row.accuracy)} | "
            f"{_number(row.accuracy_low)} to {_number(row.accuracy_high)} | "
            f"{'yes' if row.on_frontier else ''} | {'yes' if row.frontier_set else ''} | "
            f"{row.excluded_by} |"
        )
    if attrs.get("left_out"):
        lines += ["", f"Left out (no accuracy on every task): {attrs['left_out']}."]
    return "\n".join(lines)
