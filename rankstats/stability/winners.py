r"""The winner's curse: selection-adjusted estimates and intervals for the best models.

The best observed score is biased upwards: it won partly because its noise
was favourable. :func:`winner_interval` gives the conditional estimate and
interval of Andrews, Kitagawa and McCloskey (2024) for the score of the
observed leader (and of each of the observed best ``top_k``), from estimates
with standard errors or their covariance (see
:mod:`rankstats._kernels.winners`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels import winners as _kw
from ..errors import DimensionError, InputTypeError, MissingValueError, OptionError

__all__ = ["winner_interval"]

_NAME = "winner_interval"
METHOD = (
    "conditional inference on winners (Andrews, Kitagawa & McCloskey 2024): "
    "median-unbiased estimate and equal-tailed interval of the truncated normal "
    "given the selection"
)


def _vector(values, what, labels=None):
    """Values and labels of a 1-D input (Series, DataArray, or array with ``labels``)."""
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=float), values.index.to_numpy()
    if isinstance(values, xr.DataArray):
        if values.ndim != 1:
            raise DimensionError(
                f"{_NAME}: {what} must be one-dimensional (got dimensions "
                f"{', '.join(map(str, values.dims))})"
            )
        dim = values.dims[0]
        index = values[dim].to_numpy() if dim in values.coords else None
        return values.to_numpy().astype(float), index
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(f"{_NAME}: {what} must be numbers") from None
    if array.ndim != 1:
        raise DimensionError(f"{_NAME}: {what} must be one-dimensional (got shape {array.shape})")
    return array, labels


def _inputs(estimates, standard_errors, covariance, labels):
    values, index = _vector(estimates, "the estimates", labels)
    m = values.size
    if index is None:
        index = np.arange(m)
    index = np.asarray(index)
    if index.shape != (m,):
        raise DimensionError(f"{_NAME}: {index.size} labels for {m} estimates")
    if (standard_errors is None) == (covariance is None):
        raise OptionError(f"{_NAME}: give standard_errors= or covariance=, exactly one")
    if standard_errors is not None:
        if isinstance(standard_errors, pd.Series):
            standard_errors = standard_errors.reindex(index)
        errors, _ = _vector(standard_errors, "the standard errors")
        if errors.shape != (m,):
            raise DimensionError(f"{_NAME}: {errors.size} standard errors for {m} estimates")
        matrix = np.diag(errors**2)
        described = "independent estimates with the given standard errors"
    else:
        if isinstance(covariance, pd.DataFrame):
            covariance = covariance.reindex(index=index, columns=index)
        matrix = np.asarray(covariance, dtype=float)
        if matrix.shape != (m, m):
            raise DimensionError(
                f"{_NAME}: the covariance must be {m} x {m} for {m} estimates "
                f"(got shape {matrix.shape})"
            )
        described = "the given covariance"
    bad = ~np.isfinite(values) | ~np.isfinite(np.diagonal(matrix))
    if bad.any():
        raise MissingValueError(
            f"{_NAME}: no finite estimate or standard error for "
            f"{', '.join(map(str, index[bad][:5]))}"
        )
    if not np.isfinite(matrix).all() or np.any(np.diagonal(matrix) <= 0):
        raise OptionError(f"{_NAME}: every variance must be positive and the covariance finite")
    if not np.allclose(matrix, matrix.T, rtol=1e-8, atol=0):
        raise OptionError(f"{_NAME}: the covariance is not symmetric")
    return values, matrix, index, described


def winner_interval(
    estimates,
    standard_errors=None,
    *,
    covariance=None,
    labels=None,
    confidence_level=0.95,
    top_k=1,
    higher_is_better=True,
):
    r"""Selection-adjusted estimate and confidence interval for the leader's score.

    Parameters
    ----------
    estimates : pandas.Series, 1-D xarray.DataArray or array_like
        One estimate per model (a Series' index or a DataArray's coordinate
        names them; an array takes ``labels``).
    standard_errors : same kind as ``estimates``, optional
        Their standard errors, for independent estimates.
    covariance : (M, M) array_like or pandas.DataFrame, optional
        Their covariance instead (a DataFrame is aligned by its labels).
    labels : array_like, optional
        Model names for an array of estimates.
    confidence_level : float, default 0.95
        Level of each interval.
    top_k : int, default 1
        Adjust the observed best ``top_k`` (1: the leader alone). Each
        model's interval covers its score given that it was among the
        observed best ``top_k``; the intervals are not simultaneous.
    higher_is_better : bool, default True
        Whether the leader has the largest estimate.

    Returns
    -------
    xarray.Dataset
        Over ``rank`` (1 to ``top_k``, observed order): ``model``,
        ``estimate`` (raw), ``adjusted_estimate`` (conditionally
        median-unbiased), ``low``, ``high`` (the adjusted interval),
        ``naive_low``, ``naive_high`` (estimate ± z standard error, which
        ignores the selection); attributes ``method``, ``confidence_level``,
        ``top_k``, ``covariance``.

    Notes
    -----
    Estimates are taken as normal with the given (known) covariance. Given
    the selection of model :math:`\hat\jmath` and the parts of the other
    estimates independent of its own, its estimate is normal truncated to an
    interval :math:`[L, U]` (for independent estimates, the best other
    estimate for the leader and the ``top_k``-th best other for the
    ``top_k``; see :mod:`rankstats._kernels.winners`). The adjusted estimate
    is the score at which the observed estimate is the median of that
    truncated normal, the interval the scores at which it is its
    :math:`1 - \alpha/2` and :math:`\alpha/2` quantiles: the conditional
    estimator and equal-tailed conditional interval of Andrews, Kitagawa and
    McCloskey (2024, Section 3), which cover the selected model's score with
    probability ``confidence_level`` given the selection, hence also
    overall. When the leader wins by far, :math:`L` lies far below and the
    interval is the naive one; in a near tie it widens downwards (without
    bound as the margin goes to 0), where the naive interval under-covers.

    Measured by simulation (independent N(mu, 1) estimates, 20,000 draws per
    setting; tests/test_winners_curse.py), 95% intervals for the leader
    cover 0.950 with 10 tied models (naive: 0.778), 0.950 with 2 tied
    models (naive: 0.951) and 0.950 with 5 models 3 standard errors apart;
    see docs/claims.md.

    References
    ----------
    Andrews, I., Kitagawa, T. and McCloskey, A. (2024). Inference on
    winners. *The Quarterly Journal of Economics* 139(1), 305-358.

    See Also
    --------
    rankstats.stability.rank_sets : which models may be the best.

    Examples
    --------
    Two models almost tied: the leader's interval stretches downwards.

    >>> import pandas as pd
    >>> from rankstats.stability import winner_interval
    >>> scores = pd.Series({"a": 0.705, "b": 0.70, "c": 0.62})
    >>> result = winner_interval(scores, pd.Series({"a": 0.01, "b": 0.01, "c": 0.01}))
    >>> result.model.item(), round(result.estimate.item(), 4)
    ('a', 0.705)
    >>> [round(result[v].item(), 4) for v in ("adjusted_estimate", "low", "high")]
    [0.6943, 0.6301, 0.7231]
    >>> [round(result[v].item(), 4) for v in ("naive_low", "naive_high")]
    [0.6854, 0.7246]

    A clear leader keeps the naive interval:

    >>> clear = winner_interval([0.9, 0.6], [0.01, 0.01], labels=["x", "y"])
    >>> [round(clear[v].item(), 4) for v in ("adjusted_estimate", "low", "high")]
    [0.9, 0.8804, 0.9196]
    """
    checked = o.check_options(
        _NAME,
        {
            "confidence_level": o.probability,
            "top_k": o.positive_int,
            "higher_is_better": o.boolean,
        },
        {
            "confidence_level": confidence_level,
            "top_k": top_k,
            "higher_is_better": higher_is_better,
        },
    )
    values, matrix, index, described = _inputs(estimates, standard_errors, covariance, labels)
    if checked["top_k"] > values.size:
        raise OptionError(f"{_NAME}: top_k={top_k} is more than the {values.size} models given")
    sign = 1.0 if checked["higher_is_better"] else -1.0
    result = _kw.winner_intervals(
        sign * values,
        matrix,
        confidence_level=checked["confidence_level"],
        top_k=checked["top_k"],
    )
    low, high = (result["low"], result["high"]) if sign > 0 else (-result["high"], -result["low"])
    naive = (
        (result["naive_low"], result["naive_high"])
        if sign > 0
        else (-result["naive_high"], -result["naive_low"])
    )
    dims = ("rank",)
    return xr.Dataset(
        {
            "model": (dims, index[result["selected"]]),
            "estimate": (dims, sign * result["estimate"]),
            "adjusted_estimate": (dims, sign * result["adjusted"]),
            "low": (dims, low),
            "high": (dims, high),
            "naive_low": (dims, naive[0]),
            "naive_high": (dims, naive[1]),
        },
        coords={"rank": np.arange(1, checked["top_k"] + 1)},
        attrs={
            "method": METHOD,
            "confidence_level": checked["confidence_level"],
            "top_k": checked["top_k"],
            "higher_is_better": checked["higher_is_better"],
            "covariance": described,
        },
    )
