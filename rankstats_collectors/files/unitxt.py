"""Importer of unitxt evaluation output (``unitxt-evaluate ... --log_samples``).

``unitxt-evaluate --tasks "card=A,template=T1+card=A,template=T2" --output_path OUT
--log_samples`` writes ``OUT/<timestamp>_evaluation_results.json`` (the global
scores of each subset: one subset per ``--tasks`` entry) and
``OUT/<timestamp>_samples.json`` (each instance with its scores, by subset).
The mapping and the options are described in ``docs/importers/unitxt.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from rankstats import _text

from . import file_error
from ._paths import as_paths, found_in, readable_file
from ._scored_rows import NOT_FINITE, SCORE_OPTIONS, label, latest_runs, number, to_cube
from ._summary import ImportSummary

__all__ = ["OPTIONS", "load"]

_NAME = "unitxt"
RUNS = ("error", "latest")
_RESULTS = re.compile(r"(?P<run>.*?)_?evaluation_results\.json")
_SAMPLES = re.compile(r"(?P<run>.*?)_?samples\.json")
_FIELD = re.compile(r"\{(\w+)")
_GLOBAL = {"score", "score_name", "num_of_instances", "score_ci_low", "score_ci_high"}

OPTIONS = {
    "metric": _text.optional(_text.text),
    "aggregated": _text.boolean,
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
    runs: str = "error",
    model: str | None = None,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read unitxt evaluation output into a cube.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        ``*_samples.json`` files (per-instance scores), ``*_evaluation_results.json``
        files (with ``aggregated``), or folders holding them.
    metric : str, optional
        The score read: an instance's (or a subset's) field such as
        ``accuracy``; by default ``score``, the main score unitxt names in
        ``score_name``.
    aggregated : bool, default False
        Read each subset's global score from the results files instead of
        the instances' scores.
    runs : {"error", "latest"}, default "error"
        One model and subset in several runs (files of different
        timestamps): raise, or keep the latest run's.
    model : str, optional
        The model's name; by default ``pretrained`` of the run's
        ``model_args``, else its ``model``.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; inferred from the values when omitted.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score is: an error naming the file, entry and
        field, or a missing score (counted in the summary). NaN is always
        missing: skipped and counted.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``; a subset named as a
        ``--tasks`` entry ``card=C,template=T,...`` is task ``C`` and
        template ``T`` (with any further arguments), any other subset is its
        own task with the template ``default``. Instances carry no id: the
        sample is the instance's position within its subset.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not unitxt output, a field is missing or not a number;
        the message names the file, subset, entry and field.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import unitxt
    >>> out = Path(unitxt.__file__).parents[2] / "tests/data/unitxt/out"
    >>> cube = unitxt.load(out)
    >>> cube.task.values.tolist(), cube.template_id.values.tolist()
    (['cards.tiny'], [['templates.plain', 'templates.qa']])
    >>> cube.score.mean("sample").values.round(4).tolist()
    [[[0.8333, 0.5]]]
    """
    wanted = _RESULTS if aggregated else _SAMPLES
    files = _files(as_paths(paths), wanted)
    summary = ImportSummary(_NAME, [str(f) for f in files])
    frames = []
    for path in files:
        data = _read(path)
        name = model or _model(data, path)
        run = (wanted.fullmatch(path.name) or {"run": ""})["run"]
        if aggregated:
            frame = _subset_scores(path, data, metric, non_finite, summary)
        else:
            frame = _instance_scores(path, data, metric, non_finite, summary)
        frames.append(frame.assign(model=name, run=run))
    frame = latest_runs(pd.concat(frames, ignore_index=True), runs, summary, "subset")
    if not aggregated:
        summary.note(
            "unitxt instances carry no id: each sample is the instance's position within its subset"
        )
    return to_cube(
        frame,
        summary,
        metric=metric or "score",
        score_kind=score_kind,
        aggregated=aggregated,
        source=f"unitxt evaluation output ({len(files)} files)",
    )


def _files(paths: list[Path], wanted) -> list[Path]:
    found = []
    for path in paths:
        if path.is_dir():
            inside = found_in(path, lambda name: bool(wanted.fullmatch(name)))
            if not inside:
                kind = (
                    "<timestamp>_evaluation_results.json"
                    if wanted is _RESULTS
                    else "<timestamp>_samples.json"
                )
                raise file_error(path, f"not unitxt output: no {kind} in or below it")
            found.extend(inside)
        else:
            found.append(readable_file(path))
    return found


def _read(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise file_error(path, f"not unitxt output: not valid JSON ({error})") from None
    except OSError as error:
        raise file_error(path, f"cannot be read ({error.strerror or error})") from None
    if not isinstance(data, dict) or not ({"samples", "results"} & set(data)):
        raise file_error(
            path,
            "not unitxt output: no 'samples' or 'results' object (unitxt "
            "writes <timestamp>_samples.json and "
            "<timestamp>_evaluation_results.json)",
        )
    return data


def _model(data: dict, path: Path) -> str:
    arguments = (data.get("environment_info") or {}).get("parsed_arguments") or {}
    model_args = arguments.get("model_args")
    if isinstance(model_args, dict) and model_args.get("pretrained"):
        return label(model_args["pretrained"], path, column="model_args.pretrained")
    if arguments.get("model"):
        return label(arguments["model"], path, column="parsed_arguments.model")
    raise file_error(
        path, "no model: environment_info.parsed_arguments names none; pass model=NAME"
    )


def _task_template(subset: str) -> tuple[str, str]:
    """``card=C,template=T,k=v`` -> (``C``, ``T,k=v``); any other subset is its own task."""
    parts = dict(part.split("=", 1) for part in subset.split(",") if "=" in part)
    if "card" not in parts or subset.count("=") != len(parts):
        return subset, "default"
    rest = [f"{k}={v}" for k, v in parts.items() if k not in ("card", "template")]
    template = ",".join(filter(None, [parts.get("template", ""), *rest])) or "default"
    return parts["card"], template


def _subset_scores(path: Path, data: dict, metric, non_finite, summary) -> pd.DataFrame:
    results = data.get("results")
    if not isinstance(results, dict):
        raise file_error(
            path,
            "no 'results' object (is it a samples file? pass aggregated=false)",
            column="results",
        )
    rows = []
    for subset, scores in results.items():
        if subset in _GLOBAL:
            continue
        if not isinstance(scores, dict):
            raise file_error(path, "not an object", column=f"results.{subset}")
        key = metric or "score"
        if key not in scores:
            raise file_error(
                path,
                f"the subset reports no {key!r} (it reports: "
                f"{', '.join(k for k in scores if k not in _GLOBAL)})",
                column=f"results.{subset}",
            )
        value = number(scores[key], path, column=f"results.{subset}.{key}", non_finite=non_finite)
        if value is None:
            summary.skip(NOT_FINITE)
            continue
        task, template = _task_template(label(subset, path, column=f"results.{subset}"))
        rows.append(
            {"task": task, "template": template, "score": value, "file": str(path), "row": None}
        )
    if "score" in results:
        summary.skip("the global score over all subsets (subsets_mean), not a subset's")
    return pd.DataFrame(rows, columns=["task", "template", "score", "file", "row"])


def _fields(instance) -> dict:
    """The task fields an instance's template reads (``{question}``), with their values.

    The template's formats name them (``metadata.template.input_format``);
    they are the instance's data before any template rendered it, the same
    under every template of a card.
    """
    if not isinstance(instance, dict):
        return {}
    spec = (instance.get("metadata") or {}).get("template")
    if not isinstance(spec, dict):
        return {}
    names = set()
    for key in ("input_format", "output_format"):
        if isinstance(spec.get(key), str):
            names.update(_FIELD.findall(spec[key]))
    return {name: instance[name] for name in sorted(names) if name in instance}


def _same_instances(path: Path, task: str, subset: str, instances: list, seen: dict) -> None:
    """Refuse subsets of one card whose instances at one position are different instances.

    unitxt logs no instance id, so the sample is the position: that holds
    only while every template of a card lists the same instances in the
    same order, which the task fields the templates read can confirm.
    """
    fields = [_fields(instance) for instance in instances]
    if task not in seen:
        seen[task] = (subset, fields)
        return
    first, reference = seen[task]
    for row, (mine, theirs) in enumerate(zip(fields, reference, strict=False), start=1):
        for name in sorted(set(mine) & set(theirs)):
            if mine[name] != theirs[name]:
                raise file_error(
                    path,
                    f"instance {row} is not instance {row} of subset "
                    f"{first!r} ({name} {mine[name]!r}, there "
                    f"{theirs[name]!r}): unitxt logs no instance id, so the "
                    "templates of one card must list the same instances in "
                    "the same order",
                    row=row,
                    column=f"samples.{subset}",
                )


def _instance_scores(path: Path, data: dict, metric, non_finite, summary) -> pd.DataFrame:
    samples = data.get("samples")
    if not isinstance(samples, dict):
        raise file_error(
            path,
            "no 'samples' object (is it a results file? pass aggregated=true)",
            column="samples",
        )
    parts, seen = [], {}
    for subset, instances in samples.items():
        if not isinstance(instances, list):
            raise file_error(path, "not a list", column=f"samples.{subset}")
        task, template = _task_template(label(subset, path, column=f"samples.{subset}"))
        _same_instances(path, task, subset, instances, seen)
        key = metric or "score"
        scores, positions = [], []
        for row, instance in enumerate(instances, start=1):
            if not isinstance(instance, dict) or key not in instance:
                raise file_error(
                    path, f"the instance has no {key!r}", row=row, column=f"samples.{subset}"
                )
            value = number(
                instance[key],
                path,
                row=row,
                column=f"samples.{subset}.{key}",
                non_finite=non_finite,
            )
            if value is None:
                summary.skip(NOT_FINITE)
                continue
            scores.append(value)
            positions.append(row)
        parts.append(
            pd.DataFrame(
                {
                    "task": task,
                    "template": template,
                    "sample": [str(p - 1) for p in positions],
                    "score": scores,
                    "file": str(path),
                    "row": positions,
                }
            )
        )
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["task", "template", "sample", "score", "file", "row"])
    )
