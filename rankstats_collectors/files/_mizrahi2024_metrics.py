"""Reader of the release's ``metric results/`` CSVs (the published MaxP, AvgP and CPS)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from . import file_error
from ._mizrahi2024_files import METRICS, Release
from ._tables import numbers, read_csv, repeated_column, require_columns

METRIC_NAMES = {"maxp": "MaxP", "avgp": "AvgP", "cps": "CPS"}
FILTERINGS = {"none": "no filtering", "correct": "correct paraphrases only"}
OPENAI_METRICS = ("maxp", "avgp")
PROMPTS = {"original prompts avg.": "original", "all prompts avg": "all"}
BENCHMARKS = {"lmentry": "LMentry", "big-bench-hard": "BBH", "big-bench-lite": "BBL"}


def open_source_file(metric: str, filtering: str) -> str:
    """The path, inside the release, of one open-source metric CSV."""
    return (
        f"{METRICS}/open-source models/open-source models "
        f"{METRIC_NAMES[metric]} ({FILTERINGS[filtering]}).csv"
    )


def openai_file(metric: str) -> str:
    """The path, inside the release, of one OpenAI metric CSV."""
    return f"{METRICS}/open-ai models/open-ai models estimated {METRIC_NAMES[metric]}.csv"


def task_id(label: str) -> str:
    """``"all words from category "`` -> ``"all_words_from_category"``."""
    return "_".join(str(label).split())


def _tasks(frame: pd.DataFrame, file: str, rows, columns) -> pd.DataFrame:
    """``task`` (id), ``task_label`` and ``benchmark`` per row; ids must be unique."""
    labels = frame[columns["task"]].str.strip()
    tasks = pd.DataFrame(
        {
            "task": labels.map(task_id).to_numpy(),
            "task_label": labels.to_numpy(),
            "benchmark": frame[columns["benchmark"]]
            .str.strip()
            .map(lambda b: BENCHMARKS.get(b, b))
            .to_numpy(),
        }
    )
    empty = (tasks["task"] == "").to_numpy()
    repeated = tasks["task"].duplicated().to_numpy()
    if empty.any() or repeated.any():
        row = int(np.flatnonzero(empty | repeated)[0])
        problem = "empty task name" if empty[row] else f"task {tasks['task'][row]!r} repeats"
        raise file_error(file, problem, row=rows[row], column=columns["task"])
    return tasks


def read_open_source(release: Release, name: str):
    """``(tasks, values)``: the task table and a ``(task × model)`` frame (NaN = not run)."""
    path, name = release.root / name, release.shown(name)
    frame = read_csv(path, name)
    columns = {str(c).strip(): c for c in frame.columns}
    require_columns(columns, ["benchmark", "task"], name)
    models = [c for c in frame.columns if str(c).strip() not in ("benchmark", "task")]
    if repeated_column(models) is not None or not models:
        raise file_error(
            name,
            "the header repeats this model" if models else "no model columns",
            row="header",
            column=repeated_column(models),
        )
    rows = np.arange(1, len(frame) + 1)
    tasks = _tasks(frame, name, rows, columns)
    values = numbers(frame[models], name, rows=rows, what="a metric value", allow_empty=True)
    return tasks, pd.DataFrame(values, index=tasks["task"], columns=[m.strip() for m in models])


def read_openai(release: Release, name: str) -> pd.DataFrame:
    """A ``(task × (model, prompts))`` frame from a CSV with a two-row header."""
    path, name = release.root / name, release.shown(name)
    frame = read_csv(path, name, header=None)
    if len(frame) < 3 or frame.shape[1] < 3:
        raise file_error(name, "expected two header rows, then rows of benchmark, task, values")
    first, second = frame.iloc[0].str.strip(), frame.iloc[1].str.strip()
    for column, label in ((0, "benchmark"), (1, "task")):
        if second[column] != label:
            raise file_error(
                name,
                f"{second[column]!r} where {label!r} belongs",
                row="header 2",
                column=f"column {column + 1}",
            )
    unknown = ~second.iloc[2:].isin(list(PROMPTS)) | (first.iloc[2:] == "")
    if unknown.any():
        column = int(np.flatnonzero(unknown.to_numpy())[0]) + 2
        raise file_error(
            name,
            f"a model (header 1) over {sorted(PROMPTS)} (header 2) belongs "
            f"here, not {first[column]!r} / {second[column]!r}",
            row="header",
            column=f"column {column + 1}",
        )
    body = frame.iloc[2:].reset_index(drop=True)
    body.columns = [f"column {i + 1}" for i in range(frame.shape[1])]
    rows = np.arange(1, len(body) + 1)
    tasks = _tasks(body, name, rows, {"benchmark": "column 1", "task": "column 2"})
    values = numbers(body.iloc[:, 2:], name, rows=rows, what="a metric value", allow_empty=True)
    keys = pd.MultiIndex.from_arrays(
        [first.iloc[2:], second.iloc[2:].map(PROMPTS)], names=["openai_model", "prompts"]
    )
    if keys.has_duplicates:
        column = int(np.flatnonzero(keys.duplicated())[0]) + 2
        raise file_error(
            name,
            "the header repeats this (model, prompts) pair",
            row="header",
            column=f"column {column + 1}",
        )
    return pd.DataFrame(values, index=tasks["task"], columns=keys)


def _same_labels(reference, labels, what: str, name: str, first: str) -> None:
    labels = list(labels)
    extra = [label for label in labels if label not in set(reference)]
    missing = [label for label in reference if label not in set(labels)]
    if extra or missing:
        if what == "model":
            where = {"row": "header", "column": (extra or missing)[0]}
        else:
            where = {"row": labels.index(extra[0]) + 1 if extra else None, "column": "task"}
        raise file_error(
            name,
            f"its {what}s differ from those of {first!r} "
            f"(extra: {extra or 'none'}; missing: {missing or 'none'})",
            **where,
        )


def metric_results(release: Release) -> xr.Dataset:
    """The published metrics as one Dataset (see :func:`load_metric_results`)."""
    names = {(m, f): open_source_file(m, f) for m in METRIC_NAMES for f in FILTERINGS}
    read = {key: read_open_source(release, name) for key, name in names.items()}
    first_key = next(iter(read))
    tasks, reference = read[first_key]
    for key, (_, values) in read.items():
        _same_labels(
            reference.index,
            values.index,
            "task",
            release.shown(names[key]),
            release.shown(names[first_key]),
        )
        _same_labels(
            reference.columns,
            values.columns,
            "model",
            release.shown(names[key]),
            release.shown(names[first_key]),
        )
    stacked = np.stack(
        [
            np.stack(
                [
                    read[(m, f)][1].loc[reference.index, reference.columns].to_numpy().T
                    for f in FILTERINGS
                ],
                axis=-1,
            )
            for m in METRIC_NAMES
        ],
        axis=-2,
    )
    openai = {m: read_openai(release, openai_file(m)) for m in OPENAI_METRICS}
    for metric, frame in openai.items():
        outside = frame.index.difference(reference.index)
        if len(outside):
            raise file_error(
                release.shown(openai_file(metric)),
                f"task {outside[0]!r} is in no open-source metric file",
                column="task",
            )
    models = openai["maxp"].columns.get_level_values(0).unique()
    estimate = np.full((len(models), len(reference.index), len(METRIC_NAMES), len(PROMPTS)), np.nan)
    for position, metric in enumerate(METRIC_NAMES):
        if metric in openai:
            full = openai[metric].reindex(
                index=reference.index,
                columns=pd.MultiIndex.from_product([models, list(PROMPTS.values())]),
            )
            estimate[:, :, position, :] = (
                full.to_numpy()
                .reshape(len(reference.index), len(models), len(PROMPTS))
                .transpose(1, 0, 2)
            )
    return _dataset(tasks, reference.columns, models, stacked, estimate)


def _dataset(tasks, models, openai_models, values, estimate) -> xr.Dataset:
    text = lambda values: np.asarray(values, dtype=object)  # noqa: E731
    return xr.Dataset(
        {
            "value": (
                ("model", "task", "metric", "filtering"),
                values,
                {
                    "long_name": "published metric value, open-source models",
                    "filtering": "none: every template; correct: templates marked correct",
                },
            ),
            "openai_estimate": (
                ("openai_model", "task", "metric", "prompts"),
                estimate,
                {
                    "long_name": "published estimated metric value, OpenAI models",
                    "prompts": "original: the benchmark's original templates; all: every template",
                },
            ),
        },
        coords={
            "model": text(models),
            "task": text(tasks["task"]),
            "metric": text(list(METRIC_NAMES)),
            "filtering": text(list(FILTERINGS)),
            "openai_model": text(openai_models),
            "prompts": text(list(PROMPTS.values())),
            "benchmark": ("task", text(tasks["benchmark"])),
            "task_label": ("task", text(tasks["task_label"])),
        },
    )
