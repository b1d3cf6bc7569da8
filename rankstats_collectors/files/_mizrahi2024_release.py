"""The Mizrahi et al. (2024) release read as a whole: its copies of the accuracies, in long form."""

from __future__ import annotations

import pandas as pd

from . import file_error
from ._mizrahi2024_files import (
    ACCURACIES,
    AGGREGATED,
    PARAPHRASES,
    Release,
    read_accuracies,
    read_aggregated,
    read_paraphrases,
)

COPIES = {"csv": (ACCURACIES, ".csv"), "json": (AGGREGATED, ".json")}


def read_copy(release: Release, copy: str) -> dict:
    """``{(benchmark, task): (path, accuracies, json_meta, json_ranks)}`` for one copy.

    For the ``"csv"`` copy ``json_meta`` and ``json_ranks`` are None.
    """
    folder, suffix = COPIES[copy]
    read = {}
    for key, path in release.task_files(folder, suffix).items():
        if copy == "csv":
            read[key] = (path, read_accuracies(release, path), None, None)
        else:
            meta, accs, ranks = read_aggregated(release, path)
            read[key] = (path, accs, meta, ranks)
    return read


def read_meta(release: Release) -> dict:
    """``{(benchmark, task): (path, paraphrase table)}``."""
    return {
        key: (path, read_paraphrases(release, path))
        for key, path in release.task_files(PARAPHRASES, ".csv").items()
    }


def long_scores(read: dict, release: Release, which: int = 1) -> pd.DataFrame:
    """One row per (task, template, model): benchmark, task, template, model, value, file."""
    frames = [
        tables[which]
        .rename_axis(columns="model")
        .stack()
        .rename("value")
        .reset_index()
        .assign(benchmark=key[0], task=key[1], file=release.name(tables[0]))
        for key, tables in read.items()
    ]
    columns = ["benchmark", "task", "template", "model", "value", "file"]
    return pd.concat(frames, ignore_index=True)[columns]


def long_meta(tables: dict, release: Release) -> pd.DataFrame:
    """One row per (task, template) from ``{key: (path, table)}``, with benchmark, task, file."""
    frames = [
        table.reset_index().assign(benchmark=key[0], task=key[1], file=release.name(path))
        for key, (path, table) in tables.items()
    ]
    return pd.concat(frames, ignore_index=True)


def require_same_tasks(release: Release, scores: dict, score_folder: str, meta: dict) -> None:
    """Every task with scores has a paraphrase file, and the reverse."""
    for have, lack, lack_folder in ((scores, meta, PARAPHRASES), (meta, scores, score_folder)):
        missing = [key for key in have if key not in lack]
        if missing:
            benchmark, task = missing[0]
            raise file_error(
                release.shown(have[missing[0]][0]),
                f"{lack_folder}/{benchmark}/ has no file for task {task!r}",
            )


def require_same_templates(release: Release, path, table, meta_path, meta) -> None:
    """The scores and the paraphrase file number the same templates."""
    for (one, one_path), (other, other_path) in (
        ((table, path), (meta, meta_path)),
        ((meta, meta_path), (table, path)),
    ):
        extra = one.index.difference(other.index)
        if len(extra):
            raise file_error(
                release.shown(one_path),
                f"template {extra[0]} is not in {release.shown(other_path)!r} "
                f"(which numbers {len(other)} templates)",
                row=one.attrs["row"][extra[0]],
                column=one.attrs["index_column"],
            )


def require_same_models(release: Release, read: dict) -> None:
    """Within a benchmark, every file holds the same models."""
    present = pd.DataFrame(
        [(key[0], key, model) for key, tables in read.items() for model in tables[1].columns],
        columns=["benchmark", "key", "model"],
    )
    files = present.groupby("benchmark")["key"].transform("nunique")
    holders = present.groupby(["benchmark", "model"])["key"].transform("nunique")
    lone = present[(holders == 1) & (files > 1)]
    if len(lone):
        benchmark, key, model = lone.iloc[0]
        raise _model_error(
            release, read[key], model, f"model {model!r} is in no other {benchmark} file"
        )
    complete = present.groupby("benchmark")["model"].unique()
    for key, tables in read.items():
        missing = [m for m in complete[key[0]] if m not in set(tables[1].columns)]
        if missing:
            raise _model_error(
                release,
                tables,
                missing[0],
                f"model {missing[0]!r} is missing, though the other {key[0]} files have it",
            )


def _model_error(release, tables, model, problem):
    path, table = tables[0], tables[1]
    row = "header" if path.suffix == ".csv" else next(iter(table.attrs["row"].values()))
    return file_error(
        release.shown(path), problem, row=row, column=table.attrs["column"].format(model)
    )
