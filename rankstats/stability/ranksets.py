"""Rank confidence sets and tie groups of a leaderboard, from its bootstrap replicates.

The labelled side of :mod:`rankstats._kernels.ranksets` (Mogstad, Romano,
Shaikh & Wilhelm 2024): :func:`rank_set_variables` turns the replicates of a
score into each model's rank set, tie group and top-k membership, per task and
any extra dimension, through :func:`rankstats._xr.apply_labelled` (dask-chunked
replicates are computed chunk by chunk).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _xr
from .._kernels import intervals as _ki
from .._kernels import ranksets as _krs
from ._checks import REPLICATE

#: What each choice of ``rank_sets`` means, as the attributes record it.
RANK_SET_RULES = {
    "simultaneous": "simultaneous confidence sets, stepwise max-|t| over all pairs "
    "(Mogstad et al. 2024), critical values on Student's t scale with n - 1 "
    "degrees of freedom for n resampled units",
    "marginal": "marginal confidence sets, stepwise max-|t| over each model's pairs "
    "(Mogstad et al. 2024), critical values on Student's t scale with n - 1 "
    "degrees of freedom for n resampled units",
    "bootstrap": "percentile intervals of the bootstrap ranks, outward (not confidence sets)",
}
#: The tie-group rule that goes with each choice of ``rank_sets``.
TIE_GROUP_RULES = {
    "simultaneous": "contiguous runs split only between pairs the simultaneous test "
    "separates (family-wise error at most 1 - confidence_level)",
    "bootstrap": "connected components of overlapping bootstrap rank intervals (no error control)",
}
TIE_GROUP_RULES["marginal"] = TIE_GROUP_RULES["simultaneous"]


def _kernel(replicates, estimate, dof, *, confidence_level, higher_is_better, marginal, omit):
    return _krs.rank_sets(
        replicates,
        estimate,
        dof,
        confidence_level=confidence_level,
        higher_is_better=higher_is_better,
        marginal=marginal,
        gaussian=True,
        statistic="leaderboard",
        omit=omit,
    )


def degrees_of_freedom(reps, template, sample):
    """Degrees of freedom per task: n - 1 for the n units it resamples (the fewer of two).

    NaN (no correction) when the replicates carry no draws.
    """
    counts = [
        reps[name].isel({REPLICATE: 0}).sum(unit)
        for name, unit in (("template_weight", template), ("sample_weight", sample))
        if name in reps
    ]
    if not counts:
        return xr.DataArray(np.nan)
    n = counts[0] if len(counts) == 1 else np.minimum(counts[0], counts[1])
    return (
        (n - 1.0)
        .where(n > 1)
        .drop_vars([name for name in n.coords if name not in n.dims], errors="ignore")
    )


def _tie_kernel(rank, low, high):
    return {"tie_group": _ki.tie_groups(rank, low, high)}


def rank_set_variables(
    reps, by, rank_sets, confidence_level, top_k, higher, dims, bootstrap_interval=None, omit=False
):
    """``rank_low``, ``rank_high``, ``tie_group`` (and ``in_top_k``) of replicates ``reps``.

    ``bootstrap_interval`` is the percentile interval Dataset of the ranks
    (``low``, ``high``), needed when ``rank_sets="bootstrap"``. With
    ``omit``, a task's replicates in which some present model's score is
    undefined are left out of its rank sets (listwise).
    """
    model = dims.model
    estimate = reps["rank_estimate"]
    found = xr.Dataset()
    if rank_sets != "bootstrap" or top_k is not None:
        dof = degrees_of_freedom(reps, dims.template, dims.sample)
        if reps[by].chunks is not None and dof.ndim:
            dof = dof.chunk(
                {d: reps[by].chunksizes[d] for d in dof.dims if d in reps[by].chunksizes}
            )
        found = _xr.apply_labelled(
            "leaderboard",
            _kernel,
            [reps[by], reps[f"{by}_estimate"], dof],
            [[model, REPLICATE], [model], []],
            {name: (name, [model]) for name in ("low", "high", "simultaneous_low", "tie_group")},
            kwargs={
                "confidence_level": confidence_level,
                "higher_is_better": higher,
                "marginal": rank_sets == "marginal",
                "omit": omit,
            },
        )
    if rank_sets == "bootstrap":
        low, high = bootstrap_interval["low"], bootstrap_interval["high"]
        groups = _xr.apply_labelled(
            "leaderboard",
            _tie_kernel,
            [estimate, low, high],
            [[model]] * 3,
            {"tie_group": ("tie_group", [model])},
        )["tie_group"]
    else:
        low, high, groups = found["low"], found["high"], found["tie_group"]
    variables = {"rank_low": low, "rank_high": high, "tie_group": groups}
    if top_k is not None:
        lower = found["simultaneous_low"]
        variables["in_top_k"] = lower.notnull() & (lower <= top_k)
    return xr.Dataset(variables)
