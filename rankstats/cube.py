"""The score cube: model × task × template × sample scores in one labelled Dataset.

Tasks have different templates and samples, so ``template`` and ``sample``
are positions within a task, padded with missing values; the identity of each
position lives in 2-D coordinates (``template_id(task, template)``,
``sample_id(task, sample)``). See ``rankstats/schemas/cube.schema.json``.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from . import _text
from ._version import __version__
from ._xr import mean_over
from .errors import CubeError, DuplicateKeyError, InputTypeError, ScoreValueError
from .validation import SCHEMA_VERSION, SCORE_KINDS, STANDARD_ERROR, label_problem, validate

__all__ = ["from_records", "infer_score_kind", "template_scores"]

KEYS = ("model", "task", "template", "sample")
DUPLICATE_POLICIES = ("error", "first", "last", "mean")
NON_FINITE = ("error", "missing")
_SHOWN = 10


def _any_text(function, name, value) -> str:
    if isinstance(value, str):
        return str(value)  # a str subclass (numpy.str_) stored as plain text
    _text.refuse(function, name, value, "text")


#: The parsers of :func:`from_records`' options (text such as ``"no"`` is read as a user means it).
OPTIONS = {
    "score_kind": _text.optional(_text.choice(*SCORE_KINDS)),
    "higher_is_better": _text.boolean,
    "metric": _text.text,
    "source": _any_text,
    "duplicates": _text.choice(*DUPLICATE_POLICIES),
    "non_finite": _text.choice(*NON_FINITE),
}


def from_records(
    records: pd.DataFrame | Iterable[Mapping],
    *,
    score_kind: str | None = None,
    higher_is_better: bool = True,
    metric: str = "score",
    source: str = "records",
    duplicates: str = "error",
    non_finite: str = "error",
    model_attrs: Sequence[str] = (),
    task_attrs: Sequence[str] = (),
    template_attrs: Sequence[str] = (),
    sample_attrs: Sequence[str] = (),
) -> xr.Dataset:
    r"""Build a score cube from long records.

    Parameters
    ----------
    records : pandas.DataFrame or iterable of dict
        One row per score with columns ``model``, ``task``, ``template``,
        ``score`` and optionally ``sample`` (without it the cube holds
        already aggregated per-template scores), and optionally
        ``standard_error`` (see Notes). Any other column is an attribute of
        templates, models, tasks or samples (see Notes).
    score_kind : {"binary", "proportion", "continuous"}, optional
        Inferred when omitted (see :func:`infer_score_kind`): ``binary`` if
        the scores are 0 and 1, ``proportion`` if all lie in [0, 1] and some
        strictly between, else ``continuous`` (also when every score is the
        same 0 or 1, which tells nothing). When given, a score outside its
        range is an error.
    higher_is_better : bool, default True
        Whether a higher score is a better one (also the text true/false,
        yes/no or 1/0; anything else is refused).
    metric : str
        Name of the metric the scores measure (e.g. ``"accuracy"``).
    source : str
        Provenance: what the records were read or collected from.
    duplicates : {"error", "first", "last", "mean"}
        What to do with several records sharing one (model, task, template,
        sample) key: raise :class:`~rankstats.errors.DuplicateKeyError`
        listing them, keep the first or last, or average their scores.
    non_finite : {"error", "missing"}
        What to do with infinite scores (``inf``, ``1e400``): raise
        :class:`~rankstats.errors.ScoreValueError` naming them, or read them
        as missing. NaN always means missing.
    model_attrs, task_attrs, template_attrs, sample_attrs : sequence of str
        Attribute columns to place explicitly.

    Returns
    -------
    xarray.Dataset
        A validated cube: ``score(model, task, template[, sample])`` with
        coordinates ``template_id(task, template)``, ``sample_id(task,
        sample)`` and one per attribute column; with a ``standard_error``
        column, the variable ``standard_error(model, task, template)``.

    Raises
    ------
    CubeError
        A key column is missing or has missing values, a label is empty, not
        text or a number, or holds a control character, or an attribute
        column takes several values for one template, model, task or sample.
    ScoreValueError
        A score is not a real number (text that is no number, a complex
        number), is infinite (unless ``non_finite="missing"``), or lies
        outside [0, 1] for ``binary`` and ``proportion`` cubes; a standard
        error is not a number, negative or infinite.
    OptionError
        An option is not among its allowed values.
    DuplicateKeyError
        Duplicated keys under ``duplicates="error"``.

    Notes
    -----
    Labels are text: models, tasks, templates and samples given as numbers
    are turned into their text (``0`` and ``"0"`` are one label, ``1.0`` is
    ``"1"``) before duplicates are looked for. A label that is empty or
    holds a control character (NUL, a newline, ...) is refused, with the
    label shown escaped. Models, tasks, templates (within a task) and
    samples (within a task) take positions in the order they first appear.
    Padding positions have the template or sample id ``""``.

    An attribute column not placed explicitly goes to the first of these it
    is constant within: ``template_*`` columns to templates and ``sample_*``
    columns to samples; otherwise task, model, template, then sample.
    Padding takes ``False`` in boolean attributes, NaN in numeric ones and
    ``""`` in the others.

    A ``standard_error`` column holds each per-template score's standard
    error as its producer reported it (NaN or empty: none reported); it goes
    with records without ``sample`` only. Duplicated keys keep the standard
    error of the record kept; under ``duplicates="mean"`` it becomes that of
    the mean of independent scores, :math:`\sqrt{\sum_i s_i^2} / n`.

    Examples
    --------
    >>> import rankstats
    >>> cube = rankstats.from_records([
    ...     {"model": "m1", "task": "t", "template": "a", "score": 0.8},
    ...     {"model": "m1", "task": "t", "template": "b", "score": 0.6},
    ...     {"model": "m2", "task": "t", "template": "a", "score": 0.7},
    ...     {"model": "m2", "task": "t", "template": "b", "score": 0.9},
    ... ], metric="accuracy")
    >>> cube.score.dims
    ('model', 'task', 'template')
    >>> cube.template_id.values.tolist()
    [['a', 'b']]
    >>> cube.attrs["score_kind"]
    'proportion'
    """
    options = _text.check_keywords(
        "from_records",
        {
            "score_kind": score_kind,
            "higher_is_better": higher_is_better,
            "metric": metric,
            "source": source,
            "duplicates": duplicates,
            "non_finite": non_finite,
        },
        OPTIONS,
    )
    frame = _as_frame(records)
    keys = [key for key in KEYS if key in frame.columns]
    _check_key_columns(frame, keys)
    frame = frame.assign(**{key: _labels(frame, key) for key in keys})
    frame = frame.assign(score=_numeric_scores(frame, keys, options["non_finite"]))
    if STANDARD_ERROR in frame.columns:
        frame = frame.assign(standard_error=_standard_errors(frame, keys))
    frame = _resolve_duplicates(frame, keys, options["duplicates"])
    kind = options["score_kind"] or infer_score_kind(frame["score"].to_numpy())[0]

    models = pd.unique(frame["model"])
    tasks = pd.unique(frame["task"])
    model_index = pd.Index(models).get_indexer(frame["model"])
    task_index = pd.Index(tasks).get_indexer(frame["task"])
    template_pos, template_ids = _positions(frame, task_index, "template", len(tasks))
    dims = ["model", "task", "template"]
    index = [model_index, task_index, template_pos]
    shape = [len(models), len(tasks), template_ids.shape[1]]
    coords: dict = {
        "model": np.asarray(models, dtype=object),
        "task": np.asarray(tasks, dtype=object),
        "template_id": (("task", "template"), template_ids),
    }
    if "sample" in keys:
        sample_pos, sample_ids = _positions(frame, task_index, "sample", len(tasks))
        dims.append("sample")
        index.append(sample_pos)
        shape.append(sample_ids.shape[1])
        coords["sample_id"] = (("task", "sample"), sample_ids)

    values = np.full(shape, np.nan)
    values[tuple(index)] = frame["score"].to_numpy(dtype=float)
    placed = _place_attributes(
        frame,
        keys,
        model_index,
        task_index,
        template_pos,
        sample_pos if "sample" in keys else None,
        shape,
        {
            "model": model_attrs,
            "task": task_attrs,
            "template": template_attrs,
            "sample": sample_attrs,
        },
    )
    coords.update(placed)
    variables = {"score": (dims, values)}
    if STANDARD_ERROR in frame.columns:
        errors = np.full(shape, np.nan)
        errors[tuple(index)] = frame[STANDARD_ERROR].to_numpy(dtype=float)
        variables[STANDARD_ERROR] = (dims, errors)
    cube = xr.Dataset(variables, coords=coords)
    cube.attrs = provenance(kind, options["higher_is_better"], options["metric"], options["source"])
    return validate(cube)


def provenance(score_kind: str, higher_is_better: bool, metric: str, source: str) -> dict:
    """The attributes every cube carries, stamped now with this library's version.

    Examples
    --------
    >>> from rankstats.cube import provenance
    >>> sorted(provenance("binary", True, "accuracy", "example"))
    ['created_at', 'creation_library_version', 'higher_is_better', 'metric', 'schema_version', \
'score_kind', 'source']
    """
    score_kind = _text.choice(*SCORE_KINDS)("provenance", "score_kind", score_kind)
    higher_is_better = _text.boolean("provenance", "higher_is_better", higher_is_better)
    return {
        "schema_version": SCHEMA_VERSION,
        "score_kind": score_kind,
        "higher_is_better": int(higher_is_better),
        "metric": str(metric),
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "creation_library_version": f"rankstats {__version__}",
        "source": str(source),
    }


def template_scores(cube: xr.Dataset | xr.DataArray) -> xr.DataArray:
    """Per-template scores: the mean over samples, skipping missing ones.

    Parameters
    ----------
    cube : xarray.Dataset or xarray.DataArray
        A cube (or its ``score``). Without a ``sample`` dimension the scores
        are returned as they are.

    Returns
    -------
    xarray.DataArray
        ``score(model, task, template, ...)``; NaN where a template has no
        observed sample (padding, or a model never run).

    Examples
    --------
    >>> import rankstats
    >>> cube = rankstats.from_records([
    ...     {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1},
    ...     {"model": "m", "task": "t", "template": "a", "sample": 2, "score": 0},
    ...     {"model": "m", "task": "t", "template": "b", "sample": 1, "score": 1},
    ... ])
    >>> rankstats.template_scores(cube).values.tolist()
    [[[0.5, 1.0]]]
    """
    scores = cube["score"] if isinstance(cube, xr.Dataset) else cube
    if "sample" not in scores.dims:
        return scores
    reduced = mean_over(scores, "sample")
    return reduced.drop_vars([c for c in reduced.coords if "sample" in reduced[c].dims])


def infer_score_kind(scores, *, aggregated: bool = False) -> tuple[str, str]:
    """The kind of ``scores`` as far as their values tell it, and why.

    Parameters
    ----------
    scores : array_like of float
        The scores; NaN is missing.
    aggregated : bool, default False
        The scores are means (per template, over trials or epochs): never
        ``binary``, even where every mean happens to be 0 or 1.

    Returns
    -------
    kind : str
        ``binary`` if the scores are 0 and 1 (both present); ``proportion``
        if all lie in [0, 1]; ``continuous`` otherwise, and also when every
        score is the same 0 or 1 (which fits every kind).
    reason : str
        What in the values decided it, for an import summary.

    Examples
    --------
    >>> from rankstats.cube import infer_score_kind
    >>> infer_score_kind([0, 1, 1])
    ('binary', 'all 3 scores are 0 or 1')
    >>> infer_score_kind([0.0, 0.0])[0]
    'continuous'
    >>> infer_score_kind([0, 1, 1.5, 1])
    ('continuous', '1 of 4 scores lie outside [0, 1] (e.g. 1.5); the other 3 are 0 or 1')
    """
    values = np.asarray(scores, dtype=float).ravel()
    observed = values[~np.isnan(values)]
    count = observed.size
    if count == 0:
        return "continuous", "no score to tell the kind from"
    zero_one = (observed == 0) | (observed == 1)
    inside = (observed >= 0) & (observed <= 1)
    if zero_one.all():
        distinct = np.unique(observed)
        if len(distinct) == 1:
            return "continuous", (f"all {count} scores are {distinct[0]:g}, which fits any kind")
        if aggregated:
            return "proportion", f"all {count} scores are means in [0, 1]"
        return "binary", f"all {count} scores are 0 or 1"
    if inside.all():
        return "proportion", f"all {count} scores lie in [0, 1], some strictly between"
    outside = int((~inside).sum())
    first = observed[~inside][0]
    reason = f"{outside} of {count} scores lie outside [0, 1] (e.g. {first:g})"
    if zero_one[inside].all() and inside.any():
        reason += f"; the other {count - outside} are 0 or 1"
    return "continuous", reason


def _as_frame(records) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        return records.reset_index(drop=True)
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise InputTypeError(
            "from_records: records must be a pandas DataFrame or an iterable "
            f"of dicts, not {type(records).__name__}"
        )
    rows = list(records)
    bad = next((i for i, row in enumerate(rows) if not isinstance(row, Mapping)), None)
    if bad is not None:
        raise InputTypeError(
            f"from_records: record {bad} is a {type(rows[bad]).__name__}, not a dict"
        )
    try:
        return pd.DataFrame.from_records(rows)
    except UnicodeEncodeError:
        for i, row in enumerate(rows):  # half a surrogate pair: text no file can hold
            for key, value in row.items():
                if isinstance(value, str) and label_problem(value):
                    raise CubeError(
                        f"records: row {i}: the {key} {value!r} is not valid Unicode text"
                    ) from None
        raise


def text_labels(values) -> np.ndarray:
    """Labels as :func:`from_records` stores them: text, numbers as their text (``1.0`` -> ``"1"``).

    Examples
    --------
    >>> from rankstats.cube import text_labels
    >>> text_labels([0, "0", 1.0, 2.5]).tolist()
    ['0', '0', '1', '2.5']
    """
    column = pd.Series(list(values) if not isinstance(values, pd.Series) else values, dtype=object)
    return np.asarray(_labels(pd.DataFrame({"label": column}), "label"), dtype=object)


def _labels(frame: pd.DataFrame, key: str):
    """The ``key`` column as text labels, checked; categorical columns stay categorical.

    Numbers become their text (``0`` -> ``"0"``, ``1.0`` -> ``"1"``), so a
    number and its text are one label.
    """
    column = frame[key]
    categorical = isinstance(column.dtype, pd.CategoricalDtype)
    if categorical:
        column = column.cat.remove_unused_categories()
        codes, uniques = column.cat.codes.to_numpy(), column.cat.categories
    else:
        codes, uniques = pd.factorize(column)
    if pd.api.types.infer_dtype(uniques, skipna=False) == "string":
        texts = np.asarray(uniques, dtype=object)
    else:
        texts = np.empty(len(uniques), dtype=object)
        for i, value in enumerate(uniques):
            texts[i] = label_text(value)
            if texts[i] is None:
                row = int(np.flatnonzero(codes == i)[0])
                raise CubeError(
                    f"records: row {row}: the {key} {value!r} is a "
                    f"{type(value).__name__}, not text or a number"
                )
    problems = [label_problem(text) for text in texts]
    bad = next((i for i, problem in enumerate(problems) if problem), None)
    if bad is not None:
        row = int(np.flatnonzero(codes == bad)[0])
        raise CubeError(f"records: row {row}: the {key} label {texts[bad]!r} {problems[bad]}")
    merged, distinct = pd.factorize(texts)
    codes = merged[codes]
    if categorical:
        return pd.Categorical.from_codes(codes, categories=pd.Index(distinct, dtype=object))
    return np.asarray(distinct, dtype=object)[codes]


def label_text(value) -> str | None:
    """A label's text: text as it is, numbers as their shortest text; None for anything else.

    Examples
    --------
    >>> from rankstats.cube import label_text
    >>> label_text(0), label_text(1.0), label_text(0.25), label_text("a"), label_text([1])
    ('0', '1', '0.25', 'a', None)
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (numbers.Integral, np.integer)):
        return str(int(value))
    if isinstance(value, (numbers.Real, np.floating)):
        number = float(value)
        if number.is_integer() and abs(number) < 2**53:
            return str(int(number))
        return repr(number)
    return None


def _check_key_columns(frame: pd.DataFrame, keys: list[str]) -> None:
    required = ["model", "task", "template", "score"]
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise CubeError(
            f"records lack the column(s) {', '.join(map(repr, missing))} "
            f"(columns: {', '.join(map(str, frame.columns)) or 'none'})"
        )
    for key in keys:
        null = frame[key].isna()
        if null.any():
            rows = np.flatnonzero(null.to_numpy())
            raise CubeError(
                f"records: {len(rows)} row(s) have no {key!r} "
                f"(first rows: {', '.join(map(str, rows[:_SHOWN]))})"
            )


def _describe_rows(frame: pd.DataFrame, keys: list[str], rows) -> str:
    shown = []
    for row in rows[:_SHOWN]:
        where = ", ".join(f"{key}={frame[key].iloc[row]!r}" for key in keys)
        value = frame["score"].iloc[row]
        value = value.item() if isinstance(value, np.generic) else value
        shown.append(f"row {row} ({where}): {value!r}")
    more = f"; and {len(rows) - _SHOWN} more" if len(rows) > _SHOWN else ""
    return "; ".join(shown) + more


def _numeric_scores(frame: pd.DataFrame, keys: list[str], non_finite: str) -> np.ndarray:
    raw = frame["score"]
    if raw.dtype == bool:
        return raw.to_numpy(dtype=float)
    _refuse_complex(raw, frame, keys)
    if pd.api.types.is_numeric_dtype(raw.dtype) and not isinstance(raw.dtype, pd.CategoricalDtype):
        return _finite(raw.to_numpy(dtype=float, na_value=np.nan), frame, keys, non_finite)
    numeric = pd.to_numeric(raw, errors="coerce")
    if raw.dtype == object:
        is_bool = raw.map(lambda value: isinstance(value, (bool, np.bool_)))
        numeric = numeric.where(~is_bool, raw.where(is_bool).astype(float))
    bad = numeric.isna() & raw.notna()
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        raise ScoreValueError(
            f"records: {len(rows)} score(s) are not numbers: {_describe_rows(frame, keys, rows)}"
        )
    return _finite(numeric.to_numpy(dtype=float), frame, keys, non_finite)


def _standard_errors(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """The ``standard_error`` column as floats (NaN: not reported), checked."""
    if "sample" in keys:
        raise CubeError(
            f"records: a {STANDARD_ERROR!r} column goes with per-template scores (records "
            "without a 'sample' column); per-sample scores carry their own spread"
        )
    raw = frame[STANDARD_ERROR]
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = (numeric.isna() & raw.notna()).to_numpy() | raw.map(
        lambda v: isinstance(v, (bool, np.bool_))
    ).to_numpy(dtype=bool)
    values = numeric.to_numpy(dtype=float)
    bad |= np.isinf(values) | (values < 0)
    if bad.any():
        rows = np.flatnonzero(bad)
        shown = "; ".join(
            f"row {row} ({', '.join(f'{k}={frame[k].iloc[row]!r}' for k in keys)}): "
            f"{_plain(raw.iloc[row])!r}"
            for row in rows[:_SHOWN]
        )
        raise ScoreValueError(
            f"records: {len(rows)} value(s) of {STANDARD_ERROR!r} are not numbers of at "
            f"least 0 (NaN = not reported): {shown}"
        )
    return values


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _refuse_complex(raw: pd.Series, frame: pd.DataFrame, keys: list[str]) -> None:
    """Refuse complex scores: NumPy would keep their real part, with only a warning."""
    if raw.dtype.kind == "c":
        # the whole column is complex once one value is; name those with an imaginary part
        imaginary = raw.to_numpy().imag != 0
        complex_ = imaginary if imaginary.any() else np.ones(len(raw), dtype=bool)
    elif raw.dtype == object:
        complex_ = raw.map(lambda value: isinstance(value, (complex, np.complexfloating)))
        complex_ = complex_.to_numpy(dtype=bool)
    else:
        return
    if complex_.any():
        rows = np.flatnonzero(complex_)
        raise ScoreValueError(
            f"records: {len(rows)} score(s) are complex numbers, not real ones: "
            f"{_describe_rows(frame, keys, rows)}"
        )


def _finite(values: np.ndarray, frame: pd.DataFrame, keys: list[str], policy: str) -> np.ndarray:
    infinite = np.isinf(values)
    if not infinite.any():
        return values
    if policy == "missing":
        return np.where(infinite, np.nan, values)
    rows = np.flatnonzero(infinite)
    raise ScoreValueError(
        f"records: {len(rows)} score(s) are infinite: {_describe_rows(frame, keys, rows)}; "
        "pass non_finite='missing' to read them as missing"
    )


def _resolve_duplicates(frame: pd.DataFrame, keys: list[str], policy: str) -> pd.DataFrame:
    repeated = frame.duplicated(keys, keep=False)
    if not repeated.any():
        return frame
    if policy == "error":
        groups = frame.loc[repeated].groupby(keys, sort=False).size()
        shown = "; ".join(
            f"({', '.join(f'{k}={v!r}' for k, v in zip(keys, key, strict=True))}) x{count}"
            for key, count in groups.head(_SHOWN).items()
        )
        more = f"; and {len(groups) - _SHOWN} more" if len(groups) > _SHOWN else ""
        raise DuplicateKeyError(
            f"records: {len(groups)} key(s) appear more than once: {shown}{more}. "
            "Pass duplicates='first', 'last' or 'mean' to resolve them"
        )
    if policy in ("first", "last"):
        return frame.drop_duplicates(keys, keep=policy).reset_index(drop=True)
    groups = frame.groupby(keys, sort=False)
    mean = {"score": groups["score"].transform("mean")}
    if STANDARD_ERROR in frame.columns:
        # the mean of n independent scores: sqrt(sum of variances) / n; NaN if one is unknown
        variance = frame[STANDARD_ERROR] ** 2
        by = [frame[k] for k in keys]
        total = variance.groupby(by, sort=False).transform("sum")
        unknown = variance.isna().groupby(by, sort=False).transform("any")
        size = groups["score"].transform("size")
        mean[STANDARD_ERROR] = np.sqrt(total.where(~unknown)) / size
    return frame.assign(**mean).drop_duplicates(keys, keep="first").reset_index(drop=True)


def _positions(frame: pd.DataFrame, task_index: np.ndarray, key: str, n_tasks: int):
    """Position of each record's ``key`` within its task, and the ``(task, position)`` ids."""
    labels = frame[key].astype(str).to_numpy(dtype=object)
    pairs = pd.DataFrame({"task": task_index, "label": labels})
    first = pairs.drop_duplicates()
    position = first.groupby("task", sort=False).cumcount().to_numpy()
    lookup = pd.MultiIndex.from_arrays([first["task"], first["label"]])
    record_position = position[
        lookup.get_indexer(pd.MultiIndex.from_arrays([pairs["task"], pairs["label"]]))
    ]
    width = int(position.max()) + 1 if len(position) else 0
    ids = np.full((n_tasks, width), "", dtype=object)
    ids[first["task"].to_numpy(), position] = first["label"].to_numpy()
    return record_position, ids


def _constant_within(frame: pd.DataFrame, column: str, by: list[str]) -> bool:
    return bool((frame.groupby(by, sort=False)[column].nunique(dropna=False) <= 1).all())


def _place_attributes(
    frame, keys, model_index, task_index, template_pos, sample_pos, shape, explicit
):
    """Coordinates for every attribute column, placed on the dims it belongs to."""
    placement = {column: owner for owner, columns in explicit.items() for column in columns}
    for column, owner in placement.items():
        if column not in frame.columns:
            raise CubeError(f"records: the {owner} attribute column {column!r} does not exist")
    targets = {
        "task": (["task"], ("task",), (task_index,), (shape[1],)),
        "model": (["model"], ("model",), (model_index,), (shape[0],)),
        "template": (
            ["task", "template"],
            ("task", "template"),
            (task_index, template_pos),
            (shape[1], shape[2]),
        ),
    }
    if sample_pos is not None:
        targets["sample"] = (
            ["task", "sample"],
            ("task", "sample"),
            (task_index, sample_pos),
            (shape[1], shape[3]),
        )
    coords = {}
    for column in frame.columns:
        if column in KEYS or column in ("score", STANDARD_ERROR):
            continue
        owner = placement.get(column) or _owner_of(frame, column, targets, keys)
        if owner not in targets:
            raise CubeError(
                f"records: column {column!r} is a {owner} attribute, but the "
                f"records have no {owner!r} column"
            )
        by, dims, index, size = targets[owner]
        if not _constant_within(frame, column, by):
            raise CubeError(
                f"records: attribute column {column!r} takes several values for one {owner}"
            )
        coords[column] = (dims, _scatter(frame[column], index, size))
    return coords


def _owner_of(frame: pd.DataFrame, column: str, targets: dict, keys: list[str]) -> str:
    for prefix in ("template", "sample"):
        if column.startswith(prefix + "_") and prefix in targets:
            return prefix
    for owner in ("task", "model", "template", "sample"):
        if owner in targets and _constant_within(frame, column, targets[owner][0]):
            return owner
    raise CubeError(
        f"records: attribute column {column!r} varies within a single (task, template) and "
        "(task, sample); it is neither a model, task, template nor sample attribute"
    )


def _scatter(values: pd.Series, index: tuple, size: tuple) -> np.ndarray:
    """Place one value per record at its position; padding gets a neutral fill."""
    raw = values.to_numpy()
    if values.dtype == bool:
        out = np.zeros(size, dtype=bool)
    elif pd.api.types.is_numeric_dtype(values.dtype):
        out = np.full(size, np.nan)
    else:
        out = np.full(size, "", dtype=object)
        raw = values.where(values.notna(), "").astype(str).to_numpy(dtype=object)
    out[index] = raw
    return out
