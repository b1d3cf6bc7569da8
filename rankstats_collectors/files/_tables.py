"""Strict readers of the cells of published tables: every problem names its file, row and column.

Rows are numbered as records: 1 is the first row after the header (a quoted
cell may span several lines of the file).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import file_error
from ._paths import readable_file

_TRUE = ("true", "1")
_FALSE = ("false", "0")


def read_csv(path: Path, file: str, *, header=0) -> pd.DataFrame:
    """Every cell as a string (empty cells as ``""``), or an error naming ``file``."""
    readable_file(path, file)
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, header=header)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise file_error(file, f"not a readable CSV file ({error})") from error
    except OSError as error:
        raise file_error(file, f"cannot be read ({error.strerror or error})") from None


def require_columns(header, columns, file: str) -> None:
    """Raise naming the first of ``columns`` missing from ``header`` (the column names)."""
    header = list(header)
    for column in columns:
        if column not in header:
            raise file_error(
                file,
                f"missing column (the header has: {', '.join(map(repr, header))})",
                row="header",
                column=column,
            )


def repeated_column(columns) -> str | None:
    """A column name pandas had to rename because the header repeats it (``x.1``)."""
    names = set(columns)
    for column in columns:
        match = re.fullmatch(r"(.*)\.\d+", str(column))
        if match and match.group(1) in names:
            return match.group(1)
    return None


def _first(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def numbers(
    block: pd.DataFrame,
    file: str,
    *,
    rows,
    what: str = "a number",
    allow_empty: bool = False,
    allow_nan: bool = False,
    low=None,
    high=None,
) -> np.ndarray:
    """The cells of ``block`` (strings) as floats; the first bad cell raises.

    ``rows`` labels the block's rows in messages (record numbers or keys).
    With ``allow_nan`` a cell spelling NaN (``nan``, ``NaN``) is read as NaN,
    a missing score the caller skips and counts.
    """
    text = block.to_numpy(dtype=object).astype(str)
    stripped = np.char.strip(text)
    flat = pd.to_numeric(pd.Series(stripped.ravel()), errors="coerce")
    values = flat.to_numpy(dtype=float).reshape(text.shape)
    empty = stripped == ""
    spelled_nan = np.char.lower(stripped) == "nan"
    bad = np.isnan(values) & ~(empty & allow_empty) & ~(spelled_nan & allow_nan)
    if bad.any():
        row, column = _first(bad)
        shown = "empty" if empty[row, column] else f"{str(text[row, column])!r} is not {what}"
        raise file_error(file, shown, row=rows[row], column=block.columns[column])
    outside = np.zeros(values.shape, dtype=bool)
    if low is not None:
        outside |= values < low
    if high is not None:
        outside |= values > high
    if outside.any():
        row, column = _first(outside)
        raise file_error(
            file,
            f"{str(text[row, column])!r} lies outside [{low}, {high}]",
            row=rows[row],
            column=block.columns[column],
        )
    return values


def whole_numbers(column: pd.Series, file: str, *, rows, low: int = 0) -> np.ndarray:
    """A column of whole numbers at least ``low``, as int64."""
    values = numbers(column.to_frame(), file, rows=rows, what="a whole number")[:, 0]
    bad = (values != np.round(values)) | (values < low)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise file_error(
            file,
            f"{column.iloc[row]!r} is not a whole number >= {low}",
            row=rows[row],
            column=column.name,
        )
    return values.astype(np.int64)


def flags(column: pd.Series, file: str, *, rows, doubtful: bool = False) -> np.ndarray:
    """A column of True/False (or 1/0) flags as booleans.

    With ``doubtful`` a flag may carry a question mark (``"0?"``): it counts
    as the flag it qualifies.
    """
    text = column.astype(str).str.strip().str.lower()
    if doubtful:
        text = text.str.removesuffix("?")
    true, false = text.isin(_TRUE), text.isin(_FALSE)
    bad = ~(true | false).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        allowed = "True/False or 1/0" + (" (optionally followed by '?')" if doubtful else "")
        raise file_error(
            file,
            f"{column.iloc[row]!r} is not a flag ({allowed})",
            row=rows[row],
            column=column.name,
        )
    return true.to_numpy()


def template_index(column: pd.Series, file: str, *, rows) -> np.ndarray:
    """Template numbers: whole, each once, and 1 to n without gaps (in any order)."""
    index = whole_numbers(column, file, rows=rows, low=1)
    repeated = pd.Series(index).duplicated().to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        first = int(np.flatnonzero(index == index[row])[0])
        raise file_error(
            file,
            f"template index {index[row]} repeats row {rows[first]}",
            row=rows[row],
            column=column.name,
        )
    ordered = np.sort(index)
    gaps = np.flatnonzero(ordered != np.arange(1, len(index) + 1))
    if gaps.size:
        missing, holder = gaps[0] + 1, ordered[gaps[0]]
        row = int(np.flatnonzero(index == holder)[0])
        raise file_error(
            file,
            f"template index {missing} is missing (the next index is {holder}); "
            "templates are numbered from 1 without gaps",
            row=rows[row],
            column=column.name,
        )
    return index
