r"""Bootstrap confidence intervals, rank tie groups and win probabilities over the last axes.

Replicates lie along the last axis. Intervals follow :func:`scipy.stats.bootstrap`:
the percentile interval takes the :math:`\alpha/2` and :math:`1 - \alpha/2`
quantiles of the replicates (Hyndman and Fan's type 7, linear interpolation);
BCa moves those levels by the bias correction :math:`z_0` and the
acceleration :math:`a` (Efron and Tibshirani 1993, eq. 14.10):

.. math:: \alpha_{1,2} = \Phi\left(z_0 + \frac{z_0 + z_{\alpha/2,\,1-\alpha/2}}
          {1 - a (z_0 + z_{\alpha/2,\,1-\alpha/2})}\right),
          \qquad z_0 = \Phi^{-1}\left(\frac{\#\{\theta^* < \hat\theta\}
          + \#\{\theta^* \le \hat\theta\}}{2B}\right).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..errors import DimensionError, OptionError
from .ranking import check_choice, warn_nan
from .resample import tie_rounded

METHODS = ("percentile", "bca")
INTERPOLATIONS = ("linear", "outward")
#: Bytes of comparison arrays per chunk of slices in :func:`win_probabilities`.
BUDGET = 64 * 2**20


def _quantile(ordered, q, interpolation: str, side: str, n=None):
    """Quantiles at levels ``q`` (shaped like the leading axes) of rows sorted along the last axis.

    ``linear`` is scipy's and NumPy's default (type 7); ``outward`` takes the
    order statistic below the type-7 position for a lower bound and above it
    for an upper bound, so the bound is a value the replicates take. ``n``
    (shaped like the leading axes) counts the values of each row that take
    part, its first ones (NaN sorts last); default: all of them.
    """
    if n is None:
        n = ordered.shape[-1]
    n = np.maximum(n, 1)  # a row with no value is NaN anyway (its caller masks it)
    q = np.broadcast_to(np.asarray(q, dtype=float), ordered.shape[:-1])
    bad = np.isnan(q)
    q = np.where(bad, 0.5, q)
    if interpolation == "linear":
        position = q * n + (1.0 - q)  # 1-based, as scipy.stats.quantile computes it
        upper = np.floor(position)
        g = position % 1.0
        lower = np.clip(upper - 1, 0, n - 1).astype(np.intp)
        upper = np.clip(upper, 0, n - 1).astype(np.intp)
        g = np.where(upper - 1 < 0, 0.0, g)
        below = np.take_along_axis(ordered, lower[..., None], -1)[..., 0].astype(float)
        above = np.take_along_axis(ordered, upper[..., None], -1)[..., 0].astype(float)
        value = (1.0 - g) * below + g * above
    else:
        position = q * (n - 1)
        index = np.floor(position) if side == "low" else np.ceil(position)
        index = np.clip(index, 0, n - 1).astype(np.intp)
        value = np.take_along_axis(ordered, index[..., None], -1)[..., 0].astype(float)
    return np.where(bad, np.nan, value)


def confidence_interval(
    replicates,
    estimate,
    acceleration=None,
    *,
    confidence_level=0.95,
    method="percentile",
    interpolation="linear",
    statistic="bootstrap interval",
    budget=BUDGET,
    omit=False,
):
    """Percentile or BCa interval of ``estimate`` from its replicates (last axis).

    Returns a dict of arrays over the leading axes: ``low``, ``high``,
    ``bias_correction`` (:math:`z_0`, NaN for the percentile method),
    ``acceleration`` (as given; NaN for the percentile method) and
    ``standard_error`` (the replicates' standard deviation, ``ddof=1``).

    The estimate is compared with the replicates in the replicates' dtype,
    so that a replicate equal to the estimate counts as equal. A slice with
    any NaN replicate gives a NaN interval (with a warning unless the
    estimate is NaN too: structure, not news); with ``omit``, the NaN
    replicates of a slice are left out instead (the interval is that of its
    defined ones, NaN with a warning when fewer than two are defined). BCa
    gives NaN, with a warning,
    where every replicate lies strictly on one side of the estimate. Blocks
    of about ``budget`` bytes of replicates are sorted at a time.
    """
    check_choice("method", method, METHODS)
    check_choice("interpolation", interpolation, INTERPOLATIONS)
    if not 0 < confidence_level < 1:
        raise OptionError(
            f"{statistic}: confidence_level={confidence_level!r} is not allowed; "
            "confidence_level must be a number strictly between 0 and 1"
        )
    replicates = np.asarray(replicates)
    if replicates.dtype.kind != "f":
        replicates = replicates.astype(float)
    n = replicates.shape[-1]
    if n < 2:
        raise DimensionError(f"{statistic}: at least two replicates are needed, got {n}")
    flat = replicates.reshape(-1, n) if replicates.flags.c_contiguous else None
    lead = replicates.shape[:-1]
    estimate = np.broadcast_to(np.asarray(estimate, dtype=float), lead)
    a = np.broadcast_to(
        np.asarray(0.0 if acceleration is None else acceleration, dtype=float), lead
    )
    out = {
        key: np.empty(lead)
        for key in ("low", "high", "bias_correction", "acceleration", "standard_error")
    }
    flags = {
        key: np.zeros(lead, dtype=bool) for key in ("one_sided", "incomplete", "no_acceleration")
    }
    if replicates.ndim == 1:
        blocks = [()]
    elif flat is not None:  # contiguous: blocks of rows of the flattened leading axes
        rows = max(1, budget // max(1, n * replicates.itemsize))
        blocks = [
            np.unravel_index(np.arange(i, min(i + rows, flat.shape[0])), lead)
            for i in range(0, flat.shape[0], rows)
        ]
    else:  # a strided view: blocks along the first axis
        per = int(np.prod(replicates.shape[1:-1], dtype=np.int64)) * n * replicates.itemsize
        step = max(1, budget // max(1, per))
        blocks = [slice(i, i + step) for i in range(0, replicates.shape[0], step)]
    for index in blocks:  # blocks of slices, for memory
        found = _interval_block(
            replicates[index],
            estimate[index],
            a[index],
            confidence_level,
            method,
            interpolation,
            omit,
        )
        for key, value in found.items():
            (out if key in out else flags)[key][index] = value
    known = ~np.isnan(estimate)
    warn_nan(
        statistic,
        flags["one_sided"],
        "BCa is undefined: every replicate lies on one side of the estimate",
        among=known,
    )
    warn_nan(
        statistic,
        flags["incomplete"],
        "fewer than two replicates are defined" if omit else "some replicates are undefined (NaN)",
        among=known,
    )
    warn_nan(
        statistic,
        flags["no_acceleration"],
        "the BCa acceleration is undefined (a leave-one-out value is NaN)",
        among=known,
    )
    return out


def _interval_block(replicates, estimate, a, confidence_level, method, interpolation, omit=False):
    """:func:`confidence_interval` of one block of slices."""
    alpha = (1.0 - confidence_level) / 2.0
    ordered = np.sort(replicates, axis=-1)  # NaN last
    if omit:  # each slice's defined replicates, which sort first
        n = np.count_nonzero(~np.isnan(ordered), axis=-1)
        incomplete = n < 2
    else:
        n = replicates.shape[-1]
        incomplete = np.isnan(ordered[..., -1])
    nan = np.full(estimate.shape, np.nan)
    z0 = nan
    one_sided = no_acceleration = np.zeros(estimate.shape, dtype=bool)
    if method == "percentile":
        q_low, q_high, a = alpha, 1.0 - alpha, nan
    else:
        theta = estimate.astype(replicates.dtype)[..., None]
        below = (ordered < theta).sum(-1) + (ordered <= theta).sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            z0 = special.ndtri(below / (2.0 * n))
            z = special.ndtri(alpha)
            q_low = special.ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
            q_high = special.ndtr(z0 + (z0 - z) / (1.0 - a * (z0 - z)))
        one_sided = ~incomplete & ~np.isnan(estimate) & ~np.isfinite(z0)
        no_acceleration = ~incomplete & ~np.isnan(estimate) & np.isnan(a) & ~one_sided
        q_low = np.where(one_sided, np.nan, q_low)
        q_high = np.where(one_sided, np.nan, q_high)
    low = _quantile(ordered, q_low, interpolation, "low", n)
    high = _quantile(ordered, q_high, interpolation, "high", n)
    undefined = incomplete | np.isnan(estimate)
    flagged = incomplete & ~np.isnan(estimate) & ~np.isnan(ordered[..., 0])
    if omit:  # a left-out replicate weighs nothing in the standard error
        left_out = np.isnan(ordered)
        ordered = np.where(left_out, 0.0, ordered).astype(ordered.dtype)
        flagged = incomplete & ~np.isnan(estimate)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = ordered.sum(-1, dtype=float) / n if omit else ordered.mean(-1, dtype=float)
        deviation = ordered - mean[..., None].astype(ordered.dtype)
        if omit:
            deviation[left_out] = 0.0
        spread = np.sqrt(np.einsum("...i,...i->...", deviation, deviation, dtype=float) / (n - 1))
    return {
        "low": np.where(undefined, np.nan, low),
        "high": np.where(undefined, np.nan, high),
        "bias_correction": np.where(undefined, np.nan, z0),
        "acceleration": np.where(undefined, np.nan, a),
        "standard_error": np.where(undefined, np.nan, spread),
        "one_sided": one_sided,
        "no_acceleration": no_acceleration,
        "incomplete": flagged,
    }


def win_probabilities(replicates, *, higher_is_better=True, budget=BUDGET):
    """How often each object beats, ties and loses to each other one across replicates.

    ``replicates`` is ``(..., objects, B)``. Returns ``(..., objects, objects)``
    arrays ``win`` (the share of replicates in which row i is strictly better
    than column j), ``tie`` and ``n_replicates`` (the replicates in which
    both are defined); NaN where an object is never defined. Scores tie as
    the models' ranks do (:func:`~rankstats._kernels.resample.tie_rounded`).
    """
    replicates = tie_rounded(replicates, -2)  # equal as rationals, equal here
    *lead, m, b = replicates.shape
    flat = replicates.reshape(-1, m, b)
    win = np.empty((len(flat), m, m))
    tie = np.empty((len(flat), m, m))
    count = np.empty((len(flat), m, m))
    step = max(1, budget // max(1, 3 * m * m * b))
    compare = np.greater if higher_is_better else np.less
    for start in range(0, len(flat), step):  # chunks of slices, for memory
        block = flat[start : start + step]
        a, c = block[:, :, None, :], block[:, None, :, :]
        defined = ~np.isnan(a) & ~np.isnan(c)
        n = defined.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            win[start : start + step] = compare(a, c).sum(-1) / n
            tie[start : start + step] = (a == c).sum(-1) / n
        count[start : start + step] = n
    undefined = count == 0
    shape = (*lead, m, m)
    return {
        "win": np.where(undefined, np.nan, win).reshape(shape),
        "tie": np.where(undefined, np.nan, tie).reshape(shape),
        "n_replicates": count.reshape(shape),
    }


def tie_groups(rank, low, high):
    """Tie groups of a leaderboard from rank intervals: ``(..., objects)`` group numbers.

    Each object's interval ``[low, high]`` is first widened to contain its
    point-estimate ``rank``. Two objects are linked when their intervals
    overlap (sharing an end counts); groups are the connected components,
    numbered 1, 2, ... from the best. In point-estimate order a new group
    starts at position k exactly when every interval before k ends before
    every interval from k on begins, so the groups are contiguous. NaN for
    objects without a rank.
    """
    rank, low, high = (np.asarray(v, dtype=float) for v in (rank, low, high))
    missing = np.isnan(rank) | np.isnan(low) | np.isnan(high)
    low = np.where(missing, np.inf, np.fmin(low, rank))
    high = np.where(missing, -np.inf, np.fmax(high, rank))
    order = np.argsort(np.where(missing, np.inf, rank), axis=-1, kind="stable")
    low_sorted = np.take_along_axis(low, order, -1)
    high_sorted = np.take_along_axis(high, order, -1)
    reach = np.maximum.accumulate(high_sorted, axis=-1)
    floor = np.flip(np.minimum.accumulate(np.flip(low_sorted, -1), axis=-1), -1)
    starts = reach[..., :-1] < floor[..., 1:]
    group_sorted = 1.0 + np.concatenate(
        [np.zeros((*starts.shape[:-1], 1)), np.cumsum(starts, axis=-1)], axis=-1
    )
    groups = np.empty_like(group_sorted)
    np.put_along_axis(groups, order, group_sorted, axis=-1)
    return np.where(missing, np.nan, groups)


def arena_ranks(low, high, *, higher_is_better=True):
    """Chatbot-Arena ranks from score intervals: 1 + the objects surely better.

    Object j is surely better than i when j's lower bound is strictly above
    i's upper bound (strictly below, when lower is better). NaN where i has
    no interval; objects without an interval count for no one.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if higher_is_better:
        better = low[..., None, :] > high[..., :, None]  # [i, j]: j surely better than i
    else:
        better = high[..., None, :] < low[..., :, None]
    ranks = 1.0 + better.sum(-1)
    return np.where(np.isnan(low) | np.isnan(high), np.nan, ranks)
