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
    variance = np.take_along_axis(np.diagonal(covariance, axis1=-2, axis2=-1), selected, -1)
    own = np.take_along_axis(estimates, selected, -1)
    # covariance of every object with each selected one: (..., k, M)
    cross = np.take_along_axis(covariance, selected[..., None], -2)
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


def winner_intervals(estimates, covariance, *, confidence_level=0.95, top_k=1):
    """Conditional (median-unbiased) estimates and intervals of the best ``top_k`` objects.

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
    own = np.take_along_axis(estimates, selected, -1)
    sd = np.sqrt(np.take_along_axis(np.diagonal(covariance, axis1=-2, axis2=-1), selected, -1))
    low_bound, high_bound = truncation_bounds(estimates, covariance, selected, top_k)
    alpha = 1.0 - confidence_level
    targets = np.array([1.0 - alpha / 2, 0.5, alpha / 2])
    shape = (*own.shape, 3)
    solved = _solve(
        np.broadcast_to(own[..., None], shape),
        np.broadcast_to(sd[..., None], shape),
        np.broadcast_to(low_bound[..., None], shape),
        np.broadcast_to(high_bound[..., None], shape),
        np.broadcast_to(targets, shape),
    )
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
