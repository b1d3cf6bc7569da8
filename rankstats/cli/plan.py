"""``rankstats plan CUBE``: how many templates and samples a leaderboard needs."""

from __future__ import annotations

from ._shared import (
    add_cube_argument,
    add_output_options,
    check_outputs,
    fraction,
    load_cube,
    noted,
    prints_markdown,
    write_tables,
)

#: The per-task columns of the ``plan`` table, in order.
COLUMNS = (
    "n_templates_now",
    "n_samples_now",
    "g_coefficient_now",
    "tau_now",
    "n_templates_needed",
    "n_samples_needed",
    "cost",
    "n_templates_needed_fixed_samples",
)


def _cost(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of at least 0, not {text}")
    return value


def add(commands) -> None:
    """Add ``plan`` to the sub-parsers."""
    parser = commands.add_parser(
        "plan",
        help="how many templates and samples a leaderboard needs (decision study)",
        description="Estimate each task's variance components (model, template, sample and "
        "their interactions) and predict, for any number of templates and "
        "samples, the expected Kendall tau between the leaderboard and a "
        "replication of it; print the cheapest design reaching --target-tau per "
        "task, per benchmark and overall. Without per-sample scores only "
        "templates are planned. Tables: plan, overall.",
    )
    add_cube_argument(parser)
    parser.add_argument(
        "--target-tau",
        type=fraction,
        default=0.9,
        metavar="TAU",
        help="expected tau with a replication to reach (default 0.9)",
    )
    parser.add_argument(
        "--template-cost",
        type=_cost,
        default=1.0,
        metavar="COST",
        help="cost of one template (default 1)",
    )
    parser.add_argument(
        "--sample-cost",
        type=_cost,
        default=1.0,
        metavar="COST",
        help="cost of one sample (default 1)",
    )
    add_output_options(parser)
    parser.set_defaults(run=run)


def _groups(cube):
    """``{name: tasks}``: every task, and the tasks of each benchmark when the cube says."""
    import numpy as np

    tasks = cube["task"].values
    groups = {"all tasks": tasks}
    if "benchmark" in cube.coords and cube["benchmark"].dims == ("task",):
        names = cube["benchmark"].values.astype(str)
        if len(set(names)) > 1:
            groups.update({name: tasks[names == name] for name in dict.fromkeys(names)})
    return {name: members for name, members in groups.items() if np.size(members)}


def run(arguments) -> int:
    """Plan, print and write."""
    import pandas as pd

    from ..stability.planning import plan

    check_outputs(arguments)
    cube = load_cube(arguments.cube)
    options = {
        "target_tau": arguments.target_tau,
        "template_cost": arguments.template_cost,
        "sample_cost": arguments.sample_cost,
    }
    planned = noted(plan, cube, **options)
    per_task = planned[list(COLUMNS)].to_dataframe()[list(COLUMNS)]
    rows = []
    for name, tasks in _groups(cube).items():
        part = planned if name == "all tasks" else noted(plan, cube.sel(task=tasks), **options)
        needed = part["n_templates_needed"]
        rows.append(
            {
                "scope": name,
                "tasks": int(part.attrs["overall_tasks"]),
                **{
                    column: float(part[f"overall_{column}"])
                    for column in COLUMNS
                    if f"overall_{column}" in part
                },
                "task_median_n_templates_needed": float(needed.median()),
                "task_max_n_templates_needed": float(needed.max()),
                "tasks_unreached": int(needed.isnull().sum()),
            }
        )
    overall = pd.DataFrame(rows).set_index("scope")
    facet = planned.attrs["samples"] == "a facet"
    if prints_markdown(arguments):
        print(_markdown(per_task, overall, planned, facet))
    write_tables(
        arguments, {"plan": per_task, "overall": overall}, {"cube": arguments.cube, **planned.attrs}
    )
    return 0


def _markdown(per_task, overall, planned, facet) -> str:
    tau = planned.attrs["target_tau"]
    lines = [
        f"# Plan: designs with expected tau ≥ {tau:g} between the leaderboard and a replication",
        "",
    ]
    if not facet:
        lines += [
            "The cube has no per-sample scores, so samples are not a facet: only "
            "templates are planned, each over the benchmark's own samples.",
            "",
        ]
    shown = (
        per_task if facet else per_task.drop(columns=["n_samples_now", "n_samples_needed", "cost"])
    )
    lines += [
        shown.to_markdown(floatfmt=".4g"),
        "",
        "## Overall (the mean score over tasks, every task with the same design)",
        "",
    ]
    kept = (
        overall
        if facet
        else overall.drop(
            columns=[c for c in ("n_samples_now", "n_samples_needed", "cost") if c in overall]
        )
    )
    lines.append(kept.to_markdown(floatfmt=".4g"))
    for scope, row in overall.iterrows():
        lines.append("")
        needed = row["task_median_n_templates_needed"]
        unreached = int(row["tasks_unreached"])
        what = (
            f"{needed:g} templates per task (median over the tasks that reach it; the "
            f"largest {row['task_max_n_templates_needed']:g})"
            if needed == needed
            else "no design within the limits"
        ) + (
            f", {unreached} task{'s' if unreached > 1 else ''} with no design within the limits"
            if unreached
            else ""
        )
        overall = row["n_templates_needed"]
        design = (
            f"{overall:.0f} templates per task"
            + (f" and {row['n_samples_needed']:.0f} samples" if facet else "")
            if overall == overall
            else "no design within the limits"
        )
        lines.append(
            f"- {scope}: for tau ≥ {tau:g} on each task's own leaderboard, {what}; "
            f"for the mean over its {row['tasks']:.0f} tasks, {design}."
        )
    return "\n".join(lines)
