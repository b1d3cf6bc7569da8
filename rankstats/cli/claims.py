"""``rankstats claims SOURCE --claim TEXT``: check claims about a leaderboard.

SOURCE is a score cube (a file, or an embedded example by name), whose
per-task mean scores are bootstrapped, or, with ``--estimates``, a table of
published estimates and standard errors (one row per model, or per model and
task with ``--tasks``). Every claim gets a verdict (supported, not supported,
contradicted) with the family-wise error over all of them held at
``1 - --confidence-level`` (:func:`rankstats.stability.check_claims`); a
"best" claim also shows the leader's selection-adjusted score. Table:
``claims``.
"""

from __future__ import annotations

from ._shared import (
    UsageError,
    add_input,
    add_output_options,
    label_column,
    load_cube,
    prints_markdown,
    read_table,
    table_column,
    write_tables,
)

COLUMNS = (
    "claim",
    "view",
    "kind",
    "model",
    "other",
    "task",
    "k",
    "verdict",
    "statistic",
    "critical_value",
    "score",
    "leader",
    "leader_score",
    "leader_adjusted",
    "leader_low",
    "leader_high",
)


def add(commands) -> None:
    """Add ``claims`` to the sub-parsers."""
    parser = commands.add_parser(
        "claims",
        help="check claims such as 'A beats B on T' or 'A is best on the benchmark mean'",
        description="Check claims of the forms 'A beats B on T', 'A is best on T', 'A is "
        "in the top K on T' (T may be 'the benchmark mean' or 'the BENCHMARK mean'), "
        "all at once with the family-wise error held at 1 - confidence level; each "
        "gets a verdict: supported, not supported or contradicted. 'best' claims also "
        "show the leader's selection-adjusted score (winner's curse). Table: claims.",
    )
    add_input(
        parser,
        "source",
        metavar="SOURCE",
        help="a cube file (.nc, .zarr) or the name of an embedded example; with "
        "--estimates, a CSV table of estimates (a .tsv file is read tab-separated)",
    )
    parser.add_argument(
        "--claim",
        action="append",
        default=[],
        metavar="TEXT",
        help="a claim, e.g. 'gpt-4 beats llama on arc' (repeatable)",
    )
    add_input(
        parser,
        "--claims",
        metavar="PATH",
        help="a text file of claims, one per line ('#' starts a comment)",
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
    table.add_argument(
        "--tasks",
        metavar="COLUMN",
        help="the column naming the tasks (rows are then model x task)",
    )
    table.add_argument(
        "--lower-is-better", action="store_true", help="smaller estimates are better"
    )
    parser.add_argument(
        "--over",
        choices=("samples", "templates", "both"),
        help="what a cube's bootstrap resamples (default: samples where the cube has "
        "them, else templates)",
    )
    add_output_options(
        parser,
        n_resamples=1000,
        minimum=20,
        resamples_help="bootstrap replicates (a cube) or normal draws (estimates)",
        confidence_level=True,
    )
    parser.set_defaults(run=run)


def _claims(arguments):
    from ..stability import Claim, read_claims

    claims = [Claim.parse(text) for text in arguments.claim]
    if arguments.claims:
        claims += read_claims(arguments.claims)
    if not claims:
        raise UsageError("give at least one --claim TEXT or --claims PATH")
    return claims


def _estimates(arguments):
    """The table as (estimates, standard errors): frames of tasks by models."""
    import pandas as pd

    if not arguments.standard_errors:
        raise UsageError("--estimates needs --standard-errors COLUMN")
    table = read_table(arguments.source)
    numbers = {
        "estimate": pd.to_numeric(
            table_column(table, arguments.estimates, "--estimates"), errors="coerce"
        ),
        "standard_error": pd.to_numeric(
            table_column(table, arguments.standard_errors, "--standard-errors"), errors="coerce"
        ),
    }
    labels = label_column(
        table,
        arguments.labels,
        {arguments.estimates, arguments.standard_errors, arguments.tasks},
    )
    if labels is None:
        raise UsageError("the table has no column of text to name the models; give --labels")
    tasks = table_column(table, arguments.tasks, "--tasks") if arguments.tasks else "all"
    long = pd.DataFrame({"model": labels.astype(str), "task": tasks, **numbers}).astype(
        {"task": str}
    )
    repeated = long.duplicated(["model", "task"])
    if repeated.any():
        first = long[repeated].iloc[0]
        raise UsageError(
            f"model {first['model']!r} appears twice"
            + (f" on task {first['task']!r}" if arguments.tasks else "")
        )
    wide = long.pivot(index="task", columns="model")
    return wide["estimate"], wide["standard_error"]


def run(arguments) -> int:
    """Check the claims and print their verdicts."""
    from ..stability import check_claims

    claims = _claims(arguments)
    common = {
        "confidence_level": arguments.confidence_level,
        "n_resamples": arguments.n_resamples,
        "seed": arguments.seed,
    }
    if arguments.estimates:
        estimates, errors = _estimates(arguments)
        result = check_claims(
            estimates,
            claims,
            errors,
            higher_is_better=not arguments.lower_is_better,
            **common,
        )
    else:
        for option in ("standard_errors", "labels", "tasks"):
            if getattr(arguments, option):
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} is for a table of estimates; give --estimates too")
        result = check_claims(load_cube(arguments.source), claims, over=arguments.over, **common)
    frame = result.to_dataframe().reset_index()
    frame = frame[[c for c in COLUMNS if c in frame]]
    if prints_markdown(arguments):
        print(_markdown(result, arguments.source))
    attrs = {**result.attrs, "source": arguments.source, "data": result.attrs["source"]}
    write_tables(arguments, {"claims": frame}, attrs)
    return 0


def _number(value) -> str:
    return f"{value:.4g}" if value == value else ""


def _markdown(result, source) -> str:
    attrs = result.attrs
    views = [str(v) for v in result.view.values]
    lines = [
        f"Claims ({attrs['confidence_level']:.0%} family-wise; {attrs['source']}, "
        f"{attrs['n_resamples']} draws, seed {attrs['seed']}), from {source}:",
        "",
        "| claim | " + " | ".join(views) + " |",
        "|---|" + "---|" * len(views),
    ]
    critical = result.critical_value.values
    for claim in result.claim.values:
        row = result.sel(claim=claim)
        cells = [
            f"{row.verdict.values[i]} (t = {_number(row.statistic.values[i])}, "
            f"c = {critical[i]:.3g})"
            for i in range(len(views))
        ]
        lines.append(f"| {claim} | " + " | ".join(cells) + " |")
    best = result.kind.values == "best"
    if best.any():
        lines += [
            "",
            f"Leaders of the 'best' claims, selection-adjusted ({attrs['winner_method']}; "
            f"{attrs['confidence_level']:.0%} each):",
            "",
            "| task | view | leader | score | adjusted | interval |",
            "|---|---|---|---|---|---|",
        ]
        done = set()
        for claim in result.claim.values[best]:
            row = result.sel(claim=claim)
            for i, view in enumerate(views):
                key = (str(row.task.item()), view)
                if key in done:
                    continue
                done.add(key)
                lines.append(
                    f"| {key[0]} | {view} | {row.leader.values[i]} | "
                    f"{_number(row.leader_score.values[i])} | "
                    f"{_number(row.leader_adjusted.values[i])} | "
                    f"{_number(row.leader_low.values[i])} to "
                    f"{_number(row.leader_high.values[i])} |"
                )
    if attrs.get("note"):
        lines += ["", f"Note: {attrs['note']}."]
    return "\n".join(lines)
