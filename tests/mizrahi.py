"""The copy of Mizrahi et al. (2024)'s release kept in tests/data, read by its importer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rankstats_collectors.files import mizrahi2024

RELEASE = Path(__file__).parent / "data" / "mizrahi2024"


def accuracy_cube():
    """The released accuracies as a cube (model × task × template), with template metadata."""
    return mizrahi2024.load(RELEASE)


def accuracy_records() -> pd.DataFrame:
    """Long records (model, task, template, score, benchmark) from the per-template CSVs."""
    table = (
        accuracy_cube()
        .reset_coords()[["score", "template_id", "benchmark"]]
        .to_dataframe()
        .dropna(subset=["score"])
        .reset_index()
    )
    table["template"] = table["template_id"].astype(int)
    return table[["template", "model", "score", "task", "benchmark"]]


def template_records() -> pd.DataFrame:
    """Template metadata (task, template, template_valid, template_is_original, template_method)."""
    columns = ["template_id", "template_valid", "template_is_original", "template_method"]
    table = accuracy_cube().reset_coords()[columns].to_dataframe().reset_index()
    table = table[table["template_id"] != ""]
    table = table.assign(template=table["template_id"].astype(int))
    return table[["task", "template", *columns[1:]]].reset_index(drop=True)
