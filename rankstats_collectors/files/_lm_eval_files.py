"""The files of an lm-evaluation-harness output folder: which is which, and whose run.

``lm_eval --output_path OUT --log_samples`` writes, per model, a folder
``OUT/<org>__<name>/`` holding ``results_<date>.json`` and one
``samples_<task>_<date>.jsonl`` per task, all with the same ``<date>``
(``2024-08-21T03-44-09.494230``). Some copies prefix the results file with
the model (``google__gemma-2b__results_<date>.json``) or add a suffix before
the extension (``samples_asdiv_<date>.first20.jsonl``). Early 0.4 releases
wrote ``samples_<task>.jsonl`` without a date, or named the log after the model
arguments (``pretrained__<org>__<name>_<task>.jsonl``). From 0.4.9,
``--output_path FILE.json`` writes ``FILE_<date>.json``. The 0.3 series wrote
one results file where ``--output_path`` said, with ``results``, ``versions``
and ``config`` and metric keys without a filter (``"acc"``, not ``"acc,none"``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ._lm_eval_read import line_error
from ._lm_eval_results import LAYOUT_03, LAYOUT_04, LAYOUT_049, LAYOUT_JSON, Results
from ._lm_eval_table import is_table_file, read_table
from ._paths import as_paths, found_in, lexists, readable_file

__all__ = [
    "DATE",
    "LAYOUT_03",
    "LAYOUT_04",
    "LAYOUT_049",
    "LAYOUT_JSON",
    "RESULTS",
    "SAMPLES",
    "Results",
    "SamplesFile",
    "expand",
    "folder_model",
    "read_results",
    "results_model",
    "sibling_results",
]

DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES = re.compile(rf"samples_(?P<task>.+?)(?:_(?P<date>{DATE})(?P<rest>[^/\\]*))?\.jsonl?")
RESULTS = re.compile(
    rf"(?:(?:(?P<prefix>.+)__)?results|(?P<stem>.+))_(?P<date>{DATE})"
    rf"(?P<rest>[^/\\]*)\.json"
)


@dataclass
class SamplesFile:
    """One per-sample log: its task and date as its name gives them."""

    path: Path
    file: str
    task: str
    date: str | None


def expand(paths, *, task: str | None) -> tuple[list[SamplesFile], list[Results]]:
    """The samples and results files named by ``paths`` (files, or folders searched deeply).

    A file whose name is that of a log or a results file but that cannot be
    read (a broken link, a link that loops, a folder) is an error, not skipped.
    """
    samples, results, seen = [], [], set()
    for path in as_paths(paths):
        if path.is_dir():
            found = found_in(
                path, lambda name: bool(SAMPLES.fullmatch(name) or RESULTS.fullmatch(name))
            )
            if not found:
                raise line_error(
                    str(path),
                    "the folder holds no lm-evaluation-harness files "
                    "(samples_<task>_<date>.jsonl or results_<date>.json)",
                )
            named = [(p, str(p)) for p in found]
        else:
            named = [(readable_file(path), str(path))]
        for file_path, file in named:
            key = file_path.resolve()
            if key in seen:
                continue
            seen.add(key)
            _classify(file_path, file, task, samples, results)
    return samples, results


def _classify(path: Path, file: str, task: str | None, samples: list, results: list) -> None:
    if is_table_file(path):
        results.append(read_table(path, file))
        return
    match = SAMPLES.fullmatch(path.name)
    if match:
        samples.append(SamplesFile(path, file, match["task"], match["date"]))
        return
    match = RESULTS.fullmatch(path.name)
    if match or (path.suffix == ".json" and task is None):
        results.append(
            read_results(
                path, file, match["date"] if match else None, layout=_layout_of_name(match)
            )
        )
        return
    if task is None:
        raise line_error(
            file,
            "the file name does not say which task the log is of "
            "(lm-evaluation-harness names logs samples_<task>_<date>.jsonl); "
            "pass task=NAME",
        )
    samples.append(SamplesFile(path, file, task, None))


def _layout_of_name(match) -> str:
    if match is None:
        return LAYOUT_JSON
    return LAYOUT_049 if match["stem"] is not None else LAYOUT_04


def read_results(path: Path, file: str, date: str | None, *, layout: str = LAYOUT_JSON) -> Results:
    """Read a results file (small: one whole JSON object).

    A JSON object without a ``results`` object is refused as not lm-evaluation-harness
    output; a 0.3 file (``versions`` and ``config``, no ``configs``, metric keys
    without a filter) is recognised as such.
    """
    readable_file(path, file)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise line_error(
            file, f"not lm-evaluation-harness output: not a JSON results file ({error})"
        ) from None
    except OSError as error:
        raise line_error(file, f"cannot be read ({error.strerror or error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise line_error(
            file,
            "not an lm-evaluation-harness results file: no 'results' object "
            "(lm-evaluation-harness writes 'results' with 'versions' and "
            "'config' in 0.3, and with 'configs' in 0.4)",
            field="results",
        )
    results = data["results"]
    if _is_03(data):
        layout = LAYOUT_03
        # 0.3 had no filters: its "acc" is 0.4's "acc,none"
        results = {
            task: {f"{key},none": value for key, value in values.items()}
            if isinstance(values, dict)
            else values
            for task, values in results.items()
        }
    groups = set(data.get("groups") or {})
    for name, members in (data.get("group_subtasks") or {}).items():
        if members:
            groups.add(name)
    return Results(
        path,
        file,
        date,
        results_model(data),
        results,
        groups,
        data.get("higher_is_better") or {},
        data.get("configs") or {},
        layout,
    )


def _is_03(data: dict) -> bool:
    """A 0.3 results file: ``versions`` and ``config``, no ``configs``, no ``metric,filter`` key."""
    if "configs" in data or not isinstance(data.get("config"), dict) or "versions" not in data:
        return False
    return not any(
        "," in key
        for values in data["results"].values()
        if isinstance(values, dict)
        for key in values
    )


def results_model(data: dict) -> str | None:
    """The model a results file names: ``model_name``, else ``pretrained=`` in ``model_args``."""
    name = data.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = data.get("config") or {}
    arguments = config.get("model_args")
    if isinstance(arguments, dict) and arguments.get("pretrained"):
        return str(arguments["pretrained"])
    if isinstance(arguments, str):
        for part in arguments.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "engine") and value.strip():
                return value.strip()
    return None


def folder_model(path: Path) -> str | None:
    """The model a log's folder names, when it is lm-evaluation-harness's ``org__name``."""
    name = path.parent.name
    if "__" in name:
        return name.replace("__", "/")
    return None


def sibling_results(log: SamplesFile, known: list[Results]) -> Results | None:
    """The results file of the same run: same folder, same date."""
    if log.date is None:
        return None
    for results in known:
        if results.date == log.date and results.path.parent == log.path.parent:
            return results
    for candidate in sorted(log.path.parent.glob(f"*_{log.date}*.json")):
        match = RESULTS.fullmatch(candidate.name)
        if match and not SAMPLES.fullmatch(candidate.name) and lexists(candidate):
            results = read_results(
                candidate, str(candidate), log.date, layout=_layout_of_name(match)
            )
            known.append(results)
            return results
    return None
