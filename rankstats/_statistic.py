"""One decorator defines a statistic: its roles, its options, its result; the dispatch exists once.

A statistic is written as a function whose signature is the public one::

    @statistic(roles={"judges": ("template", -2), "objects": ("model", -1)},
               options={"ties": TIES_CHECK, "nan_policy": NAN_POLICY_CHECK},
               result=KendallWResult)
    def kendall_w(x, judges="template", objects="model", *, ties="average", ...):
        return x.apply(kernel, OUTPUTS, kwargs={...})

Before the body runs, the decorator

1. checks every declared option (so a bad value fails at once, before a dask
   graph or a bootstrap is built) and every role's type;
2. routes the inputs: xarray input is reduced to its scores (the mean over
   samples unless a role or ``keep`` names ``sample``) and each role's
   dimension is checked to exist; NumPy input has each role resolved to an axis
   (an axis number, or the role's default axis when the default name is
   given); mixing labelled and NumPy inputs is refused;
3. hands the body an :class:`Inputs` in place of the first argument(s), whose
   :meth:`Inputs.apply` runs a kernel through :mod:`rankstats._xr` and returns
   an :class:`xarray.Dataset` or the frozen result;
4. fills the shared parameter descriptions into the docstring (``{nan_policy}``,
   ``{ties}``, ...).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import _options as o
from . import _xr
from .errors import DimensionError, InputTypeError

__all__ = ["SHARED_DOCS", "Inputs", "statistic"]

#: Parameter descriptions shared by every statistic, filled into ``{name}`` in docstrings.
SHARED_DOCS = {
    "nan_policy": """nan_policy : {"propagate", "omit", "raise"}, default "propagate"
        What to do with missing scores that remain once structure (padded
        positions, absent models) is removed: return NaN, delete them (see
        Notes for listwise or pairwise), or raise
        :class:`~rankstats.errors.MissingValueError`.""",
    "ties": """ties : {"average", "min", "max", "dense", "ordinal"}, default "average"
        How tied values are ranked, as in :func:`scipy.stats.rankdata`.""",
    "tie_correction": """tie_correction : bool, default True
        Correct the statistic's variance (denominator) for ties.""",
    "higher_is_better": """higher_is_better : bool, optional
        Whether the highest score ranks first. Defaults to the cube's
        ``higher_is_better`` attribute, else True.""",
    "p_adjust": """p_adjust : {"holm", "bh", "by", "bonferroni", "none"}, default "holm"
        Adjustment of the p-values for multiple testing within each family:
        Holm's step-down, Benjamini–Hochberg, Benjamini–Yekutieli,
        Bonferroni, or none.""",
    "alpha": """alpha : float, default 0.05
        The tests' significance level.""",
    "confidence_level": """confidence_level : float, default 0.95
        The intervals' confidence level.""",
    "seed": """seed : None, int or numpy.random.Generator, optional
        Seed of the random draws; None draws fresh entropy.""",
    "n_resamples": """n_resamples : int, default 1000
        Number of resamples.""",
}

_NUMPY_NOTE = "NumPy input has no named dimensions"


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
        ``{role: dimension name}`` for labelled input, ``{role: axis}`` for NumPy.
    options : dict
        The checked option values, recorded in the result's attrs.
    result : type or None
        The frozen result class for NumPy input.
    original : tuple
        The inputs as given (a cube keeps its coordinates and attrs here).
    """

    name: str
    arrays: tuple
    labelled: bool
    roles: dict
    options: dict
    result: type | None
    original: tuple

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
    ):
        """Run ``kernel`` with the roles in ``core`` as its last axes; collect ``outputs``.

        Parameters
        ----------
        kernel : callable
            ``kernel(*arrays, **kwargs) -> dict`` over arrays whose last axes
            are the core roles, in order.
        outputs : mapping
            ``{result field: kernel output key}``.
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
            The result class, if not the statistic's.
        dtypes, sizes : mapping, optional
            As :func:`rankstats._xr.apply_labelled`.
        """
        core = list(core if core is not None else self.roles)
        arrays = list(arrays if arrays is not None else self.arrays)
        cores = [list(c) for c in cores] if cores is not None else [core] * len(arrays)
        kwargs = dict(kwargs or {})
        if self.labelled:
            dims = [[self._dim(role) for role in c] for c in cores]
            output_dims = output_dims or {}
            labelled_outputs = {
                field: (key, [self._dim(d) for d in output_dims.get(field, [])])
                for field, key in outputs.items()
            }
            recorded = {**{role: self.roles[role] for role in self.roles}, **self.options,
                        **(attrs or {})}
            return _xr.apply_labelled(
                self.name, kernel, arrays, dims, labelled_outputs, kwargs=kwargs,
                new_dims={new: self._dim(role) for new, role in (new_dims or {}).items()},
                attrs=recorded, dtypes=dtypes, sizes=sizes,
            )
        axes = [[self.roles[role] for role in c] for c in cores]
        return _xr.apply_numpy(kernel, arrays, axes, outputs, result or self.result,
                               kwargs=kwargs)

    def _dim(self, name: str) -> str:
        return self.roles.get(name, name)


def statistic(
    *,
    roles: Mapping[str, tuple[str, int]],
    options: Mapping[str, o.Check] | None = None,
    result: type | None = None,
    inputs: Sequence[str] = ("x",),
    keep: Sequence[str] = (),
    optional_roles: Sequence[str] = (),
):
    """Declare a public statistic.

    Parameters
    ----------
    roles : mapping
        ``{role parameter: (default dimension name, default NumPy axis)}``, in
        the kernel's core order. On NumPy input, the default name (or the
        signature's default) stands for the default axis.
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
        Roles whose parameter may be None (not used in this call).
    """
    options = dict(options or {})

    def decorate(function):
        signature = inspect.signature(function)
        name = function.__name__
        parameters = signature.parameters
        for role in (*roles, *options, *inputs):
            if role not in parameters:
                raise TypeError(f"{name}: declared parameter {role!r} is not in the signature")
        role_defaults = {role: name_axis[0] for role, name_axis in roles.items()}
        role_axes = {role: name_axis[1] for role, name_axis in roles.items()}
        if function.__doc__:
            function.__doc__ = _fill_docs(function.__doc__)

        @functools.wraps(function)
        def public(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise InputTypeError(f"{name}: {error}") from None
            bound.apply_defaults()
            values = bound.arguments
            checked = o.check_options(name, options, {k: values[k] for k in options})
            values.update(checked)
            given = [values[i] for i in inputs if values[i] is not None]
            used = {role: values[role] for role in roles
                    if not (role in optional_roles and values[role] is None)}
            routed = _route(name, given, used, role_defaults, role_axes, keep)
            values[inputs[0]] = Inputs(
                name=name, arrays=tuple(routed[0]), labelled=routed[1], roles=routed[2],
                options={k: v for k, v in checked.items() if not _is_random(v)},
                result=result, original=tuple(given),
            )
            return function(*bound.args, **bound.kwargs)

        public.__signature__ = signature
        public.__rankstats_statistic__ = {"roles": dict(roles), "options": options,
                                          "result": result, "inputs": tuple(inputs)}
        return public

    return decorate


def _is_random(value) -> bool:
    import numpy as np

    return isinstance(value, np.random.Generator)


def _route(name, given, roles, defaults, default_axes, keep):
    """``(arrays, labelled, {role: dim or axis})`` of one call's inputs."""
    labelled = [_xr.is_labelled(x) for x in given]
    if any(labelled) and not all(labelled):
        raise InputTypeError(f"{name}: give every input labelled (xarray) or every one NumPy")
    for role, value in roles.items():
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            import numpy as np

            if not isinstance(value, np.integer):
                raise InputTypeError(
                    f"{name}: {role}={value!r} must be a dimension name (str) or, for NumPy "
                    f"input, an axis number (int)")
    if all(labelled):
        names = list(roles.values())
        if len(set(names)) != len(names):
            raise DimensionError(f"{name}: one dimension given for two roles: {dict(roles)}")
        arrays = []
        for x in given:
            scores = _xr.scores_of(x, name, keep=(*names, *keep))
            _xr.check_dims(name, scores, roles)
            arrays.append(scores)
        return arrays, True, dict(roles)
    axes = {role: _xr.numpy_axis(name, role, value, defaults[role], default_axes[role])
            for role, value in roles.items()}
    return list(given), False, axes


def _fill_docs(doc: str) -> str:
    """Replace each ``{name}`` line of a docstring with the shared description of ``name``."""
    lines = doc.split("\n")
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}") and stripped[1:-1] in SHARED_DOCS:
            indent = line[: len(line) - len(line.lstrip())]
            text = SHARED_DOCS[stripped[1:-1]]
            out.extend(indent + part.strip() if i == 0 else indent + "    " + part.strip()
                       for i, part in enumerate(text.split("\n")))
        else:
            out.append(line)
    return "\n".join(out)
