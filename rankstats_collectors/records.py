"""Collected rows → a validated cube that keeps the raw responses and the run's settings.

Examples
--------
>>> from rankstats_collectors.records import records_to_cube
>>> cube = records_to_cube([
...     {"model": "m", "task": "t", "template": "1", "sample": "a", "score": 1.0,
...      "response": "Yes", "template_method": "original"},
...     {"model": "m", "task": "t", "template": "1", "sample": "b", "score": 0.0,
...      "response": "No", "template_method": "original"},
... ], metric="exact_match", source="example", attrs={"max_new_tokens": 5})
>>> cube.response.sel(model="m", task="t").values.tolist()
[['Yes', 'No']]
>>> cube.attrs["max_new_tokens"], cube.template_method.values.tolist()
(5, [['original']])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import xarray as xr

import rankstats
from rankstats.cube import infer_score_kind, text_labels
from rankstats.errors import CubeError

__all__ = ["CELL_VARIABLES", "NUMERIC_CELLS", "OPTION_CELLS", "records_to_cube", "rescore"]

#: Per-cell columns kept as data variables beside ``score`` rather than as coordinates.
CELL_VARIABLES = ("response",)
#: Per-cell numbers kept as float variables (NaN where a row lacks them): ``logprob``, the
#: log-probability the model gave its response (the chosen option, summed over its tokens).
NUMERIC_CELLS = ("logprob",)
#: Per-cell lists, one value per option of a multiple-choice sample, kept as float variables
#: with an ``option`` dimension (NaN beyond a sample's options): each option's summed
#: log-probability given the prompt, and its number of tokens.
OPTION_CELLS = ("option_logprob", "option_tokens")
_KEYS = ["model", "task", "template", "sample"]


def _attribute(value):
    """A netCDF-storable attribute: numbers and strings as they are, anything else as JSON."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (str, int, float, np.integer, np.floating)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def records_to_cube(
    records: pd.DataFrame | Iterable[Mapping],
    *,
    metric: str,
    source: str,
    attrs: Mapping | None = None,
    score_kind: str | None = None,
) -> xr.Dataset:
    """Build a cube from collected rows, keeping raw responses and the run's settings.

    Parameters
    ----------
    records : pandas.DataFrame or iterable of dict
        One row per (model, task, template, sample) with ``score`` and
        optionally ``response`` (the raw model output). Columns named
        ``template_*`` are template attributes, ``model_*`` model attributes
        (e.g. ``model_revision``), ``task_*`` task attributes; any other
        column is placed by :func:`rankstats.from_records`.
    metric : str
        The metric the scores measure (e.g. ``"exact_match"``).
    source : str
        Provenance: the collector and what it ran.
    attrs : mapping, optional
        Extra cube attributes: collector settings, library versions, ...
        Values that are not strings or numbers are stored as JSON text.
    score_kind : {"binary", "proportion", "continuous"}, optional
        Inferred from the scores when omitted.

    Returns
    -------
    xarray.Dataset
        A validated cube. ``response(model, task, template, sample)`` holds
        the raw responses as strings (``""`` where there is no score), so
        scores can be recomputed with another scorer without running the
        model again.

    Raises
    ------
    rankstats.errors.CubeError
        The rows do not form a valid cube (see :func:`rankstats.from_records`).

    Examples
    --------
    >>> from rankstats_collectors.records import records_to_cube
    >>> rows = [{"model": m, "task": "t", "template": "1", "sample": s, "score": float(m == "a"),
    ...          "response": "x", "model_revision": m * 3} for m in "ab" for s in "xyz"]
    >>> cube = records_to_cube(rows, metric="exact_match", source="example")
    >>> cube.model_revision.values.tolist(), cube.attrs["score_kind"]
    (['aaa', 'bbb'], 'binary')
    """
    frame = records.copy() if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    if frame.empty:
        raise CubeError("no records to build a cube from")
    cells = [c for c in (*CELL_VARIABLES, *NUMERIC_CELLS, *OPTION_CELLS) if c in frame.columns]
    extra = frame[cells]
    frame = frame.drop(columns=cells)
    placed = {
        prefix: [
            c
            for c in frame.columns
            if c.startswith(f"{prefix}_") and c not in ("template_id", "sample_id")
        ]
        for prefix in ("model", "task", "template")
    }
    cube = rankstats.from_records(
        frame,
        score_kind=score_kind,
        metric=metric,
        source=source,
        model_attrs=placed["model"],
        task_attrs=placed["task"],
        template_attrs=placed["template"],
    )
    if cells:
        positions = _positions(cube, frame)
        for name in cells:
            if name in OPTION_CELLS:
                _option_variable(cube, name, extra[name], positions)
                continue
            if name in NUMERIC_CELLS:
                values = np.full(cube["score"].shape, np.nan)
                values[positions] = pd.to_numeric(extra[name], errors="coerce").to_numpy(float)
                cube[name] = (cube["score"].dims, values)
                cube[name].attrs["description"] = (
                    "the log-probability of the response given the prompt, per score"
                )
                continue
            values = np.full(cube["score"].shape, "", dtype=object)
            column = extra[name].where(extra[name].notna(), "").astype(str).to_numpy(object)
            values[positions] = column
            cube[name] = (cube["score"].dims, values)
            cube[name].attrs["description"] = f"the raw {name} of the model, per score"
    for key, value in (attrs or {}).items():
        cube.attrs[str(key)] = _attribute(value)
    return rankstats.validate(cube)


def _option_variable(cube: xr.Dataset, name: str, column: pd.Series, positions) -> None:
    """A list per row (one value per option) as a float variable with an ``option`` dim."""
    lists = [list(v) if isinstance(v, (list, tuple, np.ndarray)) else [] for v in column]
    width = max((len(v) for v in lists), default=0)
    if "option" in cube.dims and cube.sizes["option"] != width:
        width = max(width, cube.sizes["option"])
    values = np.full((*cube["score"].shape, width), np.nan)
    table = np.full((len(lists), width), np.nan)
    for i, v in enumerate(lists):
        table[i, : len(v)] = np.asarray(v, dtype=float)
    values[positions] = table
    cube[name] = ((*cube["score"].dims, "option"), values)
    cube[name].attrs["description"] = {
        "option_logprob": "each option's log-probability given the prompt (summed over its "
        "tokens), per score; NaN beyond the sample's options",
        "option_tokens": "each option's number of tokens, per score",
    }[name]


def _positions(cube: xr.Dataset, frame: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Index arrays locating each row of ``frame`` in ``cube.score`` (dims in its order)."""
    index = {}
    for dim in ("model", "task"):
        index[dim] = pd.Index(cube[dim].values).get_indexer(text_labels(frame[dim]))
    for dim in ("template", "sample"):
        if dim not in cube.dims:
            continue
        ids = cube[f"{dim}_id"].transpose("task", dim).values
        table = pd.DataFrame(
            {
                "task": np.repeat(cube["task"].values, ids.shape[1]),
                dim: ids.ravel().astype(str),
                "position": np.tile(np.arange(ids.shape[1]), ids.shape[0]),
            }
        )
        wanted = pd.DataFrame({"task": text_labels(frame["task"]), dim: text_labels(frame[dim])})
        index[dim] = wanted.merge(table, on=["task", dim], how="left")["position"].to_numpy()
    return tuple(np.asarray(index[dim], dtype=int) for dim in cube["score"].dims)


def rescore(
    cube: xr.Dataset, samples: Mapping, scorer, *, metric: str | None = None, **normalisation
) -> xr.Dataset:
    """Recompute a collected cube's scores from its stored responses with another scorer.

    Parameters
    ----------
    cube : xarray.Dataset
        A cube with a ``response`` variable and a ``sample`` dimension.
    samples : mapping
        Task → its :class:`~rankstats_collectors.tasks.Sample` list (matched by id).
    scorer : str or callable
        As :func:`rankstats_collectors.scoring.get_scorer`.
    metric : str, optional
        The new ``metric`` attribute; by default the scorer's name.
    **normalisation
        Options of :func:`rankstats_collectors.scoring.normalise` for a built-in scorer.

    Returns
    -------
    xarray.Dataset
        A copy with new scores where there were scores; no model is run.

    Raises
    ------
    rankstats.errors.CubeError
        The cube has no responses, or a sample of the cube is not in
        ``samples``.

    Examples
    --------
    >>> from rankstats_collectors.records import records_to_cube, rescore
    >>> from rankstats_collectors.tasks import Sample
    >>> cube = records_to_cube([
    ...     {"model": "m", "task": "t", "template": "1", "sample": "a", "score": 0.0,
    ...      "response": "It is Paris."}], metric="exact_match", source="example")
    >>> rescored = rescore(cube, {"t": [Sample("a", {}, "paris")]}, "contains")
    >>> rescored.score.values.ravel().tolist(), rescored.attrs["metric"]
    ([1.0], 'contains')
    """
    from .scoring import get_scorer

    if "response" not in cube.data_vars or "sample" not in cube.dims:
        raise CubeError("rescoring needs a cube with a 'response' variable and samples")
    score_of = get_scorer(scorer, **normalisation)
    dims = ("model", "task", "template", "sample")
    order = [d for d in cube["score"].dims if d not in dims]
    scores = cube["score"].transpose(*dims, *order).values.copy()
    responses = cube["response"].transpose(*dims, *order).values
    sample_ids = cube["sample_id"].transpose("task", "sample").values
    for t, task in enumerate(cube["task"].values):
        by_id = {str(sample.id): sample for sample in samples.get(task, [])}
        for s, sample_id in enumerate(sample_ids[t]):
            present = ~np.isnan(scores[:, t, :, s])
            if not present.any():
                continue
            if sample_id not in by_id:
                raise CubeError(
                    f"task {task!r}: sample {sample_id!r} of the cube is not among "
                    "the samples given"
                )
            for index in zip(*np.nonzero(present), strict=True):
                cell = (index[0], t, index[1], s, *index[2:])
                scores[cell] = float(score_of(str(responses[cell]), by_id[sample_id]))
    result = cube.copy()
    result["score"] = (dims + tuple(order), scores)
    result["score"] = result["score"].transpose(*cube["score"].dims)
    result.attrs["metric"] = metric or (
        scorer if isinstance(scorer, str) else getattr(scorer, "__name__", "custom")
    )
    result.attrs["score_kind"] = _kind(scores, cube.attrs.get("score_kind"))
    return rankstats.validate(result)


def _kind(scores: np.ndarray, before) -> str:
    """The cube's kind where the new scores fit it (a 0/1 scorer stays binary), else inferred."""
    values = scores[~np.isnan(scores)]
    if before == "binary" and np.isin(values, (0.0, 1.0)).all():
        return "binary"
    if before == "proportion" and ((values >= 0) & (values <= 1)).all():
        return "proportion"
    return infer_score_kind(scores)[0]
