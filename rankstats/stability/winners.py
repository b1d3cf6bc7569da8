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
#: How each ``method`` adjusts, as results record it.
METHODS = {
    "hybrid": (
        "hybrid inference on winners (Andrews, Kitagawa & McCloskey 2024, section 4): "
        "the truncated normal given the selection and the projection interval at level "
        "1 - alpha / 10"
    ),
    "conditional": (
        "conditional inference on winners (Andrews, Kitagawa & McCloskey 2024): "
        "median-unbiased estimate and equal-tailed interval of the truncated normal "
        "given the selection"
    ),
}
METHOD = METHODS["hybrid"]


def beta_of(method: str, confidence_level: float):
    """The hybrid's beta (alpha / 10, as AKM recommend), None for the conditional interval."""
    return (1.0 - confidence_level) / 10.0 if method == "hybrid" else None


def _method(function: str, name: str, value) -> str:
    if value in METHODS:
        return value
    raise OptionError(f"{function}: {name}={value!r} is not one of {', '.join(METHODS)}")


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
    method="hybrid",
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
    method : {"hybrid", "conditional"}, default "hybrid"
        The hybrid interval of Andrews, Kitagawa and McCloskey (2024,
        section 4), which stays bounded as the leader's margin shrinks, or
        their conditional interval, which does not (see Notes).

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
    overall (``method="conditional"``). The default ``method="hybrid"``
    (their section 4) also conditions on the leader's estimate lying within
    :math:`c_\beta` standard errors of its score, :math:`c_\beta` the
    :math:`1 - \beta` quantile of the largest standardised error over all
    models (:math:`\beta = \alpha / 10`), and stays inside that projection
    interval: it covers with probability at least ``confidence_level``, and
    it does not run off when the margin is small, as it often is on
    accuracies of a few hundred items, whose ties and one-item margins make
    the conditional interval under-cover (measured below). When the leader
    wins by far, :math:`L` lies far below and both intervals are the naive
    one; in a near tie the conditional interval widens downwards (without
    bound as the margin goes to 0), the hybrid one down to the projection
    interval's end, where the naive interval under-covers. At an exact tie
    the hybrid returns the projection interval and the raw estimate.

    Measured by simulation (20,000 draws per setting;
    tests/test_winners_curse.py), 95% intervals for the leader of 10 tied
    models cover 0.952 (hybrid), 0.950 (conditional) and 0.778 (naive) on
    independent N(mu, 1) estimates; on accuracies of 200 items (10 models
    tied at 0.6) 0.978, 0.873 and 0.773; see docs/claims.md.

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
    [0.6943, 0.6738, 0.7236]
    >>> [round(result[v].item(), 4) for v in ("naive_low", "naive_high")]
    [0.6854, 0.7246]

    A clear leader keeps (nearly) the naive interval, 0.9 ± 0.0196:

    >>> clear = winner_interval([0.9, 0.6], [0.01, 0.01], labels=["x", "y"])
    >>> [round(clear[v].item(), 4) for v in ("adjusted_estimate", "low", "high")]
    [0.9, 0.8802, 0.9198]
    """
    checked = o.check_options(
        _NAME,
        {
            "confidence_level": o.probability,
            "top_k": o.positive_int,
            "higher_is_better": o.boolean,
            "method": _method,
        },
        {
            "confidence_level": confidence_level,
            "top_k": top_k,
            "higher_is_better": higher_is_better,
            "method": method,
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
        hybrid=beta_of(checked["method"], checked["confidence_level"]),
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
            "method": METHODS[checked["method"]],
            "confidence_level": checked["confidence_level"],
            "top_k": checked["top_k"],
            "higher_is_better": checked["higher_is_better"],
            "covariance": described,
        },
    )


def task_leaders(
    estimates, covariance, *, confidence_level=0.95, higher_is_better=True, method="hybrid"
):
    r"""The winner's-curse-adjusted score of each task's leader, all tasks at once.

    Parameters
    ----------
    estimates : xarray.DataArray
        Over ``(task, model)`` (in any order); NaN where a model is not ranked
        on a task.
    covariance : xarray.DataArray
        Over ``(task, model, model_other)``: the covariance of each task's
        estimates (from bootstrap replicates, or diagonal from standard
        errors); NaN rows for unranked models.
    confidence_level : float, default 0.95
        Level of each interval.
    higher_is_better : bool, default True
        Whether the leader has the largest estimate.
    method : {"hybrid", "conditional"}, default "hybrid"
        As in :func:`winner_interval`.

    Returns
    -------
    xarray.Dataset
        Over ``task``: ``model`` (the observed leader; "" for none), ``estimate`` (raw),
        ``adjusted_estimate``, ``low``, ``high`` (the conditional interval of
        :func:`winner_interval`), ``naive_low``, ``naive_high``; NaN where a
        task ranks no model or its leader's estimate never varies.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from rankstats.stability.winners import task_leaders
    >>> est = xr.DataArray([[0.705, 0.70, 0.62], [0.9, 0.6, np.nan]], dims=("task", "model"),
    ...                    coords={"task": ["t1", "t2"], "model": ["a", "b", "c"]})
    >>> eye = np.eye(3) * 0.01**2
    >>> cov = xr.DataArray(np.stack([eye, eye]), dims=("task", "model", "model_other"))
    >>> out = task_leaders(est, cov)
    >>> out.model.values.tolist(), np.round(out.adjusted_estimate.values, 4).tolist()
    (['a', 'a'], [0.6943, 0.9])
    """
    estimates = estimates.transpose("task", "model")
    sign = 1.0 if higher_is_better else -1.0
    values = sign * estimates.to_numpy().astype(float)
    matrix = np.asarray(covariance.transpose("task", "model", "model_other"), dtype=float)
    absent = np.isnan(values) | np.isnan(np.diagonal(matrix, axis1=-2, axis2=-1))
    # an unranked model can neither lead nor bound the leader's truncation
    values = np.where(absent, -np.inf, values)
    matrix = np.where(absent[:, :, None] | absent[:, None, :], 0.0, matrix)
    usable = ~absent.all(-1)
    leader = np.argmax(values, axis=-1)
    variance = np.take_along_axis(np.diagonal(matrix, axis1=-2, axis2=-1), leader[:, None], -1)
    usable &= variance[:, 0] > 0
    # tasks without a usable leader get a harmless stand-in, masked below
    stand_in = np.where(usable[:, None], values, np.arange(values.shape[1])[None, :])
    stand_in_matrix = np.where(usable[:, None, None], matrix, np.eye(values.shape[1]))
    got = _kw.winner_intervals(
        stand_in,
        stand_in_matrix,
        confidence_level=confidence_level,
        hybrid=beta_of(method, confidence_level),
    )
    return _leaders_dataset(got, sign, estimates, usable, confidence_level, method)


def _leaders_dataset(got, sign, estimates, usable, confidence_level, method):
    """The kernel's ``(task, 1)`` arrays as a Dataset over ``task``, NaN where not usable."""
    usable = (
        usable
        & (got["estimate"][:, 0] > -np.inf)
        & (got["naive_high"][:, 0] > got["naive_low"][:, 0])
    )

    def shown(name):
        value = got[name][:, 0]
        return np.where(usable, sign * value, np.nan)

    low, high = shown("low"), shown("high")
    naive_low, naive_high = shown("naive_low"), shown("naive_high")
    if sign < 0:
        low, high, naive_low, naive_high = high, low, naive_high, naive_low
    models = estimates["model"].to_numpy()
    leader = got["selected"][:, 0]
    dims = ("task",)
    return xr.Dataset(
        {
            "model": (dims, np.where(usable, models[leader].astype(str), "")),
            "estimate": (dims, shown("estimate")),
            "adjusted_estimate": (dims, shown("adjusted")),
            "low": (dims, low),
            "high": (dims, high),
            "naive_low": (dims, naive_low),
            "naive_high": (dims, naive_high),
        },
        coords={"task": estimates["task"].to_numpy()},
        attrs={"method": METHODS[method], "confidence_level": confidence_level},
    )


def replicate_leaders(replicates, *, confidence_level=0.95, method="hybrid"):
    """:func:`task_leaders` from bootstrap replicates: each task's covariance from its draws.

    Parameters
    ----------
    replicates : xarray.Dataset
        What :func:`rankstats.stability.replicates` returns; its ``by``
        statistic (attribute) is the score adjusted.
    confidence_level : float, default 0.95
        Level of each interval.
    method : {"hybrid", "conditional"}, default "hybrid"
        As in :func:`winner_interval`; the hybrid's projection critical value
        is the bootstrap max-t of the replicates (as the rank sets' is).

    Returns
    -------
    xarray.Dataset
        As :func:`task_leaders`. A model with a missing draw on a task is
        left out of that task's selection (its covariance is unknown).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.stability import replicates
    >>> from rankstats.stability.winners import replicate_leaders
    >>> cube = rankstats.planted_cube(models=4, templates=20, samples=30, seed=0)
    >>> reps = replicates(cube, n_resamples=200, seed=0)
    >>> out = replicate_leaders(reps)
    >>> bool(out.low.item() <= out.adjusted_estimate.item() <= out.high.item())
    True
    """
    by = replicates.attrs["by"]
    sign = 1.0 if bool(replicates.attrs.get("higher_is_better", True)) else -1.0
    draws = replicates[by].transpose("task", "model", "replicate").to_numpy().astype(float)
    estimates = replicates[f"{by}_estimate"].transpose("task", "model")
    complete = ~np.isnan(draws).any(-1) & estimates.notnull().to_numpy()
    # a model with a missing draw is out of the selection: its covariance is unknown
    values = np.where(complete, sign * estimates.to_numpy().astype(float), -np.inf)
    draws = np.where(complete[..., None], sign * draws, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # tasks with no usable leader
        got = _kw.leader_intervals_of_draws(
            values,
            draws,
            confidence_level=confidence_level,
            hybrid=beta_of(method, confidence_level),
        )
    out = _leaders_dataset(got, sign, estimates, complete.any(-1), confidence_level, method)
    out.attrs["covariance"] = f"of the {draws.shape[-1]} bootstrap replicates of {by}"
    return out
