"""Shared dispatch of the block tests (posthoc, incomplete): blocks joined, treatments last."""

from __future__ import annotations

import numpy as np

from .. import _xr
from ..errors import DimensionError


def dims_tuple(value) -> tuple:
    """One dim name or axis, or a sequence of them, as a tuple; None as ()."""
    if value is None:
        return ()
    if isinstance(value, (str, int, np.integer)):
        return (value,)
    return tuple(value)


def block_test(statistic, kernel, x, blocks, treatments, kwargs, outputs, result_type,
               control=None):
    """Run a block-test kernel on labelled or NumPy input.

    ``outputs`` names the kernel's outputs by kind: ``"slice"`` (no core
    dim), ``"treatment"`` (over ``treatments``) and ``"pair"`` (over
    ``treatments`` and ``f"{treatments}_b"``). ``blocks`` defaults to every
    dim but ``treatments`` (labelled) or axis -2 (NumPy); ``control``, when
    given, is passed to the kernel as a position along ``treatments``.
    """
    names = [*outputs["slice"], *outputs["treatment"], *outputs["pair"]]
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, statistic, keep=(*dims_tuple(blocks), treatments))
        block_dims = dims_tuple(blocks) or tuple(d for d in scores.dims if d != treatments)
        roles = {f"blocks[{i}]": d for i, d in enumerate(block_dims)}
        _xr.check_dims(statistic, scores, {**roles, "treatments": treatments})
        if not block_dims:
            raise DimensionError(f"{statistic}: no dimension is left for blocks "
                                 f"(the input has only {treatments!r})")
        extra = {}
        if control is not None:
            extra["control"] = position(statistic, scores, treatments, control)
        pair_dim = f"{treatments}_b"
        dims = {"slice": [], "treatment": [treatments], "pair": [treatments, pair_dim]}
        attrs = {"blocks": ",".join(map(str, block_dims)), "treatments": treatments,
                 **kwargs, **({"control": str(control)} if control is not None else {})}
        return _xr.apply_labelled(
            statistic,
            kernel,
            [scores],
            [[*block_dims, treatments]],
            # the first output must hold every output dim: it lends the Dataset its coordinates
            {name: (name, dims[kind]) for kind in ("pair", "treatment", "slice")
             for name in outputs[kind]},
            kwargs={**kwargs, **extra, "block_axes": len(block_dims)},
            new_dims={pair_dim: treatments} if outputs["pair"] else None,
            attrs=attrs,
        )
    block_axes = [numpy_axis(statistic, "blocks", b) for b in dims_tuple(blocks)] or [-2]
    axes = [*block_axes, _xr.numpy_axis(statistic, "treatments", treatments, "model", -1)]
    extra = {} if control is None else {"control": numpy_control(statistic, control)}
    return _xr.apply_numpy(kernel, [x], [axes], {name: name for name in names}, result_type,
                           kwargs={**kwargs, **extra, "block_axes": len(block_axes)})


def numpy_axis(statistic, role, value) -> int:
    """An axis number given for ``role`` of NumPy input; a name is an error."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise DimensionError(f"{statistic}: NumPy input has no named dimensions; pass axis "
                         f"numbers for {role} instead of {value!r}")


def numpy_control(statistic, control) -> int:
    """The control given as a position for NumPy input; a label is an error."""
    if isinstance(control, (int, np.integer)) and not isinstance(control, bool):
        return int(control)
    raise DimensionError(f"{statistic}: NumPy input has no labels; pass the control's "
                         f"position along the treatments axis instead of {control!r}")


def position(statistic, scores, dim, label) -> int:
    """The position of ``label`` along ``dim`` (a label, or a position if ``dim`` has none)."""
    if dim in scores.indexes:
        index = scores.indexes[dim]
        if label in index:
            position = index.get_loc(label)
            if isinstance(position, (int, np.integer)):
                return int(position)
            raise DimensionError(f"{statistic}: the label {label!r} occurs more than once "
                                 f"along {dim!r}")
        shown = ", ".join(map(repr, list(index[:10])))
        raise DimensionError(f"{statistic}: control {label!r} is not a label of dimension "
                             f"{dim!r} (labels: {shown}{', ...' if len(index) > 10 else ''})")
    return numpy_control(statistic, label)
