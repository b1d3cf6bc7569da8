"""The one bridge between the public functions and the NumPy kernels.

Labelled inputs (xarray) go through :func:`xarray.apply_ufunc` with
``dask="parallelized"``, so dask-chunked cubes work out of core; NumPy inputs
have their core axes moved last. Either way the kernel sees
``(..., *core)`` arrays and returns a dict of arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import xarray as xr

from . import _text
from .errors import (
    CoordinateMismatchError,
    CubeError,
    DimensionError,
    InputTypeError,
    OptionError,
)

SAMPLE = "sample"


def is_labelled(x) -> bool:
    """Whether ``x`` is an xarray object (and so addressed by dimension names)."""
    return isinstance(x, (xr.DataArray, xr.Dataset))


def scores_of(
    x,
    statistic: str,
    keep: Sequence[str] = (),
    *,
    variable: str = "score",
    per_template: bool = True,
) -> xr.DataArray:
    """The scores of a cube or DataArray, averaged over samples unless ``sample`` is kept.

    A statistic that works on per-template scores receives the mean over
    samples (missing samples skipped), as :func:`rankstats.template_scores`.
    A Dataset gives its ``variable``; ``per_template=False`` keeps every
    dimension (p-values, counts).
    """
    if isinstance(x, xr.Dataset):
        if variable not in x.data_vars:
            raise DimensionError(
                f"{statistic}: the Dataset has no {variable!r} variable "
                f"(variables: {', '.join(map(str, x.data_vars)) or 'none'})"
            )
        x = x[variable]
    if per_template and SAMPLE in x.dims and SAMPLE not in keep:
        x = mean_over(x, SAMPLE)
    return x


def score_variable(x, function: str) -> xr.DataArray:
    """The ``score`` of a cube, or a DataArray as it is; anything else is refused."""
    if isinstance(x, xr.DataArray):
        return x
    if not isinstance(x, xr.Dataset):
        raise InputTypeError(
            f"{function}: give a score cube (xarray.Dataset) or a DataArray "
            f"of scores (got {type(x).__name__})"
        )
    return scores_of(x, function, per_template=False)


def mean_over(x: xr.DataArray, dim: str) -> xr.DataArray:
    """Mean along ``dim`` skipping NaN; NaN (without a warning) where nothing is observed.

    An in-memory array is reduced in place: the sum skips NaN through a mask
    (one byte a cell) rather than a filled float copy, and integer or boolean
    scores (binary cubes held as int8 or bool) have no missing values to mask,
    so the peak stays near the input plus the output.
    """
    if x.chunks is not None or not isinstance(x.variable._data, np.ndarray):
        observed = x.notnull()
        total = x.where(observed, 0.0).sum(dim)
        count = observed.sum(dim)
        return (total / count.where(count > 0)).assign_attrs(x.attrs)
    values = x.values
    axis = x.get_axis_num(dim)
    if values.dtype.kind in "biu":
        mean = values.mean(axis=axis, dtype=float)
    else:
        mean = _nanmean_in_blocks(values, axis)
    coords = {name: coord for name, coord in x.coords.variables.items() if dim not in coord.dims}
    return xr.DataArray(
        mean, dims=[d for d in x.dims if d != dim], coords=coords, name=x.name, attrs=x.attrs
    )


#: Bytes of filled copy one block of :func:`mean_over` may take.
MEAN_BLOCK = 32 * 2**20


def _nanmean_in_blocks(values: np.ndarray, axis: int) -> np.ndarray:
    """NaN-skipping mean along ``axis``, filling NaN with 0 one block of another axis at a time.

    Each block sums exactly what ``xarray``'s NaN-skipping sum of the whole
    array sums, in the same order, so the result is the same to the last bit;
    only the filled copy is smaller. Blocks run along the longest other axis.
    """
    others = [a for a in range(values.ndim) if a != axis]
    shape = list(values.shape)
    shape.pop(axis)
    total = np.empty(shape)
    count = np.empty(shape, dtype=np.int64)
    if not others or values.size == 0:
        observed = ~np.isnan(values)
        total[...] = np.where(observed, values, 0.0).sum(axis)
        count[...] = observed.sum(axis)
    else:
        along = max(others, key=lambda a: values.shape[a])
        out_axis = along - (along > axis)
        per_position = values.nbytes // max(values.shape[along], 1) * 9 // 8
        step = max(1, MEAN_BLOCK // max(per_position, 1))
        for start in range(0, values.shape[along], step):
            part = [slice(None)] * values.ndim
            part[along] = slice(start, start + step)
            block = values[tuple(part)]
            observed = ~np.isnan(block)
            target = [slice(None)] * total.ndim
            target[out_axis] = slice(start, start + step)
            total[tuple(target)] = np.where(observed, block, 0.0).sum(axis)
            count[tuple(target)] = observed.sum(axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.divide(total, np.where(count > 0, count, np.nan))


def higher_is_better_of(x, given: bool | None) -> bool:
    """``given``, else the cube's ``higher_is_better`` attribute, else True.

    The attribute is read with the strict boolean parser of
    :mod:`rankstats._text`: a bool, 0 or 1, or the text true/false, yes/no,
    1/0 (results store ``"True"``/``"False"``, as netCDF keeps no booleans).
    ``bool("false")`` would be True; anything else is a
    :class:`~rankstats.errors.CubeError` naming the attribute.

    Examples
    --------
    >>> import xarray as xr
    >>> from rankstats._xr import higher_is_better_of
    >>> higher_is_better_of(xr.DataArray(0.5, attrs={"higher_is_better": "false"}), None)
    False
    >>> higher_is_better_of(xr.DataArray(0.5, attrs={"higher_is_better": [1]}), None)
    Traceback (most recent call last):
    ...
    rankstats.errors.CubeError: invalid cube: attribute higher_is_better=[1] is not a \
boolean (0 or 1, true or false)
    """
    if given is not None:
        return bool(given)
    return boolean_attribute(x, "higher_is_better", True)


def boolean_attribute(x, name: str, default: bool) -> bool:
    """The attribute ``name`` of ``x`` as a bool (see :func:`higher_is_better_of`)."""
    attrs = getattr(x, "attrs", None) or {}
    value = attrs.get(name)
    if value is None or (isinstance(value, str) and value == "None"):  # unset, as recorded
        return default
    try:
        return _text.boolean("cube", name, value)
    except OptionError:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise CubeError(
            f"invalid cube: attribute {name}={shown} is not a boolean (0 or 1, true or false)"
        ) from None


def numpy_axis(statistic: str, role: str, value, default_name: str, default_axis: int) -> int:
    """The axis a NumPy input uses for ``role``: an int, or the default for the default name."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if value == default_name:
        return default_axis
    raise DimensionError(
        f"{statistic}: NumPy input has no named dimensions; pass an axis number for "
        f"{role} instead of {value!r}"
    )


def check_dims(statistic: str, x: xr.DataArray, roles: Mapping[str, str]) -> None:
    """Raise unless each named dimension exists once."""
    names = list(roles.values())
    for role, dim in roles.items():
        if dim not in x.dims:
            raise DimensionError(
                f"{statistic}: the {role} dimension {dim!r} is not among the input's "
                f"dimensions ({', '.join(map(str, x.dims))})"
            )
    if len(set(names)) != len(names):
        raise DimensionError(f"{statistic}: one dimension given for two roles: {dict(roles)}")


def check_aligned(statistic: str, arrays: Sequence[xr.DataArray]) -> None:
    """Raise unless the arrays label every shared dimension and coordinate identically."""
    first = arrays[0]
    for other in arrays[1:]:
        for name in set(first.coords) & set(other.coords):
            a, b = first.coords[name], other.coords[name]
            if a.dims != b.dims and not set(a.dims) & set(b.dims):
                continue
            if a.shape != b.shape or not _same_values(a.values, b.values):
                raise CoordinateMismatchError(
                    f"{statistic}: the inputs disagree on coordinate {name!r}: "
                    f"{_describe_difference(a, b)}"
                )
        for dim in set(first.dims) & set(other.dims):
            if first.sizes[dim] != other.sizes[dim]:
                raise CoordinateMismatchError(
                    f"{statistic}: the inputs have {first.sizes[dim]} and {other.sizes[dim]} "
                    f"positions along dimension {dim!r}"
                )


def _same_values(a, b) -> bool:
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a.astype(object), b.astype(object)))


def _describe_difference(a: xr.DataArray, b: xr.DataArray) -> str:
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape} along {a.dims}"
    av, bv = np.asarray(a.values, dtype=object), np.asarray(b.values, dtype=object)
    differs = np.argwhere(av != bv)
    where = tuple(int(i) for i in differs[0])
    shown = ", ".join(f"{dim}={i}" for dim, i in zip(a.dims, where, strict=True))
    first = f"{av[where]!r} vs {bv[where]!r}"
    return f"{len(differs)} label(s) differ, first at {shown or 'scalar'}: {first}"


def _chunked(x: xr.DataArray) -> bool:
    return x.chunks is not None


def apply_labelled(
    statistic: str,
    kernel: Callable[..., dict],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[str]],
    outputs: Mapping[str, tuple[str, Sequence[str]]],
    *,
    kwargs: Mapping | None = None,
    new_dims: Mapping[str, str] | None = None,
    attrs: Mapping | None = None,
    dtypes: Mapping[str, object] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> xr.Dataset:
    """Run ``kernel`` over labelled arrays and collect its outputs in a Dataset.

    Parameters
    ----------
    outputs : mapping
        ``{variable name: (kernel output key, output core dims)}``.
    new_dims : mapping
        ``{new dim: source dim}`` for output dims that do not exist in the
        input (e.g. ``template_b`` for a template × template matrix); the new
        dim takes the source's length and a renamed copy of its coordinates.
    dtypes : mapping
        ``{variable name: dtype}`` for outputs kept in another dtype than
        float64 (e.g. float32 bootstrap replicates).
    sizes : mapping
        ``{dim: length}`` of output dims found in no input (and not in
        ``new_dims``), for dask to know their length.
    """
    kwargs = dict(kwargs or {})
    new_dims = dict(new_dims or {})
    check_aligned(statistic, arrays)
    if len(arrays) == 1 and not _chunked(arrays[0]):
        data = _apply_eager(kernel, arrays[0], core_dims[0], outputs, kwargs, dtypes)
    else:
        data = _apply_ufunc(kernel, arrays, core_dims, outputs, kwargs, new_dims, dtypes, sizes)
    for new, source in new_dims.items():
        data = data.assign_coords(_renamed_coords(arrays[0], source, new))
    data.attrs.update({"statistic": statistic, **_netcdf_safe(attrs or {})})
    return data


def _apply_eager(kernel, array, core, outputs, kwargs, dtypes) -> xr.Dataset:
    """:func:`apply_labelled` for one in-memory array, without ``apply_ufunc``.

    Equal to what ``apply_ufunc`` builds (loop dims in input order, then each
    output's core dims; the coordinates that fit the first output), at a
    fraction of its per-call cost, which matters to statistics called once
    per task or replicate.
    """
    lead = tuple(d for d in array.dims if d not in core)
    order = [array.dims.index(d) for d in (*lead, *core)]
    result = kernel(np.asarray(array.values).transpose(order), **kwargs)
    variables = {
        name: (
            lead + tuple(dims),
            np.asarray(result[key], dtype=np.dtype((dtypes or {}).get(name, float))),
        )
        for name, (key, dims) in outputs.items()
    }
    kept = set(lead) | set(next(iter(outputs.values()))[1])
    # .variables, because iterating the coordinates themselves builds a DataArray for each
    dropped = [
        name for name, coord in array.coords.variables.items() if not set(coord.dims) <= kept
    ]
    return xr.Dataset(variables, coords=array.drop_vars(dropped).coords)


def _apply_ufunc(
    kernel, arrays, core_dims, outputs, kwargs, new_dims, dtypes, extra_sizes=None
) -> xr.Dataset:
    """:func:`apply_labelled` through ``xarray.apply_ufunc``: dask and several inputs."""
    if any(_chunked(a) for a in arrays):
        arrays = [a.chunk({d: -1 for d in dims}) for a, dims in zip(arrays, core_dims, strict=True)]
    keys = [key for key, _ in outputs.values()]
    types = [np.dtype((dtypes or {}).get(name, float)) for name in outputs]
    sizes = {new: arrays[0].sizes[source] for new, source in new_dims.items()}
    sizes.update(extra_sizes or {})

    def call(*values):
        result = kernel(*values, **kwargs)
        arrays = tuple(
            np.asarray(result[key], dtype=dtype) for key, dtype in zip(keys, types, strict=True)
        )
        return arrays if len(arrays) > 1 else arrays[0]

    results = xr.apply_ufunc(
        call,
        *arrays,
        input_core_dims=[list(d) for d in core_dims],
        output_core_dims=[list(dims) for _, dims in outputs.values()],
        dask="parallelized",
        output_dtypes=types,
        dask_gufunc_kwargs={"output_sizes": sizes, "allow_rechunk": False},
        keep_attrs="drop",
    )
    if len(keys) == 1:
        results = (results,)
    # every output shares the first one's coordinates: build from variables, which skips
    # an alignment pass per output
    variables = {name: result.variable for name, result in zip(outputs, results, strict=True)}
    return xr.Dataset(variables, coords=results[0].coords)


def _renamed_coords(x: xr.DataArray, source: str, new: str) -> dict:
    """Copies of the coordinates along ``source``, with ``source`` renamed ``new``."""
    copies = {}
    for name, coord in x.coords.items():
        if source in coord.dims:
            dims = tuple(new if d == source else d for d in coord.dims)
            copies[new if name == source else f"{name}_b"] = (dims, coord.values, coord.attrs)
    return copies


def _netcdf_safe(attrs: Mapping) -> dict:
    """Attributes as netCDF can store them: booleans and None become strings."""
    safe = {}
    for key, value in attrs.items():
        if isinstance(value, bool) or value is None:
            value = str(value)
        safe[key] = value
    return safe


def apply_numpy(
    kernel: Callable[..., dict],
    arrays: Sequence,
    axes: Sequence[Sequence[int]],
    outputs: Mapping[str, str],
    result_type,
    *,
    kwargs: Mapping | None = None,
):
    """Run ``kernel`` over NumPy arrays with the given axes moved last; wrap in ``result_type``.

    ``outputs`` maps result field names to kernel output keys. When
    ``result_type`` is None the single output array is returned.
    """
    moved = []
    for array, core in zip(arrays, axes, strict=True):
        array = np.asarray(array, dtype=float)
        _check_axes(array, core)
        moved.append(np.moveaxis(array, list(core), list(range(-len(core), 0))))
    result = kernel(*moved, **dict(kwargs or {}))
    values = {name: np.asarray(result[key], dtype=float)[()] for name, key in outputs.items()}
    if result_type is None:
        (value,) = values.values()
        return value
    return result_type(**values)


def _check_axes(array: np.ndarray, axes: Sequence[int]) -> None:
    for axis in axes:
        if not -array.ndim <= axis < array.ndim:
            raise DimensionError(
                f"axis {axis} is out of bounds for an array of {array.ndim} dimension(s) "
                f"(shape {array.shape})"
            )
    if len({axis % array.ndim for axis in axes}) != len(axes):
        raise DimensionError(f"axes {tuple(axes)} name the same axis twice")
