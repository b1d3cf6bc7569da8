"""One decorator defines a statistic: its roles, its options, its result; the dispatch exists once.

A statistic is written as a function whose signature is the public one::

    @statistic(roles={"judges": ("template", -2), "objects": ("model", -1)},
               options={"ties": TIES_CHECK, "nan_policy": NAN_POLICY_CHECK},
               result=KendallWResult)
    def kendall_w(x, judges="template", objects="model", *, ties="average", ...):
        return x.apply(kernel, OUTPUTS, kwargs={...})

Before the body runs, the decorator

1. checks every declared option (so a bad value fails at once, before a dask
   graph or a bootstrap is built), every role's type and every mask's form;
2. resolves ``higher_is_better=None`` from the input's attribute;
3. routes the inputs: xarray input is reduced to its scores (the mean over
   samples unless a role or ``keep`` names ``sample``) and each role's
   dimension is checked to exist; NumPy input has each role resolved to an axis
   (an axis number, or the role's default axis when the default name is
   given); mixing labelled and NumPy inputs is refused (scalars go with
   either);
4. resolves masks (``valid=True`` → the cube's ``template_valid``
   coordinate) and labels given for a position along a role (a control
   model's name → its position);
5. hands the body an :class:`Inputs` in place of the first argument(s), whose
   :meth:`Inputs.apply` runs a kernel through :mod:`rankstats._xr` and returns
   an :class:`xarray.Dataset` or the frozen result;
6. fills the shared parameter descriptions into the docstring (``{nan_policy}``,
   ``{ties}``, ...), each with the function's own default.

A role is ``(default dimension name, default NumPy axis)`` or a :class:`Role`,
which also allows several dimensions for one role (``blocks=("task",
"template")``, joined by the kernel) and a default of "every other
dimension".
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from . import _options as o
from . import _xr
from .errors import CubeError, DimensionError, InputTypeError
from .results import _make_result

__all__ = ["SHARED_DOCS", "Inputs", "Mask", "Role", "bind_checked", "documented", "statistic"]

#: Parameter descriptions shared by every statistic, filled into ``{name}`` lines of
#: docstrings; ``{default}`` becomes the function's own default.
SHARED_DOCS = {
    "nan_policy": """nan_policy : {{"propagate", "omit", "raise"}}, default {default}
        What to do with missing scores that remain once structure (padded
        positions, absent models) is removed: return NaN, delete them (see
        Notes for listwise or pairwise), or raise
        :class:`~rankstats.errors.MissingValueError`.""",
    "ties": """ties : {{"average", "min", "max", "dense", "ordinal"}}, default {default}
        How tied values are ranked, as in :func:`scipy.stats.rankdata`.""",
    "tie_correction": """tie_correction : bool, default {default}
        Correct the statistic's variance (denominator) for ties.""",
    "higher_is_better": """higher_is_better : bool, optional
        Whether the highest score ranks first. Defaults to the cube's
        ``higher_is_better`` attribute, else True.""",
    "p_adjust": """p_adjust : {{"holm", "bh", "by", "bonferroni", "none"}}, default {default}
        Adjustment of the p-values for multiple testing within each family:
        Holm's step-down, Benjamini–Hochberg, Benjamini–Yekutieli,
        Bonferroni, or none (as
        :func:`statsmodels.stats.multitest.multipletests` with ``"holm"``,
        ``"fdr_bh"``, ``"fdr_by"``, ``"bonferroni"``).""",
    "alpha": """alpha : float, default {default}
        The tests' significance level, strictly between 0 and 1.""",
    "confidence_level": """confidence_level : float, default {default}
        The intervals' confidence level.""",
    "seed": """seed : None, int or numpy.random.Generator, optional
        Seed of the random draws; None draws fresh entropy.""",
    "n_resamples": """n_resamples : int, default {default}
        Number of resamples.""",
    "blocks": """blocks : str, int or sequence of them, optional
        The block dimension(s), joined into one set of blocks (e.g.
        ``("task", "template")``). Default: every dimension except
        ``treatments`` (axis -2 for NumPy input, where axis numbers are
        given instead of names).""",
    "treatments": """treatments : str or int, default {default}
        The dimension whose members are compared (axis -1 for NumPy input).""",
    "valid": """valid : None, True, str or array_like of bool, default {default}
        Templates to keep: True uses the cube's ``template_valid``
        coordinate, a string names another coordinate, an array gives the
        mask (over templates, broadcast over the rest). Default: all.""",
}

#: Defaults of the shared parameters, for a docstring whose function lacks one.
_SHARED_DEFAULTS = {
    "nan_policy": "propagate",
    "ties": "average",
    "tie_correction": True,
    "p_adjust": "holm",
    "alpha": 0.05,
    "confidence_level": 0.95,
    "n_resamples": 1000,
    "treatments": "model",
    "valid": None,
}


@dataclass(frozen=True)
class Role:
    """How one role parameter resolves to dimensions (labelled) or axes (NumPy).

    Parameters
    ----------
    dim : str or None
        The default dimension name; on NumPy input it stands for ``axis``.
    axis : int, tuple of int or None
        The default NumPy axis (a tuple for a role of several axes); None
        with ``rest``: every axis no other role takes.
    many : bool
        The role takes one dimension or a sequence of them (a tuple after
        resolution), joined by the kernel.
    rest : bool
        None means every dimension no other role takes (on labelled input,
        after the mean over samples).
    hint : str
        Added to the error when the role's dimension is missing.
    """

    dim: str | None = None
    axis: int | tuple[int, ...] | None = None
    many: bool = False
    rest: bool = False
    hint: str = ""


@dataclass(frozen=True)
class Mask:
    """A boolean mask parameter along one role (e.g. ``valid`` over templates).

    The parameter may be None (every position), True (the cube coordinate
    ``coord``), a string (another coordinate's name) or an array of bool
    along the role, broadcast over the rest. Names need labelled input.
    """

    coord: str
    role: str
    describe_as: str = "all"


@dataclass(frozen=True)
class Inputs:
    """The routed inputs of one call, handed to a statistic's body in place of ``x``.

    Attributes
    ----------
    name : str
        The statistic's name, for messages.
    arrays : tuple
        Each input: a :class:`xarray.DataArray` of scores, or a NumPy array.
    labelled : bool
        Whether the inputs are xarray objects.
    roles : dict
        ``{role: dimension name}`` for labelled input, ``{role: axis}`` for
        NumPy; a tuple of them for a role of several dimensions.
    options : dict
        The checked option values, recorded in the result's attrs.
    result : type or None
        The frozen result class for NumPy input.
    original : tuple
        The inputs as given (a cube keeps its coordinates and attrs here).
    masks : dict
        ``{mask parameter: boolean DataArray or NumPy array}`` (all True
        where the parameter is None).
    positions : dict
        ``{parameter: position along its role}`` for labels resolved to
        positions (e.g. a control model).
    """

    name: str
    arrays: tuple
    labelled: bool
    roles: dict
    options: dict
    result: type | None
    original: tuple
    masks: dict = field(default_factory=dict)
    positions: dict = field(default_factory=dict)

    def apply(
        self,
        kernel: Callable[..., dict],
        outputs: Mapping[str, str],
        *,
        core: Sequence[str] | None = None,
        output_dims: Mapping[str, Sequence[str]] | None = None,
        kwargs: Mapping | None = None,
        attrs: Mapping | None = None,
        new_dims: Mapping[str, str] | None = None,
        arrays: Sequence | None = None,
        cores: Sequence[Sequence[str]] | None = None,
        result: type | None = None,
        dtypes: Mapping[str, object] | None = None,
        sizes: Mapping[str, int] | None = None,
        pairs: str | None = None,
    ):
        """Run ``kernel`` with the roles in ``core`` as its last axes; collect ``outputs``.

        Parameters
        ----------
        kernel : callable
            ``kernel(*arrays, **kwargs) -> dict`` over arrays whose last axes
            are the core roles, in order (a role of several dimensions gives
            several axes).
        outputs : mapping
            ``{result field: kernel output key}``. On labelled input the first
            output must carry every output dim (it lends the Dataset its
            coordinates).
        core : sequence of str, optional
            The roles that are the kernel's core axes, in order (default: every
            role, in declaration order), for every input.
        output_dims : mapping, optional
            ``{result field: its core dims}`` for labelled input (default: none,
            a value per slice). Names may be roles (replaced by their dims) or
            new dims.
        kwargs : mapping, optional
            Keyword arguments of the kernel.
        attrs : mapping, optional
            Extra attrs of the labelled result (roles and options are always
            recorded).
        new_dims : mapping, optional
            ``{new dim: role}`` for output dims copied from a role's dim (e.g.
            ``template_b``).
        arrays, cores : sequence, optional
            Other inputs than the routed ones (e.g. a mask), with the roles
            that are their core axes.
        result : type, optional
            The result class, if not the statistic's; None with a result-less
            statistic returns the single output array.
        dtypes, sizes : mapping, optional
            As :func:`rankstats._xr.apply_labelled`.
        pairs : str, optional
            A role whose every pair of positions the kernel compares: on
            labelled input ``f"{role}_b"`` in ``output_dims`` stands for the new
            dim ``f"{dim}_b"``, with renamed copies of the role's coordinates
            (refused if the input has it already).
        """
        if not self.labelled:
            if arrays is None:
                arrays = self.arrays
            if cores is None:
                axes = [self.dims(*(core if core is not None else self.roles))] * len(arrays)
            else:
                axes = [self.dims(*c) for c in cores]
            return _apply_numpy(kernel, arrays, axes, outputs, result or self.result, kwargs or {})
        core = list(core if core is not None else self.roles)
        arrays = list(arrays if arrays is not None else self.arrays)
        cores = [list(c) for c in cores] if cores is not None else [core] * len(arrays)
        kwargs = dict(kwargs or {})
        if self.labelled:
            new_dims = dict(new_dims or {})
            if pairs is not None:
                new_dims[self._pair_dim(pairs)] = pairs
                output_dims = {
                    name: [self._pair_dim(pairs) if d == f"{pairs}_b" else d for d in dims]
                    for name, dims in (output_dims or {}).items()
                }
            dims = [self.dims(*c) for c in cores]
            output_dims = output_dims or {}
            labelled_outputs = {
                name: (key, self.dims(*output_dims.get(name, []))) for name, key in outputs.items()
            }
            recorded = {
                **{role: _recorded(value) for role, value in self.roles.items()},
                **self.options,
                **(attrs or {}),
            }
            return _xr.apply_labelled(
                self.name,
                kernel,
                arrays,
                dims,
                labelled_outputs,
                kwargs=kwargs,
                new_dims={new: self.roles[role] for new, role in (new_dims or {}).items()},
                attrs=recorded,
                dtypes=dtypes,
                sizes=sizes,
            )
        axes = [self.dims(*c) for c in cores]
        return _apply_numpy(kernel, arrays, axes, outputs, result or self.result, kwargs)

    def _pair_dim(self, role: str) -> str:
        pair = f"{self.roles[role]}_b"
        if pair in self.arrays[0].dims:
            raise DimensionError(f"{self.name}: the input already has a {pair!r} dimension")
        return pair

    def dims(self, *names: str) -> list:
        """The dimensions (labelled) or axes (NumPy) of roles, flattened; other names as given."""
        out = []
        for name in names:
            value = self.roles.get(name, name)
            out.extend(value if isinstance(value, tuple) else [value])
        return out

    def count(self, role: str) -> int:
        """How many dimensions (axes) a role has."""
        return len(self.dims(role))


def _apply_numpy(kernel, arrays, axes, outputs, result_type, kwargs):
    """:func:`rankstats._xr.apply_numpy`, without moving axes that are already the last ones.

    Where every input's core axes are its trailing axes in order (the
    defaults, on 2-d input) the arrays go to the kernel as they are; any other
    call takes :func:`rankstats._xr.apply_numpy`, which checks the axes and
    moves them.
    """
    moved = []
    for array, core in zip(arrays, axes, strict=True):
        array = np.asarray(array, dtype=float)
        ndim, count = array.ndim, len(core)
        # the routed axes are ints (never bools): trailing when they read -count..-1 or
        # ndim - count..ndim - 1
        core = list(core)
        trailing = _TRAILING.get(count) or list(range(-count, 0))
        if count > ndim or (core != trailing and core != list(range(ndim - count, ndim))):
            return _xr.apply_numpy(kernel, arrays, axes, outputs, result_type, kwargs=kwargs)
        moved.append(array)
    found = kernel(*moved, **kwargs)
    values = {name: _float_value(found[key]) for name, key in outputs.items()}
    if result_type is None:
        (value,) = values.values()
        return value
    return _make_result(result_type, values)


#: ``list(range(-count, 0))`` for the core sizes a statistic has.
_TRAILING = {count: list(range(-count, 0)) for count in range(8)}


def _float_value(value):
    """``np.asarray(value, dtype=float)[()]``, without the copy for what is already float."""
    kind = type(value)
    if kind is np.float64:
        return value
    if kind is np.ndarray and value.dtype == np.float64:
        return value[()]
    return np.asarray(value, dtype=float)[()]


def _recorded(value):
    """A role's value as an attribute: a dim name, or several joined with commas."""
    return ",".join(map(str, value)) if isinstance(value, tuple) else value


def bind_checked(
    name: str,
    signature: inspect.Signature,
    checks: Mapping[str, o.Check],
    args: tuple,
    kwargs: dict,
) -> tuple[inspect.BoundArguments, dict]:
    """Bind a call to ``signature`` and check the options named in ``checks``.

    Returns the bound arguments (defaults applied) and the checked values; a
    call that does not bind is an :class:`~rankstats.errors.InputTypeError`, a
    bad option an :class:`~rankstats.errors.OptionError`, both naming ``name``.
    """
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise InputTypeError(f"{name}: {error}") from None
    bound.apply_defaults()
    values = bound.arguments
    return bound, o.check_options(name, checks, {k: values[k] for k in checks})


class _Binder:
    """:meth:`inspect.Signature.bind` with defaults applied, for a signature read once.

    A call binds to ``{parameter: value}`` in signature order when it gives at
    most the positional parameters by position and known, not yet given
    names by keyword; anything else (and a missing required argument) goes
    through :meth:`inspect.Signature.bind`, which raises its usual error. Only
    signatures without positional-only parameters or ``*args``/``**kwargs``
    qualify, so that ``function(**arguments)`` is the same call.
    """

    __slots__ = ("defaults", "names", "positional", "required")

    def __init__(self, signature: inspect.Signature):
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        parameters = signature.parameters.values()
        self.names = tuple(p.name for p in parameters)
        self.positional = tuple(
            p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        self.defaults = {p.name: p.default for p in parameters}
        self.required = tuple(p.name for p in parameters if p.default is inspect.Parameter.empty)
        if not all(p.kind in kinds for p in parameters):
            self.names = None  # always the general path

    def __call__(self, args: tuple, kwargs: dict) -> dict | None:
        """The arguments of a call, or None where :meth:`inspect.Signature.bind` must decide."""
        if self.names is None or len(args) > len(self.positional):
            return None
        arguments = dict(self.defaults)
        arguments.update(zip(self.positional, args, strict=False))
        for key, value in kwargs.items():
            if key not in arguments or key in self.positional[: len(args)]:
                return None
            arguments[key] = value
        empty = inspect.Parameter.empty
        for key in self.required:  # only these can still be missing
            if arguments[key] is empty:
                return None
        return arguments


def statistic(
    *,
    roles: Mapping[str, tuple[str, int] | Role],
    options: Mapping[str, o.Check] | None = None,
    result: type | None = None,
    inputs: Sequence[str] = ("x",),
    keep: Sequence[str] = (),
    optional_roles: Sequence[str] = (),
    masks: Mapping[str, Mask] | None = None,
    positions: Mapping[str, str] | None = None,
    variable: str | None = "score",
    per_template: bool = True,
):
    """Declare a public statistic.

    Parameters
    ----------
    roles : mapping
        ``{role parameter: (default dimension name, default NumPy axis) or
        Role}``, in the kernel's core order. On NumPy input, the default name
        (or the signature's default) stands for the default axis.
    options : mapping
        ``{option parameter: check}`` (see :mod:`rankstats._options`).
    result : type, optional
        The frozen result class for NumPy input.
    inputs : sequence of str
        The parameters that take data (the first is required; later ones may
        default to None).
    keep : sequence of str
        Dimensions kept on labelled input besides the roles (``"sample"`` for
        statistics of per-sample scores).
    optional_roles : sequence of str
        Roles whose parameter may be None (absent in this call).
    masks : mapping, optional
        ``{mask parameter: Mask}``, resolved to boolean arrays along a role.
    positions : mapping, optional
        ``{parameter: role}`` for a parameter naming one member of a role's
        dimension: a label (labelled input) or a position, resolved to the
        position and recorded as given.
    variable : str or None
        The variable a Dataset input gives (None: a Dataset is refused).
    per_template : bool
        Whether labelled input is reduced to per-template scores (the mean
        over ``sample`` unless a role or ``keep`` names it).
    """
    options = dict(options or {})
    masks = dict(masks or {})
    positions = dict(positions or {})
    specs = {role: spec if isinstance(spec, Role) else Role(*spec) for role, spec in roles.items()}

    def decorate(function):
        signature = inspect.signature(function)
        name = function.__name__
        parameters = signature.parameters
        for parameter in (*specs, *options, *inputs, *masks, *positions):
            if parameter not in parameters:
                raise InputTypeError(
                    f"{name}: declared parameter {parameter!r} is not in the signature"
                )
        if function.__doc__:
            function.__doc__ = _fill_docs(function.__doc__, parameters)

        binder = _Binder(signature)
        route = _Route(name, specs, keep, variable, per_template)
        # read once here rather than on every call
        checks = tuple(options.items())
        optional = frozenset(optional_roles)
        role_names = tuple(specs)
        resolves_higher = "higher_is_better" in options

        @functools.wraps(function)
        def public(*args, **kwargs):
            values, bound = binder(args, kwargs), None
            if values is None:  # the general path, with inspect's message for a bad call
                bound, checked = bind_checked(name, signature, options, args, kwargs)
                values = bound.arguments
            else:
                checked = {k: check(name, k, values[k]) for k, check in checks}
            given = [values[i] for i in inputs if values[i] is not None]
            if resolves_higher and checked["higher_is_better"] is None:
                checked["higher_is_better"] = _xr.higher_is_better_of(given[0], None)
            values.update(checked)
            used = {
                role: _plain_role(values[role])
                for role in role_names
                if not (role in optional and values[role] is None)
            }
            arrays, labelled, resolved = route(given, used)
            recorded = {k: v for k, v in checked.items() if type(v) in _PLAIN or not _is_random(v)}
            resolved_masks = {}
            for parameter, mask in masks.items():
                values[parameter] = o.plain(values[parameter])  # numpy.bool_(True), numpy.str_
                if values[parameter] is None and type(arrays[0]) is np.ndarray:
                    # every position, as _mask gives it, without its checks for given masks
                    axis = resolved[mask.role]
                    resolved_masks[parameter] = np.ones(
                        arrays[0].shape[axis] if arrays[0].ndim else 0, dtype=bool
                    )
                    recorded[parameter] = mask.describe_as
                    continue
                resolved_masks[parameter] = _mask(
                    name,
                    parameter,
                    mask,
                    values[parameter],
                    given[0],
                    arrays[0],
                    labelled,
                    resolved,
                )
                recorded[parameter] = _describe_mask(values[parameter], mask)
            resolved_positions = {}
            for parameter, role in positions.items():
                resolved_positions[parameter] = _position(
                    name, parameter, values[parameter], arrays[0], labelled, role, resolved[role]
                )
                recorded[parameter] = str(values[parameter])
            values[inputs[0]] = _make_result(
                Inputs,
                {
                    "name": name,
                    "arrays": tuple(arrays),
                    "labelled": labelled,
                    "roles": resolved,
                    "options": recorded,
                    "result": result,
                    "original": tuple(given),
                    "masks": resolved_masks,
                    "positions": resolved_positions,
                },
            )
            if bound is not None:
                return function(*bound.args, **bound.kwargs)
            return function(**values)

        public.__signature__ = signature
        public.__rankstats_statistic__ = {
            "roles": specs,
            "options": options,
            "result": result,
            "inputs": tuple(inputs),
            "masks": masks,
            "positions": positions,
        }
        return public

    return decorate


#: Option value types that are never a random generator (skips an isinstance check).
_PLAIN = frozenset({str, bool, int, float, type(None)})


def _is_random(value) -> bool:
    return isinstance(value, np.random.Generator)


def _plain_role(value):
    """A role's value with ``str`` subclasses and NumPy integers made plain (also in a list)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(o.plain(part) for part in value)
    return o.plain(value)


def _is_axis(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)


def _is_scalar(value) -> bool:
    """A plain number (or 0-d array), which goes with labelled and NumPy inputs alike."""
    return (
        not _xr.is_labelled(value) and np.ndim(value) == 0 and not isinstance(value, (str, bytes))
    )


@dataclass(frozen=True)
class _Route:
    """Resolves one call's inputs and roles: ``(arrays, labelled, {role: dim(s) or axis(es)})``."""

    name: str
    specs: Mapping[str, Role]
    keep: Sequence[str]
    variable: str | None
    per_template: bool
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __call__(self, given, roles):
        if given and all(type(x) is np.ndarray for x in given):  # plain NumPy: the common case
            return list(given), False, self._numpy_cached(given, roles)
        labelled = [_xr.is_labelled(x) for x in given]
        plain = [not flag and not _is_scalar(x) for flag, x in zip(labelled, given, strict=True)]
        if any(labelled) and any(plain):
            raise InputTypeError(
                f"{self.name}: give every input labelled (xarray) or every one NumPy"
            )
        for role, value in roles.items():
            self._check_type(role, value)
        if any(labelled):
            return self._labelled(given, roles)
        return list(given), False, self._numpy(given, roles)

    def _check_type(self, role, value):
        spec = self.specs[role]
        if spec.many and (value is None or isinstance(value, (list, tuple))):
            parts = list(value or ())
        else:
            parts = [value]
        for part in parts:
            if not (isinstance(part, str) or _is_axis(part)):
                what = "dimension name(s) (str)" if spec.many else "a dimension name (str)"
                raise InputTypeError(
                    f"{self.name}: {role}={value!r} must be {what} or, for NumPy input, "
                    f"{'axis numbers' if spec.many else 'an axis number'} (int)"
                )

    def _labelled(self, given, roles):
        fixed = {
            role: _as_tuple(value) if self.specs[role].many else value
            for role, value in roles.items()
            if not (self.specs[role].many and value is None)
        }
        names = [d for value in fixed.values() for d in _as_flat(value)]
        if len(set(names)) != len(names):
            raise DimensionError(f"{self.name}: one dimension given for two roles: {fixed}")
        arrays, checked = [], []
        for x in given:
            if _is_scalar(x):
                arrays.append(xr.DataArray(np.asarray(x, dtype=float)))
                continue
            if self.variable is None and hasattr(x, "data_vars"):
                raise InputTypeError(f"{self.name}: give DataArrays, not a Dataset")
            arrays.append(
                _xr.scores_of(
                    x,
                    self.name,
                    keep=(*names, *self.keep),
                    variable=self.variable or "score",
                    per_template=self.per_template,
                )
            )
            checked.append(arrays[-1])
        resolved = dict(fixed)
        for role in roles:
            if role not in fixed:  # a role of several dims left to default
                spec = self.specs[role]
                rest = tuple(d for d in checked[0].dims if d not in names)
                resolved[role] = rest if spec.rest else _as_tuple(spec.dim)
                if spec.rest and not rest:
                    raise DimensionError(
                        f"{self.name}: no dimension is left for {role} (the input has only "
                        f"{', '.join(map(repr, names))})"
                    )
        for array in checked:
            self._check_dims(array, resolved)
        return arrays, True, {role: resolved[role] for role in roles}

    def _check_dims(self, array, resolved):
        for role, value in resolved.items():
            for dim in _as_flat(value):
                if dim not in array.dims:
                    hint = self.specs[role].hint
                    raise DimensionError(
                        f"{self.name}: the {role} dimension {dim!r} is not among the input's "
                        f"dimensions ({', '.join(map(str, array.dims))})"
                        + (f": {hint}" if hint else "")
                    )

    def _numpy_cached(self, given, roles):
        """:meth:`_numpy` after :meth:`_check_type`, remembered per role values and ndim.

        Only successful resolutions of hashable values are kept (keyed with the
        values' types, so that ``True`` is never taken for ``1``); anything
        else, errors included, goes through the checks every time.
        """
        try:
            key = (
                tuple((role, type(value), value) for role, value in roles.items()),
                given[0].ndim,
            )
            found = self._cache.get(key)
        except TypeError:  # an unhashable role value (a list of axes)
            key = found = None
        if found is not None:
            return dict(found)
        for role, value in roles.items():
            self._check_type(role, value)
        resolved = self._numpy(given, roles)
        if key is not None and len(self._cache) < 256:
            self._cache[key] = dict(resolved)
        return resolved

    def _numpy(self, given, roles):
        axes, rest = {}, []
        for role, value in roles.items():
            spec = self.specs[role]
            if not spec.many:
                axes[role] = _xr.numpy_axis(self.name, role, value, spec.dim, spec.axis)
            elif value is None and spec.axis is None:
                rest.append(role)
            elif value is None:
                axes[role] = _as_tuple(spec.axis)
            else:
                parts = _as_tuple(value)
                if not all(_is_axis(a) for a in parts):
                    raise DimensionError(
                        f"{self.name}: NumPy input has no named dimensions; pass axis numbers "
                        f"for {role} instead of {value!r}"
                    )
                axes[role] = tuple(int(a) for a in parts)
        if rest:
            ndim = np.ndim(given[0])
            taken = (
                {a % ndim for value in axes.values() for a in _as_flat(value)} if ndim else set()
            )
            for role in rest:
                axes[role] = tuple(a for a in range(ndim) if a not in taken)
        return {role: axes[role] for role in roles}


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (str, numbers.Integral, np.integer)):
        return (value,)
    return tuple(value)


def _as_flat(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _mask(name, parameter, mask: Mask, given, original, scores, labelled, roles):
    """The boolean mask a mask parameter stands for, along its role's dim or last axis."""
    if given is True or isinstance(given, str):
        coord = mask.coord if given is True else given
        if not labelled:
            raise InputTypeError(
                f"{name}: {parameter}={given!r} names a coordinate, which needs labelled "
                f"(xarray) input; give NumPy input a boolean mask over the {mask.role} axis"
            )
        coords = original.coords if coord in original.coords else scores.coords
        if coord not in coords:
            raise CubeError(
                f"{name}: the cube has no {coord!r} coordinate to mark templates with "
                f"(coordinates: {', '.join(map(str, coords)) or 'none'})"
            )
        given = coords[coord]
    elif given is not None and not (isinstance(given, (xr.DataArray, np.ndarray, list, tuple))):
        raise InputTypeError(
            f"{name}: {parameter}={given!r} must be None, True, a coordinate name or an array "
            f"of bool along {mask.role}"
        )
    if not labelled:
        size = np.shape(scores)[roles[mask.role]] if np.ndim(scores) else 0
        return np.ones(size, dtype=bool) if given is None else np.asarray(given, dtype=bool)
    dim = roles[mask.role]
    if given is None:
        return xr.DataArray(np.ones(scores.sizes[dim], dtype=bool), dims=[dim])
    if not isinstance(given, xr.DataArray):
        given = xr.DataArray(np.asarray(given, dtype=bool), dims=[dim])
    if dim not in given.dims:
        raise CubeError(
            f"{name}: the {parameter} mask has no {dim!r} dimension "
            f"(it has {', '.join(map(str, given.dims)) or 'none'})"
        )
    return given.fillna(False).astype(bool)


def _describe_mask(given, mask: Mask) -> str:
    if given is None:
        return mask.describe_as
    if given is True:
        return mask.coord
    return given if isinstance(given, str) else "given mask"


def _position(name, parameter, label, scores, labelled, role, dim) -> int:
    """The position of ``label`` along ``dim`` (a label, or a position where ``dim`` has none)."""
    if labelled and dim in scores.indexes:
        index = scores.indexes[dim]
        if label in index:
            position = index.get_loc(label)
            if _is_axis(position):
                return int(position)
            raise DimensionError(f"{name}: the label {label!r} occurs more than once along {dim!r}")
        shown = ", ".join(map(repr, list(index[:10])))
        raise DimensionError(
            f"{name}: {parameter} {label!r} is not a label of dimension "
            f"{dim!r} (labels: {shown}{', ...' if len(index) > 10 else ''})"
        )
    if not _is_axis(label):
        raise DimensionError(
            f"{name}: {'the dimension ' + repr(dim) if labelled else 'NumPy input'} has no "
            f"labels; pass the {parameter}'s position along the {role} axis instead of "
            f"{label!r}"
        )
    size = scores.sizes[dim] if labelled else np.shape(scores)[dim]
    if not -size <= int(label) < size:
        raise DimensionError(
            f"{name}: {parameter}={label!r} is not a position along the "
            f"{role} axis (there are {size})"
        )
    return int(label) % size


def documented(function):
    """Fill the shared parameter descriptions into a public helper that is not a statistic."""
    if function.__doc__:
        function.__doc__ = _fill_docs(function.__doc__, inspect.signature(function).parameters)
    return function


def _fill_docs(doc: str, parameters: Mapping[str, inspect.Parameter]) -> str:
    """Replace each ``{name}`` line of a docstring with the shared description of ``name``."""
    out = []
    for line in doc.split("\n"):
        stripped = line.strip()
        key = stripped[1:-1]
        if stripped.startswith("{") and stripped.endswith("}") and key in SHARED_DOCS:
            default = parameters[key].default if key in parameters else _SHARED_DEFAULTS.get(key)
            shown = f'"{default}"' if isinstance(default, str) else repr(default)
            text = SHARED_DOCS[key].format(default=shown)
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(
                indent + part.strip() if i == 0 else indent + "    " + part.strip()
                for i, part in enumerate(text.split("\n"))
            )
        else:
            out.append(line)
    return "\n".join(out)
