"""Compare two cubes, or any two xarray objects, and say readably where they differ."""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _text
from ..errors import InputTypeError
from . import _arguments as a

__all__ = ["assert_cube_equal"]

#: Attributes that differ between two builds of one cube and are not compared by default.
VOLATILE_ATTRS = ("created_at",)


def assert_cube_equal(
    actual,
    expected,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    attrs: bool = True,
    ignore_attrs=VOLATILE_ATTRS,
    shown: int = 5,
) -> None:
    """Assert that two cubes hold the same values, coordinates and attributes.

    Dimensions are matched by name, so their order does not matter. Floats
    are compared with ``numpy.isclose(actual, expected, rtol, atol)``, NaN
    equal to NaN; everything else exactly.

    Parameters
    ----------
    actual, expected : xarray.Dataset or xarray.DataArray
        The two objects (lazy, dask-backed ones are computed).
    rtol, atol : float, default 0
        Relative and absolute tolerances for floating-point values.
    attrs : bool, default True
        Also compare the attributes of the objects and of their variables.
    ignore_attrs : sequence of str, default ("created_at",)
        Attributes left out of the comparison.
    shown : int, default 5
        How many differing values to show per variable.

    Raises
    ------
    AssertionError
        Listing every difference: dimensions, variables or coordinates
        present on one side only, and for each variable the count of
        differing values, the largest difference and the first few,
        located by their labels.
    InputTypeError
        An argument is not an xarray object.
    OptionError
        A tolerance is negative or not a number, ``attrs`` is not a bool,
        ``shown`` is not a whole number.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import assert_cube_equal
    >>> cube = rankstats.from_records([
    ...     {"model": "m1", "task": "t", "template": "a", "score": 0.5},
    ...     {"model": "m2", "task": "t", "template": "a", "score": 0.25},
    ... ])
    >>> assert_cube_equal(cube, cube.copy())
    >>> changed = cube.copy(deep=True)
    >>> changed["score"][1, 0, 0] = 0.75
    >>> assert_cube_equal(changed, cube)
    Traceback (most recent call last):
    ...
    AssertionError: the cubes differ:
      - score: 1 of 2 values differ (rtol=0, atol=0; largest difference 0.5):
        model='m2', task='t', template=0: 0.75 != 0.25
    """
    for name, value in (("actual", actual), ("expected", expected)):
        if not isinstance(value, (xr.Dataset, xr.DataArray)):
            raise InputTypeError(
                f"assert_cube_equal: {name} is a {type(value).__name__}, "
                "not an xarray Dataset or DataArray"
            )
    function = "assert_cube_equal"
    rtol, atol = a.tolerance(function, "rtol", rtol), a.tolerance(function, "atol", atol)
    attrs = a.flag(function, "attrs", attrs)
    shown = a.count(function, "shown", shown)
    if isinstance(ignore_attrs, str):
        ignore_attrs = (ignore_attrs,)
    ignore = tuple(_text.text_list(function, "ignore_attrs", list(ignore_attrs)))
    problems = _differences(actual, expected, rtol, atol, attrs, ignore, shown)
    if problems:
        raise AssertionError("the cubes differ:\n  - " + "\n  - ".join(problems))


def _as_dataset(value) -> xr.Dataset:
    if isinstance(value, xr.DataArray):
        return value.to_dataset(name=value.name if value.name is not None else "<array>")
    return value


def _differences(actual, expected, rtol, atol, attrs, ignore, shown) -> list[str]:
    problems = []
    if type(actual) is not type(expected):
        problems.append(
            f"actual is a {type(actual).__name__}, expected a {type(expected).__name__}"
        )
    a, e = _as_dataset(actual), _as_dataset(expected)
    if dict(a.sizes) != dict(e.sizes):
        problems.append(f"dimensions differ: {_sizes(a)} != {_sizes(e)}")
        return problems
    problems += _one_side("variable", set(a.data_vars), set(e.data_vars))
    problems += _one_side("coordinate", set(a.coords), set(e.coords))
    for name in [*e.data_vars, *e.coords]:
        if name not in a.variables:
            continue
        problems += _variable(a, e, name, rtol, atol, shown)
        if attrs:
            problems += _attrs(f"attrs of {name}", a[name].attrs, e[name].attrs, ignore)
    if attrs:
        problems += _attrs("attrs", actual.attrs, expected.attrs, ignore)
    return problems


def _sizes(ds: xr.Dataset) -> str:
    return "{" + ", ".join(f"{d}: {n}" for d, n in sorted(ds.sizes.items())) + "}"


def _one_side(what: str, actual: set, expected: set) -> list[str]:
    problems = []
    if expected - actual:
        problems.append(f"{what}(s) only expected: {sorted(map(str, expected - actual))}")
    if actual - expected:
        problems.append(f"{what}(s) only in actual: {sorted(map(str, actual - expected))}")
    return problems


def _attrs(where: str, actual: dict, expected: dict, ignore: tuple) -> list[str]:
    keys = (set(actual) | set(expected)) - set(ignore)
    problems = []
    for key in sorted(keys, key=str):
        if key not in actual:
            problems.append(f"{where}: {key!r} only expected ({expected[key]!r})")
        elif key not in expected:
            problems.append(f"{where}: {key!r} only in actual ({actual[key]!r})")
        elif not _same_attr(actual[key], expected[key]):
            problems.append(f"{where}: {key!r} is {actual[key]!r}, expected {expected[key]!r}")
    return problems


def _same_attr(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a == b


def _variable(a: xr.Dataset, e: xr.Dataset, name, rtol, atol, shown) -> list[str]:
    left, right = a[name].variable, e[name].variable
    if set(left.dims) != set(right.dims):
        return [f"{name}: dims {left.dims} != expected {right.dims}"]
    left = left.transpose(*right.dims)
    x, y = np.asarray(left.values), np.asarray(right.values)
    floats = x.dtype.kind in "fc" or y.dtype.kind in "fc"
    if floats and x.dtype.kind in "biufc" and y.dtype.kind in "biufc":
        with np.errstate(invalid="ignore"):
            same = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
            gap = np.abs(x.astype(float) - y.astype(float))
        largest = np.nanmax(np.where(same, np.nan, gap)) if (~same).any() else 0.0
        tolerance = f"rtol={rtol:g}, atol={atol:g}; largest difference {largest:g}"
    else:
        same = np.asarray(x.astype(object) == y.astype(object), dtype=bool).reshape(x.shape)
        tolerance = "compared exactly"
    if same.all():
        return []
    where = np.argwhere(~same)[:shown]
    located = [
        f"{_locate(e, right.dims, tuple(w), name)}: {_plain(x[tuple(w)])!r} != "
        f"{_plain(y[tuple(w)])!r}"
        for w in where
    ]
    return [
        f"{name}: {int((~same).sum())} of {same.size} values differ ({tolerance}):\n    "
        + "\n    ".join(located)
    ]


def _locate(ds: xr.Dataset, dims: tuple, position: tuple, name) -> str:
    if not dims:
        return "the value"
    parts = []
    for dim, index in zip(dims, position, strict=True):
        if dim in ds.indexes and dim != name:  # an index that differs is located by position
            parts.append(f"{dim}={_plain(ds.indexes[dim][index])!r}")
        else:
            parts.append(f"{dim}={int(index)}")
    return ", ".join(parts)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
