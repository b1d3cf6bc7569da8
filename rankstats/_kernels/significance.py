"""McNemar's and Cochran's tests on paired binary outcomes: NumPy kernels over the last axes."""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from ..errors import ScoreValueError
from .concordance import _scipy_stats, chi2_sf
from .ranking import check_choice, missing_among_present, usable_judges, warn_nan
from .scan import zeros_and_ones

MCNEMAR_METHODS = ("exact", "midp", "chi2", "chi2_cc")


@functools.cache
def _binomial_half(name):
    """``scipy.stats.binom.<name>(k, n, 0.5)`` for integers 0 <= k <= n, n >= 1.

    On that domain ``scipy.stats.binom`` calls SciPy's ``_binom_cdf`` /
    ``_binom_pmf`` ufuncs on ``floor(k)``; calling them directly gives the same
    numbers without the distribution's argument handling, which costs tens of
    microseconds a call. Without those ufuncs, ``scipy.stats.binom`` itself.
    """
    from scipy.special import _ufuncs

    direct = getattr(_ufuncs, f"_binom_{name}", None)
    if direct is None:
        method = getattr(_scipy_stats().binom, name)
        return lambda k, n: method(k, n, 0.5)
    return lambda k, n: direct(np.floor(k), n, 0.5)


def check_binary(x, statistic: str) -> None:
    """Raise unless every non-NaN value of ``x`` is 0 or 1."""
    if zeros_and_ones(x, nan=True):  # the usual case, read a block at a time
        return
    bad = ~np.isnan(x) & (x != 0) & (x != 1)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ScoreValueError(
            f"{statistic}: needs binary scores (0 or 1); found {x[where].item()!r} at index "
            f"{where} and {int(bad.sum()) - 1} other non-binary value(s)"
        )


def mcnemar_matrix(x, *, method="exact", nan_policy="propagate"):
    """McNemar's test between every pair of rows of ``(..., m, samples)``.

    ``b[a, c]`` counts samples row a gets right and row c wrong. Returns a dict
    of ``(..., m, m)`` arrays: ``statistic`` (min(b, c) for the exact and mid-p
    tests, the chi-square otherwise), ``pvalue``, ``b``, ``c`` and
    ``n_samples`` (samples both rows observe).
    """
    check_choice("method", method, MCNEMAR_METHODS)
    x = np.asarray(x, dtype=float)
    check_binary(x, "mcnemar")
    samples_present, rows_present, holes = missing_among_present(x, nan_policy, "mcnemar")
    observed = ~np.isnan(x) & samples_present[..., None, :]
    right = np.where(observed, x, 0.0)
    wrong = np.where(observed, 1.0 - x, 0.0)
    b = right @ np.swapaxes(wrong, -1, -2)
    c = np.swapaxes(b, -1, -2)
    n_samples = observed.astype(float) @ np.swapaxes(observed, -1, -2).astype(float)
    discordant = b + c
    smaller = np.minimum(b, c)
    # without discordant samples the p-value is 1 (set below); n = 1 keeps the binomial defined
    trials = np.where(discordant == 0, 1.0, discordant)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "exact":
            statistic = smaller
            pvalue = np.minimum(1.0, 2.0 * _binomial_half("cdf")(smaller, trials))
            pvalue = np.where(discordant == 0, 1.0, pvalue)
        elif method == "midp":
            # Fagerland et al. (2013): the exact p-value minus the probability of the
            # observed table, counted once on each side; 1 - pmf/2 when b = c.
            statistic = smaller
            point = _binomial_half("pmf")(smaller, trials)
            pvalue = np.where(
                b == c,
                1.0 - 0.5 * point,
                2.0 * _binomial_half("cdf")(smaller, trials) - point,
            )
            pvalue = np.where(discordant == 0, 1.0, pvalue)
        else:
            shift = 1.0 if method == "chi2_cc" else 0.0
            statistic = (np.abs(b - c) - shift) ** 2 / discordant
            pvalue = chi2_sf(statistic, np.ones_like(statistic))
    pair_present = rows_present[..., :, None] & rows_present[..., None, :]
    poisoned = (holes[..., :, None] | holes[..., None, :]) if nan_policy == "propagate" else False
    undefined = ~pair_present | poisoned
    if method in ("chi2", "chi2_cc"):
        m = x.shape[-2]
        upper = np.arange(m)[:, None] < np.arange(m)
        warn_nan(
            "mcnemar",
            (discordant == 0) & ~undefined & upper,
            "no discordant samples (b = c = 0); the chi-square test is undefined",
            among=~undefined & upper,
        )
        undefined = undefined | (discordant == 0)
    nan_if = lambda values: np.where(undefined, np.nan, values)  # noqa: E731
    return {
        "statistic": nan_if(statistic),
        "pvalue": nan_if(pvalue),
        "b": np.where(pair_present, b, np.nan),
        "c": np.where(pair_present, c, np.nan),
        "n_samples": np.where(pair_present, n_samples, 0.0),
    }


def mcnemar_complete(x, y, method="exact"):
    """:func:`mcnemar_pair` of two binary 1-d arrays of one length with no score missing.

    The outputs of :func:`mcnemar_matrix` for the pair (plus ``n_dropped``,
    0), computed on the two vectors alone: the counts are exact integer sums
    and the p-value the same ufunc on the same numbers, so the results are
    identical. Returns None where that does not hold (a missing or
    non-binary score, other shapes, a chi-square test without discordant
    samples), for the general path to handle and report.
    """
    if x.ndim != 1 or x.shape != y.shape or not x.size or method not in MCNEMAR_METHODS:
        return None
    if not (zeros_and_ones(x, nan=False) and zeros_and_ones(y, nan=False)):
        return None
    b = x @ (1.0 - y)
    c = y @ (1.0 - x)
    discordant = b + c
    if discordant == 0:
        if method in ("chi2", "chi2_cc"):
            return None  # undefined, with a warning: the general path
        statistic, pvalue = np.minimum(b, c), np.float64(1.0)
    elif method == "exact":
        statistic = np.minimum(b, c)
        pvalue = np.minimum(1.0, 2.0 * _binomial_half("cdf")(statistic, discordant))
    elif method == "midp":
        statistic = np.minimum(b, c)
        point = _binomial_half("pmf")(statistic, discordant)
        pvalue = (
            1.0 - 0.5 * point
            if b == c
            else 2.0 * _binomial_half("cdf")(statistic, discordant) - point
        )
    else:
        shift = 1.0 if method == "chi2_cc" else 0.0
        statistic = (np.abs(b - c) - shift) ** 2 / discordant
        pvalue = special.chdtrc(1.0, np.maximum(statistic, 0))
    return {
        "statistic": statistic,
        "pvalue": pvalue,
        "b": b,
        "c": c,
        "n_samples": np.float64(x.size),
        "n_dropped": np.float64(0.0),
    }


def mcnemar_pair(x, y, *, method="exact", nan_policy="propagate"):
    """McNemar's test of ``x`` against ``y`` along the last axis (broadcast together)."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    out = mcnemar_matrix(np.stack([x, y], axis=-2), method=method, nan_policy=nan_policy)
    return {key: value[..., 0, 1] for key, value in out.items()}


def cochran_q(x, *, nan_policy="propagate"):
    """Cochran's Q over ``(..., blocks, treatments)`` binary outcomes.

    Q = (k - 1) (k sum_j C_j^2 - T^2) / (k T - sum_i R_i^2), with C_j the
    treatment totals, R_i the block totals and T the grand total.
    """
    x = np.asarray(x, dtype=float)
    found = _cochran_q_complete(x)
    if found is not None:
        return found
    check_binary(x, "cochran_q")
    used, treatments_present, poisoned = usable_judges(x, nan_policy, "cochran_q")
    keep = used[..., :, None] & treatments_present[..., None, :]
    values = np.where(keep, x, 0.0)
    k = treatments_present.sum(-1).astype(float)
    n_blocks = used.sum(-1).astype(float)
    column = values.sum(-2)
    row = values.sum(-1)
    total = row.sum(-1)
    denominator = k * total - (row**2).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = (k - 1.0) * (k * (column**2).sum(-1) - total**2) / denominator
    few = (k < 2) | (n_blocks < 1)
    constant = ~few & (denominator == 0)
    telling = ~poisoned & treatments_present.any(axis=-1)
    warn_nan("cochran_q", few & telling, "fewer than two treatments or no complete block")
    warn_nan("cochran_q", constant & telling, "every block has the same outcome throughout")
    q = np.where(poisoned | few | constant, np.nan, q)
    dof = k - 1.0
    return {
        "statistic": q,
        "dof": dof,
        "pvalue": chi2_sf(q, dof),
        "n_blocks": n_blocks,
        "n_treatments": k,
    }


def _cochran_q_complete(x):
    """:func:`cochran_q` of binary outcomes with none missing and Q defined in every slice.

    Every block and treatment is then used, so the masks fall away; the sums
    are of 0s and 1s, exact in any order (so taken as products with ones,
    which are quicker than reductions along a short axis), and the numbers
    are the same. None where anything needs the general path (a missing or
    non-binary outcome, fewer than two treatments, a slice whose Q is
    undefined, with its warning).
    """
    m, n = x.shape[-2:] if x.ndim >= 2 else (0, 0)
    if n < 2 or m < 1:
        return None
    if not zeros_and_ones(x, nan=False):
        return None
    shape = x.shape[:-2]
    k = np.full(shape, float(n)) if shape else np.float64(n)
    column = np.ones(m) @ x
    row = x @ np.ones(n)
    total = row.sum(-1)
    denominator = k * total - (row**2).sum(-1)
    if not (denominator.all() if shape else denominator):
        return None
    q = (k - 1.0) * (k * (column**2).sum(-1) - total**2) / denominator
    dof = k - 1.0
    return {
        "statistic": q,
        "dof": dof,
        # q and dof are finite here: chdtrc warns of nothing
        "pvalue": special.chdtrc(dof, np.maximum(q, 0)),
        "n_blocks": np.full(shape, float(m)) if shape else np.float64(m),
        "n_treatments": k,
    }
