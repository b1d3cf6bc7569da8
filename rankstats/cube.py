"""The score cube: model × task × template × sample scores in one labelled Dataset.

Tasks have different templates and samples, so ``template`` and ``sample``
are positions within a task, padded with missing values; the identity of each
position lives in 2-D coordinates (``template_id(task, template)``,
``sample_id(task, sample)``). See ``schemas/cube.schema.json``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ._version import __version__
from ._xr import mean_over
from .errors import CubeError, DuplicateKeyError, ScoreValueError
from .validation import SCHEMA_VERSION, SCORE_KINDS, validate

__all__ = ["from_records", "template_scores"]

KEYS = ("model", "task", "template", "sample")
DUPLICATE_POLICIES = ("error", "first", "last", "mean")
_SHOWN = 10


def from_records(
    records: pd.DataFrame | Iterable[Mapping],
    *,
    score_kind: str | None = None,
    higher_is_better: bool = True,
    metric: str = "score",
    source: str = "records",
    duplicates: str = "error",
    model_attrs: Sequence[str] = (),
    task_attrs: Sequence[str] = (),
    template_attrs: Sequence[str] = (),
    sample_attrs: Sequence[str] = (),
) -> xr.Dataset:
    """Build a score cube from long records.

    Parameters
    ----------
    records : pandas.DataFrame or iterable of dict
        One row per score with columns ``model``, ``task``, ``template``,
        ``score`` and optionally ``sample`` (without it the cube holds
        already aggregated per-template scores). Any other column is an
        attribute of templates, models, tasks or samples (see Notes).
    score_kind : {"binary", "proportion", "continuous"}, optional
        Inferred when omitted: ``binary`` if every score is 0 or 1,
        ``proportion`` if all lie in [0, 1], else ``continuous``.
    higher_is_better : bool, default True
        Whether a higher score is a better one.
    metric : str
        Name of the metric the scores measure (e.g. ``"accuracy"``).
    source : str
        Provenance: what the records were read or collected from.
    duplicates : {"error", "first", "last", "mean"}
        What to do with several records sharing one (model, task, template,
        sample) key: raise :class:`~rankstats.errors.DuplicateKeyError`
        listing them, keep the first or last, or average their scores.
    model_attrs, task_attrs, template_attrs, sample_attrs : sequence of str
        Attribute columns to place explicitly.

    Returns
    -------
    xarray.Dataset
        A validated cube: ``score(model, task, template[, sample])`` with
        coordinates ``template_id(task, template)``, ``sample_id(task,
        sample)`` and one per attribute column.

    Raises
    ------
    CubeError
        A key column is missing or has missing values, or an attribute column
        takes several values for one template, model, task or sample.
    ScoreValueError
        A score is not a number, or lies outside [0, 1] for ``binary`` and
        ``proportion`` cubes.
    DuplicateKeyError
        Duplicated keys under ``duplicates="error"``.

    Notes
    -----
    Models, tasks, templates (within a task) and samples (within a task) take
    positions in the order they first appear. Template and sample ids are
    stored as strings; padding positions have the id ``""``.

    An attribute column not placed explicitly goes to the first of these it
    is constant within: ``template_*`` columns to templates and ``sample_*``
    columns to samples; otherwise task, model, template, then sample.
    Padding takes ``False`` in boolean attributes, NaN in numeric ones and
    ``""`` in the others.

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
    frame = _as_frame(records)
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates={duplicates!r} is not one of {DUPLICATE_POLICIES}")
    keys = [key for key in KEYS if key in frame.columns]
    _check_key_columns(frame, keys)
    frame = frame.assign(score=_numeric_scores(frame, keys))
    frame = _resolve_duplicates(frame, keys, duplicates)
    kind = _score_kind(frame["score"].to_numpy(), score_kind)

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
        frame, keys, model_index, task_index, template_pos,
        sample_pos if "sample" in keys else None, shape,
        {"model": model_attrs, "task": task_attrs, "template": template_attrs,
         "sample": sample_attrs},
    )
    coords.update(placed)
    cube = xr.Dataset({"score": (dims, values)}, coords=coords)
    cube.attrs = provenance(kind, higher_is_better, metric, source)
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
    return {
        "schema_version": SCHEMA_VERSION,
        "score_kind": score_kind,
        "higher_is_better": int(bool(higher_is_better)),
        "metric": str(metric),
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
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


def _as_frame(records) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        return records.reset_index(drop=True)
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise TypeError("from_records: records must be a pandas DataFrame or an iterable of dicts")
    return pd.DataFrame.from_records(list(records))


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
        shown.append(f"row {row} ({where}): {frame['score'].iloc[row]!r}")
    more = f"; and {len(rows) - _SHOWN} more" if len(rows) > _SHOWN else ""
    return "; ".join(shown) + more


def _numeric_scores(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    raw = frame["score"]
    if raw.dtype == bool:
        return raw.to_numpy(dtype=float)
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
    return numeric.to_numpy(dtype=float)


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
    mean = frame.groupby(keys, sort=False)["score"].transform("mean")
    return frame.assign(score=mean).drop_duplicates(keys, keep="first").reset_index(drop=True)


def _score_kind(scores: np.ndarray, given: str | None) -> str:
    observed = scores[~np.isnan(scores)]
    if given is None:
        if np.isin(observed, (0.0, 1.0)).all():
            return "binary"
        if ((observed >= 0) & (observed <= 1)).all():
            return "proportion"
        return "continuous"
    if given not in SCORE_KINDS:
        raise ValueError(f"score_kind={given!r} is not one of {SCORE_KINDS}")
    return given


def _positions(frame: pd.DataFrame, task_index: np.ndarray, key: str, n_tasks: int):
    """Position of each record's ``key`` within its task, and the ``(task, position)`` ids."""
    labels = frame[key].astype(str).to_numpy(dtype=object)
    pairs = pd.DataFrame({"task": task_index, "label": labels})
    first = pairs.drop_duplicates()
    position = first.groupby("task", sort=False).cumcount().to_numpy()
    lookup = pd.MultiIndex.from_arrays([first["task"], first["label"]])
    record_position = position[lookup.get_indexer(pd.MultiIndex.from_arrays(
        [pairs["task"], pairs["label"]]))]
    width = int(position.max()) + 1 if len(position) else 0
    ids = np.full((n_tasks, width), "", dtype=object)
    ids[first["task"].to_numpy(), position] = first["label"].to_numpy()
    return record_position, ids


def _constant_within(frame: pd.DataFrame, column: str, by: list[str]) -> bool:
    return bool((frame.groupby(by, sort=False)[column].nunique(dropna=False) <= 1).all())


def _place_attributes(frame, keys, model_index, task_index, template_pos, sample_pos, shape,
                      explicit):
    """Coordinates for every attribute column, placed on the dims it belongs to."""
    placement = {column: owner for owner, columns in explicit.items() for column in columns}
    for column, owner in placement.items():
        if column not in frame.columns:
            raise CubeError(f"records: the {owner} attribute column {column!r} does not exist")
    targets = {
        "task": (["task"], ("task",), (task_index,), (shape[1],)),
        "model": (["model"], ("model",), (model_index,), (shape[0],)),
        "template": (["task", "template"], ("task", "template"), (task_index, template_pos),
                     (shape[1], shape[2])),
    }
    if sample_pos is not None:
        targets["sample"] = (["task", "sample"], ("task", "sample"), (task_index, sample_pos),
                             (shape[1], shape[3]))
    coords = {}
    for column in frame.columns:
        if column in KEYS or column == "score":
            continue
        owner = placement.get(column) or _owner_of(frame, column, targets, keys)
        if owner not in targets:
            raise CubeError(f"records: column {column!r} is a {owner} attribute, but the "
                            f"records have no {owner!r} column")
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
