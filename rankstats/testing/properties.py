"""Property checks to apply to any statistic function, each one a hypothesis search.

Each ``check_*`` function draws inputs, calls the statistic and compares what
it returns. On success it returns None; on failure it raises an
``AssertionError`` whose message shows the smallest input hypothesis found
that breaks the property. The statistic's result may be a number, an array,
an object with a ``statistic`` field (as rankstats' results), a mapping, or
an xarray object; ``field`` picks what to compare (see :func:`values_of`).
Warnings the statistic raises on degenerate inputs (one judge, a constant
row) are silenced during the search.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import xarray as xr
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from ..errors import InputTypeError, OptionError
from . import _arguments as a
from . import strategies as s

__all__ = [
    "check_bounds",
    "check_dask",
    "check_monotone_invariance",
    "check_permutation_invariance",
    "check_symmetry",
    "check_vectorised",
    "values_of",
]

_AXES = {"objects": -1, "judges": -2}


def values_of(result, field=None) -> np.ndarray:
    """The numbers a statistic returned, as a float array.

    Parameters
    ----------
    result : number, array, result object, mapping or xarray object
        What the statistic returned.
    field : str or callable, optional
        The attribute, key or variable to read (a callable is applied to the
        result); by default ``statistic`` where the result has one, else the
        result itself.

    Examples
    --------
    >>> import numpy as np, rankstats
    >>> from rankstats.testing.properties import values_of
    >>> values_of(rankstats.kendall_w(np.array([[1.0, 2.0], [1.0, 2.0]])))
    array(1.)
    >>> values_of({"statistic": 0.5, "pvalue": 0.1}, "pvalue")
    array(0.1)
    """
    if callable(field):
        result = field(result)
    elif field is not None:
        if isinstance(result, (Mapping, xr.Dataset)):
            result = result[field]
        else:
            result = getattr(result, field)
    elif isinstance(result, (Mapping, xr.Dataset)) and "statistic" in result:
        result = result["statistic"]
    elif hasattr(result, "statistic") and not isinstance(result, (np.ndarray, xr.DataArray)):
        result = result.statistic
    if isinstance(result, (xr.DataArray, xr.Dataset)):
        result = result.to_array() if isinstance(result, xr.Dataset) else result
        result = result.values
    return np.asarray(result, dtype=float)


def _evaluate(statistic, field, *args) -> np.ndarray:
    """The statistic's values for ``args``; lazy results are computed here, warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values_of(statistic(*args), field)


def _name(statistic) -> str:
    return getattr(statistic, "__name__", None) or repr(statistic)


def _show(x) -> str:
    return np.array2string(np.asarray(x), separator=", ", threshold=200)


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _common(function: str, statistic, inputs, field, max_examples, settings, **tolerances):
    """Check the arguments every property check takes, before any search; return them parsed."""
    if not callable(statistic):
        raise InputTypeError(f"{function}: statistic={statistic!r} is not callable")
    return (
        a.strategy(function, "inputs", inputs),
        a.field(function, field),
        a.max_examples(function, max_examples),
        a.search_settings(function, settings),
        {name: a.tolerance(function, name, value) for name, value in tolerances.items()},
    )


def _run(search, max_examples, parent):
    """Run a ``@given`` search under ``parent`` (the current profile by default), no deadline."""
    options = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
    }
    if max_examples is not None:
        options["max_examples"] = max_examples
    base = parent if parent is not None else hypothesis_settings.default
    hypothesis_settings(base, **options)(search)()


def check_permutation_invariance(
    statistic: Callable,
    *,
    axis="objects",
    equivariant=False,
    inputs=None,
    field=None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    max_examples=None,
    settings=None,
) -> None:
    """Check that permuting the objects (or judges) leaves the statistic unchanged.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(x)`` on a judges × objects matrix.
    axis : {"objects", "judges"} or int
        The axis permuted: the objects (columns, the default) or the judges
        (rows).
    equivariant : bool, default False
        The result follows the permutation instead (per-object results such
        as ranks, on the same axis as in the input).
    inputs : hypothesis strategy, optional
        The matrices; by default :func:`~rankstats.testing.strategies.score_matrices`.
    field, rtol, atol
        What to compare (see :func:`values_of`) and how closely.
    max_examples : int, optional
        How many inputs to try; by default the current hypothesis profile's.
    settings : hypothesis.settings, optional
        The settings to search under (``derandomize=True`` for the same
        inputs on every run, say); by default the current profile's. No
        deadline applies either way.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_permutation_invariance
    >>> check_permutation_invariance(rankstats.kendall_w, axis="judges")
    >>> check_permutation_invariance(rankstats.rank, equivariant=True)
    """
    function = "check_permutation_invariance"
    inputs, field, max_examples, settings, tolerance = _common(
        function, statistic, inputs, field, max_examples, settings, rtol=rtol, atol=atol
    )
    rtol, atol = tolerance["rtol"], tolerance["atol"]
    equivariant = a.flag(function, "equivariant", equivariant)
    if isinstance(axis, np.integer):
        axis = int(axis)
    position = _AXES.get(axis, axis) if isinstance(axis, str) else axis
    if not isinstance(position, int) or isinstance(position, bool):
        raise InputTypeError(f"{function}: axis={axis!r} is not 'objects', 'judges' or an int")
    if inputs is None and not -2 <= position < 2:
        raise OptionError(
            f"{function}: axis={axis!r} is not an axis of the judges x objects "
            "matrices it draws (0, 1, -1 or -2)"
        )
    inputs = s.score_matrices() if inputs is None else inputs

    @given(x=inputs, data=st.data())
    def search(x, data):
        if not -x.ndim <= position < x.ndim:
            raise OptionError(
                f"{function}: axis={axis!r} is not an axis of the drawn input of shape {x.shape}"
            )
        size = x.shape[position]
        order = np.asarray(data.draw(st.permutations(range(size)), label="permutation"))
        moved = np.take(x, order, axis=position)
        before = _evaluate(statistic, field, x)
        after = _evaluate(statistic, field, moved)
        expected = np.take(before, order, axis=position) if equivariant else before
        if not _close(after, expected, rtol, atol):
            raise AssertionError(
                f"{_name(statistic)} is not {'equi' if equivariant else 'in'}variant to permuting "
                f"the {axis}:\n  x = {_show(x)}\n  gives {_show(before)}\n  x permuted by "
                f"{order.tolist()} = {_show(moved)}\n  gives {_show(after)}, expected "
                f"{_show(expected)}"
            )

    _run(search, max_examples, settings)


def check_monotone_invariance(
    statistic: Callable,
    *,
    per_judge: bool = True,
    inputs=None,
    field=None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    max_examples=None,
    settings=None,
) -> None:
    """Check that strictly increasing maps of the scores leave the statistic unchanged.

    A rank statistic depends on the order of the scores only: mapping them
    through ``arctan``, ``exp`` or ``v**3`` must change nothing, ties
    included.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(x)`` on a judges × objects matrix.
    per_judge : bool, default True
        Each judge (row) gets its own map; False applies one map to all.
    inputs : hypothesis strategy, optional
        The matrices; by default integer-valued ones (|v| <= 20), which every
        map of :data:`~rankstats.testing.strategies.INCREASING` keeps distinct.
    field, rtol, atol, max_examples, settings
        As for :func:`check_permutation_invariance`.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_monotone_invariance
    >>> check_monotone_invariance(rankstats.kendall_w)
    """
    function = "check_monotone_invariance"
    inputs, field, max_examples, settings, tolerance = _common(
        function, statistic, inputs, field, max_examples, settings, rtol=rtol, atol=atol
    )
    rtol, atol = tolerance["rtol"], tolerance["atol"]
    per_judge = a.flag(function, "per_judge", per_judge)
    if inputs is None:
        inputs = s.score_matrices(elements=st.integers(-20, 20).map(float))

    @given(x=inputs, data=st.data())
    def search(x, data):
        rows = x.shape[-2] if per_judge and x.ndim >= 2 else 1
        maps = data.draw(
            st.lists(s.monotone_transforms(), min_size=rows, max_size=rows), label="maps"
        )
        if per_judge and x.ndim >= 2:
            moved = np.stack([maps[i](x[..., i, :]) for i in range(rows)], axis=-2)
        else:
            moved = maps[0](x)
        before = _evaluate(statistic, field, x)
        after = _evaluate(statistic, field, moved)
        if not _close(after, before, rtol, atol):
            raise AssertionError(
                f"{_name(statistic)} changed under the strictly increasing map(s) {maps}:\n"
                f"  x = {_show(x)}\n  gives {_show(before)}\n  mapped = {_show(moved)}\n"
                f"  gives {_show(after)}"
            )

    _run(search, max_examples, settings)


def check_symmetry(
    statistic: Callable,
    *,
    inputs=None,
    field=None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    max_examples=None,
    settings=None,
) -> None:
    """Check that a statistic of two arguments does not depend on their order.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(x, y)``.
    inputs : hypothesis strategy, optional
        Pairs ``(x, y)``; by default two rows of one
        :func:`~rankstats.testing.strategies.score_matrices` draw, neither
        constant.
    field, rtol, atol, max_examples, settings
        As for :func:`check_permutation_invariance`.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_symmetry
    >>> check_symmetry(rankstats.kendall_tau)
    """
    inputs, field, max_examples, settings, tolerance = _common(
        "check_symmetry", statistic, inputs, field, max_examples, settings, rtol=rtol, atol=atol
    )
    rtol, atol = tolerance["rtol"], tolerance["atol"]
    if inputs is None:
        inputs = s.score_matrices(judges=2, objects=(2, 10), constant_rows="none").map(tuple)

    @given(pair=inputs)
    def search(pair):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputTypeError(
                f"check_symmetry: inputs must draw pairs (x, y); it drew a {type(pair).__name__}"
            )
        x, y = pair
        xy = _evaluate(statistic, field, x, y)
        yx = _evaluate(statistic, field, y, x)
        if not _close(xy, yx, rtol, atol):
            raise AssertionError(
                f"{_name(statistic)}(x, y) != {_name(statistic)}(y, x):\n  x = {_show(x)}\n"
                f"  y = {_show(y)}\n  (x, y) gives {_show(xy)}, (y, x) gives {_show(yx)}"
            )

    _run(search, max_examples, settings)


def check_bounds(
    statistic: Callable,
    low: float,
    high: float,
    *,
    inputs=None,
    field=None,
    allow_nan: bool = True,
    max_examples=None,
    settings=None,
) -> None:
    """Check that every value the statistic returns lies in ``[low, high]``.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(x)``.
    low, high : float
        The bounds, included.
    inputs : hypothesis strategy, optional
        By default :func:`~rankstats.testing.strategies.score_matrices`.
    field : str or callable, optional
        What to check (see :func:`values_of`).
    allow_nan : bool, default True
        Whether NaN (an undefined value, on one judge say) is allowed.
    max_examples, settings
        As for :func:`check_permutation_invariance`.

    Raises
    ------
    AssertionError
        A value outside the bounds, with the smallest input found.
    OptionError
        ``low`` or ``high`` is not a number, is NaN, or ``low > high`` (the
        bounds are checked before the statistic is called).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_bounds
    >>> check_bounds(rankstats.kendall_w, 0, 1)
    >>> check_bounds(rankstats.kendall_w, 0, 1, field="pvalue")
    >>> check_bounds(rankstats.kendall_w, 1, 0)
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: check_bounds: low=1 is above high=0; give the bounds in order
    """
    function = "check_bounds"
    inputs, field, max_examples, settings, _ = _common(
        function, statistic, inputs, field, max_examples, settings
    )
    low_, high_ = a.bound(function, "low", low), a.bound(function, "high", high)
    if low_ > high_:
        raise OptionError(
            f"{function}: low={low!r} is above high={high!r}; give the bounds in order"
        )
    low, high = low_, high_
    allow_nan = a.flag(function, "allow_nan", allow_nan)
    inputs = s.score_matrices() if inputs is None else inputs

    @given(x=inputs)
    def search(x):
        got = _evaluate(statistic, field, x)
        nan = np.isnan(got)
        inside = (got >= low) & (got <= high)
        if not (inside | (nan & allow_nan)).all():
            raise AssertionError(
                f"{_name(statistic)} left [{low:g}, {high:g}]:\n  x = {_show(x)}\n"
                f"  gives {_show(got)}"
            )

    _run(search, max_examples, settings)


def check_vectorised(
    statistic: Callable,
    *,
    inputs=None,
    field=None,
    rtol: float = 1e-12,
    atol: float = 1e-15,
    max_examples=None,
    settings=None,
) -> None:
    """Check that one call on stacked matrices equals a loop over the slices.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(x)`` on a stack (slices, judges, objects) and
        on each slice; the result of the stack is indexed by its first axis.
    inputs : hypothesis strategy, optional
        Stacks; by default ``score_matrices(slices=(1, 4))``.
    field, rtol, atol, max_examples, settings
        As for :func:`check_permutation_invariance`.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_vectorised
    >>> check_vectorised(rankstats.kendall_w)
    """
    inputs, field, max_examples, settings, tolerance = _common(
        "check_vectorised", statistic, inputs, field, max_examples, settings, rtol=rtol, atol=atol
    )
    rtol, atol = tolerance["rtol"], tolerance["atol"]
    inputs = s.score_matrices(slices=(1, 4)) if inputs is None else inputs

    @given(x=inputs)
    def search(x):
        stacked = _evaluate(statistic, field, x)
        if stacked.shape[:1] != x.shape[:1]:
            raise AssertionError(
                f"{_name(statistic)} of a stack of {len(x)} slices gives shape {stacked.shape}, "
                f"not one result per slice:\n  x = {_show(x)}\n  gives {_show(stacked)}"
            )
        for i, block in enumerate(x):
            single = _evaluate(statistic, field, block)
            if not _close(stacked[i], single, rtol, atol):
                raise AssertionError(
                    f"{_name(statistic)} of a stack differs from its slice {i}:\n"
                    f"  x = {_show(x)}\n  stacked call gives {_show(stacked)}\n"
                    f"  slice {i} alone gives {_show(single)}"
                )

    _run(search, max_examples, settings)


def check_dask(
    statistic: Callable,
    *,
    inputs=None,
    chunks=None,
    field=None,
    rtol: float = 1e-12,
    atol: float = 1e-15,
    max_examples=None,
    settings=None,
) -> None:
    """Check that a statistic of a dask-chunked cube equals that of the cube in memory.

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(cube)`` on a cube and on its chunked copy.
    inputs : hypothesis strategy, optional
        Cubes; by default :func:`~rankstats.testing.strategies.cubes` with
        at least two templates and models.
    chunks : dict, optional
        How to chunk; by default one model per chunk.
    field, rtol, atol, max_examples, settings
        As for :func:`check_permutation_invariance`.

    Raises
    ------
    ImportError
        dask is not installed (``pip install "rankstats[dask]"``).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_dask
    >>> check_dask(rankstats.kendall_w, max_examples=5)
    """
    inputs, field, max_examples, settings, tolerance = _common(
        "check_dask", statistic, inputs, field, max_examples, settings, rtol=rtol, atol=atol
    )
    rtol, atol = tolerance["rtol"], tolerance["atol"]
    if chunks is not None and not isinstance(chunks, dict):
        raise InputTypeError(f"check_dask: chunks={chunks!r} is not a dict of dimension sizes")
    if importlib.util.find_spec("dask") is None:
        raise ImportError('check_dask needs dask: pip install "rankstats[dask]"')
    if inputs is None:
        inputs = s.cubes(models=(2, 4), templates=(2, 4))
    chunks = {"model": 1} if chunks is None else chunks

    @given(cube=inputs)
    def search(cube):
        eager = _evaluate(statistic, field, cube)
        lazy = _evaluate(statistic, field, cube.chunk(chunks))
        if not _close(lazy, eager, rtol, atol):
            raise AssertionError(
                f"{_name(statistic)} of the chunked cube differs from the eager one:\n{cube}\n"
                f"  eager: {_show(eager)}\n  chunked: {_show(lazy)}"
            )

    _run(search, max_examples, settings)
