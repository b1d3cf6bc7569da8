"""Importer of OpenCompass output folders (``opencompass CONFIG -w OUT --dump-eval-details``).

A run writes ``OUT/<timestamp>/`` holding ``results/<model abbr>/<dataset abbr>.json``
(the evaluator's aggregate, e.g. ``{"score": 66.67}``, and with
``--dump-eval-details`` a ``details`` list with each example's ``correct``),
``predictions/...`` and ``summary/summary_<timestamp>.csv``. The mapping and
the options are described in ``docs/importers/opencompass.md``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from rankstats import _text

from . import file_error
from ._paths import as_paths, found_in, readable_file
from ._scored_rows import NOT_FINITE, SCORE_OPTIONS, label, latest_runs, number, to_cube
from ._summary import ImportSummary

__all__ = ["OPTIONS", "load"]

_NAME = "opencompass"
_TIMESTAMP = re.compile(r"\d{8}_\d{6}")
RUNS = ("error", "latest")
_NOT_METRICS = {"details", "type"}


def _pattern_option(function, name, value):
    if value is None or (isinstance(value, str) and value.strip() in ("", "null")):
        return None
    return _text.regex(groups=("task", "template"))(function, name, value)


OPTIONS = {
    "metric": _text.optional(_text.text),
    "aggregated": _text.boolean,
    "template_pattern": _pattern_option,
    "runs": _text.choice(*RUNS),
    "model": _text.optional(_text.text),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    metric: str | None = None,
    aggregated: bool = False,
    template_pattern: str | None = None,
    runs: str = "error",
    model: str | None = None,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read OpenCompass results into a cube of per-example scores, or of the aggregates.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Results files (``results/<model>/<dataset>.json``) or folders searched
        for them (a work dir, a run's ``<timestamp>`` folder or its
        ``results`` folder).
    metric : str, optional
        With ``aggregated``, the key of the results file read (``score``,
        ``accuracy``, ...); by default the file's only numeric key.
    aggregated : bool, default False
        Read the evaluator's aggregate (as OpenCompass reports it, usually a
        percentage) instead of each example's ``correct``.
    template_pattern : str, optional
        A regular expression with the groups ``task`` and ``template``
        matched against each dataset abbreviation: the datasets it matches
        are prompt variants of one task (``(?P<task>.+)_(?P<template>plain|qa)``).
        By default each dataset is a task with the template ``default``.
    runs : {"error", "latest"}, default "error"
        One model and dataset in several runs (``<timestamp>`` folders):
        raise, or keep the latest run's.
    model : str, optional
        The model of every file read; by default the model abbreviation
        (the results file's folder).
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; inferred from the values when omitted.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score is: an error naming the file, entry and
        field, or a missing score (counted in the summary). NaN is always
        missing: skipped and counted.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)`` (no ``sample`` when
        ``aggregated``); ``sample_id`` is the example's index (its
        ``example_abbr`` without the dataset's prefix), else its position.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not OpenCompass output, has no ``details`` (it was written
        without ``--dump-eval-details``), or a value is not a number; the
        message names the file, entry and field.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import opencompass
    >>> out = Path(opencompass.__file__).parents[2] / "tests/data/opencompass/out"
    >>> cube = opencompass.load(out, template_pattern=r"(?P<task>.+)_(?P<template>plain|qa)")
    >>> cube.template_id.values.tolist(), cube.score.mean("sample").values.round(4).tolist()
    ([['plain', 'qa']], [[[0.6667, 0.5]]])
    """
    pattern = _pattern_option(_NAME, "template_pattern", template_pattern)
    pattern = re.compile(pattern) if pattern else None
    files = _results_files(as_paths(paths))
    summary = ImportSummary(_NAME, [str(f) for f in files])
    frames = []
    for path in files:
        data = _read(path)
        name = model or label(path.parent.name, path, column="model (the results folder)")
        dataset = label(path.stem, path, column="dataset (the file name)")
        task, template = _split(dataset, pattern)
        run = _run_of(path)
        if aggregated:
            frame = _aggregate(path, data, metric, non_finite, summary)
        else:
            frame = _details(path, data, non_finite, summary, dataset)
        frames.append(frame.assign(model=name, task=task, template=template, run=run))
    frame = pd.concat(frames, ignore_index=True)
    frame = latest_runs(frame, runs, summary, "dataset")
    if aggregated:
        summary.note("the scores are the aggregates OpenCompass reports (usually percentages)")
        # OpenCompass's evaluators report the aggregate alone; its samples give the spread
        summary.standard_errors = (
            "none written (OpenCompass reports no standard error; import the per-example "
            "details, without aggregated=true, for intervals)"
        )
    return to_cube(
        frame,
        summary,
        metric=metric or ("score" if aggregated else "correct"),
        score_kind=score_kind,
        aggregated=aggregated,
        source=f"OpenCompass results ({len(files)} files)",
        attrs={"template_pattern": pattern.pattern if pattern else ""},
    )


def _results_files(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if path.is_dir():
            inside = found_in(path, lambda name: name.endswith(".json"))
            inside = [p for p in inside if p.parent.parent.name == "results"]
            if not inside:
                raise file_error(
                    path, "not OpenCompass output: no results/<model>/<dataset>.json below it"
                )
            found.extend(inside)
        else:
            found.append(readable_file(path))
    return found


def _read(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise file_error(
            path, f"not an OpenCompass results file: not valid JSON ({error})"
        ) from None
    except OSError as error:
        raise file_error(path, f"cannot be read ({error.strerror or error})") from None
    if not isinstance(data, dict):
        raise file_error(path, "not an OpenCompass results file: not a JSON object")
    if "error" in data and len(data) <= 2:
        raise file_error(
            path, f"OpenCompass recorded an error, not scores: {data['error']!r}", column="error"
        )
    return data


def _split(dataset: str, pattern) -> tuple[str, str]:
    match = pattern.fullmatch(dataset) if pattern is not None else None
    return (match["task"], match["template"]) if match else (dataset, "default")


def _run_of(path: Path) -> str:
    """The run's ``<timestamp>`` folder (``OUT/<timestamp>/results/<model>/<dataset>.json``)."""
    run = path.parent.parent.parent.name
    return run if _TIMESTAMP.fullmatch(run) else ""


def _aggregate(path: Path, data: dict, metric, non_finite, summary) -> pd.DataFrame:
    keys = [
        k
        for k, v in data.items()
        if k not in _NOT_METRICS and isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    if metric is None:
        if len(keys) != 1:
            raise file_error(
                path,
                f"reports {len(keys)} numbers ({', '.join(keys) or 'none'}); "
                "choose one with metric=NAME",
            )
        metric = keys[0]
    if metric not in data:
        raise file_error(
            path, f"reports no {metric!r} (it reports: {', '.join(keys)})", column=metric
        )
    value = number(data[metric], path, column=metric, non_finite=non_finite)
    if value is None:
        summary.skip(NOT_FINITE)
        return pd.DataFrame(columns=["score", "file", "row"])
    return pd.DataFrame({"score": [value], "file": [str(path)], "row": [None]})


def _details(path: Path, data: dict, non_finite, summary, dataset: str) -> pd.DataFrame:
    details = data.get("details")
    if details is None:
        raise file_error(
            path,
            "the results file has no per-example 'details' (run "
            "opencompass with --dump-eval-details, or pass aggregated=true)",
            column="details",
        )
    if isinstance(details, dict):  # some evaluators key the details by position
        details = list(details.values())
    if not isinstance(details, list):
        raise file_error(path, "'details' is not a list", column="details")
    rows = {"sample": [], "score": [], "row": []}
    for row, entry in enumerate(details, start=1):
        if not isinstance(entry, dict):
            raise file_error(path, "the entry is not a JSON object", row=row, column="details")
        value, field = _correct(entry, path, row, non_finite)
        if value is None:
            summary.skip(NOT_FINITE)
            continue
        sample = entry.get("example_abbr", row - 1)
        if "example_abbr" not in entry:
            # no id: the position stands for the example, which holds only while every
            # prompt variant lists the examples in one order
            summary.note(
                f"{path}: examples without 'example_abbr' are identified by their "
                "position in 'details'"
            )
        if isinstance(sample, str) and sample.startswith(f"{dataset}_"):
            # <dataset abbr>_<index>: the index, shared by the prompt variants of one dataset
            sample = sample[len(dataset) + 1 :]
        rows["sample"].append(label(sample, path, row=row, column=f"details.{field}"))
        rows["score"].append(value)
        rows["row"].append(row)
    return pd.DataFrame(rows).assign(file=str(path))


def _correct(entry: dict, path: Path, row: int, non_finite):
    for field in ("correct", "is_correct", "score"):
        if field not in entry:
            continue
        value = entry[field]
        if isinstance(value, list):  # one per prediction (n > 1): their mean
            if not value:
                raise file_error(path, "an empty list", row=row, column=f"details.{field}")
            values = [
                number(v, path, row=row, column=f"details.{field}", non_finite=non_finite)
                for v in value
            ]
            if any(v is None for v in values):
                return None, field
            return math.fsum(values) / len(values), field
        return number(value, path, row=row, column=f"details.{field}", non_finite=non_finite), field
    raise file_error(
        path, "the entry has none of 'correct', 'is_correct' or 'score'", row=row, column="details"
    )
