"""Per-sample scores gathered from result files, checked for repeats, and turned into a cube.

Every row remembers where it was read (file and row), so a sample logged
twice with two different scores is reported with both places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

import rankstats

from . import file_error
from ._summary import ImportSummary

KEYS = ["model", "task", "template", "sample"]
_REPEATED = "a sample logged twice with the same score"


def as_paths(paths) -> list[Path]:
    """``paths`` (one path or a sequence of them) as a list of :class:`~pathlib.Path`."""
    if isinstance(paths, (str, Path)) or not isinstance(paths, Sequence):
        paths = [paths]
    return [Path(path) for path in paths]


def files_in(paths, suffixes: Sequence[str]) -> list[Path]:
    """The files named by ``paths``; a folder stands for the files below it with ``suffixes``.

    Raises an error naming a path that does not exist or a folder without such files.
    """
    found = []
    for path in as_paths(paths):
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.suffix in suffixes)
            if not inside:
                names = " or ".join(suffixes)
                raise file_error(path, f"the folder holds no {names} file")
            found.extend(inside)
        elif not path.exists():
            raise file_error(path, "the file does not exist")
        else:
            found.append(path)
    return found


def number(value, file: str, *, row=None, column=None, what: str = "score") -> float:
    """``value`` as a finite float, or an error naming ``file``, ``row`` and ``column``.

    Booleans count as 1 and 0; strings that spell a number are read as numbers.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        result = float(value)
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            raise file_error(file, f"the {what} {value!r} is not a number",
                             row=row, column=column) from None
    elif value is None:
        raise file_error(file, f"the {what} is missing", row=row, column=column)
    else:
        raise file_error(file, f"the {what} {value!r} is not a number", row=row, column=column)
    if not math.isfinite(result):
        raise file_error(file, f"the {what} {value!r} is not a finite number",
                         row=row, column=column)
    return result


def drop_repeats(frame: pd.DataFrame, summary: ImportSummary, keys=KEYS) -> pd.DataFrame:
    """``frame`` without repeated keys; a key repeated with another score is an error.

    ``frame`` holds the key columns, ``score``, ``file`` and ``row`` (where
    each score was read; ``row`` may be None). A repeat with the same score is
    counted as skipped.
    """
    repeated = frame.duplicated(keys, keep=False)
    if not repeated.any():
        return frame
    groups = frame.loc[repeated].groupby(keys, sort=False)["score"]
    spread = groups.transform("max") - groups.transform("min")
    clash = spread.to_numpy() > 0
    if clash.any():
        first = frame.loc[repeated].loc[clash]
        key = tuple(first.iloc[0][k] for k in keys)
        same = frame.loc[repeated]
        same = same[(same[keys] == pd.Series(key, index=keys)).all(axis=1)]
        places = [f"{_place(r.file, r.row)}: {r.score:g}" for r in same.itertuples()]
        label = ", ".join(f"{k}={v!r}" for k, v in zip(keys, key, strict=True))
        raise file_error(same.iloc[-1]["file"],
                         f"the sample ({label}) is logged more than once with different "
                         f"scores ({'; '.join(places)})",
                         row=_row(same.iloc[-1]["row"]), column="score")
    kept = ~frame.duplicated(keys, keep="first")
    summary.skip(_REPEATED, int((~kept).sum()))
    return frame.loc[kept].reset_index(drop=True)


def to_cube(frame: pd.DataFrame, summary: ImportSummary, *, source: str, metric: str,
            score_kind: str | None = None, higher_is_better: bool = True,
            attrs: dict | None = None):
    """The cube of ``frame`` (its ``file`` and ``row`` columns dropped), with the summary."""
    if frame.empty:
        raise file_error(", ".join(summary.files), "no scores were read: "
                         + (_skipped(summary) or "the files hold no scored samples"))
    frame = drop_repeats(frame, summary)
    summary.read(len(frame))
    records = frame.drop(columns=["file", "row"])
    for column in records.columns:
        if isinstance(records[column].dtype, pd.CategoricalDtype):
            records[column] = records[column].astype(object)
    cube = rankstats.from_records(records, score_kind=score_kind, metric=metric, source=source,
                                  higher_is_better=higher_is_better)
    cube.attrs.update(attrs or {})
    return summary.apply(cube)


def _row(row):
    """A row number, or None where the place has none (a member of an archive)."""
    return None if row is None or (isinstance(row, float) and math.isnan(row)) else int(row)


def _place(file, row) -> str:
    row = _row(row)
    return repr(str(file)) + ("" if row is None else f" row {row}")


def _skipped(summary: ImportSummary) -> str:
    if not summary.skipped:
        return ""
    return "every row was skipped (" + "; ".join(
        f"{n} × {reason}" for reason, n in summary.skipped.most_common()) + ")"
