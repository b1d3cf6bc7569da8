"""Importer of Open LLM Leaderboard details: lm-evaluation-harness per-sample logs as Parquet.

The leaderboard publishes, per model, the per-sample logs lm-evaluation-harness
wrote (``samples_<task>_<date>.jsonl``), also served as Parquet, one file per
task and run, with one column per log field (``doc_id``, ``filter``,
``metrics``, one column per metric, ...). The files are read in batches with
pyarrow (``pip install "rankstats[io]"``), only the columns needed. The
mapping and the options are described in ``docs/importers/open-llm-leaderboard.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

import rankstats_collectors
from rankstats import _text

from . import file_error
from ._lm_eval_files import DATE
from ._paths import files_in
from ._scored_rows import NAN_SCORE, NOT_FINITE, SCORE_OPTIONS, label, to_cube
from ._summary import ImportSummary

__all__ = ["OPTIONS", "load"]

_NAME = "open_llm_leaderboard"
_FILE = re.compile(rf"samples_(?P<task>.+?)_(?P<date>{DATE})(?:[^/\\]*)\.parquet")
TEMPLATE_PATTERN = r"(?P<task>.+)_prompt_(?P<template>\d+)"
REPEATS = ("latest", "error")


def _pattern_option(function, name, value):
    if value is None or (isinstance(value, str) and value.strip() in ("", "null")):
        return None
    return _text.regex(groups=("task", "template"))(function, name, value)


OPTIONS = {
    "metric": _text.optional(_text.text),
    "filter": _text.optional(_text.text),
    "model": _text.optional(_text.text),
    "task": _text.optional(_text.text),
    "template_pattern": _pattern_option,
    "repeats": _text.choice(*REPEATS),
    "batch_size": _text.integer(low=1),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    metric: str | None = None,
    filter: str | None = None,
    model: str | None = None,
    task: str | None = None,
    template_pattern: str | None = TEMPLATE_PATTERN,
    repeats: str = "latest",
    batch_size: int = 65536,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read Open LLM Leaderboard details (Parquet per-sample logs) into a cube.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Parquet files (``samples_<task>_<date>.parquet``), or folders searched
        for ``.parquet`` files.
    metric : str, optional
        The metric column read (``acc_norm``, ``exact_match``, ...); by
        default the one the ``metrics`` column names, when it names one.
    filter : str, optional
        The filter whose rows are read, when the file holds several
        (``strict-match``, ``flexible-extract``); the other rows are
        skipped and counted.
    model : str, optional
        The model; by default the folder's name when it is ``<org>__<model>``.
    task : str, optional
        The task of files whose name does not carry one.
    template_pattern : str or None, default ``TEMPLATE_PATTERN``
        As for the ``lm_eval`` importer: tasks it matches are prompt variants
        of one task.
    repeats : {"latest", "error"}, default "latest"
        Several runs of one model on one task (files of different dates):
        keep the latest, or raise.
    batch_size : int, default 65536
        Rows read at a time.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; inferred from the values when omitted.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score is: an error naming the file and row, or a
        missing score (counted in the summary). NaN is always missing.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``, the sample being the
        ``doc_id``.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not Parquet, lacks ``doc_id`` or the metric, holds several
        filters without ``filter``, or a score is not a finite number; the
        message names the file, row and column.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import open_llm_leaderboard as oll
    >>> data = Path(oll.__file__).parents[2] / "tests/data/open_llm_leaderboard"
    >>> cube = oll.load(data / "org__dummy-b")
    >>> cube.template_id.values.tolist(), cube.score.mean("sample").values.tolist()
    ([['1', '2']], [[[0.5, 0.375]]])
    """
    pq = rankstats_collectors.require("pyarrow.parquet", "io")
    pattern = _pattern_option(_NAME, "template_pattern", template_pattern)
    pattern = re.compile(pattern) if pattern else None
    files = files_in(paths, (".parquet",))
    summary = ImportSummary(_NAME, [str(f) for f in files])
    frames, metrics = [], set()
    for path in files:
        match = _FILE.fullmatch(path.name)
        lm_task = (match["task"] if match else None) or task
        if lm_task is None:
            raise file_error(
                path,
                "the file name does not say which task it is of "
                "(samples_<task>_<date>.parquet); pass task=NAME",
            )
        name = model or _folder_model(path)
        if name is None:
            raise file_error(
                path, "no model: the folder is not named <org>__<model>; pass model=NAME"
            )
        frame, used = _read(pq, path, metric, filter, batch_size, non_finite, summary)
        metrics.add(used)
        split = pattern.fullmatch(lm_task) if pattern else None
        frames.append(
            frame.assign(
                model=label(name, path, column="model"),
                task=label(split["task"] if split else lm_task, path, column="task"),
                template=split["template"] if split else "default",
                date=(match["date"] if match else "") or "",
            )
        )
    if len(metrics) > 1:
        raise file_error(
            ", ".join(summary.files[:3]),
            f"the files hold different metrics "
            f"({', '.join(sorted(metrics))}); "
            "choose one with metric=NAME",
        )
    frame = _latest(pd.concat(frames, ignore_index=True), repeats, summary)
    return to_cube(
        frame,
        summary,
        metric=metrics.pop(),
        score_kind=score_kind,
        source=f"Open LLM Leaderboard details ({len(files)} Parquet files)",
    )


def _folder_model(path: Path) -> str | None:
    for folder in (path.parent, path.parent.parent):
        name = folder.name.removeprefix("details_").removesuffix("-details")
        if "__" in name:
            return name.replace("__", "/", 1)
    return None


def _read(pq, path: Path, metric, filter_, batch_size, non_finite, summary):
    import pyarrow as pa

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise file_error(path, f"not a Parquet file ({error})") from None
    names = parquet.schema_arrow.names
    if "doc_id" not in names:
        raise file_error(
            path,
            "not an lm-evaluation-harness per-sample log: no column "
            f"'doc_id' (it has: {', '.join(names[:12])})",
            column="doc_id",
        )
    if metric is None:
        metric = _only_metric(parquet, path, names)
    if metric not in names:
        raise file_error(
            path, f"no column {metric!r} (it has: {', '.join(names[:16])})", column=metric
        )
    columns = ["doc_id", metric] + (["filter"] if "filter" in names else [])
    parts, row = [], 0
    try:
        for batch in parquet.iter_batches(batch_size=batch_size, columns=columns):
            part = batch.to_pandas()
            part["row"] = np.arange(row + 1, row + 1 + len(part))
            row += len(part)
            parts.append(part)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise file_error(path, f"not a readable Parquet file ({error})") from None
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    if "filter" in frame:
        filters = pd.unique(frame["filter"])
        if filter_ is None and len(filters) > 1:
            raise file_error(
                path,
                f"the log holds several filters ({', '.join(map(str, filters))}"
                "); choose one with filter=NAME",
                column="filter",
            )
        if filter_ is not None:
            keep = frame["filter"] == filter_
            summary.skip(f"a row of another filter than {filter_!r}", int((~keep).sum()))
            frame = frame.loc[keep]
    scores = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(scores) & frame[metric].notna().to_numpy()
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise file_error(
            path,
            f"the score {frame[metric].iloc[at]!r} is not a number (a "
            "corpus-level metric logs items, not scores)",
            row=int(frame["row"].iloc[at]),
            column=metric,
        )
    infinite = np.isinf(scores)
    if infinite.any():
        if non_finite != "missing":
            at = int(np.flatnonzero(infinite)[0])
            raise file_error(
                path,
                f"the score {scores[at]} is not a finite number (pass "
                "non_finite=missing to read such scores as missing)",
                row=int(frame["row"].iloc[at]),
                column=metric,
            )
        summary.skip(NOT_FINITE, int(infinite.sum()))
    missing = np.isnan(scores) | infinite
    summary.skip(NAN_SCORE, int((np.isnan(scores)).sum()))
    samples = _doc_ids(frame, path)
    out = pd.DataFrame(
        {
            "sample": samples[~missing],
            "score": scores[~missing],
            "row": frame["row"].to_numpy()[~missing],
            "file": str(path),
        }
    )
    return out, metric


def _doc_ids(frame: pd.DataFrame, path: Path) -> np.ndarray:
    """The ``doc_id`` of each row as text; one that is not a whole number is an error.

    lm-evaluation-harness numbers the documents of a task 0, 1, 2, ...; a
    ``doc_id`` such as 0.7 is refused rather than cut to 0, which would
    merge it with document 0.
    """
    raw = frame["doc_id"]
    doc = pd.to_numeric(raw, errors="coerce")
    values = doc.to_numpy(dtype=float)
    bools = (
        np.array([isinstance(v, (bool, np.bool_)) for v in raw.tolist()], dtype=bool)
        if len(raw)
        else np.zeros(0, bool)
    )
    bad = ~np.isfinite(values) | (values != np.round(values)) | bools
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        value = raw.iloc[at]
        value = value.item() if isinstance(value, np.generic) else value
        raise file_error(
            path,
            f"the doc_id {value!r} is not a whole number (lm-evaluation-"
            "harness numbers the documents 0, 1, 2, ...)",
            row=int(frame["row"].iloc[at]),
            column="doc_id",
        )
    return values.astype(np.int64).astype(str)


def _only_metric(parquet, path: Path, names) -> str:
    if "metrics" in names:
        first = parquet.read_row_group(0, columns=["metrics"]).column(0).to_pylist()[:1]
        if first and isinstance(first[0], list) and len(first[0]) == 1:
            return first[0][0]
    raise file_error(
        path,
        "which metric? the file does not name exactly one in its "
        "'metrics' column; pass metric=NAME",
    )


def _latest(frame: pd.DataFrame, repeats: str, summary) -> pd.DataFrame:
    keys = ["model", "task", "template"]
    several = frame.groupby(keys)["date"].transform("nunique") > 1
    if several.any():
        first = frame.loc[several].iloc[0]
        if repeats == "error" or (frame.loc[several, "date"] == "").any():
            raise file_error(
                first["file"],
                f"model {first['model']!r} ran task "
                f"{first['task']!r} more than once; pass "
                "repeats=latest (runs dated by their file names)",
            )
        latest = frame.groupby(keys)["date"].transform("max")
        keep = ~several | (frame["date"] == latest)
        summary.skip("an older run of the same model and task", int((~keep).sum()))
        frame = frame.loc[keep]
    return frame.drop(columns="date").reset_index(drop=True)
