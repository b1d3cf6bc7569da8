"""The facets of a score cube for generalizability theory: its scores, facets and components.

Shared by :mod:`rankstats.stability.variance` and :mod:`rankstats.stability.planning`.
"""

from __future__ import annotations

import numpy as np

from .. import _xr
from .._kernels import variance as _kv
from ..errors import DimensionError, InputTypeError

#: The dimension of the variance components.
COMPONENT = "component"


def facets_of(x, function, dims):
    """The scores ``(..., model, template[, sample])`` and their facets, checked."""
    scores = _xr.score_variable(x, function)
    facets = [dims.model, dims.template] + ([dims.sample] if dims.sample in scores.dims else [])
    missing = [d for d in facets[:2] if d not in scores.dims]
    if missing:
        raise DimensionError(
            f"{function}: the scores lack the dimension(s) {missing} "
            f"(dimensions: {', '.join(map(str, scores.dims))})"
        )
    if not np.issubdtype(scores.dtype, np.number) and scores.dtype != bool:
        raise InputTypeError(f"{function}: scores must be numbers (got dtype {scores.dtype})")
    return scores.astype(float, copy=False), facets


def component_names(facets):
    """``model``, ``template``, ..., ``model:template``, ...; the last is the error's."""
    names = [":".join(facets[a] for a in effect) for effect in _kv.effects(len(facets))]
    names[-1] += "+error"
    return names
