"""``rankstats info CUBE``: sizes, attributes and coverage of a cube."""

from __future__ import annotations

from ._shared import (
    add_cube_argument,
    add_output_options,
    describe,
    load_cube,
    prints_markdown,
    write_tables,
)


def add(commands) -> None:
    """Add ``info`` to the sub-parsers."""
    parser = commands.add_parser(
        "info",
        help="summarise a cube: sizes, attributes, coverage",
        description="Print a cube's sizes and attributes, and per task how many templates "
        "it has and how many models have scores. Table: tasks.",
    )
    add_cube_argument(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Summarise the cube."""
    import pandas as pd

    from ..cube import template_scores

    cube = load_cube(arguments.cube)
    scores = template_scores(cube)
    tasks = pd.DataFrame(
        {
            "templates": (cube["template_id"] != "").sum("template").to_series(),
            "models": scores.notnull().any("template").sum("model").to_series(),
        }
    ).rename_axis("task")
    if prints_markdown(arguments):
        print(f"{arguments.cube}: {describe(cube)}")
        for key, value in cube.attrs.items():
            print(f"  {key}: {value}")
        print("tasks (templates, models with scores):")
        for task, row in tasks.iterrows():
            print(f"  {task}: {row['templates']} templates, {row['models']} models")
    write_tables(
        arguments,
        {"tasks": tasks},
        {"cube": arguments.cube, "sizes": dict(cube.sizes), **cube.attrs},
    )
    return 0
