"""Readers of the single files of the Mizrahi et al. (2024) release, each checked on its own.

Every reader returns frames indexed by the template number (``template``,
sorted) and raises :class:`rankstats_collectors.files.ImporterError` naming the file,
row and column of the first malformed cell. Agreement between files is checked
by the callers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from . import ImporterError, file_error
from ._paths import as_paths, readable_file
from ._tables import (
    flags,
    numbers,
    read_csv,
    repeated_column,
    require_columns,
    template_index,
    whole_numbers,
)

ACCURACIES = "paraphrases accuracies"
AGGREGATED = "paraphrases accuracies and rankings (aggregated)"
PARAPHRASES = "automatic paraphrases"
METRICS = "metric results"
BENCHMARK_ORDER = ("LMentry", "BBH")  # the paper's order; other folders follow, sorted
SUFFIX = "_acc"
PARAPHRASE_COLUMNS = {
    "prompt idx": "template",
    "default prompt": "is_original",
    "method": "method",
    "language style": "language_style",
    "prompt template": "text",
    "correct": "valid",
    "prompt format": "format",
    "prompt length": "length",
    "samples": "samples",
}
JSON_FIELDS = ("template", "method", "correct", "accs", "ranks")


class Release:
    """The release folder; shows its files by their path inside it."""

    def __init__(self, paths: str | PathLike | Sequence[str | PathLike]):
        paths = as_paths(paths)
        if len(paths) != 1:
            raise ImporterError(
                "mizrahi2024: give the release as one folder (the one holding "
                f"{ACCURACIES!r}), not {len(paths)} paths"
            )
        self.root = paths[0]
        if not self.root.is_dir():
            raise file_error(
                self.root, f"no release folder here (give the folder holding {ACCURACIES!r})"
            )

    def name(self, path: Path) -> str:
        """``path`` as shown in tables: relative to the release, with slashes."""
        return path.relative_to(self.root).as_posix()

    def shown(self, path) -> str:
        """``path`` (a path, or a name inside the release) as shown in messages.

        With the release folder as the user gave it, so that the file a
        message names can be opened from where the command ran.
        """
        path = Path(path)
        inside = path.relative_to(self.root) if path.is_relative_to(self.root) else path
        return (self.root / inside).as_posix()

    def task_files(self, folder: str, suffix: str) -> dict[tuple[str, str], Path]:
        """``{(benchmark, task): path}`` for ``folder/<benchmark>/<task><suffix>``, in order."""
        base = self.root / folder
        if not base.is_dir():
            raise file_error(self.shown(folder), "the folder does not exist in the release")
        found = {(path.parent.name, path.stem): path for path in base.glob(f"*/*{suffix}")}
        if not found:
            raise file_error(
                self.shown(folder), f"no <benchmark>/<task>{suffix} files in the folder"
            )
        order = {name: i for i, name in enumerate(BENCHMARK_ORDER)}
        return dict(
            sorted(found.items(), key=lambda item: (order.get(item[0][0], len(order)), item[0]))
        )


def _records(count: int) -> np.ndarray:
    return np.arange(1, count + 1)


def _located(table: pd.DataFrame, rows, index_column: str, column: str) -> pd.DataFrame:
    """Sort by template; remember where each template and column came from, for messages.

    ``attrs``: ``row`` (template -> its row label in the file), ``index_column``
    (the column holding template numbers) and ``column`` (a format string
    giving a model's or field's column name).
    """
    rows_of = dict(zip(table.index.tolist(), list(rows), strict=True))
    table = table.sort_index()
    table.attrs = {"row": rows_of, "index_column": index_column, "column": column}
    return table


def read_accuracies(release: Release, path: Path) -> pd.DataFrame:
    """A per-template accuracy CSV: ``(template × model)`` accuracies, models in column order."""
    file = release.shown(path)
    frame = read_csv(path, file)
    require_columns(frame.columns, ["paraphrase idx"], file)
    rows = _records(len(frame))
    index = template_index(frame["paraphrase idx"], file, rows=rows)
    columns = [column for column in frame.columns if column != "paraphrase idx"]
    repeated = repeated_column(columns)
    if repeated is not None:
        raise file_error(file, "the header repeats this column", row="header", column=repeated)
    wrong = [c for c in columns if not c.endswith(SUFFIX) or c == SUFFIX]
    if wrong or not columns:
        problem = (
            f"a model column is named '<model>{SUFFIX}'"
            if wrong
            else f"no '<model>{SUFFIX}' columns"
        )
        raise file_error(file, problem, row="header", column=wrong[0] if wrong else None)
    values = numbers(
        frame[columns], file, rows=rows, what="an accuracy", allow_nan=True, low=0, high=1
    )
    models = pd.Index([c.removesuffix(SUFFIX) for c in columns], name="model")
    table = pd.DataFrame(values, index=pd.Index(index, name="template"), columns=models)
    return _located(table, rows, "paraphrase idx", "{}" + SUFFIX)


def read_paraphrases(release: Release, path: Path) -> pd.DataFrame:
    """A paraphrase CSV: one row per template with its text and metadata.

    Columns: ``is_original``, ``method``, ``language_style``, ``text``,
    ``valid`` (``"0?"`` counts as 0), ``valid_flag`` (the cell as written),
    ``format``, ``length`` and ``samples``.
    """
    file = release.shown(path)
    frame = read_csv(path, file)
    require_columns(frame.columns, PARAPHRASE_COLUMNS, file)
    rows = _records(len(frame))
    table = frame[list(PARAPHRASE_COLUMNS)].rename(columns=PARAPHRASE_COLUMNS)
    table["template"] = template_index(frame["prompt idx"], file, rows=rows)
    table["is_original"] = flags(frame["default prompt"], file, rows=rows)
    table["valid"] = flags(frame["correct"], file, rows=rows, doubtful=True)
    table["valid_flag"] = frame["correct"].str.strip()
    table["length"] = whole_numbers(frame["prompt length"], file, rows=rows)
    table["samples"] = whole_numbers(frame["samples"], file, rows=rows, low=1)
    empty = (table["text"].str.strip() == "").to_numpy()
    if empty.any():
        row = int(np.flatnonzero(empty)[0])
        raise file_error(
            file, "the template text is empty", row=rows[row], column="prompt template"
        )
    return _located(table.set_index("template"), rows, "prompt idx", "{}")


def _json_numbers(block: pd.DataFrame, file: str, field: str, rows) -> np.ndarray:
    is_number = block.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
    bad = ~is_number.to_numpy()
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise file_error(
            file,
            f"{block.iat[row, column]!r} is not a number",
            row=rows[row],
            column=f"{field}.{block.columns[column]}",
        )
    return block.to_numpy(dtype=float)


def _json_models(entries: pd.DataFrame, field: str, models: list, file: str, rows) -> None:
    keys = entries[field].map(lambda d: tuple(d) if isinstance(d, dict) else None)
    wrong = keys.map(lambda k: k is None or sorted(k) != sorted(models)).to_numpy()
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        got = keys.iloc[row]
        if got is None:
            problem = f"{entries[field].iloc[row]!r} is not an object of models"
        else:
            extra = sorted(set(got) - set(models))
            missing = sorted(set(models) - set(got))
            problem = (
                f"its models differ from those of row {rows[0]}, accs "
                f"(extra: {extra or 'none'}; missing: {missing or 'none'})"
            )
        raise file_error(file, problem, row=rows[row], column=field)


def read_aggregated(release: Release, path: Path):
    """An aggregated JSON: ``(meta, accs, ranks)``.

    ``meta`` holds ``text``, ``method`` and ``valid`` per template; ``accs``
    and ``ranks`` are ``(template × model)`` frames. Rows are named by their
    key in ``"paraphrases"``; columns by field (``accs.<model>``).
    """
    file = release.shown(path)
    readable_file(path, file)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise file_error(
            file,
            f"not valid JSON ({error.msg})",
            row=error.lineno,
            column=f"character {error.colno}",
        ) from error
    except UnicodeDecodeError as error:
        raise file_error(file, f"not UTF-8 text ({error})") from error
    except OSError as error:
        raise file_error(file, f"cannot be read ({error.strerror or error})") from None
    paraphrases = data.get("paraphrases") if isinstance(data, dict) else None
    if not isinstance(paraphrases, dict) or not paraphrases:
        raise file_error(
            file, "no non-empty 'paraphrases' object", row="top level", column="paraphrases"
        )
    keys = pd.Series(list(paraphrases), name="paraphrases")
    rows = np.array([repr(key) for key in keys], dtype=object)
    index = template_index(keys, file, rows=rows)
    not_objects = np.flatnonzero([not isinstance(v, dict) for v in paraphrases.values()])
    if not_objects.size:
        raise file_error(file, "not an object", row=rows[not_objects[0]], column="paraphrases")
    entries = pd.DataFrame(list(paraphrases.values()), index=keys.to_numpy())
    for field in JSON_FIELDS:
        present = entries[field].notna().to_numpy() if field in entries else np.zeros(len(keys))
        if not present.all():
            raise file_error(file, "missing field", row=rows[int(np.argmin(present))], column=field)
    for field, kind in (("template", str), ("method", str), ("correct", bool)):
        wrong = ~entries[field].map(lambda v, kind=kind: isinstance(v, kind)).to_numpy()
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise file_error(
                file,
                f"{entries[field].iloc[row]!r} is not a {kind.__name__}",
                row=rows[row],
                column=field,
            )
    first = entries["accs"].iloc[0]
    models = list(first) if isinstance(first, dict) else []
    tables = {}
    for field in ("accs", "ranks"):
        _json_models(entries, field, models, file, rows)
        block = pd.DataFrame(entries[field].tolist(), columns=models)
        values = _json_numbers(block, file, field, rows)
        outside = (values < 0) | (values > 1)
        if field == "accs" and outside.any():
            row, column = (int(i) for i in np.argwhere(outside)[0])
            raise file_error(
                file,
                f"{float(values[row, column])!r} lies outside [0, 1]",
                row=rows[row],
                column=f"accs.{models[column]}",
            )
        tables[field] = _located(
            pd.DataFrame(
                values,
                index=pd.Index(index, name="template"),
                columns=pd.Index(models, name="model"),
            ),
            rows,
            "paraphrases",
            field + ".{}",
        )
    accs = tables["accs"]
    meta = _located(
        pd.DataFrame(
            {
                "text": entries["template"].to_numpy(),
                "method": entries["method"].to_numpy(),
                "valid": entries["correct"].to_numpy(dtype=bool),
            },
            index=pd.Index(index, name="template"),
        ),
        rows,
        "paraphrases",
        "{}",
    )
    return meta, accs, tables["ranks"]
