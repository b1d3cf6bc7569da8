r"""Conditional inference on winners for normal estimates of known covariance.

Andrews, Kitagawa and McCloskey (2024, "Inference on winners", QJE, Section 3):
with :math:`X \sim N(\mu, \Sigma)` over the last axis and :math:`\hat\jmath` a
selected object (the largest estimate, or one of the ``top_k`` largest), write
each other estimate as :math:`X_i = Z_i + \rho_i X_{\hat\jmath}` with
:math:`\rho_i = \Sigma_{i\hat\jmath} / \Sigma_{\hat\jmath\hat\jmath}`;
:math:`Z` is independent of :math:`X_{\hat\jmath}`. Given :math:`Z`, the event
that :math:`\hat\jmath` is selected is an interval :math:`[L, U]` for
:math:`X_{\hat\jmath}`, so :math:`X_{\hat\jmath}` is conditionally
:math:`N(\mu_{\hat\jmath}, \Sigma_{\hat\jmath\hat\jmath})` truncated to
:math:`[L, U]`. The conditional quantile-unbiased estimate :math:`\hat\mu_p`
solves :math:`F_{TN}(X_{\hat\jmath}; \hat\mu_p, L, U) = 1 - p`; the
median-unbiased estimate is :math:`\hat\mu_{1/2}` and the equal-tailed
interval :math:`[\hat\mu_{\alpha/2}, \hat\mu_{1-\alpha/2}]` covers
:math:`\mu_{\hat\jmath}` with probability exactly :math:`1 - \alpha` given the
selection, hence also unconditionally.

Bounds. For the winner (``top_k=1``): :math:`L = \max_{\rho_i < 1} Z_i / (1 -
\rho_i)` and :math:`U = \min_{\rho_i > 1} Z_i / (1 - \rho_i)`; an object with
:math:`\rho_i = 1` sets no bound. For one of the best k, object i beats
:math:`\hat\jmath` exactly when :math:`X_{\hat\jmath} < Z_i / (1 - \rho_i)` (all
:math:`\rho_i < 1`), and :math:`\hat\jmath` is among the best k when fewer than
k do: :math:`L` is the k-th largest :math:`Z_i / (1 - \rho_i)`, :math:`U = \infty`.

Hybrid (AKM 2024, Section 4). As the winner's margin shrinks to 0 the
conditional interval runs off towards minus infinity; with scores on a
lattice (accuracies of n items) exact ties and one-step margins are common,
and there the conditional interval under-covers. The hybrid interval also
conditions on :math:`|X_{\hat\jmath} - \mu_{\hat\jmath}| \le c_\beta
\sigma_{\hat\jmath}`, with :math:`c_\beta` the :math:`1 - \beta` quantile of
:math:`\max_i |X_i - \mu_i| / \sigma_i`: the truncation becomes
:math:`[\max(L, \mu - c_\beta\sigma), \min(U, \mu + c_\beta\sigma)]`, its
quantiles are taken at :math:`(\alpha - \beta)/(1 - \beta)` and the
interval lies inside the projection interval :math:`X_{\hat\jmath} \pm
c_\beta\sigma_{\hat\jmath}`; it covers with probability at least
:math:`1 - \alpha`. At an exact tie (:math:`X_{\hat\jmath} = L`, where the
truncated distribution puts no mass below the observation) the projection
interval itself is returned, which contains the hybrid one.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..errors import OptionError

#: Bisection steps of the root search: the bracket shrinks by 2**-200, below any float's spacing.
STEPS = 200
#: Relative size below which 1 - rho counts as zero (the object sets no bound).
TOLERANCE = 1e-12


def _log_diff(larger, smaller):
    """log(exp(larger) - exp(smaller)) for larger >= smaller, without cancellation."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return larger + np.log1p(-np.exp(smaller - larger))


def truncated_cdf(y, mean, sd, low, high):
    """P(X <= y) for X ~ N(mean, sd^2) truncated to [low, high], stable far in the tails.

    Where the truncation interval lies above the mean the upper tails are
    used (they keep their precision there), elsewhere the lower ones.
    """
    y, a, b = ((v - mean) / sd for v in (y, low, high))
    upper = a > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.exp(
            _log_diff(special.log_ndtr(y), special.log_ndtr(a))
            - _log_diff(special.log_ndtr(b), special.log_ndtr(a))
        )
        above = -np.expm1(
            _log_diff(special.log_ndtr(-y), special.log_ndtr(-b))
            - _log_diff(special.log_ndtr(-a), special.log_ndtr(-b))
        )
    return np.clip(np.where(upper, above, below), 0.0, 1.0)


def _solve_hybrid(y, sd, low, high, target, c):
    """As :func:`_solve`, the truncation also to ``mean ± c sd``, the mean within ``y ± c sd``.

    Bisection on the window: where the root lies outside it the search ends
    at the window's edge, which is the intersection with the projection
    interval.
    """
    lo, hi = y - c * sd, y + c * sd
    for _ in range(STEPS):
        middle = 0.5 * (lo + hi)
        if np.all((middle == lo) | (middle == hi)):
            break
        cdf = truncated_cdf(
            y, middle, sd, np.maximum(low, middle - c * sd), np.minimum(high, middle + c * sd)
        )
        high_side = cdf > target
        lo = np.where(high_side, middle, lo)
        hi = np.where(high_side, hi, middle)
    return 0.5 * (lo + hi)


#: Normal draws for the projection's critical value under a correlated covariance.
PROJECTION_DRAWS = 20_000
#: Draws per block (bounds the memory: block x objects floats).
PROJECTION_BLOCK = 1_000


def projection_critical(covariance, beta, seed=0):
    r"""The :math:`1 - \beta` quantile of :math:`\max_i |X_i - \mu_i| / \sigma_i` per leading index.

    Exact (Šidák) for a diagonal covariance; otherwise from
    :data:`PROJECTION_DRAWS` normal draws with a fixed ``seed``, so that the
    same input gives the same interval.
    """
    covariance = np.asarray(covariance, dtype=float)
    m = covariance.shape[-1]
    off = covariance - np.eye(m) * np.diagonal(covariance, axis1=-2, axis2=-1)[..., None, :]
    exact = special.ndtri(1.0 - (1.0 - (1.0 - beta) ** (1.0 / m)) / 2.0)
    if not np.any(off):
        return np.full(covariance.shape[:-2], exact)
    sd = np.sqrt(np.diagonal(covariance, axis1=-2, axis2=-1))
    safe = np.where(sd > 0, sd, 1.0)
    correlation = covariance / safe[..., :, None] / safe[..., None, :]
    values, vectors = np.linalg.eigh(correlation)
    # the symmetric square root: unique, so a task's draws do not depend on the batch
    factor = (vectors * np.sqrt(np.clip(values, 0.0, None))[..., None, :]) @ np.swapaxes(
        vectors, -1, -2
    )
    rng = np.random.default_rng(seed)
    maxima = []
    for start in range(0, PROJECTION_DRAWS, PROJECTION_BLOCK):
        size = min(PROJECTION_BLOCK, PROJECTION_DRAWS - start)
        draws = factor @ rng.standard_normal((m, size))
        maxima.append(np.abs(np.where(sd[..., None] > 0, draws, 0.0)).max(-2))
    return np.quantile(np.concatenate(maxima, -1), 1.0 - beta, axis=-1)


def _solve(y, sd, low, high, target):
    """The mean at which the truncated CDF at ``y`` is ``target`` (it falls as the mean rises)."""
    step = 10.0 * sd
    lo, hi = y - step, y + step
    for _ in range(64):  # widen the bracket where the root lies outside it
        need_lo = truncated_cdf(y, lo, sd, low, high) < target
        need_hi = truncated_cdf(y, hi, sd, low, high) > target
        if not (need_lo.any() or need_hi.any()):
            break
        lo = np.where(need_lo, lo - step, lo)
        hi = np.where(need_hi, hi + step, hi)
        step = step * 2.0
    for _ in range(STEPS):
        middle = 0.5 * (lo + hi)
        if np.all((middle == lo) | (middle == hi)):
            break
        high_side = truncated_cdf(y, middle, sd, low, high) > target
        lo = np.where(high_side, middle, lo)
        hi = np.where(high_side, hi, middle)
    return 0.5 * (lo + hi)


def truncation_bounds(estimates, covariance, selected, top_k):
    """The interval ``(low, high)`` of each selected object's estimate given the others' Z.

    ``estimates`` is ``(..., M)``, ``covariance`` ``(..., M, M)``,
    ``selected`` ``(..., k)`` indices; returns two ``(..., k)`` arrays.
    """
    # covariance of every object with each selected one: (..., k, M)
    cross = np.take_along_axis(covariance, selected[..., None], -2)
    return bounds_of_rows(estimates, cross, selected, top_k)


def bounds_of_rows(estimates, cross, selected, top_k):
    """:func:`truncation_bounds` from the selected objects' rows of the covariance alone.

    ``cross`` is ``(..., k, M)``: the covariance of every object with each
    selected one (all the bounds need, so no ``M x M`` matrix is formed).
    """
    variance = np.take_along_axis(cross, selected[..., None], -1)[..., 0]
    own = np.take_along_axis(estimates, selected, -1)
    rho = cross / variance[..., None]
    z = estimates[..., None, :] - rho * own[..., None]
    gap = 1.0 - rho
    others = np.ones(rho.shape, dtype=bool)
    np.put_along_axis(others, selected[..., None], False, -1)
    flat = np.abs(gap) <= TOLERANCE
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = z / np.where(flat, 1.0, gap)
    if top_k == 1:
        low = np.where(others & ~flat & (gap > 0), bound, -np.inf).max(-1)
        high = np.where(others & ~flat & (gap < 0), bound, np.inf).min(-1)
        return low, high
    if np.any(others & (gap <= TOLERANCE)):
        raise OptionError(
            "winner_interval: top_k > 1 needs every estimate to vary more than its "
            "covariance with a selected one (Sigma_jj > Sigma_ij); one does not"
        )
    ordered = np.sort(np.where(others, bound, -np.inf), axis=-1)
    return ordered[..., -top_k], np.full(ordered.shape[:-1], np.inf)


def winner_intervals(estimates, covariance, *, confidence_level=0.95, top_k=1, hybrid=None):
    r"""Conditional (median-unbiased) estimates and intervals of the best ``top_k`` objects.

    Parameters
    ----------
    estimates : ndarray, shape (..., M)
        Finite estimates; larger is better.
    covariance : ndarray, shape (..., M, M)
        Their covariance, symmetric with a positive diagonal.
    confidence_level : float
        Level of each interval.
    top_k : int
        How many of the best are selected (1: the winner).
    hybrid : float, optional
        :math:`\beta` of the hybrid interval (AKM recommend
        :math:`\alpha / 10`); None for the conditional interval.

    Returns
    -------
    dict of ndarray
        ``selected`` (indices, ``(..., top_k)``, best first), ``estimate``,
        ``adjusted`` (median-unbiased), ``low``, ``high``, ``naive_low``,
        ``naive_high`` (estimate ± z sd), ``truncation_low``,
        ``truncation_high``, all ``(..., top_k)``.
    """
    estimates = np.asarray(estimates, dtype=float)
    covariance = np.asarray(covariance, dtype=float)
    # stable: among exactly tied estimates the first object is selected
    selected = np.argsort(-estimates, axis=-1, kind="stable")[..., :top_k]
    sd = np.sqrt(np.take_along_axis(np.diagonal(covariance, axis1=-2, axis2=-1), selected, -1))
    bounds = truncation_bounds(estimates, covariance, selected, top_k)
    critical = None if hybrid is None else projection_critical(covariance, hybrid)
    return _adjusted(estimates, selected, sd, bounds, confidence_level, hybrid, critical)


def leader_intervals_of_draws(estimates, draws, *, confidence_level=0.95, hybrid=None):
    r""":func:`winner_intervals` of the leader, its covariance read from resampled draws.

    Parameters
    ----------
    estimates : ndarray, shape (..., M)
        The estimates; ``-inf`` for an object out of the selection.
    draws : ndarray, shape (..., M, R)
        Their bootstrap replicates (0 for an object out of the selection).
    confidence_level, hybrid
        As :func:`winner_intervals` (``top_k`` is 1).

    Notes
    -----
    Only the leader's row of the covariance is formed (``O(M R)`` per
    leading index, no ``M x M`` matrix), and the hybrid's projection
    critical value is the :math:`1 - \beta` quantile over the replicates of
    :math:`\max_i |X^*_i - \bar X^*_i| / \hat\sigma_i`: the bootstrap
    max-t of the rank sets.
    """
    estimates = np.asarray(estimates, dtype=float)
    deviation = draws - draws.mean(-1, keepdims=True)
    n = max(draws.shape[-1] - 1, 1)
    selected = np.argmax(estimates, axis=-1)[..., None]
    leader = np.take_along_axis(deviation, selected[..., None], -2)  # (..., 1, R)
    cross = np.einsum("...kr,...mr->...km", leader, deviation) / n
    sd_all = np.sqrt(np.einsum("...mr,...mr->...m", deviation, deviation) / n)
    sd = np.take_along_axis(sd_all, selected, -1)
    bounds = bounds_of_rows(estimates, cross, selected, 1)
    critical = None
    if hybrid is not None:
        scaled = np.abs(deviation) / np.where(sd_all > 0, sd_all, np.inf)[..., None]
        critical = np.quantile(scaled.max(-2), 1.0 - hybrid, axis=-1)
    return _adjusted(estimates, selected, sd, bounds, confidence_level, hybrid, critical)


def _adjusted(estimates, selected, sd, bounds, confidence_level, hybrid, critical):
    """The solved estimate and interval of each selected object, and the naive ones."""
    own = np.take_along_axis(estimates, selected, -1)
    low_bound, high_bound = bounds
    alpha = 1.0 - confidence_level
    # the three quantiles (lower end, median, upper end) solved at once
    shape = (*own.shape, 3)
    given = [np.broadcast_to(v[..., None], shape) for v in (own, sd, low_bound, high_bound)]
    if hybrid is None:
        targets = np.array([1.0 - alpha / 2, 0.5, alpha / 2])
        solved = _solve(*given, np.broadcast_to(targets, shape))
    else:
        level = (alpha - hybrid) / (1.0 - hybrid)
        targets = np.array([1.0 - level / 2, 0.5, level / 2])
        c = np.asarray(critical)[..., None, None]
        solved = _solve_hybrid(*given, np.broadcast_to(targets, shape), np.broadcast_to(c, shape))
        # an exact tie: no mass below the observation; the projection interval holds
        tied = (own - low_bound <= TOLERANCE * np.maximum(np.abs(own), sd))[..., None]
        projection = own[..., None] + np.array([-1.0, 0.0, 1.0]) * c * sd[..., None]
        solved = np.where(tied, projection, solved)
    z = special.ndtri(1.0 - alpha / 2)
    return {
        "selected": selected,
        "estimate": own,
        "adjusted": solved[..., 1],
        "low": solved[..., 0],
        "high": solved[..., 2],
        "naive_low": own - z * sd,
        "naive_high": own + z * sd,
        "truncation_low": low_bound,
        "truncation_high": high_bound,
    }
