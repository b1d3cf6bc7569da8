"""The exact binomial test on whole arrays: is a count of successes more than chance gives."""

from __future__ import annotations

import numpy as np

from .. import _options as o
from .._kernels import verbalizer as _kv
from .._statistic import statistic
from ..results import BinomialTestResult

__all__ = ["binomial_test"]

_OUTPUTS = {"statistic": "statistic", "pvalue": "pvalue", "k": "k", "n": "n"}


def _binomial(k, n, p, *, alternative):
    k, n, p = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, p)))
    with np.errstate(invalid="ignore", divide="ignore"):
        proportion = np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan)
    return {
        "statistic": proportion,
        "pvalue": _kv.binomial_test(k, n, p, alternative),
        "k": k,
        "n": n,
    }


@statistic(
    roles={},
    options={"alternative": o.one_of(*_kv.ALTERNATIVES)},
    result=BinomialTestResult,
    inputs=("k", "n", "p"),
    variable=None,
    per_template=False,
)
def binomial_test(k, n, p=0.5, *, alternative="two-sided"):
    r"""Exact binomial test of k successes in n trials against success probability p, vectorised.

    Parameters
    ----------
    k, n : array_like or xarray.DataArray
        Successes and trials, broadcast together (labelled inputs by
        dimension name; dask-chunked ones stay lazy).
    p : float, array_like or xarray.DataArray, default 0.5
        The success probability under the null hypothesis (for random
        guessing among L labels, 1/L). A number goes with either kind of
        input.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``greater``: the true probability exceeds p.

    Returns
    -------
    xarray.Dataset or BinomialTestResult
        ``statistic``, the observed proportion k / n (as
        :func:`scipy.stats.binomtest`'s ``statistic``), ``pvalue``, and the
        counts ``k`` and ``n`` broadcast together. NaN where n is 0 or a
        value is missing.

    Notes
    -----
    Under H0, K ~ Binomial(n, p). One-sided p-values are P[K ≥ k] and
    P[K ≤ k]. The two-sided p-value sums P[K = i] over every i with
    P[K = i] ≤ P[K = k] (1 + 10⁻⁷), the "minimum likelihood" rule of
    :func:`scipy.stats.binomtest`, whose values it reproduces; the counts on
    the far side of the mode are found by bisection on whole arrays, so
    every test of a cube runs at once.

    References
    ----------
    .. [1] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or
       fiducial limits illustrated in the case of the binomial. Biometrika,
       26(4), 404-413.

    See Also
    --------
    scipy.stats.binomtest : the same test, one count at a time.
    rankstats.analyses.verbalizer.chance_test : each model against random guessing.

    Examples
    --------
    >>> from rankstats import binomial_test
    >>> result = binomial_test([7, 50], [20, 100], 0.5)
    >>> result.statistic.tolist(), result.pvalue.round(4).tolist()
    ([0.35, 0.5], [0.2632, 1.0])
    >>> float(binomial_test(3, 10, 0.5, alternative="less").pvalue)
    0.171875

    Compare with SciPy:

    >>> from scipy.stats import binomtest
    >>> found = binomtest(7, 20, 0.5)
    >>> float(found.statistic), round(float(found.pvalue), 4)
    (0.35, 0.2632)
    >>> float(binomtest(3, 10, 0.5, alternative="less").pvalue)
    0.171875
    """
    return k.apply(_binomial, _OUTPUTS, kwargs={"alternative": alternative})
