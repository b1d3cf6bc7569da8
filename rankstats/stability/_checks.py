"""One preamble for the public functions of the resampling tier: options checked, NumPy routed.

The bootstrap functions of :mod:`rankstats.stability` (and the budgeted and
reporting analyses built on them) do not fit the shape of a statistic (a
kernel over named roles), so they are declared with :func:`checked` instead
of :func:`rankstats._statistic.statistic`. Before the body runs, the
decorator

1. binds the call: an unknown keyword is an
   :class:`~rankstats.errors.InputTypeError` naming the function;
2. checks every parameter that has a check, by name: :data:`CHECKS` holds
   the resampling vocabulary (``n_resamples``, ``over``, ``seed``,
   ``confidence_level``, ...), and a function may add or override checks.
   A bad value raises :class:`~rankstats.errors.OptionError` naming the
   option and what is allowed, before any bootstrap is drawn or dask graph
   built;
3. with ``numpy=`` given, runs NumPy input ``(..., model, template[,
   sample])`` as a cube whose tasks are the leading axes, and returns the
   frozen result of :mod:`rankstats.results` (see :func:`fields_of`);
4. fills the shared parameter descriptions (``{seed}``, ``{n_resamples}``,
   ...; :data:`DOCS` and :data:`rankstats._statistic.SHARED_DOCS`) into the
   docstring.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import intervals as _ki
from .._kernels import resample as _kr
from .._statistic import _fill_docs, bind_checked
from ..errors import DimensionError, InputTypeError, OptionError

REPLICATE = "replicate"
#: The rank sets of :func:`rankstats.stability.leaderboard`.
RANK_SETS = ("simultaneous", "marginal", "bootstrap")


class Dims:
    """The dimension names a call uses."""

    def __init__(self, model="model", task="task", template="template", sample="sample"):
        self.model, self.task, self.template, self.sample = model, task, template, sample

    def named(self, *roles: str) -> list[str]:
        """The dimension of each role (``model_b`` for the second model); others as given."""
        names = {
            "model": self.model,
            "task": self.task,
            "template": self.template,
            "sample": self.sample,
            "model_b": f"{self.model}_b",
        }
        return [names.get(role, role) for role in roles]


# --------------------------------------------------------------------------- checks


def resample_count(function: str, name: str, value) -> int:
    """A check that a bootstrap's number of resamples is an integer of at least 2."""
    if (
        isinstance(value, (numbers.Integral, np.integer))
        and not isinstance(value, bool)
        and value >= 2
    ):
        return int(value)
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be an "
        "integer of at least 2 (an interval needs two resamples)"
    )


def dimension_name(function: str, name: str, value) -> str:
    """A check that a dimension parameter is a name."""
    if isinstance(value, str):
        return value
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a dimension name (str)"
    )


def replicate_dim(function: str, name: str, value):
    """A check that the replicate dimension is a name, or an axis number for NumPy input."""
    if isinstance(value, str) or (
        isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)
    ):
        return value
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a "
        "dimension name (str) or, for NumPy input, an axis number (int)"
    )


def statistic_names(function: str, name: str, value):
    """A check that ``statistics`` is None, one name or a sequence of names (a tuple back)."""
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else value
    shown = ", ".join(map(repr, _kr.STATISTICS))
    try:
        names = tuple(names)
    except TypeError:
        names = (value,)
    bad = [n for n in names if not isinstance(n, str) or n not in _kr.STATISTICS]
    if bad or not names:
        raise OptionError(
            f"{function}: {name}={value!r} is not allowed; {name} must be "
            f"None or names among {shown}"
        )
    return names


def float_dtype(function: str, name: str, value):
    """A check that ``dtype`` is a floating-point NumPy dtype."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is not None and dtype.kind == "f":
        return dtype
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a "
        "floating-point dtype (numpy.float32 or numpy.float64)"
    )


def draws_dataset(function: str, name: str, value):
    """A check that ``weights`` is None or the Dataset :func:`bootstrap_weights` returns."""
    if value is None or (
        isinstance(value, xr.Dataset) and value.attrs.get("statistic") == "bootstrap weights"
    ):
        return value
    raise OptionError(
        f"{function}: {name} is not allowed; {name} must be None or the "
        f"Dataset bootstrap_weights returns (got {type(value).__name__})"
    )


#: The resampling vocabulary: each parameter of these names is checked by name.
CHECKS: dict[str, o.Check] = {
    "n_resamples": resample_count,
    "over": o.one_of(*o.OVER),
    "seed": o.seed,
    "confidence_level": o.probability,
    "method": o.one_of(*_ki.METHODS),
    "interpolation": o.one_of(*_ki.INTERPOLATIONS),
    "by": o.one_of(*_kr.BY),
    "statistics": statistic_names,
    "ties": o.one_of(*o.TIES),
    "higher_is_better": o.optional_boolean,
    "nan_policy": o.one_of(*o.NAN_POLICIES),
    "jackknife": o.boolean,
    "rank_sets": o.one_of(*RANK_SETS),
    "top_k": o.optional(o.positive_int),
    "weights": draws_dataset,
    "dtype": float_dtype,
    "model": dimension_name,
    "task": dimension_name,
    "template": dimension_name,
    "sample": dimension_name,
}


#: Parameter descriptions shared by the functions of this tier, filled into ``{name}`` lines
#: of their docstrings (before :data:`rankstats._statistic.SHARED_DOCS`, which an entry may
#: name in turn).
DOCS = {
    "numpy_cube": """NumPy input is ``(..., model, template, sample)`` (``(..., model,
template)`` for ``over="templates"``), each leading position a task.""",
    "bootstrap_resamples": """{n_resamples}
    Each is one bootstrap replicate; at least 2. Not used with given
    replicates or ``weights``.""",
    "over": """over : {"samples", "templates", "both"}, default "samples"
    What is resampled within each task: the samples (items), the
    templates, or both, independently (see :func:`bootstrap_weights`).""",
    "weights": """weights : xarray.Dataset, optional
    Draws from :func:`bootstrap_weights` to reuse instead of drawing
    (``n_resamples`` and ``seed`` are then not used).""",
    "replicate_nan_policy": """{nan_policy}
    Applied to per-template scores missing among present models and
    templates, as in :func:`replicates`.""",
    "target": """target : float, default 0.9
    The agreement sought: tau-b ≥ ``target``.""",
    "probability": """probability : float, default 0.95
    The share of the draws that must reach ``target`` (a target
    probability, between 0 and 1).""",
    "mizrahi2024": """.. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
   Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
   Evaluation. TACL 12, 933-949.""",
    "subset_confidence_level": """{confidence_level}
    Here: the central share of the draws each model's rank interval
    covers.""",
}


def fill_docs(function):
    """Fill :data:`DOCS` into the ``{name}`` lines of ``function``'s docstring; return it."""
    if function.__doc__:
        out = []
        for line in function.__doc__.split("\n"):
            key = line.strip()[1:-1]
            if line.strip() == f"{{{key}}}" and key in DOCS:
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(indent + part for part in DOCS[key].split("\n"))
            else:
                out.append(line)
        function.__doc__ = "\n".join(out)
    return function


def _check_together(function: str, values: dict) -> None:
    """Checks of one option against another."""
    statistics, over = values.get("statistics"), values.get("over")
    if statistics and over == "templates" and "score" in statistics:
        raise OptionError(
            f"{function}: statistics={list(statistics)!r} is not allowed with "
            "over='templates': per-template scores do not vary when only templates are "
            "resampled; leave out 'score'"
        )


# --------------------------------------------------------------------------- the decorator


def checked(*, numpy: Callable | None = None, **checks: o.Check):
    """Declare a public function of the resampling tier (see the module's docstring).

    Parameters
    ----------
    numpy : callable, optional
        ``numpy(function, bound, lead, dims) -> result`` runs the body on
        NumPy input: ``bound`` is the call's checked
        :class:`inspect.BoundArguments`, whose first argument the decorator
        has turned into a labelled cube ``(task, model, template[, sample])``,
        and ``lead`` the shape of the input's leading axes; :func:`fields_of`
        makes the usual one. Without it the body gets the input as given.
    **checks
        Checks of parameters that :data:`CHECKS` lacks, or that mean
        something else here (``n_resamples=o.positive_int``).
    """

    def decorate(function):
        signature = inspect.signature(function)
        name = function.__name__
        first = next(iter(signature.parameters))
        table = {
            key: check for key, check in {**CHECKS, **checks}.items() if key in signature.parameters
        }
        if fill_docs(function).__doc__:
            function.__doc__ = _fill_docs(function.__doc__, signature.parameters)

        @functools.wraps(function)
        def public(*args, **kwargs):
            bound, checked_values = bind_checked(name, signature, table, args, kwargs)
            values = bound.arguments
            values.update(checked_values)
            _check_together(name, values)
            if numpy is None or _xr.is_labelled(values[first]):
                return function(*bound.args, **bound.kwargs)
            dims = Dims(
                *(values.get(role, role) for role in ("model", "task", "template", "sample"))
            )
            values[first], lead = numpy_cube(name, values[first], values.get("over"), dims)
            return numpy(function, bound, lead, dims)

        public.__signature__ = signature
        return public

    return decorate


def numpy_cube(function: str, x, over, dims):
    """A NumPy cube as a DataArray (leading axes flattened into tasks), and the leading shape."""
    try:
        values = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(
            f"{function}: give a score cube, an xarray.DataArray or an array "
            f"of numbers (got {type(x).__name__})"
        ) from None
    core = [dims.model, dims.template] + ([dims.sample] if over != "templates" else [])
    if values.ndim < len(core):
        raise DimensionError(
            f"{function}: NumPy input must be (..., {', '.join(core)}) for over={over!r}; "
            f"got shape {values.shape}"
        )
    lead = values.shape[: -len(core)]
    return xr.DataArray(
        values.reshape(-1, *values.shape[-len(core) :]), dims=[dims.task, *core]
    ), lead


def fields_of(result: type, *order: str):
    """A ``numpy=`` runner: the body's Dataset as ``result``, each variable ``(..., *order)``.

    ``order`` names roles (``"model"``, ``"model_b"``, ...) or ``"replicate"``;
    the draws (``*_weight``) are laid out as :func:`bootstrap_weights` lays
    them out, ``(..., replicate, unit)``.
    """

    def run(function, bound, lead, dims):
        data = function(*bound.args, **bound.kwargs)
        return result(**numpy_fields(data, lead, dims, dims.named(*order)))

    return run


def numpy_fields(data, lead, dims, order):
    """The variables of ``data`` as NumPy arrays: tasks as the leading axes, then ``order``."""
    fields = {}
    for name, variable in data.data_vars.items():
        wanted = (REPLICATE, dims.template, dims.sample) if name.endswith("_weight") else order
        kept = [d for d in (dims.task, *wanted) if d in variable.dims]
        values = variable.transpose(*kept).values
        values = values.reshape(tuple(lead) + values.shape[1:]) if dims.task in kept else values
        fields[name] = values[()] if values.ndim == 0 else values
    return fields
