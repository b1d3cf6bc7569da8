"""``rankstats ranks TABLE``: rank confidence sets from a table of estimates and standard errors.

One row per model, as papers publish them: a column of estimates and a column
of standard errors (or a covariance file). Prints each model's rank, rank set,
tie group and top-k membership (:func:`rankstats.stability.rank_sets`). Table:
``rank_sets``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import InputTypeError, MissingPathError
from ._shared import (
    UsageError,
    add_input,
    add_output,
    add_output_options,
    integer,
    label_column,
    prints_markdown,
    read_table,
    table_column,
    write_tables,
)

COLUMNS = ("estimate", "standard_error", "rank", "rank_low", "rank_high", "tie_group", "in_top_k")


def add(commands) -> None:
    """Add ``ranks`` to the sub-parsers."""
    parser = commands.add_parser(
        "ranks",
        help="rank confidence sets from a table of estimates and standard errors",
        description="Rank confidence sets (Mogstad et al. 2024, as the csranks R package "
        "computes them) from a table with one row per model: its estimate and "
        "its standard error, or the estimates with a covariance file. Table: "
        "rank_sets.",
    )
    add_input(
        parser,
        "table",
        metavar="TABLE",
        help="a CSV file (a .tsv file is read tab-separated), one row per model",
    )
    parser.add_argument(
        "--estimates", required=True, metavar="COLUMN", help="the column of estimates"
    )
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument(
        "--standard-errors",
        metavar="COLUMN",
        help="the column of standard errors (independent estimates)",
    )
    add_input(
        given,
        "--covariance",
        metavar="PATH",
        help="a CSV file of the estimates' covariance: a header row and a first "
        "column of model labels, or M x M numbers in the table's order",
    )
    parser.add_argument(
        "--labels",
        metavar="COLUMN",
        help="the column naming the models (default: the first column of "
        "text, else the row numbers)",
    )
    parser.add_argument(
        "--rank-sets",
        choices=("simultaneous", "marginal"),
        default="simultaneous",
        help="sets that hold every true rank at once, or each model's own (default simultaneous)",
    )
    parser.add_argument(
        "--top-k",
        type=integer(1),
        metavar="K",
        help="also mark the models that may be among the best K",
    )
    parser.add_argument(
        "--lower-is-better", action="store_true", help="rank 1 goes to the smallest estimate"
    )
    add_output(
        parser,
        "--figure",
        metavar="PATH",
        help="draw each model's rank set (PNG), best first (needs the plot extra)",
    )
    add_output_options(
        parser,
        n_resamples=1000,
        minimum=2,
        resamples_help="normal draws for the critical values",
        confidence_level=True,
    )
    parser.set_defaults(run=run)


def _labels(table, arguments):
    import pandas as pd

    labels = label_column(table, arguments.labels, {arguments.estimates, arguments.standard_errors})
    if labels is None:
        labels = pd.Series(range(1, len(table) + 1))
    labels = labels.astype(str)
    if labels.duplicated().any():
        raise UsageError(f"the model labels repeat: {', '.join(labels[labels.duplicated()])}")
    return pd.Index(labels.to_numpy(), name="model")


def _covariance(path: str):
    import pandas as pd

    if not Path(path).is_file():
        raise MissingPathError(f"{path}: no such file")
    sep = "\t" if path.endswith(".tsv") else ","
    raw = pd.read_csv(path, sep=sep, header=None, dtype=str)
    numbers = raw.apply(pd.to_numeric, errors="coerce")
    if numbers.notnull().all().all():  # the bare M x M numbers, in the table's order
        return numbers.to_numpy(dtype=float)
    if numbers.iloc[1:, 1:].notnull().all().all():  # a header row and a column of labels
        frame = numbers.iloc[1:, 1:]
        frame.index = raw.iloc[1:, 0].astype(str).to_numpy()
        frame.columns = raw.iloc[0, 1:].astype(str).to_numpy()
        return frame
    raise InputTypeError(
        f"{path}: a covariance file holds numbers only, or numbers with a header "
        "row and a first column of model labels"
    )


def run(arguments) -> int:
    """Compute and print the rank sets."""
    import pandas as pd

    from ..stability import rank_sets

    table = read_table(arguments.table)
    labels = _labels(table, arguments)
    estimates = pd.Series(
        pd.to_numeric(
            table_column(table, arguments.estimates, "--estimates"), errors="coerce"
        ).to_numpy(),
        index=labels,
    )
    given = {}
    if arguments.standard_errors:
        column = table_column(table, arguments.standard_errors, "--standard-errors")
        given["standard_errors"] = pd.Series(
            pd.to_numeric(column, errors="coerce").to_numpy(), index=labels
        )
    else:
        given["covariance"] = _covariance(arguments.covariance)
    sets = rank_sets(
        estimates,
        **given,
        rank_sets=arguments.rank_sets,
        confidence_level=arguments.confidence_level,
        top_k=arguments.top_k,
        higher_is_better=not arguments.lower_is_better,
        n_resamples=arguments.n_resamples,
        seed=arguments.seed,
        nan_policy="omit",
    )
    frame = sets.to_dataframe()[[c for c in COLUMNS if c in sets]].sort_values(
        ["rank", "estimate"], ascending=[True, arguments.lower_is_better]
    )
    if prints_markdown(arguments):
        print(_markdown(frame, sets.attrs))
    write_tables(arguments, {"rank_sets": frame}, {**sets.attrs, "table": arguments.table})
    if arguments.figure:
        _figure(frame, sets.attrs, arguments.figure)
        if prints_markdown(arguments):
            print(f"figure written to {arguments.figure}", file=sys.stderr)
    return 0


def _markdown(frame, attrs) -> str:
    level = attrs["confidence_level"]
    lines = [
        f"Rank sets ({attrs['rank_sets']}, {level:.0%}; {attrs['n_resamples']} normal "
        f"draws, seed {attrs['seed']}), from {attrs['covariance']}:",
        "",
        "| model | estimate | rank | rank set | tie group |"
        + (" in top k |" if "in_top_k" in frame else ""),
        "|---|---|---|---|---|" + ("---|" if "in_top_k" in frame else ""),
    ]
    for model, row in frame.iterrows():
        if row["rank_low"] != row["rank_low"]:  # NaN: dropped
            cells = [str(model), "NaN", "", "", ""]
        else:
            cells = [
                str(model),
                f"{row['estimate']:.4g}",
                f"{row['rank']:g}",
                f"{row['rank_low']:g}-{row['rank_high']:g}",
                f"{row['tie_group']:g}",
            ]
        if "in_top_k" in frame:
            cells.append("yes" if row["in_top_k"] else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _figure(frame, attrs, path) -> None:
    """Each model's rank set as a bar and its rank as a dot, best at the top (as plotranking)."""
    import numpy as np

    from ..io import write_atomically
    from ..plot._figure import new_axes, to_png

    shown = frame[frame["rank_low"].notnull()]
    ax = new_axes(None, (6.0, 0.22 * len(shown) + 1.5))
    positions = np.arange(len(shown))[::-1]
    groups = shown["tie_group"].to_numpy()
    for group in np.unique(groups):
        rows = positions[groups == group]
        if group % 2 == 0:
            ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color="0.92", zorder=0)
    ax.hlines(positions, shown["rank_low"], shown["rank_high"], color="C0", linewidth=3)
    ax.plot(shown["rank"], positions, "o", color="black", markersize=4)
    ax.set_yticks(positions, [str(m) for m in shown.index], fontsize=7)
    ax.set_xlabel("rank (1 = best)")
    ax.set_title(
        f"{attrs['rank_sets'].capitalize()} {attrs['confidence_level']:.0%} "
        "confidence sets for ranks"
    )
    write_atomically(path, to_png(ax))
