r"""Rank confidence sets from the numbers papers publish: estimates with standard errors.

:func:`rank_sets` takes estimates (a pandas Series, an xarray DataArray, or an
array with labels) with either their standard errors (independent estimates)
or their full covariance, and returns every object's simultaneous or marginal
rank confidence set, tie groups and top-k set (Mogstad, Romano, Shaikh &
Wilhelm 2024), from the kernel of :func:`rankstats.stability.leaderboard`
(:func:`rankstats._kernels.ranksets.normal_rank_sets`): the same stepwise
procedure, with the pairwise standard errors of the given covariance and
critical values from normal draws, as the csranks R package computes them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels import ranking as _kra
from .._kernels import ranksets as _krs
from ..errors import (
    CoordinateMismatchError,
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
)
from . import _engine as _b
from ._checks import checked

__all__ = ["rank_sets"]

_NAME = "rank_sets"
#: What each choice of ``rank_sets`` means, as the attributes record it.
RULES = {
    "simultaneous": "simultaneous confidence sets, stepwise max-t over all pairs "
    "(Mogstad et al. 2024), critical values from normal draws with the "
    "given covariance",
    "marginal": "marginal confidence sets, stepwise max-t over each object's pairs "
    "(Mogstad et al. 2024), critical values from normal draws with the "
    "given covariance",
}
TIE_GROUPS = (
    "contiguous runs split only between pairs the simultaneous test separates "
    "(family-wise error at most 1 - confidence_level)"
)
IN_TOP_K = (
    "simultaneous lower rank bound <= top_k (csranks' cstaubest: the projection "
    "set for the top_k best)"
)


def _objects_name(function, name, value):
    if value is None or isinstance(value, str):
        return value
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be None or "
        "a dimension name (str)"
    )


# --------------------------------------------------------------------------- inputs


def _numbers(values, what):
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputTypeError(f"{_NAME}: {what} must be numbers") from None


def _estimates(estimates, labels, objects):
    """The estimates as a DataArray whose objects dimension is named; and that name."""
    if isinstance(estimates, xr.DataArray):
        if labels is not None:
            raise InputTypeError(
                f"{_NAME}: labels= is for arrays; a DataArray carries its own labels"
            )
        dim = objects or (
            "model" if "model" in estimates.dims or estimates.ndim != 1 else estimates.dims[0]
        )
        if dim not in estimates.dims:
            raise DimensionError(
                f"{_NAME}: the estimates have no dimension {dim!r} "
                f"(dimensions: {', '.join(map(str, estimates.dims))}); name "
                "the objects' dimension with objects="
            )
        data = estimates.astype(float) if estimates.dtype.kind in "biuf" else None
        if data is None:
            raise InputTypeError(
                f"{_NAME}: the estimates must be numbers (got dtype {estimates.dtype})"
            )
        if dim not in data.coords:
            data = data.assign_coords({dim: np.arange(data.sizes[dim])})
        return data, dim
    if isinstance(estimates, pd.DataFrame):
        raise InputTypeError(
            f"{_NAME}: give the estimates as one column (a pandas Series), not a DataFrame"
        )
    if isinstance(estimates, pd.Series):
        if labels is not None:
            raise InputTypeError(
                f"{_NAME}: labels= is for arrays; a Series carries its own labels (its index)"
            )
        dim = objects or (
            estimates.index.name if isinstance(estimates.index.name, str) else "model"
        )
        values = _numbers(estimates.to_numpy(), "the estimates")
        return xr.DataArray(values, dims=[dim], coords={dim: estimates.index.to_numpy()}), dim
    values = _numbers(estimates, "the estimates")
    if values.ndim != 1:
        raise DimensionError(
            f"{_NAME}: an array of estimates must be one-dimensional (got "
            f"shape {values.shape}); give an xarray.DataArray for several "
            "rankings at once"
        )
    dim = objects or "model"
    if labels is None:
        labels = np.arange(len(values))
    labels = np.asarray(labels)
    if labels.shape != values.shape:
        raise DimensionError(f"{_NAME}: {labels.size} labels for {values.size} estimates")
    return xr.DataArray(values, dims=[dim], coords={dim: labels}), dim


def _same_labels(what, found, wanted, dim):
    found, wanted = pd.Index(found), pd.Index(wanted)
    if len(found) != len(wanted):
        raise DimensionError(
            f"{_NAME}: {what} has {len(found)} values along {dim!r}, the estimates {len(wanted)}"
        )
    if found.has_duplicates or not found.isin(wanted).all():
        missing = [str(v) for v in wanted[~wanted.isin(found)][:3]]
        raise CoordinateMismatchError(
            f"{_NAME}: the labels of {what} along {dim!r} are not those of the estimates"
            + (f" (no {', '.join(missing)})" if missing else " (duplicated labels)")
        )


def _aligned(value, what, est, dim):
    """``standard_errors`` as a DataArray broadcast like the estimates."""
    labels = est[dim].to_numpy()
    if isinstance(value, xr.DataArray):
        if dim not in value.dims:
            raise DimensionError(f"{_NAME}: {what} has no dimension {dim!r}")
        extra = [d for d in value.dims if d not in est.dims]
        if extra:
            raise DimensionError(
                f"{_NAME}: {what} has dimensions the estimates lack: {', '.join(map(str, extra))}"
            )
        if dim in value.coords:
            _same_labels(what, value[dim].to_numpy(), labels, dim)
            value = value.sel({dim: labels})
        elif value.sizes[dim] != len(labels):
            _same_labels(what, np.arange(value.sizes[dim]), labels, dim)
        else:
            value = value.assign_coords({dim: labels})
        value = value.drop_vars([c for c in value.coords if c not in value.dims])
        return _numbers_da(value, what).broadcast_like(est).transpose(*est.dims)
    if isinstance(value, pd.Series):
        _same_labels(what, value.index, labels, dim)
        value = value.reindex(labels)
        return (
            xr.DataArray(_numbers(value.to_numpy(), what), dims=[dim], coords={dim: labels})
            .broadcast_like(est)
            .transpose(*est.dims)
        )
    values = _numbers(value, what)
    if values.shape not in (est.shape, (len(labels),)):
        if values.ndim == 1:
            raise DimensionError(
                f"{_NAME}: {what} has {values.size} values, the estimates {len(labels)}"
            )
        raise DimensionError(f"{_NAME}: {what} has shape {values.shape}, the estimates {est.shape}")
    if values.shape == est.shape:
        return est.copy(data=values)
    return (
        xr.DataArray(values, dims=[dim], coords={dim: labels})
        .broadcast_like(est)
        .transpose(*est.dims)
    )


def _numbers_da(value, what):
    if value.dtype.kind not in "biuf":
        raise InputTypeError(f"{_NAME}: {what} must be numbers (got dtype {value.dtype})")
    return value.astype(float)


def _covariance(value, est, dim):
    """The covariance as a NumPy array ``(*lead, M, M)`` in the estimates' order."""
    labels = est[dim].to_numpy()
    lead = [d for d in est.dims if d != dim]
    other = f"{dim}_b"
    m = len(labels)
    if isinstance(value, xr.DataArray):
        for name in (dim, other):
            if name not in value.dims:
                raise DimensionError(
                    f"{_NAME}: the covariance must have the dimensions "
                    f"{dim!r} and {other!r} (got "
                    f"{', '.join(map(str, value.dims))})"
                )
        extra = [d for d in value.dims if d not in (dim, other, *lead)]
        if extra:
            raise DimensionError(
                f"{_NAME}: the covariance has dimensions the estimates "
                f"lack: {', '.join(map(str, extra))}"
            )
        for name in (dim, other):
            if name in value.coords:
                _same_labels("the covariance", value[name].to_numpy(), labels, name)
                value = value.sel({name: labels})
            elif value.sizes[name] != m:
                _same_labels("the covariance", np.arange(value.sizes[name]), labels, name)
        value = _numbers_da(value.variable, "the covariance")
        sizes = {**{d: est.sizes[d] for d in lead}, dim: m, other: m}
        return value.set_dims(sizes).transpose(*sizes).values
    if isinstance(value, pd.DataFrame):
        _same_labels("the covariance's rows", value.index, labels, dim)
        _same_labels("the covariance's columns", value.columns, labels, dim)
        value = value.reindex(index=labels, columns=labels).to_numpy()
    values = _numbers(value, "the covariance")
    if values.shape != (m, m):
        raise DimensionError(
            f"{_NAME}: the covariance must be {m} x {m} for {m} estimates "
            f"(got shape {values.shape}); give an xarray.DataArray over "
            f"({dim!r}, {other!r}, ...) for one covariance per ranking"
        )
    return np.broadcast_to(values, (*[est.sizes[d] for d in lead], m, m))


def _check_symmetric(covariance, present, describe):
    """Refuse a covariance that is not symmetric (relative 1e-8) or not finite where used."""
    s, m, _ = covariance.shape
    for r in range(s):
        use = np.flatnonzero(present[r])
        block = covariance[r] if len(use) == m else covariance[r][np.ix_(use, use)]
        if not np.isfinite(block).all():
            raise OptionError(
                f"{_NAME}: the covariance holds NaN or infinite values among "
                f"the objects ranked{describe(r)}"
            )
        if np.array_equal(block, block.T):
            continue
        scale = np.max(np.abs(block), initial=0.0)
        worst, where = 0.0, None
        for top in range(0, len(use), 512):  # blocks of rows, for memory
            gap = np.abs(block[top : top + 512] - block[:, top : top + 512].T)
            if gap.size and gap.max() > worst:
                worst = gap.max()
                where = np.unravel_index(np.argmax(gap), gap.shape)
                where = (use[where[0] + top], use[where[1]])
        if worst > 1e-8 * scale:
            raise OptionError(
                f"{_NAME}: the covariance is not symmetric{describe(r)}: "
                f"entries ({where[0]}, {where[1]}) and ({where[1]}, {where[0]}) "
                f"differ by {worst:.3g}"
            )


# --------------------------------------------------------------------------- the function


@checked(
    rank_sets=o.one_of("simultaneous", "marginal"),
    higher_is_better=o.boolean,
    objects=_objects_name,
)
def rank_sets(
    estimates,
    *,
    standard_errors=None,
    covariance=None,
    labels=None,
    rank_sets="simultaneous",
    confidence_level=0.95,
    top_k=None,
    higher_is_better=True,
    ties="average",
    n_resamples=1000,
    seed=None,
    nan_policy="propagate",
    objects=None,
):
    r"""Rank confidence sets of estimates with standard errors or a covariance.

    What a paper's table allows: each object's (model's) estimate with its
    standard error, or the estimates with their full covariance, give every
    object's confidence set for its rank, tie groups and, with ``top_k``,
    the objects that may be among the best ``top_k``.

    Parameters
    ----------
    estimates : pandas.Series, xarray.DataArray or array_like
        One estimate per object. A Series is labelled by its index; a
        DataArray by its ``objects`` dimension, every other dimension (such
        as ``task``) being one ranking of its own, all computed at once; a
        one-dimensional array by ``labels``. NaN: see ``nan_policy``.
    standard_errors : like ``estimates``, optional
        The estimates' standard errors, the estimates being independent
        (a diagonal covariance). A Series or DataArray is matched to the
        estimates by label.
    covariance : array_like, pandas.DataFrame or xarray.DataArray, optional
        The estimates' covariance instead: ``(M, M)`` in the estimates'
        order, a DataFrame labelled like them on both axes, or a DataArray
        over ``(objects, objects_b)`` (e.g. ``model``, ``model_b``) and any
        of the estimates' other dimensions. It must be symmetric (to a
        relative 1e-8) and positive semi-definite (eigenvalues at least
        -1e-6 times the largest).
    labels : array_like, optional
        The objects' labels, for an array of estimates (default 0, 1, ...).
    rank_sets : {"simultaneous", "marginal"}, default "simultaneous"
        Sets that hold every object's true rank at once with probability
        ``confidence_level``, or each object's on its own.
    {confidence_level}
    top_k : int, optional
        Also say which objects may be among the best ``top_k``
        (``in_top_k``).
    higher_is_better : bool, default True
        Whether rank 1 goes to the largest estimate.
    {ties}
        Applied to ``rank``, the rank of the estimates.
    n_resamples : int, default 1000
        Normal draws from which the critical values are taken.
    {seed}
    nan_policy : {"propagate", "omit", "raise"}, default "propagate"
        What a NaN estimate does: make its ranking NaN (with a warning),
        drop out of its ranking (ranks are among the objects left), or
        raise :class:`~rankstats.errors.MissingValueError`.
    objects : str, optional
        The objects' dimension: of a DataArray (default ``"model"``, or its
        only dimension), or the name given to a Series' index (default its
        name, else ``"model"``) or to an array's labels (``"model"``).

    Returns
    -------
    xarray.Dataset
        Labelled like the estimates: ``estimate``, ``standard_error``,
        ``rank`` (of the estimates; 1 is the best), ``rank_low``,
        ``rank_high``, ``tie_group`` and, with ``top_k``, ``in_top_k``. The
        attributes record the rule (``rank_sets``, ``rank_method``,
        ``tie_groups``, ``in_top_k``), ``confidence_level``,
        ``n_resamples``, ``seed`` and where the covariance came from
        (``covariance``). Read the ranks as ``result["rank"]``.

    Raises
    ------
    InputTypeError
        Neither or both of ``standard_errors`` and ``covariance``; inputs
        that are not numbers.
    DimensionError, CoordinateMismatchError
        Standard errors or a covariance of another length or with other
        labels than the estimates; fewer than two objects.
    OptionError
        Negative, infinite or NaN standard errors (of an estimate that is
        not NaN); a covariance that is not symmetric positive semi-definite.

    Notes
    -----
    With :math:`\Sigma` the covariance (:math:`\operatorname{diag}(se^2)`
    from standard errors), the standard error of a difference is
    :math:`\sigma_{jk} = \sqrt{\Sigma_{jj} + \Sigma_{kk} - 2\Sigma_{jk}}` and
    :math:`t_{jk} = (\hat\theta_j - \hat\theta_k) / \sigma_{jk}`. Object j is
    *surely better* than k when :math:`t_{jk} > c`, c being the
    ``confidence_level`` quantile over ``n_resamples`` draws
    :math:`Z \sim N(0, \Sigma)` of :math:`\max (Z_j - Z_k)/\sigma_{jk}` over
    the comparisons in play: every ordered pair (simultaneous), or the
    pairs of one object (marginal). Stepwise, the comparisons settled are
    removed and c recomputed until nothing new is settled (csranks'
    ``stepdown=TRUE``). Then, among the M objects ranked,
    ``rank_low`` = 1 + #{k surely better than j} and ``rank_high`` = M -
    #{k surely worse than j}. Pairs with :math:`\sigma_{jk} = 0` (zero
    standard errors) are settled exactly when their estimates differ;
    tied estimates are never settled, so they share their sets.

    This is the kernel and the procedure of
    :func:`~rankstats.stability.leaderboard`, with the covariance given
    instead of estimated from bootstrap replicates (and without the
    leaderboard's small-sample correction). It equals csranks' ``csranks(x,
    Sigma)`` (two-sided, ``stepdown=TRUE``; the simultaneous sets with
    ``simul=TRUE``, the marginal ones with ``simul=FALSE``) up to the normal
    draws. ``in_top_k`` is ``rank_low <= top_k`` of the simultaneous sets,
    whatever ``rank_sets`` is: csranks' ``cstaubest(x, Sigma, tau=top_k)``,
    whose one-sided ("lower") simultaneous family over every object holds
    every ordered pair and so makes the same rejections. It holds every
    true top-``top_k`` object with probability ``confidence_level``.

    Standard errors published one model at a time ignore that models
    scored on the same items are correlated; see the docs' section on
    shared items for when the paired covariance matters.

    References
    ----------
    .. [1] Mogstad, M., Romano, J. P., Shaikh, A. M., & Wilhelm, D. (2024).
       Inference for ranks with applications to mobility across
       neighbourhoods and academic achievement across countries. Review of
       Economic Studies 91(1), 476-518.

    See Also
    --------
    leaderboard : the same rank sets from a score cube's bootstrap.

    Examples
    --------
    >>> import pandas as pd
    >>> from rankstats import stability
    >>> accuracy = pd.Series([0.81, 0.78, 0.70, 0.69, 0.52],
    ...                      index=pd.Index(["a", "b", "c", "d", "e"], name="model"))
    >>> se = pd.Series(0.015, index=accuracy.index)
    >>> sets = stability.rank_sets(accuracy, standard_errors=se, top_k=2, seed=0)
    >>> sets[["rank", "rank_low", "rank_high", "tie_group", "in_top_k"]].to_pandas()
           rank  rank_low  rank_high  tie_group  in_top_k
    model
    a       1.0       1.0        2.0        1.0      True
    b       2.0       1.0        2.0        1.0      True
    c       3.0       3.0        4.0        2.0     False
    d       4.0       3.0        4.0        2.0     False
    e       5.0       5.0        5.0        3.0     False

    Compare with the csranks R package: ``csranks(x, diag(se^2))`` gives
    the same ``L`` and ``U``.
    """
    if (standard_errors is None) == (covariance is None):
        raise InputTypeError(
            f"{_NAME}: give either standard_errors= (independent "
            "estimates) or covariance=, "
            + ("not both" if standard_errors is not None else "one of them")
        )
    est, dim = _estimates(estimates, labels, objects)
    m = est.sizes[dim]
    repeated = pd.Index(est[dim].to_numpy()).duplicated()
    if repeated.any():
        raise DimensionError(
            f"{_NAME}: the labels along {dim!r} repeat: "
            f"{', '.join(map(str, est[dim].to_numpy()[repeated][:5]))}"
        )
    if m < 2:
        raise DimensionError(f"{_NAME}: rank sets need at least two objects (got {m})")
    lead = [d for d in est.dims if d != dim]
    est = est.transpose(*lead, dim)
    shape = tuple(est.sizes[d] for d in lead)

    def describe(r):
        if not lead:
            return ""
        index = np.unravel_index(r, shape)
        return (
            " ("
            + ", ".join(
                f"{d}={est[d].values[i]!r}" if d in est.coords else f"{d}={i}"
                for d, i in zip(lead, index, strict=True)
            )
            + ")"
        )

    values = est.values.reshape(-1, m)
    missing = np.isnan(values)
    if missing.any():
        if nan_policy == "raise":
            bad = est[dim].values[missing.any(0)]
            shown = ", ".join(f"'{label}'" for label in bad[:5])
            raise MissingValueError(
                f"{_NAME}: the estimates of {shown} are missing (NaN) and nan_policy='raise'"
            )
    if standard_errors is not None:
        se = _aligned(standard_errors, "standard_errors", est, dim).values.reshape(-1, m)
        wrong = ~missing & ~(np.isfinite(se) & (se >= 0))
        if wrong.any():
            r, j = np.argwhere(wrong)[0]
            raise OptionError(
                f"{_NAME}: standard_errors must be finite and non-negative "
                f"where the estimate is not NaN; '{est[dim].values[j]}' has "
                f"{se[r, j]!r}{describe(r)}"
            )
        sigma = np.zeros((len(values), m, m))
        np.einsum("sjj->sj", sigma)[...] = np.where(missing, 0.0, se) ** 2
        source = "standard errors (independent estimates)"
    else:
        sigma = _covariance(covariance, est, dim).reshape(-1, m, m)
        _check_symmetric(sigma, ~missing, describe)
        source = "the covariance given"
    used = values.copy()
    if nan_policy == "propagate":
        incomplete = missing.any(-1)
        used[incomplete] = np.nan
        _kra.warn_nan(_NAME, incomplete, "some estimates are NaN (nan_policy='propagate')")
    rng, seed_attr = _b.generator(seed)
    found = _krs.normal_rank_sets(
        used,
        sigma,
        n_draws=n_resamples,
        seed=rng,
        confidence_level=confidence_level,
        higher_is_better=higher_is_better,
        marginal=rank_sets == "marginal",
        statistic=_NAME,
        describe=lambda r: describe(r).strip(" ()") or "the ranking",
    )
    rank = _kra.rank_last(used, ties=ties, higher_is_better=higher_is_better)[0]
    variance = np.einsum("sjj->sj", sigma)
    standard_error = np.where(np.isnan(used), np.nan, np.sqrt(np.maximum(variance, 0.0)))
    dims = [*lead, dim]

    def labelled(array):
        return est.copy(data=np.asarray(array).reshape(est.shape))

    data = {
        "estimate": est,
        "standard_error": labelled(standard_error),
        "rank": labelled(rank),
        "rank_low": labelled(found["low"]),
        "rank_high": labelled(found["high"]),
        "tie_group": labelled(found["tie_group"]),
    }
    attrs = {
        "statistic": "rank sets",
        "rank_sets": rank_sets,
        "rank_method": RULES[rank_sets],
        "tie_groups": TIE_GROUPS,
        "confidence_level": confidence_level,
        "n_resamples": n_resamples,
        "seed": seed_attr,
        "covariance": source,
        "ties": ties,
        "higher_is_better": higher_is_better,
        "nan_policy": nan_policy,
    }
    if top_k is not None:
        low = labelled(found["simultaneous_low"])
        data["in_top_k"] = low.notnull() & (low <= top_k)
        attrs.update(top_k=top_k, in_top_k=IN_TOP_K)
    out = xr.Dataset({name: value.variable for name, value in data.items()}, coords=est.coords)
    out = (
        out.transpose(*[d for d in estimates.dims if d in dims])
        if isinstance(estimates, xr.DataArray)
        else out
    )
    out.attrs = attrs
    return out


# --------------------------------------------------------------------------- a cube's errors

# the leaderboard's option of the same name hides the function inside it
_rank_sets = rank_sets
_BOARD = "standard_error_leaderboard"

#: What ``standard_error_leaderboard`` ranks, as its attributes record it.
CUBE_STANDARD_ERRORS = (
    "the cube's standard errors (independent estimates): a model's score on a task is "
    "the mean of its per-template scores, with standard error sqrt(sum of se^2) / T "
    "over its T templates"
)


def standard_error_leaderboard(
    cube,
    *,
    rank_sets="simultaneous",
    confidence_level=0.95,
    top_k=None,
    n_resamples=1000,
    seed=None,
    nan_policy="propagate",
):
    r"""A leaderboard per task from a cube's per-template scores and their standard errors.

    What a cube imported from results files allows (no per-sample scores,
    a ``standard_error`` beside each per-template ``score``): each model's
    score on a task is the mean over the task's templates (AvgP), with
    standard error :math:`\sqrt{\sum_t se_t^2} / T`; :func:`rank_sets`
    turns those into rank confidence sets and tie groups, every task at
    once. The result has the variables of
    :func:`~rankstats.stability.leaderboard`, so it prints and plots alike.

    Parameters
    ----------
    cube : xarray.Dataset
        A cube with ``score(model, task, template)`` and
        ``standard_error`` on the same dims, without ``sample``.
    rank_sets : {"simultaneous", "marginal"}, default "simultaneous"
        As for :func:`rank_sets`.
    confidence_level : float, default 0.95
        Of the rank sets and of the score intervals
        (score :math:`\pm z \cdot se`).
    top_k : int, optional
        Also say which models may be among the best ``top_k``.
    n_resamples : int, default 1000
        Normal draws for the critical values.
    seed : None, int or numpy.random.Generator
        Randomness of the normal draws.
    nan_policy : {"propagate", "omit", "raise"}, default "propagate"
        A model present on a task but without a score on some of its
        templates: unranked (NaN), scored over its other templates, or an
        error. A model without any score on a task is absent and drops out.

    Returns
    -------
    xarray.Dataset
        Over ``(model, task)``: ``score``, ``standard_error``,
        ``score_low``, ``score_high``, ``rank``, ``rank_low``,
        ``rank_high``, ``tie_group``, ``arena_rank`` (and ``in_top_k``),
        with the attributes of a leaderboard (``over`` is
        ``"standard errors"``, ``standard_errors`` says how they were used)
        and ``missing_standard_error``: the models left unranked because a
        template they were scored on has no standard error, as
        ``task: model, ...; ...`` ("" for none).

    Notes
    -----
    The standard errors are taken as independent across models and
    templates. Templates scored on the same items are positively
    correlated in practice, so the propagated standard error of a mean
    over several templates is then too small; and the sets say nothing of
    how the ranking would change with other templates (resample those with
    ``over="templates"``). With one template per task the score is the
    reported one and its standard error the reported one.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.stability.published import standard_error_leaderboard
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": "a", "score": s, "standard_error": 0.02}
    ...     for m, s in {"x": 0.80, "y": 0.78, "z": 0.60}.items()])
    >>> board = standard_error_leaderboard(cube, seed=0)
    >>> board[["rank", "rank_low", "rank_high", "tie_group"]].to_dataframe().droplevel("task")
           rank  rank_low  rank_high  tie_group
    model
    x       1.0       1.0        2.0        1.0
    y       2.0       1.0        2.0        1.0
    z       3.0       3.0        3.0        2.0
    """
    from scipy import stats as _stats

    from .._kernels import intervals as _ki
    from ..validation import STANDARD_ERROR, higher_is_better_of

    o.one_of("propagate", "omit", "raise")(_BOARD, "nan_policy", nan_policy)
    score = cube["score"]
    if "sample" in score.dims or STANDARD_ERROR not in cube:
        raise DimensionError(
            f"{_BOARD}: the cube must hold per-template scores (no "
            f"'sample' dimension) and a {STANDARD_ERROR!r} variable"
        )
    score = score.transpose("model", "task", "template")
    se = cube[STANDARD_ERROR].transpose(*score.dims)
    scored = score.notnull()
    exists = scored.any("model")  # a template some model was scored on
    present = scored.any("template")
    hole = (exists & ~scored & present).transpose("model", "task", "template")
    if nan_policy == "raise" and bool(hole.any()):
        model, task, template = np.argwhere(hole.values)[0]
        name = (
            repr(str(cube["template_id"].transpose("task", "template").values[task, template]))
            if "template_id" in cube.coords
            else str(int(template))
        )
        raise MissingValueError(
            f"{_BOARD}: model {str(score['model'].values[model])!r} has no score on template "
            f"{name} of task {str(score['task'].values[task])!r} and nan_policy='raise'"
        )
    n = scored.sum("template")
    estimate = score.sum("template", skipna=True).where(present) / n.where(n > 0)
    if nan_policy == "propagate":
        estimate = estimate.where(~hole.any("template"))
    unknown = (scored & se.isnull()).any("template") & estimate.notnull()
    variance = (se**2).where(scored).sum("template")
    standard_error = np.sqrt(variance) / n.where(n > 0)
    ranked = estimate.where(~unknown)
    better = higher_is_better_of(cube)
    sets = _rank_sets(
        ranked.transpose("task", "model").drop_vars(
            [c for c in ranked.coords if c not in ranked.dims]
        ),
        standard_errors=standard_error.where(ranked.notnull(), 0.0)
        .transpose("task", "model")
        .drop_vars([c for c in standard_error.coords if c not in standard_error.dims]),
        rank_sets=rank_sets,
        confidence_level=confidence_level,
        top_k=top_k,
        higher_is_better=better,
        n_resamples=n_resamples,
        seed=seed,
        nan_policy="omit",
        objects="model",
    )
    z = float(_stats.norm.ppf(0.5 + confidence_level / 2))
    shown_se = standard_error.where(ranked.notnull()).transpose("task", "model")
    low = sets["estimate"] - z * shown_se
    high = sets["estimate"] + z * shown_se
    arena = _ki.arena_ranks(low.values, high.values, higher_is_better=better)
    board = xr.Dataset(
        {
            "score": estimate.transpose("task", "model").variable,
            "standard_error": shown_se.variable,
            "score_low": low.variable,
            "score_high": high.variable,
            "rank": sets["rank"].variable,
            "rank_low": sets["rank_low"].variable,
            "rank_high": sets["rank_high"].variable,
            "tie_group": sets["tie_group"].variable,
            "arena_rank": (("task", "model"), arena),
            **({"in_top_k": sets["in_top_k"].variable} if top_k is not None else {}),
        },
        coords={"task": score["task"].values, "model": score["model"].values},
    ).transpose("model", "task")
    missing = unknown.transpose("task", "model").to_pandas()
    board.attrs = {
        "statistic": "leaderboard",
        "n_resamples": n_resamples,
        "seed": sets.attrs["seed"],
        "over": "standard errors",
        "by": "avgp",
        "ties": "average",
        "higher_is_better": int(better),
        "nan_policy": nan_policy,
        "method": "normal",
        "confidence_level": confidence_level,
        "score": "avgp",
        "rank_sets": rank_sets,
        "rank_method": RULES[rank_sets],
        "tie_groups": TIE_GROUPS,
        "arena_rank": "1 + models whose score interval lies strictly above",
        "standard_errors": CUBE_STANDARD_ERRORS,
        "missing_standard_error": "; ".join(
            f"{task}: {', '.join(map(str, row.index[row]))}"
            for task, row in missing.iterrows()
            if row.any()
        ),
        **({"top_k": top_k, "in_top_k": IN_TOP_K} if top_k is not None else {}),
    }
    return board
