"""Per-sample scores gathered from result files, checked for repeats, and turned into a cube.

Every row remembers where it was read (file and row), so a sample logged
twice with two different scores is reported with both places.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import rankstats
from rankstats import _text
from rankstats.cube import infer_score_kind, label_text
from rankstats.validation import SCORE_KINDS, label_problem

from . import ImporterError, file_error
from ._paths import as_paths, few, files_in
from ._summary import ImportSummary

__all__ = [
    "KEYS",
    "NAN_SCORE",
    "NON_FINITE",
    "SCORE_OPTIONS",
    "as_paths",
    "check_range",
    "drop_missing",
    "drop_repeats",
    "files_in",
    "kind_of",
    "label",
    "number",
    "to_cube",
]

KEYS = ["model", "task", "template", "sample"]
NON_FINITE = ("error", "missing")
_REPEATED = "a sample logged twice with the same score"
NOT_FINITE = "a score that is not a finite number, read as missing (non_finite='missing')"
#: The one rule of every importer for a NaN score: it is missing, skipped and counted under
#: this reason (the producers write NaN where a metric could not be computed).
NAN_SCORE = "a NaN score (missing)"

#: The options every importer of scores takes: the kind of score, and what infinite scores mean.
SCORE_OPTIONS = {
    "score_kind": _text.optional(_text.choice(*SCORE_KINDS)),
    "non_finite": _text.choice(*NON_FINITE),
}


def number(
    value,
    file: str,
    *,
    row=None,
    column=None,
    what: str = "score",
    non_finite: str = "error",
    nan_is_missing: bool = True,
) -> float | None:
    """``value`` as a finite float, or an error naming ``file``, ``row`` and ``column``.

    Booleans count as 1 and 0; strings that spell a number are read as numbers.
    A NaN (however spelled) comes back as NaN: a missing score, which
    :func:`to_cube` skips and counts under :data:`NAN_SCORE`. An infinite
    value is an error, or with ``non_finite="missing"`` None (the caller
    skips it and says so). Where NaN cannot mean a missing score (a count),
    ``nan_is_missing=False`` makes it an error too.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        result = float(value)
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            raise file_error(
                file, f"the {what} {value!r} is not a number", row=row, column=column
            ) from None
    elif value is None:
        raise file_error(file, f"the {what} is missing", row=row, column=column)
    else:
        raise file_error(file, f"the {what} {value!r} is not a number", row=row, column=column)
    if math.isnan(result) and nan_is_missing:
        return math.nan
    if not math.isfinite(result):
        if non_finite == "missing":
            return None
        raise file_error(
            file,
            f"the {what} {value!r} is not a finite number (pass "
            "non_finite=missing to read such scores as missing)",
            row=row,
            column=column,
        )
    return result


def label(value, file, *, row=None, column=None) -> str:
    """``value`` as a label (text; numbers as their text), or an error naming where it was read.

    Empty labels, control characters and lone surrogates (which JSON escapes
    can hold but no file of text can store) are refused here, where the file
    and row are known.
    """
    text = label_text(value)
    if text is None:
        raise file_error(
            file,
            f"{value!r} is a {type(value).__name__}, not text or a number",
            row=row,
            column=column,
        )
    problem = label_problem(text)
    if problem:
        raise file_error(file, f"the label {text!r} {problem}", row=row, column=column)
    return text


def kind_of(
    scores,
    summary: ImportSummary,
    given: str | None,
    *,
    aggregated: bool = False,
    declared: str | None = None,
    why: str = "",
) -> str:
    """The score kind: ``given``, else ``declared`` by the source, else inferred and noted.

    An inferred kind goes into the summary with the reason and how to set it.
    """
    if given is not None:
        return given
    if declared is not None:
        summary.note(f"score_kind {declared!r}: {why}")
        return declared
    kind, reason = infer_score_kind(scores, aggregated=aggregated)
    others = " or ".join(k for k in SCORE_KINDS if k != kind)
    summary.note(
        f"score_kind {kind!r} was inferred from the values ({reason}); pass "
        f"score_kind={others} to set it"
    )
    return kind


def check_range(scores: np.ndarray, kind: str, error) -> None:
    """Raise ``error(i, problem)`` for the first score ``i`` outside the range of ``kind``."""
    values = np.asarray(scores, dtype=float)
    if kind == "binary":
        bad = ~np.isnan(values) & (values != 0) & (values != 1)
        allowed = "0 or 1"
    elif kind == "proportion":
        bad = (values < 0) | (values > 1)
        allowed = "in [0, 1]"
    else:
        return
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise error(
            at,
            f"the score {values[at]:g} is not {allowed}, as score_kind={kind!r} "
            f"requires ({int(bad.sum())} such score(s))",
        )


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
        raise file_error(
            same.iloc[-1]["file"],
            f"the sample ({label}) is logged more than once with different "
            f"scores ({'; '.join(places)})",
            row=_row(same.iloc[-1]["row"]),
            column="score",
        )
    kept = ~frame.duplicated(keys, keep="first")
    summary.skip(_REPEATED, int((~kept).sum()))
    return frame.loc[kept].reset_index(drop=True)


def drop_missing(frame: pd.DataFrame, summary: ImportSummary) -> pd.DataFrame:
    """``frame`` without its rows whose ``score`` is NaN, each counted under :data:`NAN_SCORE`."""
    if frame.empty or "score" not in frame:
        return frame
    missing = pd.to_numeric(frame["score"], errors="coerce").isna().to_numpy()
    if not missing.any():
        return frame
    summary.skip(NAN_SCORE, int(missing.sum()))
    return frame.loc[~missing].reset_index(drop=True)


def to_cube(
    frame: pd.DataFrame,
    summary: ImportSummary,
    *,
    source: str,
    metric: str,
    score_kind: str | None = None,
    higher_is_better: bool = True,
    attrs: dict | None = None,
    aggregated: bool = False,
    declared: tuple[str, str] | None = None,
):
    """The cube of ``frame`` (its ``file`` and ``row`` columns dropped), with the summary.

    ``score_kind`` is the user's; else ``declared`` ``(kind, why)`` is the
    source's own word; else the kind is inferred (never ``binary`` for
    ``aggregated`` scores) and the summary says so. A NaN score is missing:
    skipped and counted (:func:`drop_missing`).
    """
    frame = drop_missing(frame, summary)
    if frame.empty:
        raise ImporterError(
            "no scores were read: "
            + (_skipped(summary) or "the files hold no scored samples")
            + f" (files: {few(summary.files)})"
        )
    frame = drop_repeats(frame, summary, [k for k in KEYS if k in frame])
    scores = frame["score"].to_numpy(dtype=float)
    kind = kind_of(
        scores,
        summary,
        score_kind,
        aggregated=aggregated,
        declared=declared[0] if declared else None,
        why=declared[1] if declared else "",
    )
    check_range(
        scores,
        kind,
        lambda at, problem: file_error(
            frame["file"].iloc[at], problem, row=_row(frame["row"].iloc[at]), column="score"
        ),
    )
    summary.keep(len(frame))
    records = frame.drop(columns=["file", "row"])
    for column in records.columns:
        if isinstance(records[column].dtype, pd.CategoricalDtype):
            records[column] = records[column].astype(object)
    cube = rankstats.from_records(
        records, score_kind=kind, metric=metric, source=source, higher_is_better=higher_is_better
    )
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
    return (
        "every row was skipped ("
        + "; ".join(f"{n} × {reason}" for reason, n in summary.skipped.most_common())
        + ")"
    )


def latest_runs(frame: pd.DataFrame, runs: str, summary, unit: str) -> pd.DataFrame:
    """One run per model, task and template: the latest (``runs="latest"``) or an error.

    ``frame`` has a sortable ``run`` column (later runs sort higher) and a
    ``file`` column; ``unit`` names what the producer calls a task in the
    summary's skip reason. The ``run`` column is dropped.
    """
    keys = ["model", "task", "template"]
    several = frame.groupby(keys)["run"].transform("nunique") > 1
    if several.any():
        first = frame.loc[several].iloc[0]
        same = frame.loc[(frame[keys] == first[keys]).all(axis=1), "file"].unique()
        if runs == "error":
            raise ImporterError(
                f"model {first['model']!r} ran {first['task']!r} (template "
                f"{first['template']!r}) in several runs; pass runs=latest "
                f"to keep the latest (files: {few(same)})"
            )
        latest = frame.groupby(keys)["run"].transform("max")
        keep = ~several | (frame["run"] == latest)
        summary.skip(f"an older run of the same model and {unit}", int((~keep).sum()))
        frame = frame.loc[keep]
    return frame.drop(columns="run").reset_index(drop=True)
