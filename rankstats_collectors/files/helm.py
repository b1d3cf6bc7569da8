"""Importer of HELM run folders (Liang et al., 2023; ``stanford-crfm/helm``, ``helm-run``).

Each run folder is one run spec: one model on one scenario with one adapter
(prompt) configuration, evaluated on the scenario's instances and, with data
augmentation, on perturbed copies of them. The importer reads
``per_instance_stats.json`` (or ``display_predictions.json``) with
``run_spec.json`` and maps:

- model: ``adapter_spec.model`` of the run spec;
- task: the run name without its ``model``, ``model_deployment`` and
  ``data_augmentation`` arguments, nor those named as template arguments
  (``mmlu:subject=anatomy,method=multiple_choice_joint``);
- template: the prompt variant (the run-name arguments named in
  ``template_args``, e.g. ``max_train_instances``) and the perturbation
  (``original``, or e.g. ``typos(prob=0.1)``), and with several train trials
  the trial;
- sample: ``instance_id``, shared by an instance and its perturbed copies;
- score: the stat named ``metric`` (``exact_match`` by default).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankstats import _text

from . import ImporterError, file_error
from ._helm_runs import (
    NOT_SCORES,
    Run,
    perturbation_label,
    read_json,
    read_run,
    run_folders,
    stat_value,
    task_and_variant,
)
from ._paths import few, lexists, readable_file
from ._scored_rows import NOT_FINITE, SCORE_OPTIONS, as_paths, drop_missing, label, number, to_cube
from ._summary import ImportSummary

__all__ = ["OPTIONS", "REFERENCE", "SOURCES", "load"]

REFERENCE = (
    "Liang, P., Bommasani, R., Lee, T., et al. (2023). Holistic Evaluation of "
    "Language Models. Transactions on Machine Learning Research. arXiv:2211.09110"
)
SOURCES = ("auto", "per_instance_stats", "display_predictions")
TRIALS = ("templates", "mean")
RUNS = ("error", "latest")
_FILES = {
    "per_instance_stats": "per_instance_stats.json",
    "display_predictions": "display_predictions.json",
}
_NAME = "helm"
OPTIONS = {
    "metric": _text.text,
    "split": _text.text,
    "source": _text.choice(*SOURCES),
    "template_args": _text.text_list,
    "trials": _text.choice(*TRIALS),
    "runs": _text.choice(*RUNS),
    "model": _text.optional(_text.text),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    metric: str = "exact_match",
    split: str = "test",
    source: str = "auto",
    template_args=(),
    trials: str = "templates",
    runs: str = "error",
    model: str | None = None,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read HELM run folders into a cube of per-instance scores.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Run folders (holding ``run_spec.json``), or folders searched for
        them (a suite: ``benchmark_output/runs/<suite>``).
    metric : str, default "exact_match"
        The stat that is the score (``exact_match``, ``quasi_exact_match``,
        ``f1_score``, ``rouge_l``, ...). Stats that are not scores (token
        counts, runtimes, costs, ``finish_reason_*``, ...) are refused.
    split : str, default "test"
        The split whose stats are read (``per_instance_stats.json`` names
        each stat's split; ``display_predictions.json`` does not).
    source : {"auto", "per_instance_stats", "display_predictions"}
        The file read in each run folder; ``"auto"`` prefers
        ``per_instance_stats.json``.
    template_args : sequence of str, default ()
        Run-name arguments that are prompt variants (e.g.
        ``["max_train_instances"]`` or ``["method"]``): runs differing only
        in them are one task with several templates.
    trials : {"templates", "mean"}, default "templates"
        With several train trials (different in-context examples): each
        trial is a template (``...|trial=1``), or each instance is scored by
        the mean over trials.
    runs : {"error", "latest"}, default "error"
        What to do when two run folders hold the same model, task, template
        and instance: raise, or keep the folder whose file was written last.
    model : str, optional
        The model's name in the cube; default ``adapter_spec.model``.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; a score outside its range is an error naming
        the file and entry. Inferred from the values when omitted (never
        ``binary`` for means over trials), and the summary says so.
    non_finite : {"error", "missing"}, default "error"
        What an infinite stat is: an error naming the file, entry and
        field, or a missing score (counted in the summary). NaN is always
        missing: skipped and counted.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``, with
        ``template_perturbation`` (``original`` or the perturbation),
        ``template_is_original`` (True for the unperturbed instances),
        ``template_variant`` (the prompt variant, ``""`` if none) and, with
        several trials, ``template_trial``. ``metric`` is the stat's name.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A folder holds no run spec, a file is not valid JSON or lacks a
        field, a value is not a number, ``metric`` is not a score or no run
        has it, or an instance is logged twice with different scores; the
        message names the file, the entry (row 1 = the first) and the field.

    Notes
    -----
    A per-instance stat's value is its ``mean`` (``sum / count`` when
    ``mean`` is absent); a stat that counts no value is skipped. HELM's
    ``stats.json`` reports, per perturbation, the mean over instances of each
    trial, averaged over trials: the per-template mean of this cube's scores.
    Worst-case stats (``computed_on: "worst"``) exist only in ``stats.json``
    and are not imported. ``display_predictions.json`` rows of separate
    multiple-choice adapters (one row per reference, ``reference_index`` set)
    are skipped.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import helm
    >>> suite = Path(helm.__file__).parents[2] / "tests/data/fixtures/helm/runs/v1"
    >>> cube = helm.load(suite, template_args=["max_train_instances"])
    >>> cube.task.values.tolist()
    ['mmlu:subject=anatomy,method=multiple_choice_joint']
    >>> cube.template_id.values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['max_train_instances=0|original', 'max_train_instances=0|typos(prob=0.1)',
      'max_train_instances=0|lowercase', 'max_train_instances=5|original',
      'max_train_instances=5|typos(prob=0.1)', 'max_train_instances=5|lowercase']]
    >>> helm.load(suite, metric="num_output_tokens")
    Traceback (most recent call last):
    ...
    rankstats_collectors.files.ImporterError: 'num_output_tokens' is not a score: ...
    """
    if NOT_SCORES.fullmatch(metric):
        raise ImporterError(
            f"{metric!r} is not a score: it describes the request (a count, "
            "token count, runtime or cost), not the quality of the answer; "
            "pass metric=NAME of a score such as exact_match"
        )
    template_args = [template_args] if isinstance(template_args, str) else list(template_args)
    folders = run_folders(as_paths(paths))
    frames, files, seen = [], [], set()
    summary = ImportSummary(_NAME, files)  # files fills in as the runs are read
    for folder in folders:
        run = read_run(folder)
        kind = _source(run, source)
        files.append(str(run.file(_FILES[kind])))
        task, variant = task_and_variant(run, template_args)
        frame, skipped = _read(run, kind, metric, split, seen, non_finite)
        for reason, count in skipped.items():
            summary.skip(reason, count)
        frame["model"] = model or label(
            run.model, run.file("run_spec.json"), column="adapter_spec.model"
        )
        frame["task"] = task
        frame["template_variant"] = variant
        frame["written"] = run.file(_FILES[kind]).stat().st_mtime_ns
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty and seen:
        scores = sorted(name for name in seen if not NOT_SCORES.fullmatch(name))
        raise ImporterError(
            f"no stat {metric!r} on split {split!r} in the {len(files)} run "
            f"folder(s); the scores they have: {', '.join(scores) or 'none'} "
            f"(pass metric=NAME; files: {few(files)})"
        )
    frame = _templates(drop_missing(_resolve_runs(frame, runs, summary), summary), trials, summary)
    return to_cube(
        frame,
        summary,
        metric=metric,
        score_kind=score_kind,
        aggregated=trials == "mean" and "template_trial" not in frame,
        source=f"HELM run folders ({len(folders)})",
        attrs={
            "split": split,
            "trials": trials,
            "reference": REFERENCE,
            "template_args": ", ".join(template_args),
        },
    )


def _source(run: Run, source: str) -> str:
    if source != "auto":
        return source
    for kind, name in _FILES.items():
        if lexists(run.file(name)):
            readable_file(run.file(name))  # a broken link or a folder is an error, not absent
            return kind
    raise file_error(
        run.folder,
        "the run folder holds neither per_instance_stats.json nor display_predictions.json",
    )


def _read(run: Run, kind: str, metric: str, split: str, seen: set, non_finite: str) -> pd.DataFrame:
    path = run.file(_FILES[kind])
    entries = read_json(path)
    if not isinstance(entries, list):
        raise file_error(path, "not a HELM per-instance file: not a JSON list")
    rows = {"sample": [], "perturbation": [], "trial": [], "score": [], "row": []}
    skipped: dict[str, int] = {}
    splits = _instance_splits(run) if kind == "display_predictions" else {}
    for row, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise file_error(path, "the entry is not a JSON object", row=row)
        for field in ("instance_id", "stats"):
            if field not in entry:
                raise file_error(path, f"the entry has no {field!r}", row=row, column=field)
        reader = _stat_from_list if kind == "per_instance_stats" else _stat_from_display
        value, reason = reader(entry, metric, split, path, row, seen, non_finite)
        on = splits.get(str(entry["instance_id"]), split)
        if on != split and not reason:
            reason = f"the instance is on split {on!r}, not {split!r}"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        trial = entry.get("train_trial_index", 0)
        if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
            raise file_error(
                path,
                f"the train trial {trial!r} is not a whole number >= 0",
                row=row,
                column="train_trial_index",
            )
        rows["sample"].append(label(entry["instance_id"], path, row=row, column="instance_id"))
        rows["perturbation"].append(perturbation_label(entry.get("perturbation"), path, row))
        rows["trial"].append(trial)
        rows["score"].append(value)
        rows["row"].append(row)
    return pd.DataFrame(rows).assign(file=str(path)), skipped


def _instance_splits(run: Run) -> dict:
    """Each instance's split, from ``instances.json`` when the run folder has it."""
    path = run.file("instances.json")
    if not lexists(path):
        return {}
    instances = read_json(path)
    if not isinstance(instances, list):
        raise file_error(path, "not a HELM instances file: not a JSON list")
    return {str(i.get("id")): i.get("split") for i in instances if isinstance(i, dict)}


def _stat_from_list(entry, metric, split, path, row, seen, non_finite):
    stats = entry["stats"]
    if not isinstance(stats, list):
        raise file_error(path, "'stats' is not a list", row=row, column="stats")
    other_split = None
    for index, stat in enumerate(stats):
        name = stat.get("name") if isinstance(stat, dict) else None
        if not isinstance(name, dict) or not isinstance(name.get("name"), str):
            raise file_error(path, "the stat has no name", row=row, column=f"stats[{index}].name")
        seen.add(name["name"])
        if name["name"] != metric:
            continue
        if name.get("split", split) != split:
            other_split = name.get("split")
            continue
        value = stat_value(stat, path, row, f"stats[{index}]", non_finite)
        if value is NOT_FINITE:
            return None, NOT_FINITE
        return (value, None) if value is not None else (None, "the stat counts no value")
    if other_split is not None:
        return None, f"the stat is on split {other_split!r}, not {split!r}"
    return None, f"the instance has no {metric!r} stat"


def _stat_from_display(entry, metric, split, path, row, seen, non_finite):
    stats = entry["stats"]
    if not isinstance(stats, dict):
        raise file_error(path, "'stats' is not an object", row=row, column="stats")
    seen.update(stats)
    if entry.get("reference_index") is not None:
        return None, "a per-reference row of a separate multiple-choice adapter"
    if metric not in stats:
        return None, f"the instance has no {metric!r} stat"
    value = number(stats[metric], path, row=row, column=f"stats.{metric}", non_finite=non_finite)
    return (value, None) if value is not None else (None, NOT_FINITE)


def _templates(frame: pd.DataFrame, trials: str, summary) -> pd.DataFrame:
    if frame.empty:
        return frame
    several = frame.groupby("task")["trial"].transform("nunique").to_numpy() > 1
    if trials == "mean" and several.any():
        keys = ["model", "task", "template_variant", "perturbation", "sample"]
        rows = len(frame)
        frame = (
            frame.groupby(keys, sort=False)
            .agg(score=("score", "mean"), file=("file", "first"), row=("row", "first"))
            .reset_index()
        )
        summary.fold(rows, len(frame), "averaged over train trials (trials=mean)")
        several = np.zeros(len(frame), dtype=bool)
    template = frame["perturbation"].where(
        frame["template_variant"] == "", frame["template_variant"] + "|" + frame["perturbation"]
    )
    if several.any():
        template = template.where(~several, template + "|trial=" + frame["trial"].astype(str))
        frame = frame.assign(template_trial=frame["trial"])
    return (
        frame.drop(columns="trial", errors="ignore")
        .rename(columns={"perturbation": "template_perturbation"})
        .assign(template=template, template_is_original=frame["perturbation"] == "original")
    )


def _resolve_runs(frame: pd.DataFrame, runs: str, summary) -> pd.DataFrame:
    if frame.empty:
        return frame
    keys = ["model", "task", "template_variant", "perturbation", "trial", "sample"]
    folders = frame.groupby(keys, sort=False)["file"].transform("nunique").to_numpy() > 1
    if folders.any():
        if runs == "error":
            first = frame.loc[folders].iloc[0]
            both = frame.loc[(frame[keys] == first[keys]).all(axis=1), "file"].unique()
            raise file_error(
                first["file"],
                f"model {first['model']!r}, task {first['task']!r} "
                f"is in several run folders ({', '.join(map(repr, both))}); pass "
                "runs='latest' to keep the one written last",
                row=int(first["row"]),
            )
        latest = frame.groupby(keys, sort=False)["written"].transform("max").to_numpy()
        keep = frame["written"].to_numpy() == latest
        summary.skip("superseded by a run folder written later", int((~keep).sum()))
        frame = frame.loc[keep]
    return frame.drop(columns="written").reset_index(drop=True)
