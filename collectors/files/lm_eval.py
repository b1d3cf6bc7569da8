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

import numpy as np
import pandas as pd
import xarray as xr

import rankstats
from rankstats import _text

from ._lm_eval_files import Results, SamplesFile, expand, folder_model, sibling_results
from ._lm_eval_read import count_records, line_error, records
from ._lm_eval_samples import Log, metrics_of, read_log
from ._scored_rows import NOT_FINITE, SCORE_OPTIONS, check_range, kind_of, label
from ._summary import ImportSummary

__all__ = ["OPTIONS", "REPEATS", "TEMPLATE_PATTERN", "describe", "load"]

TEMPLATE_PATTERN = r"(?P<task>.+)_prompt_(?P<template>\d+)"
REPEATS = ("latest", "error")
_DEFAULT_TEMPLATE = "default"
_IMPORTER = "lm_eval"


def _pattern_option(function, name, value):
    """A regular expression with the groups task and template; None (or empty text) for none."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "null")):
        return None
    return _text.regex(groups=("task", "template"))(function, name, value)


OPTIONS = {
    "metric": _text.optional(_text.text), "filter": _text.optional(_text.text),
    "model": _text.optional(_text.text), "task": _text.optional(_text.text),
    "tasks": _text.optional(_text.text_list), "template_pattern": _pattern_option,
    "repeats": _text.choice(*REPEATS), "aggregated": _text.boolean,
    "higher_is_better": _text.optional(_text.boolean),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_IMPORTER, OPTIONS)
def load(paths, *, metric: str | None = None, filter: str | None = None,
         model: str | None = None, task: str | None = None, tasks=None,
         template_pattern: str | None = TEMPLATE_PATTERN, repeats: str = "latest",
         aggregated: bool = False, higher_is_better: bool | None = None,
         score_kind: str | None = None, non_finite: str = "error") -> xr.Dataset:
    """Read lm-evaluation-harness output into a cube.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Per-sample logs (``samples_<task>_<date>.jsonl``, or ``.json``
        holding JSON lines or one JSON array), results files
        (``results_<date>.json``), or folders searched deeply for both.
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
    repeats : {"latest", "error"}, default "latest"
        Several runs of one model on one task (logs of different dates):
        keep the latest run's, or raise.
    aggregated : bool, default False
        Import the aggregates the results files report (a cube without a
        ``sample`` dimension) instead of the per-sample logs.
    higher_is_better : bool, optional
        Whether higher scores are better; by default what the results files
        say of the metric, else True.
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
        results file gives it, and ``lm_eval_filter(task)`` the filter. The
        attribute ``import_summary`` says what was read and skipped.

    Raises
    ------
    collectors.files.ImporterError
        A file is not of the format, a field is missing or not a number, a
        metric is corpus-level (its per-sample value is a ``[gold, pred]``
        pair), a document is logged twice with different scores, filters or
        runs would be mixed, or no model can be named; the message names the
        file, line and field.

    Examples
    --------
    >>> from pathlib import Path
    >>> from collectors.files import lm_eval
    >>> data = Path(lm_eval.__file__).parents[2] / "tests" / "data" / "fixtures" / "lm_eval"
    >>> cube = lm_eval.load(data / "asdiv")
    >>> dict(cube.score.sizes)
    {'model': 1, 'task': 1, 'template': 1, 'sample': 50}
    >>> cube.model.values.tolist(), cube.attrs["metric"]
    (['meta-llama/Meta-Llama-3-8B-Instruct'], 'acc')
    >>> float(cube.score.mean())
    0.92
    >>> print(cube.attrs["import_summary"])  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    lm_eval: read 50 rows from 1 file (.../samples_asdiv_2024-08-21T03-44-09.494230.jsonl)
      1 model, 1 task, 1 template (max per task), 50 samples (max per task)
      skipped nothing
      note: score_kind 'binary' was inferred from the values (all 50 scores are 0 or 1); pass
      score_kind=proportion or continuous to set it
    """
    pattern = _compile(template_pattern)
    wanted = [tasks] if isinstance(tasks, str) else tasks
    logs, results = expand(paths, task=task)
    read = results if aggregated else logs
    summary = ImportSummary(_IMPORTER, [source.file for source in read] or
                            [str(p) for p in _text_paths(paths)])
    if aggregated:
        frame, context = _aggregated_rows(results, summary, metric=metric, filter_=filter,
                                          model=model, wanted=wanted, non_finite=non_finite)
    else:
        frame, context = _sample_rows(logs, results, summary, metric=metric, filter_=filter,
                                      model=model, wanted=wanted, repeats=repeats,
                                      non_finite=non_finite)
    return _cube(frame, context, summary, pattern, higher_is_better, aggregated, score_kind)


def _text_paths(paths) -> list:
    return [paths] if isinstance(paths, (str, bytes)) or not hasattr(paths, "__iter__") \
        else list(paths)


def describe(paths, *, model: str | None = None, task: str | None = None,
             template_pattern: str | None = TEMPLATE_PATTERN) -> pd.DataFrame:
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
    >>> from collectors.files import lm_eval
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
        rows.append({"file": source.file, "lm_eval_task": source.task, "task": task_name,
                     "template": template, "model": name, "date": source.date or "",
                     "metrics": ", ".join(metrics_of(first))})
    return pd.DataFrame(rows, columns=["file", "lm_eval_task", "task", "template", "model",
                                       "date", "metrics"])


def _natural(name: str) -> list:
    """Sort key putting ``prompt_2`` before ``prompt_10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", name)]


def _compile(template_pattern: str | None):
    checked = _pattern_option(_IMPORTER, "template_pattern", template_pattern)
    return None if checked is None else re.compile(checked)


def _selected(task: str, wanted) -> bool:
    return wanted is None or any(fnmatch.fnmatchcase(task, glob) for glob in wanted)


def _sample_rows(files: list[SamplesFile], results: list[Results], summary, *, metric, filter_,
                 model, wanted, repeats, non_finite):
    if not files:
        raise line_error(", ".join(summary.files), "no per-sample logs among the files (pass "
                                                   "aggregated=true to import results files)")
    known = list(results)
    runs: dict[tuple[str, str], list[tuple[Log, Results | None]]] = {}
    for source in sorted(files, key=lambda log: _natural(log.task)):
        if not _selected(source.task, wanted):
            summary.skip(f"task {source.task!r} not among the tasks asked for",
                         _line_count(source))
            continue
        run = sibling_results(source, known)
        name = model or (run.model if run else None) or folder_model(source.path)
        if name is None:
            raise line_error(source.file, "no model: the log has no results file of the same "
                                          "date beside it and its folder is not named "
                                          "<org>__<model>; pass model=NAME")
        name = label(name, source.file, column="model")
        label(source.task, source.file, column="task (from the file name)")
        log = read_log(source, metric=metric, filter_=filter_, non_finite=non_finite)
        for reason, count in log.skipped.items():
            summary.skip(reason, count)
        if log.rows:
            runs.setdefault((name, source.task), []).append((log, run))
    kept = _resolve_repeats(runs, repeats, summary)
    if not kept:
        raise line_error(", ".join(summary.files), f"no scores to import: {_why(summary)}")
    used = {log.metric for log, _ in kept.values()}
    if len(used) > 1:
        raise line_error(", ".join(summary.files), "the logs record different metrics "
                         f"({', '.join(sorted(used))}); choose one with metric=NAME")
    parts, hashes = [], {}
    for (name, lm_task), (log, _) in kept.items():
        parts.append(pd.DataFrame({"model": name, "lm_task": lm_task, "sample": log.doc_id,
                                   "score": log.score, "lm_eval_filter": log.filter,
                                   "_file": log.file, "_line": log.line}))
        summary.read(log.rows)
        if log.hashes is not None:
            hashes[(name, lm_task)] = (log.doc_id, log.hashes, log.file)
    frame = pd.concat(parts, ignore_index=True)
    runs_used = {key: run for key, (_, run) in kept.items()}
    return frame, {"metric": used.pop(), "runs": runs_used, "hashes": hashes,
                   "filters": sorted({log.filter for log, _ in kept.values()})}


def _line_count(source: SamplesFile) -> int:
    return count_records(source.path, source.file)


def _why(summary) -> str:
    return "; ".join(f"{n} × {reason}" for reason, n in summary.skipped.most_common()) or \
        "the files hold no records"


def _resolve_repeats(runs: dict, repeats: str, summary) -> dict:
    kept = {}
    for key, found in runs.items():
        if len(found) == 1:
            kept[key] = found[0]
            continue
        found = sorted(found, key=lambda pair: pair[0].date or "")
        if repeats == "error" or any(log.date is None for log, _ in found) or \
                found[-1][0].date == found[-2][0].date:
            files = ", ".join(repr(log.file) for log, _ in found)
            raise line_error(found[-1][0].file, f"model {key[0]!r} ran task {key[1]!r} more "
                             f"than once ({files}); pass repeats=latest to keep the latest "
                             "run (runs must be dated by their file names), or import fewer "
                             "files")
        for log, _ in found[:-1]:
            summary.skip(f"an older run of the same model and task ({log.file})", log.rows)
        kept[key] = found[-1]
    return kept


def _aggregated_rows(results: list[Results], summary, *, metric, filter_, model, wanted,
                     non_finite):
    if not results:
        raise line_error(", ".join(summary.files), "no results files among the files")
    rows, runs, dates = [], {}, {}
    for run in results:
        name = model or run.model or folder_model(run.path)
        if name is None:
            raise line_error(run.file, "no model: the results file names none and its folder "
                                       "is not named <org>__<model>; pass model=NAME")
        for lm_task, values in run.results.items():
            if lm_task in run.groups:
                summary.skip(f"group {lm_task!r}: an aggregate of tasks, not a task")
                continue
            if not _selected(lm_task, wanted):
                summary.skip(f"task {lm_task!r} not among the tasks asked for")
                continue
            if not isinstance(values, dict):
                raise line_error(run.file, "not an object", field=f"results.{lm_task}")
            name = label(name, run.file, column="model")
            label(lm_task, run.file, column=f"results.{lm_task}")
            key = _aggregate_key(values, metric, filter_, run.file, lm_task)
            if key is None:
                summary.skip(f"task {lm_task!r} reports no {metric!r} under the filter "
                             f"{filter_ or 'none'!r}")
                continue
            value = values[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise line_error(run.file, f"{value!r} is not a number",
                                 field=f"results.{lm_task}.{key}")
            if not math.isfinite(value):
                if non_finite != "missing":
                    raise line_error(run.file, f"{value!r} is not a finite number (pass "
                                               "non_finite=missing to read such scores as "
                                               "missing)", field=f"results.{lm_task}.{key}")
                summary.skip(NOT_FINITE)
                continue
            previous = dates.get((name, lm_task))
            if previous is not None:
                raise line_error(run.file, f"model {name!r} ran task {lm_task!r} in another "
                                 f"results file too ({previous}); import one run at a time")
            dates[(name, lm_task)] = run.file
            metric_name, _, used = key.partition(",")
            rows.append({"model": name, "lm_task": lm_task, "score": float(value),
                         "lm_eval_filter": used, "metric": metric_name,
                         "_file": run.file, "_line": None})
            runs[(name, lm_task)] = run
            summary.read()
    if not rows:
        raise line_error(", ".join(summary.files), f"no scores to import: {_why(summary)}")
    frame = pd.DataFrame(rows)
    used = set(frame.pop("metric"))
    if len(used) > 1:
        raise line_error(", ".join(summary.files), "the results report different metrics "
                         f"({', '.join(sorted(used))}); choose one with metric=NAME")
    return frame, {"metric": used.pop(), "runs": runs, "hashes": {},
                   "filters": sorted(set(frame["lm_eval_filter"]))}


def _aggregate_key(values: dict, metric, filter_, file: str, lm_task: str) -> str | None:
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
    raise line_error(file, f"reports several scores ({', '.join(keys)}); choose the {what} "
                           "with metric=NAME and filter=NAME", field=f"results.{lm_task}")


def _split_task(lm_task: str, pattern) -> tuple[str, str]:
    match = pattern.fullmatch(lm_task) if pattern is not None else None
    if match is None:
        return lm_task, _DEFAULT_TEMPLATE
    return match["task"], match["template"]


def _cube(frame: pd.DataFrame, context: dict, summary, pattern, higher_is_better,
          aggregated: bool, score_kind: str | None) -> xr.Dataset:
    names = pd.unique(frame["lm_task"])
    split = {name: _split_task(name, pattern) for name in names}
    _require_one_template_each(split, frame)
    frame["task"] = frame["lm_task"].map(lambda name: split[name][0])
    frame["template"] = frame["lm_task"].map(lambda name: split[name][1])
    metric = context["metric"]
    better = _higher_is_better(context["runs"], metric, higher_is_better)
    filters = ", ".join(repr(f) for f in context["filters"])
    what = "results files (reported aggregates)" if aggregated else "per-sample logs"
    scores = frame["score"].to_numpy(dtype=float)
    kind = kind_of(scores, summary, score_kind, aggregated=aggregated)
    check_range(scores, kind, lambda at, problem: line_error(
        frame["_file"].iloc[at], problem, line=_line(frame["_line"].iloc[at]), field=metric))
    cube = rankstats.from_records(
        frame.drop(columns=["lm_task", "_file", "_line"]), score_kind=kind,
        higher_is_better=better, metric=metric,
        source=f"lm-evaluation-harness {what}: metric {metric!r}, filter {filters}",
        task_attrs=["lm_eval_filter"])
    cube = _template_coordinates(cube, split, context["runs"])
    if not aggregated:
        cube = _sample_coordinates(cube, frame, context["hashes"])
    cube.attrs.update(lm_eval_metric=metric, lm_eval_filters=filters,
                      template_pattern=pattern.pattern if pattern is not None else "")
    # from_records validated the cube; the coordinates added since keep its rules
    # (sample ids unique within each task), and a second pass would double the peak memory.
    return summary.apply(cube)


def _line(line):
    return None if line is None or (isinstance(line, float) and math.isnan(line)) else int(line)


def _require_one_template_each(split: dict, frame: pd.DataFrame) -> None:
    seen = {}
    for name, key in split.items():
        if key in seen:
            raise line_error(", ".join(sorted(set(frame["lm_task"]))),
                             f"the tasks {seen[key]!r} and {name!r} both map to task "
                             f"{key[0]!r}, template {key[1]!r} under the template pattern")
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
        raise line_error(said[False], f"the results files disagree on whether a higher "
                                      f"{metric!r} is better (this one says no, {said[True]!r} "
                                      "says yes); pass higher_is_better=true or false")
    return next(iter(said), True)


def _template_coordinates(cube: xr.Dataset, split: dict, runs: dict) -> xr.Dataset:
    """``template_lm_eval_task`` and ``template_text`` from the (task, template) ids."""
    lookup = {key: name for name, key in split.items()}
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
    return cube.assign_coords(template_lm_eval_task=(("task", "template"), lm_tasks),
                              template_text=(("task", "template"), text))


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
    task_of = {lm_task: task for lm_task, task in
               frame[["lm_task", "task"]].drop_duplicates().itertuples(index=False)}
    by_task: dict[str, list[pd.DataFrame]] = {}
    for (_, lm_task), (docs, values, _) in hashes.items():
        by_task.setdefault(task_of[lm_task], []).append(
            pd.DataFrame({"doc": docs, "hash": values}))
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
    return cube.assign_coords(sample_id=(("task", "sample"), out),
                              sample_doc_id=(("task", "sample"), doc_ids))
