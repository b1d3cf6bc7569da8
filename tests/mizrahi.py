"""Read the copy of Mizrahi et al. (2024)'s released accuracies kept in tests/data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import rankstats

RELEASE = Path(__file__).parent / "data" / "mizrahi2024"


def accuracy_records() -> pd.DataFrame:
    """Long records (model, task, template, score, benchmark) from the per-template CSVs."""
    frames = []
    for path in sorted((RELEASE / "paraphrases accuracies").glob("*/*.csv")):
        wide = pd.read_csv(path)
        long = wide.melt(id_vars="paraphrase idx", var_name="model", value_name="score")
        long["model"] = long["model"].str.removesuffix("_acc")
        frames.append(long.rename(columns={"paraphrase idx": "template"}).assign(
            task=path.stem, benchmark=path.parent.name))
    return pd.concat(frames, ignore_index=True)


def template_records() -> pd.DataFrame:
    """Template metadata (task, template, template_valid, template_is_original, template_method)."""
    frames = []
    for path in sorted((RELEASE / "automatic paraphrases").glob("*/*.csv")):
        meta = pd.read_csv(path)
        frames.append(pd.DataFrame({
            "task": path.stem,
            "template": meta["prompt idx"],
            "template_valid": meta["correct"].astype(bool),
            "template_is_original": meta["default prompt"].astype(bool),
            "template_method": meta["method"].astype(str),
        }))
    return pd.concat(frames, ignore_index=True)


def accuracy_cube():
    """The released accuracies as a cube (model × task × template), with template metadata."""
    records = accuracy_records().merge(template_records(), on=["task", "template"], how="left")
    return rankstats.from_records(
        records, task_attrs=["benchmark"], metric="accuracy",
        source="Mizrahi et al. (2024) release, paraphrases accuracies",
    )
