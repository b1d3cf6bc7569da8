"""``rankstats plan CUBE``: how many templates and samples a leaderboard needs."""

from __future__ import annotations

from ._shared import (
    add_cube_argument,
    add_output_options,
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
    "n_samples_needed_fixed_templates",
    "reason",
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
    import warnings

    import numpy as np
    import pandas as pd

    from ..stability.planning import plan

    cube = load_cube(arguments.cube)
    options = {
        "target_tau": arguments.target_tau,
        "template_cost": arguments.template_cost,
        "sample_cost": arguments.sample_cost,
    }
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # empty slices are reported in the reason column, not as NumPy's warnings
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        planned = noted(plan, cube, **options)
        per_task = planned[list(COLUMNS)].to_dataframe()[list(COLUMNS)]
        rows = []
        for name, tasks in _groups(cube).items():
            part = planned if name == "all tasks" else noted(plan, cube.sel(task=tasks), **options)
            needed = part["n_templates_needed"]
            finite = needed.where(np.isfinite(needed), drop=True)
            rows.append(
                {
                    "scope": name,
                    "tasks": int(part.attrs["overall_tasks"]),
                    **{
                        column: float(part[f"overall_{column}"])
                        for column in COLUMNS
                        if f"overall_{column}" in part
                    },
                    "task_median_n_templates_needed": float(finite.median())
                    if finite.size
                    else float("nan"),
                    "task_max_n_templates_needed": float(finite.max())
                    if finite.size
                    else float("nan"),
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
    probability = planned.attrs["probability"]
    chance = "" if probability == "None" else f" with probability {probability:g}"
    lines = [
        f"# Plan: designs at which the leaderboard and a replication reach tau-b ≥ {tau:g}{chance}",
        "",
    ]
    if not facet:
        lines += [
            "The cube has no per-sample scores, so samples are not a facet: only "
            "templates are planned, each over the benchmark's own samples.",
            "",
        ]
    dropped = ["n_samples_now", "n_samples_needed", "cost", "n_samples_needed_fixed_templates"]
    shown = per_task if facet else per_task.drop(columns=dropped)
    reasons = shown.pop("reason")
    if not shown.dropna(how="all", subset=[c for c in shown if "needed" in c]).empty:
        lines += [shown.to_markdown(floatfmt=".4g"), ""]
    items = per_task["n_samples_needed_fixed_templates"]
    for task, reason in reasons.items():
        if reason:
            planned = items.get(task, float("nan"))
            lines.append(
                f"- {task}: {reason}"
                + (
                    f"; for tau-b ≥ {tau:g}{chance} with fresh samples and the template held "
                    f"fixed, {planned:.0f} samples"
                    if planned == planned
                    else ""
                )
                + "."
            )
    if any(reasons):
        lines.append("")
    lines += ["## Overall (the mean score over tasks, every task with the same design)", ""]
    kept = (overall if facet else overall.drop(columns=[c for c in dropped if c in overall])).drop(
        columns=["reason"], errors="ignore"
    )
    if int(overall["tasks"].max()) > 0:
        lines.append(kept.to_markdown(floatfmt=".4g"))
    else:
        lines.append("No task has the variance components a plan of the mean needs.")
    for scope, row in overall.iterrows():
        lines.append("")
        needed = row["task_median_n_templates_needed"]
        unreached = int(row["tasks_unreached"])
        what = (
            f"{needed:g} templates per task (median over the tasks that reach it; the "
            f"largest {row['task_max_n_templates_needed']:g})"
            if needed == needed
            else "no number of templates can be estimated (see the reasons above)"
        ) + (
            f", {unreached} task{'s' if unreached > 1 else ''} without a number"
            if unreached
            else ""
        )
        total = row["n_templates_needed"]
        design = (
            f"{total:.0f} templates per task"
            + (f" and {row['n_samples_needed']:.0f} samples" if facet else "")
            if total == total
            else "no design can be estimated"
        )
        items = row.get("n_samples_needed_fixed_templates", float("nan"))
        lines.append(
            f"- {scope}: for tau-b ≥ {tau:g}{chance} on each task's own leaderboard, {what}; "
            f"for the mean over its {row['tasks']:.0f} tasks, {design}"
            + (f"; with the templates held fixed, {items:.0f} samples" if items == items else "")
            + "."
        )
    return "\n".join(lines)
