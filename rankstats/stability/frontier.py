r"""The cost-accuracy frontier, and the models that cannot be excluded from it.

:func:`cost_frontier` takes a score cube (bootstrapped over its samples or
templates, as :func:`~rankstats.stability.replicates` does) or published
estimates with standard errors or a covariance (normal draws, as
:func:`~rankstats.stability.rank_sets` does), and a cost per model (or per
model and item), and says which models lie on the frontier of the point
estimates and which cannot be excluded from the true frontier at the stated
level (:func:`rankstats._kernels.frontier.frontier_set`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels import frontier as _kf
from .._xr import higher_is_better_of
from ..errors import (
    CoordinateMismatchError,
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
)
from ._checks import checked
from ._engine import generator

__all__ = ["cost_frontier"]

_NAME = "cost_frontier"
METHOD = (
    "stepwise max-t over models (Romano & Wolf 2005): model j is excluded when some "
    "model at most as costly is more accurate, all models tested at once; the set "
    "holds every model of the true frontier with probability confidence_level"
)
PER_MODEL = "per model, as given"
PER_EVALUATION = (
    "mean cost per evaluation: the model's cost summed over the cells of the cube it "
    "was scored on, divided by their number"
)


# --------------------------------------------------------------------------- inputs


def _labelled(values, what, dim="model"):
    """A one-dimensional float Series labelled by model, from a Series, mapping or DataArray."""
    if isinstance(values, xr.DataArray):
        if values.dims != (dim,):
            raise DimensionError(
                f"{_NAME}: {what} must have the one dimension {dim!r} "
                f"(got {', '.join(map(str, values.dims)) or 'none'})"
            )
        values = values.to_series()
    elif isinstance(values, Mapping):
        values = pd.Series(dict(values))
    elif not isinstance(values, pd.Series):
        raise InputTypeError(
            f"{_NAME}: give {what} as a pandas Series, a mapping or an xarray.DataArray "
            f"labelled by {dim!r} (got {type(values).__name__})"
        )
    try:
        numbers = pd.to_numeric(values, errors="raise").astype(float)
    except (TypeError, ValueError):
        raise InputTypeError(f"{_NAME}: {what} must be numbers") from None
    numbers.index = numbers.index.astype(str)
    repeated = numbers.index.duplicated()
    if repeated.any():
        raise CoordinateMismatchError(
            f"{_NAME}: the labels of {what} repeat: {', '.join(numbers.index[repeated][:5])}"
        )
    return numbers


def _matched(values, what, models):
    """``values`` in the order of ``models``; every model must have one."""
    absent = [m for m in models if m not in values.index]
    if absent:
        raise MissingValueError(
            f"{_NAME}: {what} has no value for model {', '.join(map(repr, absent[:5]))}"
        )
    return values.reindex(models).to_numpy()


def _cost_per_model(cost, models, score=None):
    """The cost of each model, and how it was found."""
    if isinstance(cost, xr.DataArray) and cost.dims != ("model",):
        if score is None:
            raise DimensionError(
                f"{_NAME}: a cost per model and item (dimensions "
                f"{', '.join(map(str, cost.dims))}) needs a cube; give one cost per model "
                "with published estimates"
            )
        extra = [d for d in cost.dims if d not in score.dims]
        if "model" not in cost.dims or extra:
            raise DimensionError(
                f"{_NAME}: a cost per model and item must have the dimension 'model' and "
                f"only dimensions of the scores ({', '.join(map(str, score.dims))}); "
                f"got {', '.join(map(str, cost.dims))}"
            )
        if cost.dtype.kind not in "biuf":
            raise InputTypeError(f"{_NAME}: the cost must be numbers (got dtype {cost.dtype})")
        cost = cost.astype(float)
        cost = cost.assign_coords(model=cost["model"].astype(str))
        absent = [m for m in models if m not in cost["model"].values]
        if absent:
            raise MissingValueError(
                f"{_NAME}: the cost has no value for model {', '.join(map(repr, absent[:5]))}"
            )
        cost = cost.sel(model=models)
        scored = score.notnull().assign_coords(model=models)
        cells = cost.broadcast_like(scored).where(scored)
        unpriced = (scored & cells.isnull()).any([d for d in scored.dims if d != "model"])
        if bool(unpriced.any()):
            bad = [str(m) for m in np.asarray(models)[unpriced.values]]
            raise MissingValueError(
                f"{_NAME}: the cost is missing (NaN) for cells model "
                f"{', '.join(map(repr, bad[:5]))} was scored on"
            )
        count = scored.sum([d for d in scored.dims if d != "model"])
        total = cells.sum([d for d in scored.dims if d != "model"])
        values = (total / count.where(count > 0)).to_numpy()
        how = PER_EVALUATION
        priced = (cells.fillna(0.0), scored)
    else:
        values = _matched(_labelled(cost, "the cost"), "the cost", models)
        how, priced = PER_MODEL, None
    wrong = ~np.isfinite(values) | (values < 0)
    if wrong.any():
        j = int(np.argmax(wrong))
        raise OptionError(
            f"{_NAME}: a cost must be a finite number of at least 0; model "
            f"{models[j]!r} has {float(values[j])!r}"
        )
    return values, how, priced


def _cost_replicates(priced, reps, values):
    """Centred replicates ``(M, B)`` of each model's mean cost per evaluation, same draws."""
    cells, scored = priced
    weight = None
    for name in ("template_weight", "sample_weight"):
        if name in reps:
            drawn = reps[name].astype(float)
            weight = drawn if weight is None else weight * drawn
    summed = [d for d in cells.dims if d != "model"]
    total = xr.dot(cells, weight, dim=summed)
    count = xr.dot(scored.astype(float), weight, dim=summed)
    replicate = next(d for d in total.dims if d != "model")
    draws = (total / count.where(count > 0)).transpose("model", replicate).to_numpy()
    return draws - values[:, None]


def _from_cube(cube, n_resamples, over, rng, higher, dims):
    """Accuracies (mean over tasks of AvgP), their centred replicates, and the replicates."""
    from .resampling import replicates

    model, task, template, sample = dims
    reps = replicates(
        cube,
        n_resamples,
        over,
        seed=rng,
        statistics="avgp",
        higher_is_better=higher,
        nan_policy="omit",
        model=model,
        task=task,
        template=template,
        sample=sample,
    )
    replicate = next(d for d in reps["avgp"].dims if d not in reps["avgp_estimate"].dims)
    lead = [d for d in reps["avgp_estimate"].dims if d != model]
    estimate = reps["avgp_estimate"].astype(float)
    draws = reps["avgp"].astype(float)
    if lead:  # the mean over tasks (and any other dimension): a model absent anywhere drops out
        estimate = estimate.mean(lead, skipna=False)
        draws = draws.mean(lead, skipna=False)
    estimate = estimate.transpose(model).to_numpy()
    draws = draws.transpose(model, replicate).to_numpy()
    return estimate, draws - estimate[:, None], draws, reps


def _from_estimates(estimates, standard_errors, covariance, n_resamples, rng):
    """Estimates, normal draws of their deviations, their covariance, and the source."""
    est = _labelled(estimates, "the estimates")
    models = list(est.index)
    m = len(models)
    if (standard_errors is None) == (covariance is None):
        raise InputTypeError(
            f"{_NAME}: with estimates, give either standard_errors= (independent "
            "estimates) or covariance=, "
            + ("not both" if standard_errors is not None else "one of them")
        )
    if standard_errors is not None:
        if isinstance(standard_errors, (int, float, np.number)):  # one for every model
            standard_errors = pd.Series(float(standard_errors), index=est.index)
        se = _matched(_labelled(standard_errors, "standard_errors"), "standard_errors", models)
        wrong = ~(np.isfinite(se) & (se >= 0))
        if wrong.any():
            j = int(np.argmax(wrong))
            raise OptionError(
                f"{_NAME}: standard_errors must be finite and non-negative; model "
                f"{models[j]!r} has {float(se[j])!r}"
            )
        deviation = se[:, None] * rng.standard_normal((m, n_resamples))
        return est.to_numpy(), deviation, np.diag(se**2), "standard errors (independent estimates)"
    if isinstance(covariance, pd.DataFrame):
        covariance = covariance.copy()
        covariance.index = covariance.index.astype(str)
        covariance.columns = covariance.columns.astype(str)
        absent = [x for x in models if x not in covariance.index or x not in covariance.columns]
        if absent:
            raise MissingValueError(
                f"{_NAME}: the covariance has no row or column for model "
                f"{', '.join(map(repr, absent[:5]))}"
            )
        covariance = covariance.reindex(index=models, columns=models)
    try:
        matrix = np.asarray(covariance, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(f"{_NAME}: the covariance must be numbers") from None
    if matrix.shape != (m, m):
        raise DimensionError(
            f"{_NAME}: the covariance must be {m} x {m} for {m} estimates "
            f"(got shape {matrix.shape})"
        )
    if not np.isfinite(matrix).all() or not np.allclose(matrix, matrix.T, rtol=1e-8, atol=0):
        raise OptionError(f"{_NAME}: the covariance must be finite and symmetric")
    from .._kernels.ranksets import covariance_factor

    symmetric = (matrix + matrix.T) / 2
    factor, smallest = covariance_factor(symmetric[None], np.ones((1, m), dtype=bool))
    if not np.isnan(smallest[0]):
        raise OptionError(f"{_NAME}: the covariance is not positive semi-definite")
    deviation = factor[0] @ rng.standard_normal((m, n_resamples))
    return est.to_numpy(), deviation, symmetric, "the covariance given"


def _spread(draws, estimate, confidence_level):
    """Standard errors and percentile intervals of the models present (NaN for the others)."""
    se, low, high = (np.full(len(estimate), np.nan) for _ in range(3))
    present = ~np.isnan(estimate)
    kept = draws[present]
    if kept.size:
        tail = (1.0 - confidence_level) / 2
        se[present] = np.nanstd(kept, axis=-1, ddof=1)
        low[present], high[present] = np.nanquantile(kept, [tail, 1.0 - tail], axis=-1)
    return se, low, high


# --------------------------------------------------------------------------- the function


@checked(over=o.optional(o.one_of(*o.OVER)), cost_is_known=o.boolean)
def cost_frontier(
    data,
    cost,
    *,
    standard_errors=None,
    covariance=None,
    confidence_level=0.95,
    n_resamples=1000,
    over=None,
    seed=None,
    higher_is_better=None,
    cost_is_known=True,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""The cost-accuracy frontier, and the models that cannot be excluded from it.

    Parameters
    ----------
    data : score cube (xarray.Dataset), or estimates
        A cube: a model's accuracy is its mean over tasks of its mean
        over templates (AvgP), bootstrapped within each task (``over``).
        Or published estimates, one per model (a pandas Series, a mapping
        or an xarray.DataArray over ``model``), with ``standard_errors``
        or ``covariance``.
    cost : pandas.Series, mapping or xarray.DataArray
        One known cost per model (labelled by model; models without one are
        an error, extra labels are ignored); or, with a cube, a DataArray
        over ``model`` and any of the scores' other dimensions (a cost per
        model and item, e.g. ``(model, task, sample)``): a model's cost is
        then its mean cost per evaluation, over the cells of the cube it
        was scored on. Costs are finite and at least 0.
    standard_errors : like the estimates, or a number, optional
        Their standard errors (independent estimates); one number for all.
    covariance : array_like or pandas.DataFrame, optional
        Their ``(M, M)`` covariance instead, in the estimates' order or
        labelled like them on both axes.
    confidence_level : float, default 0.95
        The probability with which ``frontier_set`` holds every model of
        the true frontier; also the level of the accuracy intervals.
    n_resamples : int, default 1000
        Bootstrap replicates (cube) or normal draws (estimates).
    over : {"samples", "templates", "both"}, optional
        What the cube's bootstrap resamples; default ``"samples"`` when the
        cube has a ``sample`` dimension, else ``"templates"``.
    {seed}
    higher_is_better : bool, optional
        Whether a larger score is better; None reads the cube's attribute
        (else True). With False the frontier seeks the lowest score.
    cost_is_known : bool, default True
        Treat the costs as known numbers. False, with a cube and a cost per
        model and item: a model's mean cost per evaluation is an estimate
        too, bootstrapped with the same draws as the accuracies, and a model
        is excluded only by one shown both more accurate and no costlier.
    model, task, template, sample : str
        Dimension names of the cube.

    Returns
    -------
    xarray.Dataset
        Over ``model``: ``accuracy``, ``standard_error``, ``accuracy_low``
        and ``accuracy_high`` (a marginal interval at ``confidence_level``:
        bootstrap percentiles, or estimate :math:`\pm z \cdot se`),
        ``cost``; ``on_frontier`` (no model at most as costly has a better
        point estimate); ``frontier_set`` (cannot be excluded from the true
        frontier); ``excluded_by`` (the model that excludes it, "" when not
        excluded) and ``statistic`` (its largest t against a model at most
        as costly). The attributes record ``confidence_level``,
        ``n_resamples``, ``seed``, ``source``, ``cost`` (how a model's cost
        was found), ``method``, ``critical_value`` and ``left_out``: the
        models without an accuracy (absent from some task of the cube, or a
        NaN estimate), which take no part ("" for none).

    Raises
    ------
    InputTypeError
        Data that is neither a cube nor estimates; estimates without
        exactly one of ``standard_errors`` and ``covariance``.
    MissingValueError
        A model without a cost (or without one on a cell it was scored on).
    OptionError
        A negative or infinite cost; a covariance that is not symmetric
        positive semi-definite.

    Notes
    -----
    Model j is on the true frontier when no model k with
    :math:`c_k \le c_j` is more accurate, :math:`a_k > a_j` (so equally
    accurate, costlier models stay on it: the test can never show
    accuracies equal). With :math:`t_{kj} = (\hat a_k - \hat a_j) /
    \hat\sigma_{kj}`, :math:`\hat\sigma_{kj}` the standard deviation of
    :math:`D_k - D_j` over the replicates (centred: replicate minus
    estimate) or, for estimates, the standard error of the difference
    that the standard errors or the covariance give, j is excluded when
    :math:`T_j = \max_{k: c_k \le c_j} t_{kj} > c`, c being the
    ``confidence_level`` quantile over the replicates of
    :math:`\max_j \max_{k: c_k \le c_j} (D_k - D_j) / \hat\sigma_{kj}`
    over the models not yet excluded; stepwise (Romano &
    Wolf 2005, the procedure of the simultaneous rank sets), c is
    recomputed without the models excluded until none is newly excluded.
    All models are tested at once, so the set of models not excluded
    holds every model of the true frontier with probability at least
    ``confidence_level`` (asymptotically). Costs are treated as known (the
    price of a model, or its mean cost per evaluation over the items it was
    scored on) unless ``cost_is_known=False``: then k must be shown both
    more accurate and no costlier (the smaller of the two t statistics),
    and the null maximum takes the larger of the two centred values per
    pair (:func:`rankstats._kernels.frontier.frontier_set`).

    **Coverage** (``tests/test_frontier.py``, eight models at costs 1 to
    8, 95% sets): with all eight equally accurate (every model on the
    frontier, the least favourable case) the set held them all in 95.0% of
    2000 draws of estimates with standard errors 0.01, and in 95.0% of 1000
    binary cubes of 1000 items (1000 replicates); the frontier of the point
    estimates held them in none. In a staircase whose frontier models are
    0.02 apart, a model 0.05 below a cheaper one was excluded in 78% of
    draws (standard errors 0.01), one 0.04 below in 53%, and the set held
    the whole frontier in 99.8%. With ``cost_is_known=False``, three models
    priced within noise of each other (500 items, 1000 draws): 99.9%, where
    taking the estimated costs as known held the frontier in 71.2%.

    References
    ----------
    .. [1] Romano, J. P., & Wolf, M. (2005). Exact and approximate stepdown
       methods for multiple hypothesis testing. JASA 100(469), 94-108.
    .. [2] Mogstad, M., Romano, J. P., Shaikh, A. M., & Wilhelm, D. (2024).
       Inference for ranks with applications to mobility across
       neighbourhoods and academic achievement across countries. Review of
       Economic Studies 91(1), 476-518.

    See Also
    --------
    rank_sets, leaderboard : the same stepwise max-t over pairs, for ranks.

    Examples
    --------
    >>> import pandas as pd
    >>> from rankstats import stability
    >>> accuracy = pd.Series({"small": 0.62, "medium": 0.71, "large": 0.80,
    ...                       "old": 0.55, "pricey": 0.78})
    >>> price = pd.Series({"small": 0.1, "medium": 0.5, "large": 3.0,
    ...                    "old": 0.4, "pricey": 10.0})
    >>> front = stability.cost_frontier(accuracy, price, standard_errors=0.01, seed=0)
    >>> front[["accuracy", "cost", "on_frontier", "frontier_set", "excluded_by"]].to_pandas()
            accuracy  cost  on_frontier  frontier_set excluded_by
    model
    small       0.62   0.1         True          True
    medium      0.71   0.5         True          True
    large       0.80   3.0         True          True
    old         0.55   0.4        False         False       small
    pricey      0.78  10.0        False          True
    """
    higher, known, cost_deviation = True, None, None
    if isinstance(data, xr.Dataset):
        if standard_errors is not None or covariance is not None:
            raise InputTypeError(
                f"{_NAME}: standard_errors= and covariance= are for published estimates; "
                "a cube's uncertainty comes from its bootstrap"
            )
        if "score" not in data:
            raise InputTypeError(f"{_NAME}: the Dataset has no 'score' variable (a score cube)")
        score = data["score"]
        if model not in score.dims:
            raise DimensionError(f"{_NAME}: the scores have no dimension {model!r}")
        higher = higher_is_better_of(data, higher_is_better)
        if over is None:
            over = "samples" if sample in score.dims else "templates"
        models = [str(m) for m in score[model].to_numpy()]
        values, how, priced = _cost_per_model(cost, models, score.rename({model: "model"}))
        if not cost_is_known and priced is None:
            raise OptionError(
                f"{_NAME}: cost_is_known=False needs a cost per model and item (a DataArray "
                "over 'model' and the scores' other dimensions); a cost per model is known"
            )
        rng, seed_attr = generator(seed)
        dims = (model, task, template, sample)
        estimate, deviation, draws, reps = _from_cube(data, n_resamples, over, rng, higher, dims)
        if not cost_is_known:
            cost_deviation = _cost_replicates(priced, reps, values)
            how += "; bootstrapped with the accuracies (cost_is_known=False)"
        se, low, high = _spread(draws, estimate, confidence_level)
        source = f"bootstrap over {over} of the mean over tasks of AvgP"
    else:
        if isinstance(data, (pd.DataFrame, np.ndarray, list, tuple)):
            raise InputTypeError(
                f"{_NAME}: give a score cube, or the estimates as a pandas Series, a "
                "mapping or an xarray.DataArray labelled by model (one per model)"
            )
        if not cost_is_known:
            raise OptionError(
                f"{_NAME}: cost_is_known=False needs a cube and a cost per model and item; "
                "published estimates come with one known cost per model"
            )
        if higher_is_better is not None:
            higher = bool(higher_is_better)
        rng, seed_attr = generator(seed)
        estimate, deviation, known, source = _from_estimates(
            data, standard_errors, covariance, n_resamples, rng
        )
        se = np.sqrt(np.clip(np.diag(known), 0.0, None))
        models = list(_labelled(data, "the estimates").index)
        values, how, _ = _cost_per_model(cost, models)
        from scipy import stats

        z = float(stats.norm.ppf(0.5 + confidence_level / 2))
        low, high = estimate - z * se, estimate + z * se
    if len(models) < 2:
        raise DimensionError(f"{_NAME}: a frontier needs at least two models (got {len(models)})")
    sign = 1.0 if higher else -1.0
    found = _kf.frontier_set(
        sign * estimate,
        sign * deviation,
        values,
        covariance=known,
        cost_deviation=cost_deviation,
        confidence_level=confidence_level,
    )
    on_frontier = _kf.pareto_front(sign * estimate, values)
    labels = np.asarray(models, dtype=object)
    by = np.where(found["excluded_by"] >= 0, labels[found["excluded_by"]], "")
    out = xr.Dataset(
        {
            "accuracy": ("model", estimate),
            "standard_error": ("model", se),
            "accuracy_low": ("model", low),
            "accuracy_high": ("model", high),
            "cost": ("model", values),
            "on_frontier": ("model", on_frontier),
            "frontier_set": ("model", found["frontier_set"]),
            "excluded_by": ("model", by.astype(str)),
            "statistic": ("model", found["statistic"]),
        },
        coords={"model": labels.astype(str)},
    )
    if model != "model":
        out = out.rename({"model": model})
    absent = [m for m, a in zip(models, estimate, strict=True) if np.isnan(a)]
    out.attrs = {
        "statistic": "cost frontier",
        "left_out": ", ".join(absent),
        "confidence_level": confidence_level,
        "n_resamples": n_resamples,
        "seed": seed_attr,
        "source": source,
        "cost": how,
        "higher_is_better": int(higher),
        "method": METHOD,
        "critical_value": found["critical_value"],
    }
    return out
