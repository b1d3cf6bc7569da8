"""``rankstats records CUBE``: which of a leaderboard's past records were real improvements."""

from __future__ import annotations

from .._kernels.multitest import ADJUST_METHODS
from ._shared import (
    UsageError,
    add_cube_argument,
    add_input,
    add_output_options,
    fraction,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
)

#: The columns of the ``records`` table, in order.
COLUMNS = (
    "record",
    "date",
    "previous",
    "previous_date",
    "score",
    "previous_score",
    "margin",
    "n_date_models",
    "n_discordant",
    "wins",
    "losses",
    "test",
    "pvalue",
    "pvalue_adjusted",
    "verdict",
    "mde",
)


def _gap(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive score difference, not {text}")
    return value


def add(commands) -> None:
    """Add ``records`` to the sub-parsers."""
    parser = commands.add_parser(
        "records",
        help="audit a leaderboard's record history: was each new record a real improvement",
        description="Walk the models in date order, find every step that set a new record, "
        "and test each record against the one it replaced with an exact paired test "
        "conditional on its being a record, Holm-adjusted over the steps; give the minimum "
        "detectable difference and the items a one- and a two-point gap need. Needs "
        "per-sample scores and a date per model. Tables: records, models, resolution.",
    )
    add_cube_argument(parser)
    add_input(
        parser,
        "--dates",
        metavar="FILE_OR_COLUMN",
        help="the dates: a CSV file with columns model and date, or the name of a model "
        "coordinate of the cube (default: the cube's 'date' coordinate)",
    )
    parser.add_argument(
        "--task",
        metavar="TASK",
        help="audit one task's leaderboard (default: the mean over tasks)",
    )
    parser.add_argument(
        "--same-date",
        choices=("bonferroni", "condition"),
        default="bonferroni",
        help="how a date with several submissions is tested: its best, with its p-value "
        "times the date's size (bonferroni, default), or conditional on its being the best",
    )
    parser.add_argument(
        "--p-adjust",
        choices=ADJUST_METHODS,
        default="holm",
        help="multiple-testing adjustment over the steps (default holm)",
    )
    parser.add_argument(
        "--alpha",
        type=fraction,
        default=0.05,
        help="significance level of the verdicts and of the minimum detectable difference "
        "(default 0.05)",
    )
    parser.add_argument(
        "--power",
        type=fraction,
        default=0.8,
        help="power of the minimum detectable difference (default 0.8)",
    )
    parser.add_argument(
        "--gap",
        type=_gap,
        action="append",
        metavar="GAP",
        help="a score gap for which to give the items needed (repeatable; default 0.01 and 0.02)",
    )
    parser.add_argument(
        "--higher-is-better",
        choices=("true", "false"),
        help="direction of the scores (default: the cube's attribute, else true)",
    )
    add_output_options(
        parser,
        n_resamples=10_000,
        resamples_help="random sign patterns of a step with more than 16 discordant items "
        "of unequal weight",
    )
    parser.set_defaults(run=run)


def _dates(cube, given):
    """None (the 'date' coordinate), a coordinate name, or model -> date from a CSV file."""
    from pathlib import Path

    import pandas as pd

    if given is None or not Path(given).is_file():
        return given
    try:
        table = pd.read_csv(given, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as error:
        raise UsageError(f"--dates {given!r}: not a CSV file ({error})") from None
    lacking = [c for c in ("model", "date") if c not in table.columns]
    if lacking:
        raise UsageError(
            f"--dates {given!r}: no column {' or '.join(map(repr, lacking))} (columns: "
            f"{', '.join(table.columns)}); the file needs columns model and date"
        )
    repeated = table["model"][table["model"].duplicated()].tolist()
    if repeated:
        raise UsageError(f"--dates {given!r}: model {repeated[0]!r} has more than one date")
    return dict(zip(table["model"], table["date"].replace("", None), strict=True))


def run(arguments) -> int:
    """Audit, print and write."""
    import pandas as pd

    from ..stability.records import record_history

    cube = load_cube(arguments.cube)
    higher = None if arguments.higher_is_better is None else arguments.higher_is_better == "true"
    audit = noted(
        record_history,
        cube,
        _dates(cube, arguments.dates),
        task=arguments.task,
        alpha=arguments.alpha,
        p_adjust=arguments.p_adjust,
        power=arguments.power,
        gaps=tuple(arguments.gap) if arguments.gap else (0.01, 0.02),
        n_resamples=arguments.n_resamples,
        seed=arguments.seed,
        higher_is_better=higher,
        same_date=arguments.same_date,
    )
    steps = audit[list(COLUMNS)].to_dataframe()[list(COLUMNS)].reset_index()
    needed = audit["items_needed"].to_pandas()
    needed.columns = [f"items_needed_{gap:g}" for gap in audit["gap"].values]
    steps = pd.concat([steps, needed.reset_index(drop=True)], axis=1)
    models = (
        audit[["model_date", "model_score", "sets_record"]]
        .to_dataframe()
        .rename(columns={"model_date": "date", "model_score": "score"})
        .reset_index()
        .sort_values(["date", "model"], kind="stable")
    )
    resolution = pd.DataFrame(
        {
            "gap": audit["gap"].values,
            "items_needed": audit["resolution_items_needed"].values,
            "mde": float(audit["resolution_mde"]),
        }
    )
    if prints_markdown(arguments):
        print(_markdown(audit, steps))
    write_tables(
        arguments,
        {"records": steps, "models": models, "resolution": resolution},
        {"cube": arguments.cube, **audit.attrs},
    )
    return 0


def _markdown(audit, steps) -> str:
    attrs = audit.attrs
    lines = [
        f"# Record history ({attrs['task']}, {attrs['n_items']} items)",
        "",
        f"First record: {attrs['first_record']} ({attrs['first_record_date']}). Each later "
        "record is tested against the one it replaced, conditional on its being a record; "
        f"p-values adjusted by {attrs['p_adjust']} over the steps, verdicts at alpha "
        f"{attrs['alpha']:g}; MDE: the minimum detectable difference at power "
        f"{attrs['power']:g}. {attrs['same_date'].capitalize()}.",
        "",
    ]
    if steps.empty:
        lines.append("No later submission set a new record.")
        return "\n".join(lines)
    shown = steps[
        [
            "step",
            "record",
            "date",
            "previous",
            "margin",
            "wins",
            "losses",
            "pvalue",
            "pvalue_adjusted",
            "mde",
            "verdict",
        ]
    ]
    lines.append(shown.to_markdown(index=False, floatfmt=".4g"))
    found = int((steps["verdict"] == "improvement").sum())
    lines += [
        "",
        f"{found} of {len(steps)} records were detectable improvements. One point of the "
        f"score needs about {float(audit['resolution_items_needed'][0]):.0f} items at the "
        "median discordance of the steps."
        if audit["gap"].size and float(audit["gap"][0]) == 0.01
        else f"{found} of {len(steps)} records were detectable improvements.",
    ]
    return "\n".join(lines)
