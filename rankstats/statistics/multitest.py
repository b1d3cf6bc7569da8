"""Multiple testing: p-value adjustment and pairwise McNemar tests between models."""

from __future__ import annotations

import numpy as np

from .. import _options as o
from .._kernels import multitest as _km
from .._statistic import Role, statistic
from ..results import PairwiseMcNemarResult
from .concordance import NAN_POLICY
from .significance import with_dropped

__all__ = ["adjust_pvalues", "pairwise_mcnemar"]

P_ADJUST = o.one_of(*o.P_ADJUST)
_PAIRWISE = ("statistic", "pvalue", "pvalue_adjusted", "b", "c", "n_samples", "n_dropped")


def _pairwise_mcnemar(x, **kwargs) -> dict:
    x = np.asarray(x, dtype=float)
    return with_dropped(_km.pairwise_mcnemar(x, **kwargs), ~np.isnan(x))


@statistic(
    roles={"family": Role(None, None, many=True, rest=True)},
    options={"p_adjust": P_ADJUST},
    inputs=("p",),
    variable="pvalue",
    per_template=False,
)
def adjust_pvalues(p, p_adjust="holm", family=None):
    r"""Adjust p-values for multiple testing, one family per slice.

    Parameters
    ----------
    p : array_like, xarray.DataArray or xarray.Dataset
        P-values in [0, 1]; NaN marks an untested hypothesis and stays out of
        the family. A Dataset gives its ``pvalue`` variable.
    {p_adjust}
    family : str, int or sequence of them, optional
        The dimension(s) forming one family (axes for NumPy input); the
        others are slices adjusted separately. Default: all of them, one
        family.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        Adjusted p-values shaped like ``p`` (an array, not a result object:
        an adjustment transforms p-values one for one, as :func:`rank`
        transforms scores), NaN where ``p`` is NaN. The DataArray's attrs
        record ``p_adjust`` and ``family``.

    Raises
    ------
    ScoreValueError
        A p-value outside [0, 1].

    Notes
    -----
    With m non-missing p-values sorted :math:`p_{(1)} \le \dots \le p_{(m)}`:
    Bonferroni :math:`\min(1, m p)`; Holm
    :math:`\max_{j \le i} \min(1, (m - j + 1) p_{(j)})`; BH
    :math:`\min_{j \ge i} \min(1, m p_{(j)} / j)`; BY as BH with m replaced
    by :math:`m \sum_{l=1}^m 1/l`. The values equal
    :func:`statsmodels.stats.multitest.multipletests` (``"holm"``,
    ``"bonferroni"``, ``"fdr_bh"``, ``"fdr_by"``) on the non-missing
    values; ``"none"`` returns them unchanged.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics, 6(2), 65-70.
    .. [2] Benjamini, Y., & Hochberg, Y. (1995). Controlling the false
       discovery rate. JRSS B, 57(1), 289-300.
    .. [3] Benjamini, Y., & Yekutieli, D. (2001). The control of the false
       discovery rate in multiple testing under dependency. Annals of
       Statistics, 29(4), 1165-1188.

    See Also
    --------
    statsmodels.stats.multitest.multipletests : one family at a time.
    scipy.stats.false_discovery_control : BH and BY.
    pairwise_mcnemar : McNemar's tests of every pair, adjusted.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import adjust_pvalues
    >>> p = np.array([0.01, 0.04, np.nan, 0.03])
    >>> adjust_pvalues(p, "holm")
    array([0.03, 0.06,  nan, 0.06])
    >>> adjust_pvalues(p, "bh")
    array([0.03, 0.04,  nan, 0.04])

    Compare with statsmodels, on the p-values that were tested:

    >>> from statsmodels.stats.multitest import multipletests
    >>> multipletests([0.01, 0.04, 0.03], method="holm")[1]
    array([0.03, 0.06, 0.06])
    >>> multipletests([0.01, 0.04, 0.03], method="fdr_bh")[1]
    array([0.03, 0.04, 0.04])
    """
    out = p.apply(
        _km.adjust,
        {"pvalue_adjusted": "pvalue"},
        output_dims={"pvalue_adjusted": ["family"]},
        kwargs={"method": p_adjust, "family_axes": p.count("family")},
    )
    if p.labelled:
        return out["pvalue_adjusted"].transpose(*p.arrays[0].dims).assign_attrs(out.attrs)
    axes = p.dims("family")
    return np.moveaxis(out, list(range(-len(axes), 0)), axes) if axes else out


@statistic(
    roles={"family": Role(None, (), many=True), "pairs_over": ("model", -2), "dim": ("sample", -1)},
    options={
        "method": o.one_of("exact", "midp", "chi2", "chi2_cc"),
        "p_adjust": P_ADJUST,
        "nan_policy": NAN_POLICY,
    },
    result=PairwiseMcNemarResult,
)
def pairwise_mcnemar(
    x,
    pairs_over="model",
    dim="sample",
    *,
    family=(),
    method="exact",
    p_adjust="holm",
    nan_policy="propagate",
):
    r"""McNemar's test between every pair of models on the same items, adjusted.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Binary scores (0 or 1; NaN for missing). NumPy input is
        ``(..., pairs_over, dim)`` unless axes are given.
    pairs_over : str or int, default "model"
        The dimension whose members are compared pairwise; the result gains
        ``f"{pairs_over}_b"``.
    dim : str or int, default "sample"
        The paired items.
    family : str, int or sequence of them, default ()
        Further dimensions pooled into one family with the pairs (e.g.
        ``"task"`` to adjust over all tasks' pairs at once). By default each
        slice's k (k - 1) / 2 pairs form the family.
    method : {"exact", "midp", "chi2", "chi2_cc"}, default "exact"
        The McNemar test, as :func:`rankstats.mcnemar`.
    {p_adjust}
    {nan_policy}
        ``omit`` is pairwise deletion, as :func:`rankstats.mcnemar`:
        ``n_dropped`` counts the samples each pair leaves out.

    Returns
    -------
    xarray.Dataset or PairwiseMcNemarResult
        Over ``pairs_over`` and ``f"{pairs_over}_b"``: ``statistic``, raw
        ``pvalue``, ``pvalue_adjusted`` (the upper triangle adjusted as one
        family and mirrored; NaN on the diagonal and for untested pairs), the
        discordant counts ``b`` and ``c``, ``n_samples`` (the samples both
        models score) and ``n_dropped`` (the samples of the slice that one
        model of the pair lacks, or both while another model has them: left
        out of the pair by pairwise deletion under ``omit``; under
        ``propagate`` a pair with ``n_dropped > 0`` is NaN; 0 for a pair
        with an absent model, which is not tested).

    Notes
    -----
    Each unordered pair is one hypothesis: the family has k (k - 1) / 2
    members per slice (times the sizes of ``family``), less the pairs whose
    p-value is NaN (an absent model, or NaN under ``propagate``). The tests
    are those of :func:`rankstats.mcnemar` with ``pairs_over``; the
    adjustment that of :func:`adjust_pvalues`.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika, 12(2).
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics, 6(2), 65-70.

    See Also
    --------
    rankstats.mcnemar : the unadjusted tests (``pairs_over=`` gives all pairs).
    adjust_pvalues : the adjustment on its own.
    statsmodels.stats.contingency_tables.mcnemar : one pair at a time.

    Examples
    --------
    Three models answering the same twelve items:

    >>> import numpy as np
    >>> from rankstats import pairwise_mcnemar
    >>> right = np.array([[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1],
    ...                   [0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1],
    ...                   [1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1]])
    >>> result = pairwise_mcnemar(right)
    >>> result.pvalue.round(4)[0], result.pvalue_adjusted.round(4)[0]
    (array([1.    , 0.0312, 1.    ]), array([   nan, 0.0938, 1.    ]))

    Compare with statsmodels, pair by pair, then Holm over the three pairs:

    >>> from statsmodels.stats.contingency_tables import mcnemar
    >>> from statsmodels.stats.multitest import multipletests
    >>> def table(a, b):
    ...     return [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    >>> seen = right.astype(bool)
    >>> raw = [mcnemar(table(seen[i], seen[j]), exact=True).pvalue
    ...        for i, j in [(0, 1), (0, 2), (1, 2)]]
    >>> multipletests(raw, method="holm")[1].round(4)
    array([0.0938, 1.    , 0.125 ])
    """
    return x.apply(
        _pairwise_mcnemar,
        {name: name for name in _PAIRWISE},
        pairs="pairs_over",
        output_dims={name: ["family", "pairs_over", "pairs_over_b"] for name in _PAIRWISE},
        kwargs={
            "method": method,
            "correction": p_adjust,
            "nan_policy": nan_policy,
            "family_axes": x.count("family"),
        },
    )
