"""The labelled plumbing of :mod:`rankstats.stability`: inputs, draws, and the engine call.

The statistics themselves are NumPy kernels (:mod:`rankstats._kernels.resample` and
:mod:`rankstats._kernels.intervals`); everything here prepares their inputs and goes
through :func:`rankstats._xr.apply_labelled`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _xr
from .._kernels import resample as _kr
from ..errors import DimensionError, OptionError
from ..validation import score_kind_of
from ._checks import REPLICATE


def is_binary(x) -> bool:
    """Whether ``x`` carries ``score_kind="binary"`` (checked: an array there is a CubeError)."""
    attrs = getattr(x, "attrs", None) or {}
    return "score_kind" in attrs and score_kind_of(x) == "binary"


def generator(seed):
    """A NumPy Generator from a checked ``seed``, and the seed as the attributes record it."""
    if isinstance(seed, np.random.Generator):
        return seed, "Generator"
    return np.random.default_rng(seed), "None" if seed is None else int(seed)


def prepare(x, over, dims, statistic):
    """The scores to resample: with the sample dim unless only templates are resampled."""
    keep = (dims.sample,) if over != "templates" else ()
    scores = _xr.scores_of(x, statistic, keep=keep)
    if over != "templates" and dims.sample not in scores.dims:
        raise DimensionError(
            f"{statistic}: over={over!r} resamples the {dims.sample!r} dimension, which the "
            f"input lacks (dimensions: {', '.join(map(str, scores.dims))}); use "
            "over='templates' for per-template scores"
        )
    roles = {"model": dims.model, "template": dims.template}
    if over != "templates":
        roles["sample"] = dims.sample
    _xr.check_dims(statistic, scores, roles)
    if REPLICATE in scores.dims:
        raise DimensionError(f"{statistic}: the input already has a {REPLICATE!r} dimension")
    return scores


def real_mask(scores, unit, dims):
    """``(task, unit)`` (or ``(unit,)``) mask of the unit positions with some observed score."""
    other = [d for d in scores.dims if d not in (dims.task, unit)]
    if scores.dtype.kind in "biu":  # integers hold no missing value: one position says it all
        scores = scores.isel({d: slice(0, 1) for d in other})
    real = scores.notnull().any(other)
    return real.transpose(*[d for d in (dims.task, unit) if d in real.dims])


def draw(scores, n_resamples, over, seed, dims):
    """The counts of every replicate: samples first, then templates, from one Generator."""
    rng, seed_attr = generator(seed)
    data = {}
    for kind, unit in (("sample", dims.sample), ("template", dims.template)):
        if over not in (f"{kind}s", "both"):
            continue
        mask = real_mask(scores, unit, dims)
        values = mask.values if mask.ndim == 2 else mask.values[None]
        counts = _kr.draw_counts(rng, values, n_resamples)
        if mask.ndim == 2:
            data[f"{kind}_weight"] = ((REPLICATE, dims.task, unit), counts)
        else:
            data[f"{kind}_weight"] = ((REPLICATE, unit), counts[:, 0])
    coords = {dims.task: scores[dims.task].values} if dims.task in scores.coords else {}
    attrs = {
        "statistic": "bootstrap weights",
        "n_resamples": n_resamples,
        "seed": seed_attr,
        "over": over,
        "draws": "samples first, then templates",
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def draws_for(scores, n_resamples, over, seed, weights, dims):
    """Given draws (checked) or new ones."""
    if weights is None:
        return draw(scores, n_resamples, over, seed, dims)
    if weights.attrs.get("over") != over:
        raise OptionError(
            f"weights: give the Dataset bootstrap_weights returned for over={over!r} "
            f"(got over={weights.attrs.get('over')!r})"
        )
    for kind, unit in (("sample", dims.sample), ("template", dims.template)):
        name = f"{kind}_weight"
        if name not in weights:
            continue
        if weights[name].sizes[unit] != scores.sizes[unit]:
            raise DimensionError(
                f"weights: {name!r} has {weights[name].sizes[unit]} positions along {unit!r}, "
                f"the scores {scores.sizes[unit]}"
            )
        stray = weights[name].where(~real_mask(scores, unit, dims), 0)
        if (stray != 0).any():
            raise OptionError(
                f"weights: {name!r} puts weight on {unit} positions that hold no "
                "score (padding); draw them with bootstrap_weights on these scores"
            )
    return weights


def present(data, scores_dims):
    """Variables with the replicate dim first, then the cube's dims in its own order."""
    variables = {}
    for name, variable in data.data_vars.items():
        order = [d for d in (REPLICATE, *scores_dims) if d in variable.dims]
        variables[name] = variable.transpose(*order, ...)
    return data.assign(variables)


def engine_kernel(x, *weights, template_weights, sample_weights, **kwargs):
    found = iter(weights)
    tw = next(found) if template_weights else None
    sw = next(found) if sample_weights else None
    return _kr.replicate_statistics(x, tw, sw, **kwargs)


def core_dims(name, dims):
    return {"score": [dims.model, dims.template], "kendall_w": []}.get(name, [dims.model])


def run(scores, draws, over, statistics, kwargs, dims, attrs, dtype):
    """Replicate statistics through the one xarray wrapper."""
    if scores.chunks is not None and over != "templates" and not kwargs["jackknife"]:
        return _run_from_sums(scores, draws, statistics, kwargs, dims, attrs, dtype)
    kwargs = {key: value for key, value in kwargs.items() if key != "binary"}
    arrays = [scores]
    core = [[dims.model, dims.template] + ([dims.sample] if over != "templates" else [])]
    for kind, unit in (("template", dims.template), ("sample", dims.sample)):
        if f"{kind}_weight" in draws:
            weight = draws[f"{kind}_weight"]
            if scores.chunks is not None:  # chunk the draws along the tasks as the scores are
                weight = weight.chunk(
                    {
                        d: scores.chunksizes[d]
                        for d in weight.dims
                        if d in scores.chunksizes and d not in (REPLICATE, unit)
                    }
                )
            arrays.append(weight)
            core.append([REPLICATE, unit])
    outputs = {}
    for name in statistics:
        cd = core_dims(name, dims)
        outputs[name] = (name, [*cd, REPLICATE])
        outputs[f"{name}_estimate"] = (f"{name}_estimate", cd)
        if kwargs["jackknife"]:
            outputs[f"{name}_acceleration"] = (f"{name}_acceleration", cd)
    kwargs = {
        **kwargs,
        "statistics": tuple(statistics),
        "template_weights": "template_weight" in draws,
        "sample_weights": "sample_weight" in draws,
        "score_dtype": dtype,
    }
    data = _xr.apply_labelled(
        "bootstrap",
        engine_kernel,
        arrays,
        core,
        outputs,
        kwargs=kwargs,
        attrs=attrs,
        dtypes={"score": dtype},
    )
    return present(data, scores.dims)


ROW = "weight_row"


def _sums_kernel(x, rows, *, work):
    """``(..., P, S)`` scores and ``(..., B, S)`` rows: per-template sums ``(..., P, 1 + B)``."""
    total, count = _kr.sample_sums(x[..., None, :, :], rows, work)
    return total[..., 0, :, :], count[..., 0, :, :]


def _run_from_sums(scores, draws, statistics, kwargs, dims, attrs, dtype):
    """The bootstrap of a dask-chunked cube in two passes, so memory follows the chunks.

    Per-template sums over samples are linear in the samples, so the first
    pass computes them for the original data and every draw, one chunk of
    (model, task) at a time: ``sum_s x w`` and ``sum_s [x observed] w``. The
    statistics then need only these ``model × template × (1 + B)`` sums per
    task. Row 0 weighs every sample once: padding samples hold no score, so
    this is the original data; its real-sample count is the draws' (every
    draw sums to it). The draws are read in place, never copied.
    """
    weights = draws["sample_weight"]
    along_scores = {
        d: scores.chunksizes[d] for d in weights.dims if d in scores.chunksizes and d != dims.sample
    }
    drawn = weights.sum(dims.sample).astype(float)
    scale = xr.concat([drawn.isel({REPLICATE: [0]}), drawn], REPLICATE)
    scale = scale.rename({REPLICATE: ROW}).chunk(along_scores)
    rows = _lazily_chunked(weights, along_scores)
    # a binary cube's sums are integers below 2**24: exact in float32, at twice the speed
    binary = kwargs["binary"] or is_binary(scores)
    work = np.float32 if binary and scores.sizes[dims.sample] < 2**24 else np.float64
    sums = xr.apply_ufunc(
        _sums_kernel,
        scores.chunk({dims.sample: -1}),
        rows,
        input_core_dims=[[dims.template, dims.sample], [REPLICATE, dims.sample]],
        output_core_dims=[[dims.template, ROW], [dims.template, ROW]],
        dask="parallelized",
        output_dtypes=[work, work],
        kwargs={"work": work},
        dask_gufunc_kwargs={"output_sizes": {ROW: 1 + rows.sizes[REPLICATE]}},
    )
    arrays = [*sums, scale]
    core = [[dims.model, dims.template, ROW]] * 2 + [[ROW]]
    if "template_weight" in draws:
        weight = draws["template_weight"]
        weight = weight.chunk(
            {
                d: scores.chunksizes[d]
                for d in weight.dims
                if d in scores.chunksizes and d not in (REPLICATE, dims.template)
            }
        )
        arrays.append(weight)
        core.append([REPLICATE, dims.template])
    outputs = {}
    for name in statistics:
        cd = core_dims(name, dims)
        outputs[name] = (name, [*cd, REPLICATE])
        outputs[f"{name}_estimate"] = (f"{name}_estimate", cd)
    engine = {key: kwargs[key] for key in ("by", "ties", "nan_policy", "higher_is_better")}
    engine.update(statistics=tuple(statistics), integer=work == np.float32, score_dtype=dtype)
    data = _xr.apply_labelled(
        "bootstrap",
        _engine_from_sums,
        arrays,
        core,
        outputs,
        kwargs=engine,
        attrs=attrs,
        dtypes={"score": dtype},
        sizes={REPLICATE: weights.sizes[REPLICATE]},
    )
    return present(data, scores.dims)


class _Sliced:
    """An array that dask slices only when a chunk is needed.

    ``DataArray.chunk`` copies a NumPy array into its chunks up front, which
    doubles the memory of B × tasks × samples draws.
    """

    def __init__(self, array):
        self.array = array
        self.shape, self.dtype, self.ndim = array.shape, array.dtype, array.ndim

    def __getitem__(self, key):
        return self.array[key]


def _lazily_chunked(array: xr.DataArray, chunks) -> xr.DataArray:
    """``array.chunk(chunks)`` without a copy of its values."""
    import dask.array as da

    sizes = tuple(chunks.get(d, -1) for d in array.dims)
    data = da.from_array(
        _Sliced(array.values), chunks=sizes, meta=np.empty((0,) * array.ndim, dtype=array.dtype)
    )
    return xr.DataArray(data, dims=array.dims, coords=array.coords)


def _engine_from_sums(total, count, scale, *template_weights, **kwargs):
    weights = template_weights[0] if template_weights else None
    return _kr.replicate_statistics_from_sums(total, count, scale, weights, **kwargs)


def base_attrs(draws, over, **more):
    return {
        "n_resamples": int(draws.attrs["n_resamples"]),
        "seed": draws.attrs["seed"],
        "over": over,
        **more,
    }


def engine_kwargs(x, ties, higher_is_better, nan_policy, jackknife, by="avgp"):
    return {
        "by": by,
        "ties": ties,
        "nan_policy": nan_policy,
        "jackknife": jackknife,
        "higher_is_better": _xr.higher_is_better_of(x, higher_is_better),
        "binary": is_binary(x),
    }


def is_replicates(x) -> bool:
    return isinstance(x, xr.Dataset) and x.attrs.get("statistic") == "bootstrap replicates"


def as_labelled(value):
    return value if _xr.is_labelled(value) else xr.DataArray(np.asarray(value, dtype=float))


def run_attrs(reps, method, confidence_level, statistic, **more):
    """The attributes of a result computed from replicates: how they were drawn, and how used."""
    kept = ("n_resamples", "seed", "over", "by", "ties", "higher_is_better", "nan_policy")
    found = {"statistic": statistic, **{k: reps.attrs[k] for k in kept if k in reps.attrs}}
    if method is not None:
        found.update(method=method, confidence_level=confidence_level)
    return {**found, **more}


def statistics_for(statistics, over):
    """The statistics asked for (checked), or every one that varies under ``over``."""
    if statistics is not None:
        return tuple(statistics)
    return tuple(s for s in _kr.STATISTICS if not (s == "score" and over == "templates"))
