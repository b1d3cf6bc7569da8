"""Importer of lm-evaluation-harness (0.4.x) results: per-sample logs, or reported aggregates.

``lm_eval ... --output_path OUT --log_samples`` writes a results file
(``results_<date>.json``: the aggregate of every metric, per task and filter,
with the run's settings) and one per-sample log per task
(``samples_<task>_<date>.jsonl``). :func:`load` turns the logs into a cube
of per-sample scores, or, with ``aggregated=True``, the results files into a
cube of the aggregates they report. The mapping, the options and the pitfalls
are described in ``docs/importers/lm-eval.md``.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

import rankstats
from rankstats import _text

from ._lm_eval_files import Results, SamplesFile, expand, folder_model, sibling_results
from ._lm_eval_read import count_records, line_error, records
from ._lm_eval_results import LAYOUT_03
from ._lm_eval_samples import metrics_of, read_log
from ._lm_eval_table import LAYOUT_TABLE
from ._paths import few
from ._scored_rows import NAN_SCORE, NOT_FINITE, SCORE_OPTIONS, check_range, kind_of, label
from ._summary import ImportSummary

__all__ = ["OPTIONS", "REPEATS", "TEMPLATE_FROM", "TEMPLATE_PATTERN", "describe", "load"]

TEMPLATE_PATTERN = r"(?P<task>.+)_prompt_(?P<template>\d+)"
REPEATS = ("latest", "all", "error")
TEMPLATE_FROM = ("task", "file")
_DEFAULT_TEMPLATE = "default"
_IMPORTER = "lm_eval"


def _pattern_option(function, name, value):
    """A regular expression with the groups task and template; None (or empty text) for none."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "null")):
        return None
    return _text.regex(groups=("task", "template"))(function, name, value)


OPTIONS = {
    "metric": _text.optional(_text.text),
    "filter": _text.optional(_text.text),
    "model": _text.optional(_text.text),
    "task": _text.optional(_text.text),
    "tasks": _text.optional(_text.text_list),
    "template_pattern": _pattern_option,
    "repeats": _text.choice(*REPEATS),
    "aggregated": _text.boolean,
    "higher_is_better": _text.optional(_text.boolean),
    "template_from": _text.text,
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_IMPORTER, OPTIONS)
def load(
    paths,
    *,
    metric: str | None = None,
    filter: str | None = None,
    model: str | None = None,
    task: str | None = None,
    tasks=None,
    template_pattern: str | None = TEMPLATE_PATTERN,
    repeats: str = "latest",
    aggregated: bool = False,
    higher_is_better: bool | None = None,
    template_from: str = "task",
    score_kind: str | None = None,
    non_finite: str = "error",
) -> xr.Dataset:
    """Read lm-evaluation-harness output into a cube.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Per-sample logs (``samples_<task>_<date>.jsonl``, or ``.json``
        holding JSON lines or one JSON array), results files
        (``results_<date>.json``; ``<output_path>_<date>.json`` from 0.4.9;
        any ``.json`` named on its own, such as a 0.3 results file), console
        tables lm-evaluation-harness printed (``.md``, ``.txt`` or ``.log``,
        named on their own; read as aggregates), or folders searched deeply
        for logs and results files.
    metric : str, optional
        The metric to import (``acc``, ``exact_match``, ...). Needed when a
        log records several; a log that does not record it is skipped (and
        said so in the summary).
    filter : str, optional
        The filter whose responses to score (``none``, ``strict-match``,
        ``flexible-extract``, ...). Needed when a log holds several: such a
        task logs every document once per filter. A log without it is
        skipped (and said so in the summary).
    model : str, optional
        The model of every file read. By default a log's model is the one its
        run's results file names (same folder, same date), else its folder's
        name when that is lm-evaluation-harness's ``org__name``.
    task : str, optional
        The task of logs whose file name does not carry one (the first 0.4
        releases named logs after the model).
    tasks : str or list of str, optional
        Read only these lm-evaluation-harness tasks (shell patterns such as
        ``"mmlu_*"``); the others are skipped.
    template_pattern : str or None, default ``TEMPLATE_PATTERN``
        A regular expression with the groups ``task`` and ``template``
        matched against each task name: the tasks it matches are prompt
        variants of one task, one template each
        (``masakhaner_luo_prompt_3`` -> task ``masakhaner_luo``, template
        ``3``). Tasks it does not match (or all, with None) have the single
        template ``"default"``.
    repeats : {"latest", "all", "error"}, default "latest"
        Several runs of one model on one task (logs or results files of
        different dates), alike with and without ``aggregated``: keep the
        latest run's, keep every run as its own template (``1|run=2``, the
        runs numbered from the oldest, ``template_run`` the number), or
        raise.
    aggregated : bool, default False
        Import the aggregates the results files report (a cube without a
        ``sample`` dimension) instead of the per-sample logs.
    higher_is_better : bool, optional
        Whether higher scores are better; by default what the results files
        say of the metric, else True.
    template_from : str, default "task"
        Where the template of an aggregate comes from: ``"task"`` (the task
        name, split by ``template_pattern``), ``"file"`` (the stem of the
        file it was read from: one file per prompt variant), or the name of
        a column of a console table (``"n-shot"``, ``"Filter"``). Only
        ``"task"`` applies to per-sample logs.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; a score outside its range is an error naming
        the file and line. Inferred from the values when omitted (never
        ``binary`` for aggregates), and the summary says so.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score (JSON ``Infinity``, ``1e400``) is: an error
        naming the file, line and field, or a missing score (counted in the
        summary). NaN is always missing.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)`` (without ``sample`` when
        ``aggregated``). ``sample_id(task, sample)`` is the document's
        ``doc_hash`` where the logs carry one (else its ``doc_id``),
        ``sample_doc_id(task, sample)`` its ``doc_id``;
        ``template_lm_eval_task(task, template)`` names the task each
        template was run as, ``template_text`` its ``doc_to_text`` where a
        results file gives it, and ``lm_eval_filter(task)`` the filter. With
        ``aggregated``, ``standard_error(model, task, template)`` holds the
        ``"<metric>_stderr,<filter>"`` the results files write beside each
        score (NaN where they write ``"N/A"`` or none; no variable when no
        score has one). The attribute ``import_summary`` says what was read
        and skipped, and where the standard errors came from.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not of the format, a field is missing or not a number, a
        metric is corpus-level (its per-sample value is a ``[gold, pred]``
        pair), a document is logged twice with different scores, filters or
        runs would be mixed, no model can be named, or a standard error is
        negative or infinite; the message names the file, line and field.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import lm_eval
    >>> data = Path(lm_eval.__file__).parents[2] / "tests" / "data" / "fixtures" / "lm_eval"
    >>> cube = lm_eval.load(data / "asdiv")
    >>> dict(cube.score.sizes)
    {'model': 1, 'task': 1, 'template': 1, 'sample': 50}
    >>> cube.model.values.tolist(), cube.attrs["metric"]
    (['meta-llama/Meta-Llama-3-8B-Instruct'], 'acc')
    >>> float(cube.score.mean())
    0.92
    >>> print(cube.attrs["import_summary"])  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    lm_eval: read 50 rows from 1 file (.../samples_asdiv_2024-08-21T03-44-09.494230.jsonl):
      kept 50, skipped 0
      1 model, 1 task, 1 template (max per task), 50 samples (max per task)
      skipped nothing
      note: score_kind 'binary' was inferred from the values (all 50 scores are 0 or 1); pass
      score_kind=proportion or continuous to set it
    """
    pattern = _compile(template_pattern)
    wanted = [tasks] if isinstance(tasks, str) else tasks
    logs, results = expand(paths, task=task)
    read = results if aggregated else logs
    summary = ImportSummary(
        _IMPORTER, [source.file for source in read] or [str(p) for p in _text_paths(paths)]
    )
    if aggregated:
        frame, context = _aggregated_rows(
            results,
            summary,
            metric=metric,
            filter_=filter,
            model=model,
            wanted=wanted,
            repeats=repeats,
            non_finite=non_finite,
            template_from=template_from,
        )
    else:
        tables = [run.file for run in results if run.layout == LAYOUT_TABLE]
        if tables:
            raise line_error(
                tables[0], f"read as {LAYOUT_TABLE}: it holds aggregates only; pass aggregated=true"
            )
        if template_from != "task":
            raise line_error(
                ", ".join(summary.files),
                f"template_from={template_from!r} applies to aggregates only (aggregated=true)",
            )
        frame, context = _sample_rows(
            logs,
            results,
            summary,
            metric=metric,
            filter_=filter,
            model=model,
            wanted=wanted,
            repeats=repeats,
            non_finite=non_finite,
        )
    return _cube(frame, context, summary, pattern, higher_is_better, aggregated, score_kind)


def _text_paths(paths) -> list:
    return (
        [paths]
        if isinstance(paths, (str, bytes)) or not hasattr(paths, "__iter__")
        else list(paths)
    )


def describe(
    paths,
    *,
    model: str | None = None,
    task: str | None = None,
    template_pattern: str | None = TEMPLATE_PATTERN,
) -> pd.DataFrame:
    """What :func:`load` would find in ``paths``: one row per per-sample log.

    Each log is read no further than its first record.

    Parameters
    ----------
    paths, model, task, template_pattern
        As for :func:`load`.

    Returns
    -------
    pandas.DataFrame
        Columns ``file``, ``lm_eval_task`` (the task as run), ``task`` and
        ``template`` (as the template pattern maps it), ``model`` (empty when
        none can be named), ``date`` and ``metrics`` (the metric names of the
        first record, comma-separated).

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import lm_eval
    >>> data = Path(lm_eval.__file__).parents[2] / "tests" / "data" / "fixtures" / "lm_eval"
    >>> found = lm_eval.describe(data / "masakhaner")
    >>> found[["task", "template", "metrics"]]
                 task template metrics
    0  masakhaner_luo        1      f1
    1  masakhaner_luo        2      f1
    2  masakhaner_luo        3      f1
    3  masakhaner_luo        4      f1
    4  masakhaner_luo        5      f1
    """
    pattern = _compile(template_pattern)
    logs, results = expand(paths, task=task)
    known = list(results)
    rows = []
    for source in sorted(logs, key=lambda log: _natural(log.task)):
        run = sibling_results(source, known)
        name = model or (run.model if run else None) or folder_model(source.path) or ""
        first = next((record for _, record in records(source.path, source.file)), {})
        task_name, template = _split_task(source.task, pattern)
        rows.append(
            {
                "file": source.file,
                "lm_eval_task": source.task,
                "task": task_name,
                "template": template,
                "model": name,
                "date": source.date or "",
                "metrics": ", ".join(metrics_of(first)),
            }
        )
    return pd.DataFrame(
        rows, columns=["file", "lm_eval_task", "task", "template", "model", "date", "metrics"]
    )


def _natural(name: str) -> list:
    """Sort key putting ``prompt_2`` before ``prompt_10``."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)
    ]


def _compile(template_pattern: str | None):
    checked = _pattern_option(_IMPORTER, "template_pattern", template_pattern)
    return None if checked is None else re.compile(checked)


def _selected(task: str, wanted) -> bool:
    return wanted is None or any(fnmatch.fnmatchcase(task, glob) for glob in wanted)


@dataclass
class _Run:
    """One run's scores of one model on one lm-evaluation-harness task, from one file."""

    file: str
    date: str | None
    rows: int
    scores: object  # a Log (per-sample) or a row dict (aggregate)
    results: Results | None


def _sample_rows(
    files: list[SamplesFile],
    results: list[Results],
    summary,
    *,
    metric,
    filter_,
    model,
    wanted,
    repeats,
    non_finite,
):
    if not files:
        layouts = sorted({run.layout for run in results})
        found = f" (found {len(results)} file(s) read as {'; '.join(layouts)})" if layouts else ""
        raise line_error(
            few(summary.files),
            f"no per-sample logs among the files{found}; pass "
            "aggregated=true to import results files",
        )
    known = list(results)
    runs: dict[tuple[str, str], list[_Run]] = {}
    for source in sorted(files, key=lambda log: _natural(log.task)):
        if not _selected(source.task, wanted):
            summary.skip(f"task {source.task!r} not among the tasks asked for", _line_count(source))
            continue
        run = sibling_results(source, known)
        name = model or (run.model if run else None) or folder_model(source.path)
        if name is None:
            raise line_error(
                source.file,
                "no model: the log has no results file of the same "
                "date beside it and its folder is not named "
                "<org>__<model>; pass model=NAME",
            )
        name = label(name, source.file, column="model")
        label(source.task, source.file, column="task (from the file name)")
        log = read_log(source, metric=metric, filter_=filter_, non_finite=non_finite)
        for reason, count in log.skipped.items():
            summary.skip(reason, count)
        if log.rows:
            runs.setdefault((name, source.task), []).append(
                _Run(log.file, log.date, log.rows, log, run)
            )
    kept = _resolve_repeats(runs, repeats, summary)
    if not kept:
        raise line_error(", ".join(summary.files), f"no scores to import: {_why(summary)}")
    used = {run.scores.metric for _, run, _ in kept}
    if len(used) > 1:
        raise line_error(
            ", ".join(summary.files),
            "the logs record different metrics "
            f"({', '.join(sorted(used))}); choose one with metric=NAME",
        )
    parts, hashes = [], {}
    for (name, lm_task), run, number in kept:
        log = run.scores
        parts.append(
            pd.DataFrame(
                {
                    "model": name,
                    "lm_task": lm_task,
                    "sample": log.doc_id,
                    "score": log.score,
                    "lm_eval_filter": log.filter,
                    "run": number,
                    "_file": log.file,
                    "_line": log.line,
                }
            )
        )
        summary.keep(log.rows)
        if log.hashes is not None:
            hashes[(name, lm_task, number)] = (log.doc_id, log.hashes, log.file)
    frame = pd.concat(parts, ignore_index=True)
    return frame, {
        "metric": used.pop(),
        "runs": _latest_results(kept),
        "hashes": hashes,
        "filters": sorted({run.scores.filter for _, run, _ in kept}),
    }


def _latest_results(kept) -> dict:
    """The results file of each model and task's latest run (its settings and directions)."""
    found = {}
    for key, run, _ in kept:
        found[key] = run.results
    return found


def _line_count(source: SamplesFile) -> int:
    return count_records(source.path, source.file)


def _why(summary) -> str:
    return (
        "; ".join(f"{n} × {reason}" for reason, n in summary.skipped.most_common())
        or "the files hold no records"
    )


def _resolve_repeats(runs: dict, repeats: str, summary) -> list[tuple[tuple, _Run, int]]:
    """``(key, run, number)`` for the runs kept: number 0 for a lone run, else 1, 2, ... by date.

    ``latest`` keeps the run of the latest date (the others counted as
    skipped), ``all`` keeps every run numbered from the oldest, ``error``
    refuses any repeat; a repeat that cannot be dated, or two of one date, is
    refused unless every run is kept.
    """
    kept = []
    for key, found in runs.items():
        if len(found) == 1:
            kept.append((key, found[0], 0))
            continue
        found = sorted(found, key=lambda run: (run.date or "", run.file))
        if repeats == "all":
            kept.extend((key, run, number) for number, run in enumerate(found, start=1))
            continue
        undated = any(run.date is None for run in found) or found[-1].date == found[-2].date
        if repeats == "error" or undated:
            files = ", ".join(repr(run.file) for run in found)
            if repeats == "error":
                advice = (
                    "pass repeats=latest to keep the latest run, repeats=all to keep "
                    "every run as its own template, or import fewer files"
                )
            else:
                layout = found[-1].results.layout if found[-1].results is not None else ""
                advice = (
                    "which is the latest cannot be told: runs are dated by their file "
                    "names"
                    + (
                        f", and {layout} carries no date"
                        if layout and found[-1].date is None
                        else ""
                    )
                    + "; pass repeats=all to keep every run as its own template, or "
                    "import fewer files"
                )
            raise line_error(
                found[-1].file,
                f"model {key[0]!r} ran task {key[1]!r} more than once ({files}); {advice}",
            )
        for run in found[:-1]:
            summary.skip(f"an older run of the same model and task ({run.file})", run.rows)
        kept.append((key, found[-1], 0))
    return kept


def _aggregated_rows(
    results: list[Results],
    summary,
    *,
    metric,
    filter_,
    model,
    wanted,
    repeats,
    non_finite,
    template_from,
):
    if not results:
        raise line_error(", ".join(summary.files), "no results files among the files")
    runs: dict[tuple[str, str], list[_Run]] = {}
    for run in results:
        name = model or run.model or folder_model(run.path)
        if name is None:
            raise line_error(
                run.file,
                f"read as {run.layout}, which names no model, and its "
                "folder is not named <org>__<model>; pass model=NAME",
            )
        for lm_task, values in run.results.items():
            if lm_task in run.groups:
                summary.skip(f"group {lm_task!r}: an aggregate of tasks, not a task")
                continue
            if not _selected(lm_task, wanted):
                summary.skip(f"task {lm_task!r} not among the tasks asked for")
                continue
            if not isinstance(values, dict):
                raise line_error(
                    run.file, f"not an object (read as {run.layout})", field=f"results.{lm_task}"
                )
            name = label(name, run.file, column="model")
            label(lm_task, run.file, column=f"results.{lm_task}")
            key = _aggregate_key(values, metric, filter_, run, lm_task)
            if key is None:
                summary.skip(
                    f"task {lm_task!r} reports no {metric!r} under the filter {filter_ or 'none'!r}"
                )
                continue
            value = values[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise line_error(
                    run.file,
                    f"{value!r} is not a number (read as {run.layout})",
                    field=f"results.{lm_task}.{key}",
                )
            if math.isnan(value):
                summary.skip(NAN_SCORE)
                continue
            if not math.isfinite(value):
                if non_finite != "missing":
                    raise line_error(
                        run.file,
                        f"{value!r} is not a finite number (pass "
                        "non_finite=missing to read such scores as "
                        "missing)",
                        field=f"results.{lm_task}.{key}",
                    )
                summary.skip(NOT_FINITE)
                continue
            metric_name, _, used = key.partition(",")
            stderr_key = f"{metric_name}_stderr,{used}"
            row = {
                "model": name,
                "lm_task": lm_task,
                "score": float(value),
                "standard_error": _stderr(values, stderr_key, run, lm_task),
                "_stderr_key": _stderr_name(run, stderr_key),
                "lm_eval_filter": used,
                "metric": metric_name,
                "template": _template_of(run, lm_task, key, template_from),
                "_file": run.file,
                "_line": _table_line(run, lm_task, key),
            }
            runs.setdefault((name, lm_task, row["template"]), []).append(
                _Run(run.file, run.date, 1, row, run)
            )
    kept = _resolve_repeats(runs, repeats, summary)
    if not kept:
        raise line_error(", ".join(summary.files), f"no scores to import: {_why(summary)}")
    frame = pd.DataFrame([{**run.scores, "run": number} for _, run, number in kept])
    summary.keep(len(frame))
    frame = _standard_errors(frame, summary)
    used = set(frame.pop("metric"))
    if len(used) > 1:
        raise line_error(
            ", ".join(summary.files),
            "the results report different metrics "
            f"({', '.join(sorted(used))}); choose one with metric=NAME",
        )
    results_of = {key[:2]: run.results for key, run, _ in kept}
    return frame, {
        "metric": used.pop(),
        "runs": results_of,
        "hashes": {},
        "filters": sorted(set(frame["lm_eval_filter"])),
    }


#: How each kind of unreported standard error is counted in the summary.
_NOT_WRITTEN, _NOT_A_NUMBER = "not written", "not a number"


def _stderr(values: dict, key: str, run: Results, lm_task: str):
    """The standard error lm-evaluation-harness wrote beside a score: a float, or why none.

    lm-evaluation-harness writes ``"N/A"`` where it computes none (a
    corpus-level metric such as F1, or ``bootstrap_iters=0``); that, a null
    and a NaN are missing, not errors. A negative or infinite one is an error
    naming the file and field.
    """
    if key not in values:
        return _NOT_WRITTEN
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r}" if isinstance(value, str) else _NOT_A_NUMBER
    value = float(value)
    if math.isnan(value):
        return _NOT_A_NUMBER
    if value < 0 or math.isinf(value):
        raise line_error(
            run.file,
            f"the standard error {value!r} is not a number of at least 0 (read as {run.layout})",
            field=f"results.{lm_task}.{key}",
        )
    return value


def _stderr_name(run: Results, key: str) -> str:
    """The standard error's name as the file writes it."""
    if run.layout == LAYOUT_TABLE:
        return "the Stderr column, rounded as printed"
    if run.layout == LAYOUT_03:
        return key.split(",", 1)[0]  # 0.3 wrote "acc_stderr", read as "acc_stderr,none"
    return key


def _standard_errors(frame: pd.DataFrame, summary) -> pd.DataFrame:
    """The ``standard_error`` column as floats (NaN: none), and the summary's line about it.

    A cube gets the variable only if some score has a standard error.
    """
    raw = frame.pop("standard_error")
    keys = frame.pop("_stderr_key")
    found = raw.map(lambda v: isinstance(v, float))
    if not found.any():
        reported = (raw != _NOT_WRITTEN).any()
        summary.standard_errors = "none written" + (
            ": " + _why_missing(raw, keys) if reported else ""
        )
        return frame
    used = ", ".join(sorted(set(keys[found])))
    summary.standard_errors = f"from {used}"
    if not found.all():
        summary.standard_errors += (
            f"; {int((~found).sum())} of {len(frame)} missing (NaN): "
            + _why_missing(raw[~found], keys[~found])
        )
    return frame.assign(standard_error=raw.where(found, np.nan).astype(float))


def _why_missing(raw: pd.Series, keys: pd.Series) -> str:
    """``"2 × 'N/A' (micro_f1_stderr,none); 1 × not written (acc_stderr,none)"``."""
    counts = pd.DataFrame({"why": raw.astype(str), "key": keys}).value_counts(sort=True)
    parts = []
    for why in pd.unique(counts.index.get_level_values("why")):
        named = counts.xs(why, level="why")
        parts.append(f"{int(named.sum())} × {why} ({', '.join(named.index)})")
    return "; ".join(parts)


def _template_of(run: Results, lm_task: str, key: str, template_from: str) -> str | None:
    """The template ``template_from`` names for an aggregate; None to split the task name."""
    if template_from == "task":
        return None
    if template_from == "file":
        return run.path.name.rsplit(".", 1)[0]
    row = run.columns.get(lm_task, {}).get(key)
    if row is None:
        raise line_error(
            run.file,
            f"template_from={template_from!r} names a column of a "
            f"console table, but this is {run.layout}; use "
            "template_from=task or file",
        )
    if template_from not in row or template_from.startswith("_"):
        names = ", ".join(repr(c) for c in row if c and not c.startswith("_"))
        raise line_error(
            run.file,
            f"the table has no column {template_from!r} (its columns: "
            f"{names}; or template_from=task or file)",
            line=row["_line"],
        )
    value = row[template_from]
    if not value:
        raise line_error(
            run.file,
            f"the template column {template_from!r} is empty",
            line=row["_line"],
            field=template_from,
        )
    return value


def _table_line(run: Results, lm_task: str, key: str):
    row = run.columns.get(lm_task, {}).get(key)
    return None if row is None else row["_line"]


def _aggregate_key(values: dict, metric, filter_, run: Results, lm_task: str) -> str | None:
    """The ``"<metric>,<filter>"`` key to read; None when the task reports no such score."""
    keys = [k for k in values if "," in k and not k.split(",", 1)[0].endswith("_stderr")]
    if metric is not None:
        keys = [k for k in keys if k.split(",", 1)[0] == metric]
    if filter_ is not None:
        keys = [k for k in keys if k.split(",", 1)[1] == filter_]
    if len(keys) == 1:
        return keys[0]
    if not keys:
        return None
    what = "metric and filter" if metric is None else "filter"
    raise line_error(
        run.file,
        f"reports several scores ({', '.join(keys)}; read as "
        f"{run.layout}); choose the {what} with metric=NAME and "
        "filter=NAME",
        field=f"results.{lm_task}",
    )


def _split_task(lm_task: str, pattern) -> tuple[str, str]:
    match = pattern.fullmatch(lm_task) if pattern is not None else None
    if match is None:
        return lm_task, _DEFAULT_TEMPLATE
    return match["task"], match["template"]


def _cube(
    frame: pd.DataFrame,
    context: dict,
    summary,
    pattern,
    higher_is_better,
    aggregated: bool,
    score_kind: str | None,
) -> xr.Dataset:
    names = pd.unique(frame["lm_task"])
    split = {name: _split_task(name, pattern) for name in names}
    given = frame["template"] if "template" in frame else pd.Series(None, index=frame.index)
    given = given.where(given.notna(), None)
    frame["task"] = np.where(
        given.isna(), frame["lm_task"].map(lambda n: split[n][0]), frame["lm_task"]
    )
    frame["template"] = np.where(
        given.isna(), frame["lm_task"].map(lambda n: split[n][1]), given.astype(object)
    )
    runs = frame.pop("run").to_numpy()
    if (runs > 0).any():
        frame["template"] = np.where(
            runs > 0, frame["template"] + "|run=" + runs.astype(str), frame["template"]
        )
        frame["template_run"] = runs
        summary.note(
            "repeats=all: runs of one model and task are templates '<template>|run=N', "
            "numbered from the oldest"
        )
    triples = frame[["lm_task", "task", "template"]].drop_duplicates()
    _require_one_template_each(triples, frame)
    metric = context["metric"]
    better = _higher_is_better(context["runs"], metric, higher_is_better)
    filters = ", ".join(repr(f) for f in context["filters"])
    what = "results files (reported aggregates)" if aggregated else "per-sample logs"
    scores = frame["score"].to_numpy(dtype=float)
    kind = kind_of(scores, summary, score_kind, aggregated=aggregated)
    check_range(
        scores,
        kind,
        lambda at, problem: line_error(
            frame["_file"].iloc[at], problem, line=_line(frame["_line"].iloc[at]), field=metric
        ),
    )
    lookup = {(t.task, t.template): t.lm_task for t in triples.itertuples(index=False)}
    cube = rankstats.from_records(
        frame.drop(columns=["lm_task", "_file", "_line"]),
        score_kind=kind,
        higher_is_better=better,
        metric=metric,
        source=f"lm-evaluation-harness {what}: metric {metric!r}, filter {filters}",
        task_attrs=["lm_eval_filter"],
    )
    cube = _template_coordinates(cube, lookup, context["runs"])
    if not aggregated:
        cube = _sample_coordinates(cube, frame, context["hashes"])
    cube.attrs.update(
        lm_eval_metric=metric,
        lm_eval_filters=filters,
        template_pattern=pattern.pattern if pattern is not None else "",
    )
    # from_records validated the cube; the coordinates added since keep its rules
    # (sample ids unique within each task), and a second pass would double the peak memory.
    return summary.apply(cube)


def _line(line):
    return None if line is None or (isinstance(line, float) and math.isnan(line)) else int(line)


def _require_one_template_each(triples: pd.DataFrame, frame: pd.DataFrame) -> None:
    seen = {}
    for name, *key in triples.itertuples(index=False):
        key = tuple(key)
        if key in seen and seen[key] != name:
            raise line_error(
                ", ".join(sorted(set(frame["lm_task"]))),
                f"the tasks {seen[key]!r} and {name!r} both map to task "
                f"{key[0]!r}, template {key[1]!r} under the template pattern",
            )
        seen[key] = name


def _higher_is_better(runs: dict, metric: str, given: bool | None) -> bool:
    if given is not None:
        return bool(given)
    said = {}
    for (_, lm_task), run in runs.items():
        if run is None:
            continue
        value = (run.higher_is_better.get(lm_task) or {}).get(metric)
        if isinstance(value, bool):
            said.setdefault(value, run.file)
    if len(said) > 1:
        raise line_error(
            said[False],
            f"the results files disagree on whether a higher "
            f"{metric!r} is better (this one says no, {said[True]!r} "
            "says yes); pass higher_is_better=true or false",
        )
    return next(iter(said), True)


def _template_coordinates(cube: xr.Dataset, lookup: dict, runs: dict) -> xr.Dataset:
    """``template_lm_eval_task`` and ``template_text`` from the (task, template) ids."""
    texts = {}
    for (_, lm_task), run in runs.items():
        config = (run.configs.get(lm_task) or {}) if run is not None else {}
        text = config.get("doc_to_text")
        if isinstance(text, str):
            texts.setdefault(lm_task, text)
    tasks = cube.task.values.tolist()
    ids = cube.template_id.values
    lm_tasks = np.full(ids.shape, "", dtype=object)
    text = np.full(ids.shape, "", dtype=object)
    for i, task_name in enumerate(tasks):
        for j, template in enumerate(ids[i].tolist()):
            if template:
                lm_tasks[i, j] = lookup[(task_name, template)]
                text[i, j] = texts.get(lm_tasks[i, j], "")
    return cube.assign_coords(
        template_lm_eval_task=(("task", "template"), lm_tasks),
        template_text=(("task", "template"), text),
    )


def _sample_coordinates(cube: xr.Dataset, frame: pd.DataFrame, hashes: dict) -> xr.Dataset:
    """``sample_doc_id`` (the ``doc_id``), and ``sample_id`` as the ``doc_hash`` where it can be.

    A task's ids become its documents' hashes only if every log of the task
    gives each ``doc_id`` one hash and no two documents share one (a dataset
    can hold the same document twice, and a prompt variant can reshape the
    document); otherwise they stay the ``doc_id``.
    """
    ids = cube.sample_id.values
    doc_ids = np.where(ids == "", "-1", ids).astype(np.int64)
    out = ids.copy()
    task_of = {
        lm_task: task
        for lm_task, task in frame[["lm_task", "task"]].drop_duplicates().itertuples(index=False)
    }
    by_task: dict[str, list[pd.DataFrame]] = {}
    for (_, lm_task, _), (docs, values, _) in hashes.items():
        by_task.setdefault(task_of[lm_task], []).append(pd.DataFrame({"doc": docs, "hash": values}))
    for i, task_name in enumerate(cube.task.values.tolist()):
        parts = by_task.get(task_name)
        if not parts:
            continue
        pairs = pd.concat(parts, ignore_index=True).drop_duplicates()
        if pairs["doc"].duplicated().any() or pairs["hash"].duplicated().any():
            continue
        mapping = pd.Series(pairs["hash"].to_numpy(), index=pairs["doc"].to_numpy())
        present = ids[i] != ""
        found = mapping.reindex(doc_ids[i][present])
        if found.isna().any():
            continue
        out[i, present] = found.to_numpy(dtype=object)
    return cube.assign_coords(
        sample_id=(("task", "sample"), out), sample_doc_id=(("task", "sample"), doc_ids)
    )
