"""The reference vectors: inputs and oracle values of rank statistics, with their sources."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources

import numpy as np
import xarray as xr

from ..errors import InputTypeError, UnknownNameError
from . import _arguments as a
from .properties import values_of

__all__ = ["check_against_references", "reference_statistics", "reference_vectors"]

FILE = "reference_vectors.json"


@cache
def _load() -> dict:
    text = resources.files(__package__).joinpath(FILE).read_text(encoding="utf-8")
    return json.loads(text)


def _array(value):
    """A JSON value as NumPy: lists to arrays (null to NaN, booleans kept), numbers as they are."""
    if isinstance(value, list):
        flat = np.asarray(value, dtype=object).ravel()
        if flat.size and all(isinstance(v, bool) for v in flat):
            return np.asarray(value, dtype=bool)
        return np.asarray(value, dtype=float)
    return value


def reference_statistics() -> dict[str, str]:
    """The statistics with reference vectors, each with how its function is called.

    Examples
    --------
    >>> from rankstats.testing import reference_statistics
    >>> print(reference_statistics()["kendall_w"])
    kendall_w(x): x is judges (rows) x objects (columns); Kendall's W ...
    """
    return dict(_load()["statistics"])


def reference_vectors(statistic: str | None = None) -> list[dict]:
    """The reference vectors, all of them or those of one statistic.

    Parameters
    ----------
    statistic : str, optional
        A name of :func:`reference_statistics` (``"kendall_w"``, ...).

    Returns
    -------
    list of dict
        One dict per vector: ``id``, ``statistic``, ``args`` (NumPy arrays,
        NaN where a score is missing), ``options`` (keyword arguments; empty
        for the statistic's defaults), ``expected`` (field name to value),
        ``primary`` (the field a function returning a bare number gives),
        ``source`` (the oracle call, hand computation or printed table),
        ``oracle`` (the library and its version that computed the values, or
        ``"by hand"`` or ``"printed"``), ``rtol`` and ``atol``.

    Raises
    ------
    UnknownNameError
        No vectors for ``statistic``.

    Examples
    --------
    >>> from rankstats.testing import reference_vectors
    >>> vector = reference_vectors("kendall_w")[0]
    >>> vector["id"], vector["oracle"].split()[0], vector["args"][0].shape
    ('kendall_w/untied-5x7', 'pingouin', (5, 7))
    """
    data = _load()
    if statistic is not None and not isinstance(statistic, str):
        raise InputTypeError(f"reference_vectors: statistic={statistic!r} is not a name (str)")
    if statistic is not None and statistic not in data["statistics"]:
        raise UnknownNameError(
            f"no reference vectors for statistic={statistic!r}; there are "
            f"vectors for {', '.join(sorted(data['statistics']))}"
        )
    vectors = []
    for raw in data["vectors"]:
        if statistic is not None and raw["statistic"] != statistic:
            continue
        vector = dict(raw)
        vector["args"] = [_array(a) for a in raw["args"]]
        vector["options"] = {k: _array(v) for k, v in raw["options"].items()}
        vector["expected"] = {k: _array(v) for k, v in raw["expected"].items()}
        vectors.append(vector)
    return vectors


def _has(result, name: str) -> bool:
    if isinstance(result, (Mapping, xr.Dataset)):
        return name in result
    if isinstance(result, (np.ndarray, xr.DataArray, float, int, np.generic)):
        return False
    return hasattr(result, name)


def _short(value) -> str:
    """An array on one line, elided past 40 values."""
    text = np.array2string(np.asarray(value), separator=", ", threshold=40, precision=6)
    return " ".join(text.split())


def check_against_references(
    function: Callable,
    statistic: str,
    *,
    options: str = "defaults",
    field=None,
    rtol: float | None = None,
    atol: float | None = None,
) -> int:
    """Check a statistic function against the reference vectors of ``statistic``.

    Parameters
    ----------
    function : callable
        Called as ``function(*vector["args"])``, with the vector's options as
        keyword arguments where ``options="all"``; see
        :func:`reference_statistics` for the arguments of each statistic.
    statistic : str
        Whose vectors to use (``"kendall_w"``, ``"friedman"``, ...).
    options : {"defaults", "all"}
        ``"defaults"`` uses the vectors computed with the statistic's default
        options only, and passes no keyword argument; ``"all"`` uses every
        vector and passes its options (``ties="min"``, ``nan_policy="omit"``,
        ...) as rankstats names them.
    field : str or callable, optional
        The one field to compare. By default a function returning a number
        or an array is compared with the vector's primary field (the
        statistic), and one returning an object, a mapping or a Dataset on
        every expected field it has (``pvalue``, ``dof``, ...).
    rtol, atol : float, optional
        Tolerances, instead of each vector's own (1e-10 relative for the
        library oracles; 5e-4 absolute for values printed to three decimals).

    Returns
    -------
    int
        How many vectors were checked.

    Raises
    ------
    AssertionError
        Naming each vector that disagrees: its id, source and oracle, the
        input, and the value expected and got for each field.
    UnknownNameError
        No vectors for ``statistic``.
    OptionError
        ``options`` is neither ``"defaults"`` nor ``"all"``, or a tolerance
        is negative or not a number.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.testing import check_against_references
    >>> check_against_references(rankstats.kendall_w, "kendall_w", options="all")
    9
    """
    who = "check_against_references"
    if not callable(function):
        raise InputTypeError(f"{who}: function={function!r} is not callable")
    options = a.choice(who, "options", options, ("defaults", "all"))
    field = a.field(who, field)
    rtol = a.optional_tolerance(who, "rtol", rtol)
    atol = a.optional_tolerance(who, "atol", atol)
    vectors = reference_vectors(statistic)
    if options == "defaults":
        vectors = [v for v in vectors if not v["options"]]
    failures = []
    for vector in vectors:
        failures += _check_one(function, vector, options == "all", field, rtol, atol)
    if failures:
        name = getattr(function, "__name__", repr(function))
        raise AssertionError(
            f"{name} disagrees with {len(failures)} of {len(vectors)} "
            f"reference vectors of {statistic}:\n" + "\n".join(failures)
        )
    return len(vectors)


def _check_one(function, vector, with_options, field, rtol, atol) -> list[str]:
    kwargs = vector["options"] if with_options else {}
    where = (
        f"{vector['id']}: {vector['source']} [{vector['oracle']}]\n"
        f"    input: {'; '.join(_short(a) for a in vector['args'])}"
        + (f"\n    options: {kwargs}" if kwargs else "")
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(*vector["args"], **kwargs)
    except Exception as error:  # the user's function failing is a finding, not a crash
        return [f"{where}\n    raised {type(error).__name__}: {error}"]
    expected = vector["expected"]
    if field is not None:
        names = [field]
    elif any(_has(result, name) for name in expected):
        names = [name for name in expected if _has(result, name)]
    else:
        names = [None]
    tolerance = {
        "rtol": vector["rtol"] if rtol is None else rtol,
        "atol": vector["atol"] if atol is None else atol,
    }
    problems = []
    for name in names:
        key = vector["primary"] if name is None or callable(name) else name
        if key not in expected:
            raise UnknownNameError(
                f"the vectors of {vector['statistic']} have no field "
                f"{key!r}; they have {', '.join(expected)}"
            )
        got = values_of(result, name) if name is not None else np.asarray(result, dtype=float)
        want = np.asarray(expected[key], dtype=float)
        same = got.shape == want.shape and bool(np.allclose(got, want, equal_nan=True, **tolerance))
        if not same:
            problems.append(
                f"    {key}: got {_short(got)}, expected {_short(want)} "
                f"(rtol={tolerance['rtol']:g}, atol={tolerance['atol']:g})"
            )
    return [f"{where}\n" + "\n".join(problems)] if problems else []
