"""Reading HELM run folders: ``run_spec.json`` and the per-instance files written by ``helm-run``.

A run folder (``benchmark_output/runs/<suite>/<run name>/``) holds, among
others, ``run_spec.json`` (the run's name, scenario, adapter and metric
specs), ``per_instance_stats.json`` (one entry per instance, perturbation and
train trial, with its list of ``Stat`` objects), ``display_predictions.json``
(the same units with the prediction and a flat ``{name: value}`` of stats)
and ``stats.json`` (the aggregated stats).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import file_error
from ._paths import found_in, lexists, readable_file
from ._scored_rows import NOT_FINITE, number

NOT_SCORES = re.compile(
    r"(num_.*|.*_runtime|.*runtime.*|batch_size|.*_cost|finish_reason_.*|prompt_truncated"
    r"|max_prob|logprob|predicted_index|num_bytes|.*_tokens|training_.*|inference_.*)"
)
"""Stats that describe a request (counts, runtimes, costs, token counts), not its quality."""
_PLACED = ("model", "model_deployment", "data_augmentation")


@dataclass
class Run:
    """One run folder: its files, the run spec's name and adapter spec."""

    folder: Path
    name: str
    scenario: str
    args: list[tuple[str, str]]
    model: str

    def file(self, name: str) -> Path:
        """A file of the run folder."""
        return self.folder / name


def run_folders(paths) -> list[Path]:
    """Every run folder under ``paths`` (a folder holding ``run_spec.json``, or a suite of them)."""
    found = []
    for path in paths:
        if not lexists(path):
            raise file_error(path, "the folder does not exist")
        if not path.is_dir():
            path = readable_file(path).parent  # a file of the run folder stands for it
        if lexists(path / "run_spec.json"):
            found.append(readable_file(path / "run_spec.json").parent)
            continue
        inside = [p.parent for p in found_in(path, lambda name: name == "run_spec.json")]
        if not inside:
            raise file_error(path, "not a HELM run folder: no run_spec.json in it or below it")
        found.extend(inside)
    return found


def read_run(folder: Path) -> Run:
    """The run spec of ``folder``, checked."""
    path = folder / "run_spec.json"
    spec = read_json(path)
    if not isinstance(spec, dict):
        raise file_error(path, "not a HELM run spec: not a JSON object")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise file_error(path, "the run spec has no name", column="name")
    adapter = spec.get("adapter_spec")
    if not isinstance(adapter, dict):
        raise file_error(path, "the run spec has no adapter_spec", column="adapter_spec")
    model = adapter.get("model") or adapter.get("model_deployment")
    if not isinstance(model, str):
        raise file_error(path, "the adapter spec names no model", column="adapter_spec.model")
    scenario, _, rest = name.partition(":")
    args = []
    for part in filter(None, rest.split(",")):
        key, equals, value = part.partition("=")
        if not equals:
            if not args:
                raise file_error(
                    path,
                    f"cannot read the run name {name!r} (expected scenario:name=value,...)",
                    column="name",
                )
            args[-1] = (args[-1][0], f"{args[-1][1]},{part}")
            continue
        args.append((key, value))
    return Run(folder, name, scenario, args, model)


def task_and_variant(run: Run, template_args) -> tuple[str, str]:
    """The task (the run name less model, augmentation and template arguments) and variant."""
    named = dict(run.args)
    missing = [a for a in template_args if a not in named]
    if missing:
        raise file_error(
            run.file("run_spec.json"),
            f"the run name {run.name!r} has no argument {missing[0]!r} (template_args)",
            column="name",
        )
    kept = [f"{k}={v}" for k, v in run.args if k not in _PLACED and k not in template_args]
    task = run.scenario + (":" + ",".join(kept) if kept else "")
    variant = ",".join(f"{a}={named[a]}" for a in template_args)
    return task, variant


def read_json(path: Path):
    """The JSON in ``path``, or an error naming it."""
    readable_file(path)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise file_error(path, f"not valid JSON ({error})") from None
    except OSError as error:
        raise file_error(path, f"cannot be read ({error.strerror or error})") from None


def perturbation_label(perturbation, file, row) -> str:
    """``"original"``, or the perturbation's name with its parameters: ``typos(prob=0.1)``."""
    if perturbation is None:
        return "original"
    if not isinstance(perturbation, dict) or not isinstance(perturbation.get("name"), str):
        raise file_error(file, "the perturbation has no name", row=row, column="perturbation")
    params = {
        k: v
        for k, v in perturbation.items()
        if k not in ("name", "robustness", "fairness", "computed_on")
    }
    if not params:
        return perturbation["name"]
    inside = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{perturbation['name']}({inside})"


def stat_value(stat: dict, file, row, column, non_finite: str = "error"):
    """A per-instance ``Stat``'s value: its ``mean``, or ``sum / count``; None if it counts none.

    With ``non_finite="missing"`` a value that is not finite gives
    :data:`~rankstats_collectors.files._scored_rows.NOT_FINITE` (the reason to skip it).
    """
    count = stat.get("count")
    if (
        count is not None
        and number(
            count, file, row=row, column=f"{column}.count", what="count", nan_is_missing=False
        )
        == 0
    ):
        return None
    if "mean" in stat:
        value = number(stat["mean"], file, row=row, column=f"{column}.mean", non_finite=non_finite)
        return NOT_FINITE if value is None else value
    if "sum" in stat and count:
        value = number(stat["sum"], file, row=row, column=f"{column}.sum", non_finite=non_finite)
        return NOT_FINITE if value is None else value / float(count)
    raise file_error(
        file, "the stat has neither 'mean' nor 'sum' and 'count'", row=row, column=column
    )
