"""Importer of inspect_ai evaluation logs (``.eval`` archives and ``.json`` logs).

Each log is one run of one task on one model. Its samples become the cube's
samples; the scorer's value of each sample its score, with inspect_ai's
letter grades mapped to numbers (``C`` correct 1, ``I`` incorrect 0, ``P``
partial 0.5, ``N`` no answer 0). Epochs are repeats of the same sample, not
templates: each keeps its own score and the sample's id and epoch are kept
apart (see :func:`load`). Logs are read with the standard library only.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pandas as pd

from rankstats import _text

from . import file_error
from ._inspect_logs import Log, log_files, read
from ._scored_rows import (
    KEYS,
    NOT_FINITE,
    SCORE_OPTIONS,
    as_paths,
    drop_missing,
    drop_repeats,
    label,
    number,
    to_cube,
)
from ._summary import ImportSummary

__all__ = ["LETTERS", "OPTIONS", "load"]

LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""inspect_ai's letter grades: correct, incorrect, partial, no answer."""

EPOCHS = ("separate", "mean")
RUNS = ("error", "latest")
INCOMPLETE = ("error", "include")
COMPLETE = "success"
_NAME = "inspect_ai"
OPTIONS = {
    "scorer": _text.optional(_text.text),
    "value_key": _text.optional(_text.text),
    "letters": _text.optional(_text.mapping(values=_text.number())),
    "model": _text.optional(_text.text),
    "template_args": _text.optional(_text.text_list),
    "epochs": _text.choice(*EPOCHS),
    "runs": _text.choice(*RUNS),
    "incomplete": _text.choice(*INCOMPLETE),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    scorer: str | None = None,
    value_key: str | None = None,
    letters: dict | None = None,
    model: str | None = None,
    template_args=None,
    epochs: str = "separate",
    runs: str = "error",
    incomplete: str = "error",
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read inspect_ai logs into a cube of per-sample scores.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Log files (``.eval`` or ``.json``) or folders holding them.
    scorer : str, optional
        The scorer whose value is the score; needed when the samples were
        scored by several scorers.
    value_key : str, optional
        For scorers whose value is a dictionary (one entry per metric), the
        entry to read.
    letters : dict, optional
        Letter grades and their numbers; default :data:`LETTERS`.
    model : str, optional
        The model's name in the cube; default the log's ``eval.model``.
    template_args : sequence of str, optional
        The task arguments (``eval.task_args``) that tell templates apart;
        default all of them. The template id is ``name=value`` pairs joined
        by commas, or ``"default"`` for a task run without arguments.
    epochs : {"separate", "mean"}, default "separate"
        ``"separate"``: each epoch is a sample of its own, with id
        ``"<id>#<epoch>"`` when a task has several epochs (``"<id>"``
        otherwise), and the coordinates ``sample_base`` (the sample's id) and
        ``sample_epoch``. ``"mean"``: one sample per id, scored by the mean
        over its epochs, with the number of epochs in ``sample_epochs``.
    runs : {"error", "latest"}, default "error"
        What to do when two logs hold the same model, task, template and
        sample: raise, or keep the log created last (``eval.created``).
    incomplete : {"error", "include"}, default "error"
        A log whose run did not complete (``status`` ``"started"``,
        ``"cancelled"`` or ``"error"``, not ``"success"``) is refused, or its
        samples are imported and the summary names the log and its status.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores. By default the letter grades say it (``C``
        and ``I`` alone: binary; with ``P``: proportion); numeric values are
        looked at, and the summary says so. A score outside the kind's range
        is an error naming the file and sample.
    non_finite : {"error", "missing"}, default "error"
        What an infinite value is: an error naming the file, sample and
        field, or a missing score (counted in the summary). NaN is always
        missing: skipped and counted.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``. Attributes: ``metric``
        (the scorer, and ``value_key`` if given), ``source`` and
        ``import_summary`` (what was read and what was skipped, and why).

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not an inspect_ai log, a field is missing, a score is not a
        number or an unknown letter, the samples were scored by several
        scorers and ``scorer`` is not given, or a sample is logged twice with
        different scores; the message names the file (and for ``.eval`` logs
        the sample's member), row and field.

    Notes
    -----
    Samples that ended in an error, or that the scorer did not score, are
    skipped and counted in the summary. inspect_ai's reported accuracy is
    the mean over samples of the epoch-reduced (by default, mean) score;
    per template, the mean of this cube's scores over samples and epochs
    equals it when every sample ran the same number of epochs.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import inspect_ai
    >>> logs = Path(inspect_ai.__file__).parents[2] / "tests/data/fixtures/inspect_ai"
    >>> cube = inspect_ai.load(logs / "mmlu-summary-choices.eval")
    >>> cube.model.values.tolist(), cube.task.values.tolist()
    (['openai/gpt-4o'], ['inspect_evals/mmlu_0_shot'])
    >>> cube.template_id.values.tolist()
    [['cot=false,language=EN_US,subjects=[]']]
    >>> float(cube.score.squeeze())   # the letter "I": incorrect
    0.0
    """
    grades = dict(LETTERS if letters is None else letters)
    files = log_files(as_paths(paths))
    summary = ImportSummary(_NAME, [str(f) for f in files])
    frames, chosen, numeric = [], set(), False
    for path in files:
        log, samples = read(path)
        _check_status(log, incomplete, summary)
        rows = _rows(log, samples, scorer, value_key, grades, summary, non_finite)
        chosen.update(rows.pop("scorer"))
        numeric |= rows.pop("numeric")
        frame = pd.DataFrame(rows)
        frame["model"] = model or label(log.eval["model"], log.name, column="eval.model")
        frame["task"] = label(log.eval["task"], log.name, column="eval.task")
        frame["template"] = _template(log, template_args)
        frame["created"] = _created(log)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(chosen) > 1:
        raise file_error(
            ", ".join(summary.files),
            f"the logs were scored by different scorers "
            f"({', '.join(sorted(chosen))}); pass scorer=NAME",
        )
    frame = drop_missing(_resolve_runs(frame, runs, summary), summary)
    frame = _samples(frame, epochs, summary)
    metric = next(iter(chosen), "score") + (f".{value_key}" if value_key else "")
    return to_cube(
        frame,
        summary,
        metric=metric,
        score_kind=score_kind,
        aggregated=epochs == "mean",
        declared=None if numeric else _letter_kind(frame, grades, epochs),
        source=f"inspect_ai logs ({len(files)} file{'s' * (len(files) != 1)})",
        attrs={"epochs": epochs, "runs": runs},
    )


def _check_status(log: Log, incomplete: str, summary: ImportSummary) -> None:
    """Refuse a log whose run did not complete, or (``incomplete="include"``) say it is one."""
    if log.status == COMPLETE:
        return
    status = repr(log.status) if log.status else "no status"
    if incomplete != "include":
        raise file_error(
            log.name,
            f"the run did not complete (status {status}, not "
            f"{COMPLETE!r}): its samples may be missing or partial; "
            "pass incomplete=include to import them anyway",
            column="status",
        )
    summary.note(
        f"{log.name}: the run did not complete (status {status}); its samples were "
        "imported as they are (incomplete=include)"
    )


def _letter_kind(frame: pd.DataFrame, grades: dict, epochs: str):
    """The kind the letter grades declare, when every score is one: ``(kind, why)`` or None."""
    if frame.empty:
        return None
    used = set(frame["score"].unique().tolist())
    if used <= {0.0, 1.0} and epochs != "mean":
        return "binary", "every score is a letter grade worth 0 or 1"
    if all(0 <= v <= 1 for v in used):
        return "proportion", "every score is a letter grade between 0 and 1" + (
            " (averaged over epochs)" if epochs == "mean" else ""
        )
    return None


def _rows(log: Log, samples, scorer, value_key, grades, summary, non_finite) -> dict:
    rows = {
        "sample_base": [],
        "sample_epoch": [],
        "score": [],
        "file": [],
        "row": [],
        "scorer": set(),
        "numeric": False,
    }
    for where, row, sample in samples:
        if not isinstance(sample, dict) or "id" not in sample:
            raise file_error(where, "not an inspect_ai sample: no 'id'", row=row, column="id")
        if sample.get("error"):
            summary.skip("the sample ended in an error")
            continue
        scores = sample.get("scores") or {}
        if not isinstance(scores, dict):
            raise file_error(where, "'scores' is not an object", row=row, column="scores")
        name = _scorer(scores, scorer, where, row)
        if name is None:
            summary.skip(
                "the sample was not scored"
                if not scores
                else f"the sample was not scored by {scorer!r}"
            )
            continue
        value, letter = _value(scores[name], name, value_key, grades, where, row, non_finite)
        if value is NOT_FINITE:
            summary.skip(NOT_FINITE)
            continue
        if value is None:
            summary.skip("the scorer gave no value")
            continue
        rows["numeric"] |= not letter
        epoch = sample.get("epoch", 1)
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
            raise file_error(
                where, f"the epoch {epoch!r} is not a whole number >= 1", row=row, column="epoch"
            )
        rows["scorer"].add(name)
        rows["sample_base"].append(label(sample["id"], where, row=row, column="id"))
        rows["sample_epoch"].append(epoch)
        rows["score"].append(value)
        rows["file"].append(where)
        rows["row"].append(row)
    return rows


def _scorer(scores: dict, scorer, where, row):
    if scorer is not None:
        return scorer if scorer in scores else None
    if len(scores) > 1:
        raise file_error(
            where,
            f"the sample was scored by several scorers "
            f"({', '.join(map(repr, scores))}); pass scorer=NAME",
            row=row,
            column="scores",
        )
    return next(iter(scores), None)


def _value(score, name, value_key, grades, where, row, non_finite):
    """``(value, from_letter)``; value None when there is none, NOT_FINITE to skip."""
    column = f"scores.{name}.value"
    if not isinstance(score, dict) or "value" not in score:
        raise file_error(where, "the score has no 'value'", row=row, column=f"scores.{name}")
    value = score["value"]
    if isinstance(value, dict):
        if value_key is None:
            raise file_error(
                where,
                f"the value holds several entries "
                f"({', '.join(map(repr, value))}); pass value_key=NAME",
                row=row,
                column=column,
            )
        if value_key not in value:
            raise file_error(
                where,
                f"the value has no entry {value_key!r} (it has {', '.join(map(repr, value))})",
                row=row,
                column=column,
            )
        value, column = value[value_key], f"{column}.{value_key}"
    if value is None:
        return None, False
    if isinstance(value, list):
        raise file_error(
            where, f"the value {value!r} is a list, not one score", row=row, column=column
        )
    if isinstance(value, str) and value.strip() in grades:
        return float(grades[value.strip()]), True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            known = ", ".join(f"{k}={v:g}" for k, v in grades.items())
            raise file_error(
                where,
                f"the value {value!r} is neither a number nor a letter "
                f"grade ({known}); pass letters={{...}} to map it",
                row=row,
                column=column,
            ) from None
    result = number(value, where, row=row, column=column, non_finite=non_finite)
    return (NOT_FINITE if result is None else result), False


def _template(log: Log, template_args) -> str:
    args = log.eval.get("task_args") or {}
    if template_args is not None:
        if isinstance(template_args, str):
            template_args = [template_args]
        missing = [a for a in template_args if a not in args]
        if missing:
            raise file_error(
                log.name,
                f"the task has no argument {missing[0]!r} (its arguments: "
                f"{', '.join(map(repr, args)) or 'none'})",
                column="eval.task_args",
            )
        args = {name: args[name] for name in template_args}
    if not args:
        return "default"
    return ",".join(
        f"{name}={value if isinstance(value, str) else json.dumps(value)}"
        for name, value in sorted(args.items())
    )


def _created(log: Log) -> float:
    """When the run began (``eval.created``), in seconds since the epoch; -inf if unknown."""
    try:
        when = datetime.fromisoformat(str(log.eval.get("created")))
    except ValueError:
        return -math.inf
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _resolve_runs(frame: pd.DataFrame, runs: str, summary: ImportSummary) -> pd.DataFrame:
    if frame.empty:
        return frame
    keys = ["model", "task", "template", "sample_base", "sample_epoch"]
    log = frame["file"].str.split(":samples/", n=1, regex=False).str[0]
    frame = frame.assign(log=log)
    logs = frame.groupby(keys, sort=False)["log"].transform("nunique")
    shared = logs.to_numpy() > 1
    if not shared.any():
        return frame.drop(columns="log")
    if runs == "error":
        first = frame.loc[shared].iloc[0]
        both = frame.loc[(frame[keys] == first[keys]).all(axis=1), "log"].unique()
        raise file_error(
            first["log"],
            f"model {first['model']!r}, task {first['task']!r}, "
            f"template {first['template']!r} is logged by several runs "
            f"({', '.join(map(repr, both))}); pass runs='latest' to keep the "
            "one created last",
        )
    latest = frame.groupby(keys, sort=False)["created"].transform("max")
    keep = frame["created"].to_numpy() == latest.to_numpy()
    if not keep.all():
        summary.skip("superseded by a later run of the same model and task", int((~keep).sum()))
    return frame.loc[keep].drop(columns="log").reset_index(drop=True)


def _samples(frame: pd.DataFrame, epochs: str, summary: ImportSummary) -> pd.DataFrame:
    if frame.empty:
        return frame
    frame = frame.drop(columns="created")
    keys = ["model", "task", "template", "sample_base", "sample_epoch"]
    frame = drop_repeats(
        frame.rename(columns={"sample_base": "sample"}),
        summary,
        keys=[*KEYS[:3], "sample", "sample_epoch"],
    ).rename(columns={"sample": "sample_base"})
    if epochs == "mean":
        grouped = frame.groupby(keys[:4], sort=False)
        reduced = grouped.agg(
            score=("score", "mean"),
            sample_epochs=("sample_epoch", "nunique"),
            file=("file", "first"),
            row=("row", "first"),
        ).reset_index()
        summary.fold(len(frame), len(reduced), "averaged over epochs (epochs=mean)")
        return reduced.rename(columns={"sample_base": "sample"})
    several = frame.groupby("task")["sample_epoch"].transform("max").to_numpy() > 1
    sample = frame["sample_base"].where(
        ~several, frame["sample_base"] + "#" + frame["sample_epoch"].astype(str)
    )
    return frame.assign(sample=sample)
