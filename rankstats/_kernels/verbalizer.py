"""Kernels of the verbalizer analyses: the exact binomial test and the shape of a scaling curve.

Both work on whole arrays at once: the binomial test on any broadcastable
``(k, n, p)``, the curve classifier along the last axis (models of one family
ordered by size, NaN-padded at the end).
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError
from .concordance import _scipy_stats

ALTERNATIVES = ("two-sided", "greater", "less")
SHAPES = (
    "flat",
    "scaling",
    "inverse scaling",
    "U-shaped",
    "inverted U-shaped",
    "non-monotonic",
    "single model",
)
# scipy.stats.binomtest's relative tolerance for "as likely as the observed count"
_RERR = 1 + 1e-7


def _first_true(predicate, lo, hi):
    """Smallest integer x in [lo, hi] with ``predicate(x)``, ``hi + 1`` if none.

    ``predicate`` must be monotone (False then True) on the range; a
    bisection on whole arrays, ceil(log2(range)) + 1 steps in all.
    """
    lo = np.asarray(lo, dtype=float).copy()
    hi_end = np.asarray(hi, dtype=float)
    hi = hi_end + 1
    width = float(np.max(hi - lo, initial=0.0))
    for _ in range(int(np.ceil(np.log2(width + 1))) + 1):
        active = lo < hi
        mid = np.floor((lo + hi) / 2)
        hit = predicate(np.where(active, np.minimum(mid, hi_end), lo)) & active
        hi = np.where(hit, mid, hi)
        lo = np.where(active & ~hit, mid + 1, lo)
    return lo


def binomial_test(k, n, p, alternative: str = "two-sided") -> np.ndarray:
    """Exact binomial test of k successes in n trials against success probability p.

    The two-sided p-value sums the probabilities of every count no more
    likely than ``k`` (with scipy's relative tolerance 1e-7), as
    :func:`scipy.stats.binomtest` does; the other side of the mode is found
    by bisection on whole arrays. NaN where ``n`` is 0 or missing.
    """
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative={alternative!r} is not one of {ALTERNATIVES}")
    binom = _scipy_stats().binom
    k, n, p = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, p)))
    usable = np.isfinite(k) & np.isfinite(n) & np.isfinite(p) & (n > 0)
    k, n, p = (np.where(usable, v, fill) for v, fill in ((k, 0.0), (n, 1.0), (p, 0.5)))
    if alternative == "greater":
        pvalue = binom.sf(k - 1, n, p)
    elif alternative == "less":
        pvalue = binom.cdf(k, n, p)
    else:
        bound = binom.pmf(k, n, p) * _RERR
        mean = n * p
        # below the mode: add the upper tail from the first count as unlikely as k
        upper = _first_true(lambda y: binom.pmf(y, n, p) <= bound, np.ceil(mean), n)
        low_side = binom.cdf(k, n, p) + binom.sf(upper - 1, n, p)
        # above the mode: add the lower tail up to the last count as unlikely as k
        first_likely = _first_true(lambda y: binom.pmf(y, n, p) > bound, 0, np.floor(mean))
        high_side = binom.cdf(first_likely - 1, n, p) + binom.sf(k - 1, n, p)
        pvalue = np.where(k == mean, 1.0, np.where(k < mean, low_side, high_side))
    return np.where(usable, np.minimum(1.0, pvalue), np.nan)


def curve_shape(values, tolerance: float) -> np.ndarray:
    """Classify curves along the last axis (NaN-padded at the end) into :data:`SHAPES` codes.

    With a_1 .. a_m the observed values in size order and t the tolerance:
    *flat* when max − min ≤ t; else *U-shaped* when some interior a_j lies more
    than t below both ends, *inverted U-shaped* when some interior a_j lies
    more than t above both ends, *non-monotonic* when both hold; else
    *scaling* when a_m − a_1 > t, *inverse scaling* when a_1 − a_m > t, else
    *flat*. A single model gives *single model*; no model gives -1.
    """
    a = np.asarray(values, dtype=float)
    observed = ~np.isnan(a)
    count = observed.sum(axis=-1)
    positions = np.arange(a.shape[-1])
    # observed values first, in order, so the ends sit at 0 and count - 1
    order = np.argsort(~observed, axis=-1, kind="stable")
    a = np.take_along_axis(a, order, axis=-1)
    first = a[..., 0]
    last = np.take_along_axis(a, np.maximum(count - 1, 0)[..., None], axis=-1)[..., 0]
    interior = (positions > 0) & (positions < (count - 1)[..., None])
    with np.errstate(invalid="ignore"):
        low = np.min(np.where(interior, a, np.inf), axis=-1)
        high = np.max(np.where(interior, a, -np.inf), axis=-1)
        spread = np.nanmax(np.where(observed.any(-1, keepdims=True), a, 0.0), axis=-1) - np.nanmin(
            np.where(observed.any(-1, keepdims=True), a, 0.0), axis=-1
        )
    dip = (first - low > tolerance) & (last - low > tolerance)
    peak = (high - first > tolerance) & (high - last > tolerance)
    code = np.select(
        [
            count == 0,
            count == 1,
            spread <= tolerance,
            dip & peak,
            dip,
            peak,
            last - first > tolerance,
            first - last > tolerance,
        ],
        [
            -1,
            SHAPES.index("single model"),
            SHAPES.index("flat"),
            SHAPES.index("non-monotonic"),
            SHAPES.index("U-shaped"),
            SHAPES.index("inverted U-shaped"),
            SHAPES.index("scaling"),
            SHAPES.index("inverse scaling"),
        ],
        default=SHAPES.index("flat"),
    )
    return code
