"""Importer of result tables: CSV, JSON lines or Parquet, long or wide.

A long table has one row per score, with columns naming the model, task,
template and (optionally) sample; a wide table has one row per (task,
template[, sample]) and one score column per model, as many papers release
their results. :func:`load` maps the columns explicitly, reads the files a
block of rows at a time, checks every cell it uses, and builds the cube at the
end. See ``docs/importers/tables.md``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

import rankstats
import rankstats_collectors
from rankstats import _text
from rankstats.cube import label_text
from rankstats.validation import label_problem

from . import ImporterError, file_error
from ._lm_eval_read import records
from ._paths import as_paths, readable_file
from ._scored_rows import NAN_SCORE, NOT_FINITE, SCORE_OPTIONS, check_range, kind_of
from ._summary import ImportSummary

__all__ = ["FORMATS", "OPTIONS", "load"]

FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
KEYS = ("model", "task", "template", "sample")
_BLOCK = 65536
_SAMPLE = "sample"


def _model_columns_option(function, name, value):
    """A list of columns (a list, or a JSON list), or a regular expression (other text)."""
    if isinstance(value, (list, tuple)) or (
        isinstance(value, str) and value.strip().startswith("[")
    ):
        return _text.text_list(function, name, value)
    return _text.regex()(function, name, value)


OPTIONS = {
    "layout": _text.choice("long", "wide"),
    "model": _text.text,
    "task": _text.text,
    "template": _text.text,
    "sample": _text.optional(_text.text),
    "score": _text.text,
    "standard_error": _text.optional(_text.text),
    "model_columns": _text.optional(_model_columns_option),
    "constants": _text.optional(_text.mapping(keys=KEYS, values=_text.text)),
    "attrs": _text.text_list,
    "format": _text.optional(_text.choice(*sorted(set(FORMATS.values())))),
    "metric": _text.text,
    "higher_is_better": _text.boolean,
    "block_rows": _text.integer(low=1),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``rankstats import table ... -O NAME=VALUE``)."""


@_text.takes_options("table", OPTIONS)
def load(
    paths,
    *,
    layout: str = "long",
    model: str = "model",
    task: str = "task",
    template: str = "template",
    sample: str | None = "sample",
    score: str = "score",
    standard_error: str | None = None,
    model_columns: str | Sequence[str] | None = None,
    constants: Mapping | None = None,
    attrs: Sequence[str] = (),
    format: str | None = None,
    metric: str = "score",
    score_kind: str | None = None,
    higher_is_better: bool = True,
    block_rows: int = _BLOCK,
    non_finite: str = "error",
) -> xr.Dataset:
    r"""Read long or wide result tables into a cube.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        The table files (``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``,
        ``.parquet``/``.pq``), all of one layout and mapping.
    layout : {"long", "wide"}, default "long"
        ``long``: one score per row, in the column ``score``. ``wide``: one
        column per model (see ``model_columns``).
    model, task, template, sample, score : str
        The columns holding each key and the score (``model`` and ``score``
        only in the long layout). ``sample=None`` reads already aggregated
        per-template scores (a cube without a ``sample`` dimension). A wide
        table without a column ``sample`` (the default name) holds such
        scores, and is read so (the summary says it); otherwise a ``sample``
        column that the files lack is an error, not a silent aggregation.
    standard_error : str, optional
        Long layout of per-template scores (no ``sample`` column): the
        column holding each score's standard error, as the producer
        reported it. It becomes the cube's ``standard_error`` variable; an
        empty or NaN cell is a missing one (counted in the summary), a
        negative or infinite one an error naming the file, row and column.
    model_columns : str or list of str, optional
        Wide layout: the model columns, as a list, or as a regular expression
        matched against every column name; a group named ``model`` (or the
        first group) gives the model's name (``r"(?P<model>.+)_acc"`` reads
        ``flan-t5-xl_acc`` as ``flan-t5-xl``). Default: every column that is
        not a key or an attribute.
    constants : dict, optional
        Keys that are the same for every row and not a column, e.g.
        ``{"task": "snarks"}`` for a file per task.
    attrs : list of str, optional
        Further columns to keep as coordinates; a column named
        ``template_*`` goes to templates, ``sample_*`` to samples, any other
        to the first of task, model, template or sample it is constant
        within (see :func:`rankstats.from_records`).
    format : {"csv", "tsv", "jsonl", "parquet"}, optional
        The files' format; by default from their suffixes.
    metric, higher_is_better
        As for :func:`rankstats.from_records`.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; a score outside its range is an error
        naming the file and row. Inferred from the values when omitted (never
        ``binary`` without samples), and the summary says so.
    block_rows : int, default 65536
        Rows read at a time.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score (``inf``, ``1e400``, JSON ``Infinity``) is: an
        error naming the file, row and column, or a missing score (counted in
        the summary). NaN and empty cells are always missing.

    Returns
    -------
    xarray.Dataset
        A validated cube; ``import_summary`` says what was read and what was
        skipped (rows without a score), and, for per-template scores, where
        their standard errors came from (``standard errors: from column
        'se'``, or ``none written``).

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not of its format, a mapped column is missing, a key is
        empty, a score is not a number, or one (model, task, template,
        sample) appears twice with different scores; the message names the
        file, row (1 = the first record) and column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats_collectors.files import tables
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "acc.csv").write_text(
    ...     "task,template,gpt2,opt-125m\nsnarks,1,0.5,0.6\nsnarks,2,0.4,\n")
    >>> cube = tables.load(folder / "acc.csv", layout="wide")
    >>> cube.score.sel(task="snarks").values.tolist()
    [[0.5, 0.4], [0.6, nan]]
    >>> print(cube.attrs["import_summary"])  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    table: read 4 cells from 1 file (.../acc.csv): kept 3, skipped 1
      2 models, 1 task, 2 templates (max per task)
      skipped 1 cell: 1 × an empty score
      standard errors: none written
      note: the wide table has no 'sample' column: its scores were read as per-template
      scores (a cube without samples); name the column with sample=NAME if it has another
      name
      note: score_kind 'proportion' was inferred from the values (all 3 scores lie in [0, 1],
      some strictly between); pass score_kind=binary or continuous to set it
    """
    files = as_paths(paths)
    if not files:
        raise ImporterError("table: no table files given")
    if standard_error is not None and layout != "long":
        raise ImporterError(
            f"table: standard_error={standard_error!r} needs layout=long (one score and its "
            "standard error per row)"
        )
    constants = dict(constants or {})
    mapping = {"model": model, "task": task, "template": template, "sample": sample}
    keys = [
        k
        for k in KEYS
        if mapping[k] is not None and k not in constants and not (layout == "wide" and k == "model")
    ]
    # a wide table holds one score per cell of its model columns: those are what is counted
    summary = ImportSummary(
        "table", [str(f) for f in files], unit="cell" if layout == "wide" else "row"
    )
    parts = []
    readers = [_Reader(Path(given), str(given), format, block_rows) for given in files]
    if (
        layout == "wide"
        and sample == _SAMPLE
        and "sample" in keys
        and not any(_SAMPLE in reader.columns() for reader in readers)
    ):
        # a wide table is how papers print per-template scores: without a sample
        # column (and none named), that is what it holds
        keys.remove("sample")
        summary.note(
            "the wide table has no 'sample' column: its scores were read as "
            "per-template scores (a cube without samples); name the column with "
            "sample=NAME if it has another name"
        )
    aggregated = "sample" not in keys and "sample" not in constants
    if standard_error is not None and not aggregated:
        raise ImporterError(
            f"table: standard_error={standard_error!r} goes with per-template scores; these "
            f"tables have samples (column {sample!r}): pass sample=null if each row is a "
            "per-template score"
        )
    for reader in readers:
        plan = _plan(reader, layout, mapping, keys, score, model_columns, list(attrs))
        plan["standard_error"] = standard_error
        if standard_error is not None and standard_error not in reader.columns():
            raise file_error(
                reader.file,
                "missing standard-error column (the header has: "
                f"{', '.join(map(repr, reader.columns()))})",
                row="header",
                column=standard_error,
            )
        if standard_error is not None:
            plan["columns"] = list(dict.fromkeys([*plan["columns"], standard_error]))
        parts.extend(_read(reader, plan, summary, non_finite))
    frame = _combine(parts, summary)
    if aggregated:
        _say_standard_errors(frame, summary, standard_error, layout)
    scores = frame["score"].to_numpy(dtype=float)
    kind = kind_of(scores, summary, score_kind, aggregated=aggregated)
    check_range(
        scores,
        kind,
        lambda at, problem: file_error(
            frame["_file"].iloc[at],
            problem,
            row=int(frame["_row"].iloc[at]),
            column=score if layout == "long" else None,
        ),
    )
    for key, value in constants.items():
        frame[key] = str(value)
    cube = rankstats.from_records(
        frame.drop(columns=["_file", "_row"]),
        score_kind=kind,
        higher_is_better=higher_is_better,
        metric=metric,
        source=f"{layout} result table(s): {', '.join(summary.files)}",
    )
    return summary.apply(cube)


class _Reader:
    """One table file read in blocks of rows, each a DataFrame with its first row number."""

    def __init__(self, path: Path, file: str, format_: str | None, block_rows: int):
        self.path, self.file, self.block_rows = path, file, block_rows
        self.format = format_ or FORMATS.get(path.suffix.lower())
        if self.format not in set(FORMATS.values()):
            raise file_error(
                file,
                f"cannot tell the format from the suffix {path.suffix!r}; "
                f"pass format= one of {sorted(set(FORMATS.values()))}",
            )
        readable_file(path, file)

    def columns(self) -> list[str]:
        if self.format == "parquet":
            pq = rankstats_collectors.require("pyarrow.parquet", "io")
            try:
                return list(pq.ParquetFile(self.path).schema_arrow.names)
            except Exception as error:  # pyarrow raises several unrelated types
                raise file_error(self.file, f"not a readable Parquet file ({error})") from None
        if self.format == "jsonl":
            first = next(iter(self._json_blocks(1)), None)
            return [] if first is None else list(first[1].columns)
        try:
            header = pd.read_csv(self.path, dtype=str, nrows=0, sep=self._sep())
        except (
            pd.errors.ParserError,
            pd.errors.EmptyDataError,
            UnicodeDecodeError,
            OSError,
        ) as error:
            raise file_error(
                self.file, f"not a readable {self.format.upper()} file ({error})"
            ) from None
        return list(header.columns)

    def _sep(self) -> str:
        return "\t" if self.format == "tsv" else ","

    def blocks(self, columns: list[str]) -> Iterator[tuple[int, pd.DataFrame]]:
        if self.format == "parquet":
            yield from self._parquet_blocks(columns)
        elif self.format == "jsonl":
            for start, block in self._json_blocks(self.block_rows):
                yield start, block.reindex(columns=columns)
        else:
            yield from self._csv_blocks(columns)

    def _check_fields(self) -> None:
        """Refuse a record with more or fewer fields than the header.

        pandas would drop a field beyond the header's columns (or, when every
        row has one, shift the columns by reading the first as an index), and
        read a missing field as empty: each is an error naming the line.
        """
        try:
            with open(self.path, encoding="utf-8", newline="") as handle:
                reader = csv.reader(handle, delimiter=self._sep())
                header = next(reader, None)
                if header is None:
                    return
                record = 0
                for fields in reader:
                    if not fields:
                        continue  # a blank line, which pandas skips too
                    record += 1
                    if len(fields) != len(header):
                        more = "more" if len(fields) > len(header) else "fewer"
                        raise file_error(
                            self.file,
                            f"line {reader.line_num} has {len(fields)} fields, "
                            f"{more} than the {len(header)} columns of the header; "
                            "every row needs one field per column",
                            row=record,
                        )
        except (csv.Error, UnicodeDecodeError) as error:
            raise file_error(
                self.file, f"not a readable {self.format.upper()} file ({error})"
            ) from None

    def _csv_blocks(self, columns):
        self._check_fields()
        start = 1
        try:
            with pd.read_csv(
                self.path,
                dtype=str,
                keep_default_na=False,
                sep=self._sep(),
                usecols=columns,
                chunksize=self.block_rows,
            ) as chunks:
                for block in chunks:
                    yield start, block[columns]
                    start += len(block)
        except (pd.errors.ParserError, UnicodeDecodeError, OSError) as error:
            raise file_error(
                self.file,
                f"not a readable {self.format.upper()} file ({error})",
                row=f"{start} or later",
            ) from None

    def _json_blocks(self, size: int):
        rows, start, number = [], 1, 0
        for number, (_, record) in enumerate(records(self.path, self.file), start=1):
            rows.append(record)
            if len(rows) == size:
                yield start, self._frame(rows, start)
                rows, start = [], number + 1
        if rows:
            yield start, self._frame(rows, start)

    def _frame(self, rows: list[dict], start: int) -> pd.DataFrame:
        try:
            return pd.DataFrame.from_records(rows)
        except UnicodeEncodeError:
            # a JSON escape of half a surrogate pair: text no file (and no column) can hold
            for offset, record in enumerate(rows):
                for key, value in record.items():
                    if isinstance(value, str) and label_problem(value):
                        raise file_error(
                            self.file,
                            f"{value!r} is not valid Unicode text (a lone surrogate)",
                            row=start + offset,
                            column=key,
                        ) from None
            raise

    def _parquet_blocks(self, columns):
        pq = rankstats_collectors.require("pyarrow.parquet", "io")
        start = 1
        try:
            for batch in pq.ParquetFile(self.path).iter_batches(
                batch_size=self.block_rows, columns=columns
            ):
                block = batch.to_pandas()
                yield start, block[columns]
                start += len(block)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise file_error(self.file, f"not a readable Parquet file ({error})") from None


def _plan(reader: _Reader, layout, mapping, keys, score, model_columns, attrs) -> dict:
    """Which columns to read, and which hold the models' scores in a wide table."""
    header = reader.columns()
    needed = [mapping[k] for k in keys] + attrs
    if layout == "long":
        needed.append(score)
    missing = [c for c in needed if c not in header]
    if missing:
        hint = (
            "; for per-template scores without samples pass sample=null (-O sample=null)"
            if "sample" in keys and missing[0] == mapping["sample"]
            else ""
        )
        raise file_error(
            reader.file,
            f"missing column (the header has: {', '.join(map(repr, header)) or 'nothing'}){hint}",
            row="header",
            column=missing[0],
        )
    plan = {"keys": {k: mapping[k] for k in keys}, "attrs": attrs, "score": score, "models": None}
    if layout == "wide":
        taken = set(needed)
        plan["models"] = _model_columns(reader.file, header, taken, model_columns)
        needed.extend(plan["models"])
    plan["columns"] = list(dict.fromkeys(needed))
    return plan


def _model_columns(file: str, header: list[str], taken: set, model_columns) -> dict[str, str]:
    """Column -> model name, for a wide table."""
    if model_columns is None:
        found = {c: c for c in header if c not in taken}
    elif isinstance(model_columns, str):
        pattern = re.compile(model_columns)
        found = {}
        for column in header:
            match = pattern.fullmatch(column)
            if match and column not in taken:
                groups = match.groupdict().get("model") or (
                    match.group(1) if pattern.groups else column
                )
                found[column] = groups
    else:
        absent = [c for c in model_columns if c not in header]
        if absent:
            raise file_error(
                file,
                f"missing model column (the header has: {', '.join(map(repr, header))})",
                row="header",
                column=absent[0],
            )
        found = {c: c for c in model_columns}
    if not found:
        raise file_error(
            file,
            "no model columns: every column is a key or an attribute, or "
            "none matches model_columns",
            row="header",
        )
    for column, name in found.items():
        problem = label_problem(str(name))
        if problem:
            raise file_error(file, f"the model {name!r} {problem}", row="header", column=column)
    return found


def _read(reader: _Reader, plan: dict, summary, non_finite: str) -> list[pd.DataFrame]:
    parts = []
    for start, block in reader.blocks(plan["columns"]):
        rows = np.arange(start, start + len(block))
        keys = {}
        for key, column in plan["keys"].items():
            keys[key] = _key_values(block[column], reader.file, rows, column)
        if plan["models"] is None:
            scored = [(None, plan["score"])]
        else:
            scored = [(name, column) for column, name in plan["models"].items()]
        for name, column in scored:
            values, empty, nan, infinite = _scores(
                block[column], reader.file, rows, column, reader.format
            )
            if infinite.any() and non_finite == "error":
                at = int(np.flatnonzero(infinite)[0])
                shown = _plain(block[column].iloc[at])
                raise file_error(
                    reader.file,
                    f"the score {shown!r} is not a finite number "
                    "(pass non_finite=missing to read such scores "
                    "as missing)",
                    row=int(rows[at]),
                    column=column,
                )
            summary.skip("an empty score", int(empty.sum()))
            summary.skip(NAN_SCORE, int(nan.sum()))
            summary.skip(NOT_FINITE, int(infinite.sum()))
            keep = ~(empty | nan | infinite)
            if not keep.any():
                continue
            part = {key: pd.Categorical(values_[keep]) for key, values_ in keys.items()}
            if name is not None:
                part["model"] = pd.Categorical(np.full(int(keep.sum()), name, dtype=object))
            for column_ in plan["attrs"]:
                part[column_] = block[column_].to_numpy()[keep]
            part["score"] = values[keep]
            if plan.get("standard_error") is not None:
                part["standard_error"] = _standard_errors(
                    block[plan["standard_error"]], reader, rows, plan["standard_error"]
                )[keep]
            part["_file"] = reader.file
            part["_row"] = rows[keep]
            parts.append(pd.DataFrame(part))
    return parts


def _key_values(column: pd.Series, file: str, rows: np.ndarray, name: str) -> np.ndarray:
    """The labels of a key column as text (numbers as their text, as from_records has them)."""
    raw = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(raw, skipna=False) == "string":  # every cell text: CSV, TSV
        values = raw
        empty = (pd.Series(raw, dtype=object).str.strip() == "").to_numpy()
        if empty.any():
            at = int(np.flatnonzero(empty)[0])
            raise file_error(
                file, "empty: every row needs a value here", row=int(rows[at]), column=name
            )
    else:
        values = np.empty(len(raw), dtype=object)
        for at, value in enumerate(raw):
            if (
                value is None
                or (isinstance(value, float) and np.isnan(value))
                or (isinstance(value, str) and not value.strip())
            ):
                raise file_error(
                    file, "empty: every row needs a value here", row=int(rows[at]), column=name
                )
            values[at] = label_text(value)
            if values[at] is None:
                raise file_error(
                    file,
                    f"{value!r} is a {type(value).__name__}, not text or a number",
                    row=int(rows[at]),
                    column=name,
                )
    for label in pd.unique(values):
        problem = label_problem(label)
        if problem:
            # found by Python's ==: NumPy's would drop a trailing NUL from the label
            at = next(i for i, value in enumerate(values) if value == label)
            raise file_error(file, f"the label {label!r} {problem}", row=int(rows[at]), column=name)
    return values


def _scores(column: pd.Series, file: str, rows: np.ndarray, name: str, format_: str):
    """The scores as floats, and masks of empty, NaN and infinite cells.

    A cell that is not a number raises, naming the file, row and column.
    """
    if format_ in ("csv", "tsv"):
        text = column.astype(str).str.strip()
        empty = (text == "").to_numpy()
        values = pd.to_numeric(
            text.where(~pd.Series(empty, index=text.index)), errors="coerce"
        ).to_numpy(dtype=float)
        spelled_nan = text.str.lower().isin(["nan"]).to_numpy()
        bad = np.isnan(values) & ~empty & ~spelled_nan
    else:
        raw = column.to_numpy(dtype=object)
        empty = (
            np.array([v is None or v is pd.NA or v is pd.NaT for v in raw], dtype=bool)
            if raw.size
            else np.zeros(0, bool)
        )
        numeric = (
            np.array(
                [isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)) for v in raw],
                dtype=bool,
            )
            if raw.size
            else np.zeros(0, bool)
        )
        bad = ~numeric & ~empty
        values = np.full(len(raw), np.nan)
        if numeric.any():
            values[numeric] = raw[numeric].astype(float)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise file_error(
            file, f"{column.iloc[at]!r} is not a number", row=int(rows[at]), column=name
        )
    nan = np.isnan(values) & ~empty
    return values, empty, nan, np.isinf(values)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _standard_errors(column: pd.Series, reader, rows: np.ndarray, name: str) -> np.ndarray:
    """A standard-error column as floats, NaN where empty; a negative one raises."""
    values, _, _, infinite = _scores(column, reader.file, rows, name, reader.format)
    bad = infinite | (values < 0)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise file_error(
            reader.file,
            f"the standard error {_plain(column.iloc[at])!r} is not a number of at least 0",
            row=int(rows[at]),
            column=name,
        )
    return values


def _say_standard_errors(frame: pd.DataFrame, summary, column: str | None, layout: str) -> None:
    """The summary's line on where the standard errors came from."""
    if column is None:
        summary.standard_errors = "none written" + (
            " (name their column with standard_error=COLUMN)" if layout == "long" else ""
        )
        return
    missing = int(frame["standard_error"].isna().sum())
    summary.standard_errors = f"from column {column!r}" + (
        f"; {missing} of {len(frame)} empty or NaN (missing)" if missing else ""
    )


def _combine(parts: list[pd.DataFrame], summary) -> pd.DataFrame:
    """One frame of every block; repeated keys with one score are dropped, others raise."""
    if not parts:
        reasons = "; ".join(f"{n} × {reason}" for reason, n in summary.skipped.most_common())
        raise file_error(
            ", ".join(summary.files), f"no scores to import: {reasons or 'the files hold no rows'}"
        )
    columns = parts[0].columns
    frame = pd.DataFrame(
        {
            column: (
                pd.api.types.union_categoricals([p[column] for p in parts])
                if isinstance(parts[0][column].dtype, pd.CategoricalDtype)
                else np.concatenate([p[column].to_numpy() for p in parts])
            )
            for column in columns
        }
    )
    keys = [k for k in KEYS if k in frame.columns]
    repeated = frame.duplicated(keys, keep=False).to_numpy()
    if repeated.any():
        block = frame.loc[repeated].sort_values(keys, kind="stable")
        scores = block["score"].to_numpy()
        same_key = ~block.duplicated(keys, keep="first").to_numpy()
        first_score = pd.Series(np.where(same_key, scores, np.nan)).ffill().to_numpy()
        differ = np.flatnonzero(scores != first_score)
        if differ.size:
            at = int(differ[0])
            row = block.iloc[at]
            first = block.iloc[int(np.flatnonzero(same_key[: at + 1])[-1])]
            where = ", ".join(f"{k}={row[k]!r}" for k in keys)
            raise file_error(
                row["_file"],
                f"({where}) appears twice with different scores: "
                f"{first['score']:g} (file {first['_file']!r}, row "
                f"{first['_row']}) and {row['score']:g}",
                row=int(row["_row"]),
                column="score",
            )
        dropped = frame.duplicated(keys, keep="first")
        summary.skip("a score given twice (same key, same score)", int(dropped.sum()))
        frame = frame.loc[~dropped.to_numpy()].reset_index(drop=True)
    summary.keep(len(frame))
    return frame
