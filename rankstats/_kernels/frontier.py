r"""The cost-accuracy frontier: its point estimate, and the models no test can exclude from it.

Two kernels over the last axis (models), NumPy only:

* :func:`pareto_front`: the models that no model at most as costly beats on
  accuracy, by one sort by cost and a running maximum (:math:`O(M \log M)`);
* :func:`frontier_set`: the models that cannot be excluded from the frontier
  at a stated level, by a stepwise max-t test over models whose null
  distribution comes from centred replicates (bootstrap or normal draws).

Accuracy is oriented so that larger is better (the caller flips the sign of
an error rate); costs are known numbers.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError

#: Bytes of working memory for the (M, M, replicates) block of scaled differences.
BUDGET = 64 * 2**20
#: Relative size below which a standard error of a difference counts as zero.
TOLERANCE = 1e-10


def pareto_front(accuracy, cost):
    r"""Which models lie on the cost-accuracy frontier of the point estimates.

    Parameters
    ----------
    accuracy : (..., M) larger is better; NaN marks an absent model.
    cost : (..., M) or (M,) non-negative costs; NaN marks an absent model.

    Returns
    -------
    (..., M) bool: True for a model that no present model at most as costly
    (:math:`c_k \le c_j`) beats on accuracy (:math:`a_k > a_j`); False for
    an absent one. Equal costs and equal accuracies dominate nobody.

    Notes
    -----
    Sorted by cost, then accuracy from the highest, the running maximum of
    the accuracy at model j's position is the best accuracy among the models
    at most as costly as j that come before it, and j itself; the models of
    j's cost that come after j are no more accurate. So j is on the front
    exactly when that running maximum equals its own accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> pareto_front(np.array([0.6, 0.5, 0.8, 0.7]), np.array([1.0, 2.0, 3.0, 3.0]))
    array([ True, False,  True, False])
    """
    accuracy = np.asarray(accuracy, dtype=float)
    cost = np.broadcast_to(np.asarray(cost, dtype=float), accuracy.shape)
    present = ~(np.isnan(accuracy) | np.isnan(cost))
    key_cost = np.where(present, cost, np.inf)
    key_accuracy = np.where(present, accuracy, -np.inf)
    order = np.lexsort((-key_accuracy, key_cost), axis=-1)
    ranked = np.take_along_axis(key_accuracy, order, axis=-1)
    best = np.maximum.accumulate(ranked, axis=-1)
    front = np.empty(accuracy.shape, dtype=bool)
    np.put_along_axis(front, order, ranked >= best, axis=-1)
    return front & present


def _oriented(estimate, deviation, covariance, present):
    """``t[k, j] = (x_k - x_j) / se_kj`` and ``se`` (``inf`` where a difference is exact).

    A difference of zero standard error is settled exactly: ``t`` is ``+inf``
    when k is larger, ``-inf`` when smaller, 0 when equal.
    """
    if covariance is None:
        spread = np.nan_to_num(deviation - deviation.mean(-1, keepdims=True))
        gram = spread @ spread.T / max(deviation.shape[-1] - 1, 1)
    else:
        gram = np.nan_to_num(np.asarray(covariance, dtype=float))
    variance = np.diag(gram)
    se = np.sqrt(np.clip(variance[:, None] + variance[None, :] - 2 * gram, 0.0, None))
    scale = np.nanmax(np.abs(np.where(present, estimate, np.nan)), initial=0.0) or 1.0
    degenerate = se <= TOLERANCE * scale
    difference = estimate[:, None] - estimate[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(degenerate, np.sign(difference) * np.inf, difference / se)
    return np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf), np.where(
        degenerate, np.inf, se
    )


def _pairs(estimate, deviation, cost, covariance=None, cost_deviation=None):
    """Who may exclude whom, the t statistics and the standard errors of the differences.

    Known costs: ``allowed[k, j]`` when k is present, at most as costly as j,
    and not j; ``t[k, j]`` the accuracy's t. Costs with replicates: every
    ordered pair of present models whose cost difference is not known to
    favour j, and ``t[k, j]`` the smaller of the accuracy's t and the cost's
    (:math:`(c_j - c_k) / se^c_{kj}`): k must be shown both more accurate and
    no costlier. Returns ``allowed``, ``t`` (``-inf`` where not allowed), and
    the standard errors of the accuracy and cost differences (None for
    known costs).
    """
    m = estimate.shape[-1]
    present = ~(np.isnan(estimate) | np.isnan(cost))
    pairs = ~np.eye(m, dtype=bool) & present[:, None] & present[None, :]
    t, se = _oriented(estimate, deviation, covariance, present)
    cheaper = cost[:, None] <= cost[None, :]
    if cost_deviation is None:
        allowed = pairs & cheaper
        return allowed, np.where(allowed, t, -np.inf), se, None
    t_cost, se_cost = _oriented(-cost, -np.asarray(cost_deviation, dtype=float), None, present)
    known = np.isinf(se_cost)  # the cost difference does not vary: it is known
    allowed = pairs & (cheaper | ~known)
    t = np.minimum(t, np.where(known, np.inf, t_cost))
    return allowed, np.where(allowed, t, -np.inf), se, se_cost


def _null_maxima(deviation, allowed, se, budget, cost_deviation=None, se_cost=None):
    r"""``(M, B)``: per model j and replicate b, :math:`\max_k (D_k^b - D_j^b) / se_{kj}`.

    Over the k allowed to exclude j; ``-inf`` where none is. With cost
    replicates, each pair's value is the larger of the accuracy's and the
    cost's :math:`(D^c_j - D^c_k) / se^c_{kj}` (where the cost difference
    varies): under the hypothesis that j is on the frontier, one of the two
    holds for every k. Blocks of replicates keep the ``(M, M, block)``
    arrays within ``budget`` bytes.
    """
    m, n = deviation.shape
    parts = [(np.nan_to_num(deviation), np.where(allowed, 1.0 / se, 0.0), allowed)]
    if cost_deviation is not None:
        varies = allowed & np.isfinite(se_cost)
        parts.append(
            (-np.nan_to_num(np.asarray(cost_deviation, dtype=float)), 1.0 / se_cost, varies)
        )
    out = np.empty((m, n))
    block = max(1, budget // max(1, 16 * m * m))
    for start in range(0, n, block):  # blocks of replicates, for memory
        best = np.full((m, m, min(block, n - start)), -np.inf)
        for values, inverse, use in parts:  # accuracy, then cost
            part = values[:, start : start + block]
            scaled = (part[:, None, :] - part[None, :, :]) * inverse[:, :, None]
            np.maximum(best, np.where(use[:, :, None], scaled, -np.inf), out=best)
        out[:, start : start + block] = best.max(0)
    return out


def frontier_set(
    estimate,
    deviation,
    cost,
    *,
    covariance=None,
    cost_deviation=None,
    confidence_level=0.95,
    budget=BUDGET,
):
    r"""The models that cannot be excluded from the cost-accuracy frontier.

    Parameters
    ----------
    estimate : (M,) accuracies, larger is better; NaN marks an absent model.
    deviation : (M, B) centred replicates of the accuracies: bootstrap
        replicates minus the estimates (paired: replicate b of every model
        from the same draw), or draws of :math:`N(0, \Sigma)`.
    cost : (M,) known costs; NaN marks an absent model.
    covariance : (M, M), optional: the accuracies' known covariance, from
        which the standard errors of the differences are taken (as the
        rank sets of published estimates do); default: the covariance of
        the replicates.
    cost_deviation : (M, B), optional: centred replicates of the costs from
        the same draws, when the costs are estimated too (a mean cost per
        evaluation over resampled items); default: the costs are known.
    confidence_level : probability with which the set holds every model of
        the true frontier.
    budget : bytes of working memory for one block of replicates.

    Returns
    -------
    dict
        ``frontier_set`` (M,) bool; ``excluded_by`` (M,) int, the index of
        the model that excludes each excluded one (the largest t), -1 for
        the others; ``statistic`` (M,), :math:`\max_k t_{kj}` over the models
        k at most as costly as j (NaN where there is none);
        ``critical_value``, the last step's c.

    Notes
    -----
    Model j is on the true frontier when no model k with :math:`c_k \le c_j`
    has :math:`a_k > a_j`; that is the hypothesis :math:`H_j` tested, with
    the statistic :math:`T_j = \max_{k: c_k \le c_j} t_{kj}`,
    :math:`t_{kj} = (\hat a_k - \hat a_j) / \hat\sigma_{kj}`. The critical
    value c is the ``confidence_level`` quantile over the replicates of
    :math:`\max_{j \in P} \max_{k: c_k \le c_j} (D^b_k - D^b_j) / \hat\sigma_{kj}`
    over the models P still in play; stepwise (Romano & Wolf 2005), the
    models excluded leave P and c is recomputed until no model is newly
    excluded. Every true-frontier model is excluded only if a true
    :math:`H_j` is rejected, which happens with probability at most
    1 - ``confidence_level`` (asymptotically).

    With ``cost_deviation`` (costs estimated), k excludes j when it is shown
    both more accurate and no costlier: :math:`t_{kj}` is the smaller of the
    accuracy's t and the cost's, an intersection-union test, and the null
    maximum takes the larger of the two centred values per pair (one of the
    two nulls holds for every pair into a frontier model), over every pair
    whose cost difference varies or is known to favour k.
    """
    if not 0.0 < confidence_level < 1.0:
        raise OptionError(
            f"frontier: confidence_level={confidence_level!r} is not allowed; "
            "it must lie strictly between 0 and 1"
        )
    estimate = np.asarray(estimate, dtype=float)
    deviation = np.asarray(deviation, dtype=float)
    cost = np.asarray(cost, dtype=float)
    allowed, t, se, se_cost = _pairs(estimate, deviation, cost, covariance, cost_deviation)
    statistic = t.max(0)
    null = _null_maxima(deviation, allowed, se, budget, cost_deviation, se_cost)
    tested = allowed.any(0)
    excluded = np.zeros(len(estimate), dtype=bool)
    critical = np.inf
    while True:  # stepwise: the models excluded leave the family, c is recomputed
        in_play = tested & ~excluded
        if not in_play.any():
            break
        maxima = np.where(in_play[:, None], null, -np.inf).max(0)
        critical = float(np.quantile(maxima, confidence_level, method="higher"))
        now = in_play & (statistic > critical)
        if not now.any():
            break
        excluded |= now
    present = ~(np.isnan(estimate) | np.isnan(cost))
    by = np.where(excluded, np.argmax(t, axis=0), -1)
    return {
        "frontier_set": present & ~excluded,
        "excluded_by": by,
        "statistic": np.where(present & tested, statistic, np.nan),
        "critical_value": critical,
    }
