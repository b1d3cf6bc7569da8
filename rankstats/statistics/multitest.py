"""Multiple testing: p-value adjustment and pairwise McNemar tests between models."""

from __future__ import annotations

import numpy as np

from .. import _xr
from .._kernels import multitest as _km
from ..errors import DimensionError
from ..results import PairwiseMcNemarResult
from ._blocks import dims_tuple, numpy_axis

__all__ = ["adjust_pvalues", "pairwise_mcnemar"]


def adjust_pvalues(p, method="holm", dim=None):
    r"""Adjust p-values for multiple testing, one family per slice.

    Parameters
    ----------
    p : array_like, xarray.DataArray or xarray.Dataset
        P-values in [0, 1]; NaN marks an untested hypothesis and stays out of
        the family. A Dataset gives its ``pvalue`` variable.
    method : {"holm", "bonferroni", "bh", "by"}
        Holm's step-down, Bonferroni, Benjamini–Hochberg (false discovery
        rate, independent or positively dependent tests) or
        Benjamini–Yekutieli (false discovery rate, any dependence).
    dim : str, int or sequence of them, optional
        The dimension(s) forming one family (axes for NumPy input); the
        others are slices adjusted separately. Default: all of them, one
        family.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        Adjusted p-values shaped like ``p``, NaN where ``p`` is NaN.

    Notes
    -----
    With m non-missing p-values sorted :math:`p_{(1)} \le \dots \le p_{(m)}`:
    Bonferroni :math:`\min(1, m p)`; Holm
    :math:`\max_{j \le i} \min(1, (m - j + 1) p_{(j)})`; BH
    :math:`\min_{j \ge i} \min(1, m p_{(j)} / j)`; BY as BH with m replaced
    by :math:`m \sum_{l=1}^m 1/l`. The values equal
    :func:`statsmodels.stats.multitest.multipletests` (``"holm"``,
    ``"bonferroni"``, ``"fdr_bh"``, ``"fdr_by"``) on the non-missing
    values.

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

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats.statistics.posthoc import adjust_pvalues
    >>> p = np.array([0.01, 0.04, np.nan, 0.03])
    >>> adjust_pvalues(p, "holm")
    array([0.03, 0.06,  nan, 0.06])
    >>> adjust_pvalues(p, "bh")
    array([0.03, 0.04,  nan, 0.04])
    """
    kwargs = {"method": method}
    if _xr.is_labelled(p):
        if hasattr(p, "data_vars"):
            if "pvalue" not in p.data_vars:
                raise DimensionError("adjust_pvalues: the Dataset has no 'pvalue' variable")
            p = p["pvalue"]
        dims = dims_tuple(dim) or tuple(p.dims)
        _xr.check_dims("adjust_pvalues", p, {f"family[{i}]": d for i, d in enumerate(dims)})
        data = _xr.apply_labelled(
            "adjust_pvalues", _km.adjust, [p], [list(dims)],
            {"pvalue_adjusted": ("pvalue", list(dims))},
            kwargs={**kwargs, "family_axes": len(dims)},
            attrs={"family": ",".join(map(str, dims)), **kwargs},
        )
        return data["pvalue_adjusted"].transpose(*p.dims).assign_attrs(data.attrs)
    p = np.asarray(p, dtype=float)
    axes = [numpy_axis("adjust_pvalues", "the family", a) for a in dims_tuple(dim)]
    axes = axes or list(range(p.ndim))
    out = _xr.apply_numpy(_km.adjust, [p], [axes], {"pvalue": "pvalue"}, None,
                          kwargs={**kwargs, "family_axes": len(axes)})
    return np.moveaxis(np.asarray(out), list(range(-len(axes), 0)), axes) if axes else out


def pairwise_mcnemar(x, pairs="model", dim="sample", *, family=(), method="exact",
                     correction="holm", nan_policy="propagate"):
    r"""McNemar's test between every pair of models on the same items, corrected.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Binary scores (0 or 1; NaN for missing). NumPy input is
        ``(..., pairs, dim)`` unless axes are given.
    pairs : str or int, default "model"
        The dimension whose members are compared pairwise.
    dim : str or int, default "sample"
        The paired items.
    family : str, int or sequence of them, optional
        Further dimensions pooled into one family with the pairs (e.g.
        ``"task"`` to correct over all tasks' pairs at once). By default each
        slice's k (k - 1) / 2 pairs form the family.
    method : {"exact", "midp", "chi2", "chi2_cc"}
        The McNemar test, as :func:`rankstats.mcnemar`.
    correction : {"holm", "bonferroni", "bh", "by"}
        As :func:`adjust_pvalues`.
    nan_policy : {"propagate", "omit", "raise"}
        As :func:`rankstats.mcnemar` (``omit``: pairwise deletion).

    Returns
    -------
    xarray.Dataset or PairwiseMcNemarResult
        Over ``pairs`` and ``f"{pairs}_b"``: ``statistic``, raw ``pvalue``,
        ``pvalue_adjusted`` (the upper triangle adjusted as one family and
        mirrored; NaN on the diagonal and for untested pairs), the discordant
        counts ``b`` and ``c`` and ``n_samples``.

    Notes
    -----
    Each unordered pair is one hypothesis: the family has k (k - 1) / 2
    members per slice (times the sizes of ``family``), less the pairs whose
    p-value is NaN (an absent model, or NaN under ``propagate``).

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika, 12(2).
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics, 6(2), 65-70.

    See Also
    --------
    rankstats.mcnemar : the uncorrected tests (``pairs=`` gives all pairs).
    adjust_pvalues : the correction on its own.

    Examples
    --------
    Three models answering the same twelve items:

    >>> import numpy as np
    >>> from rankstats.statistics.posthoc import pairwise_mcnemar
    >>> right = np.array([[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1],
    ...                   [0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1],
    ...                   [1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1]])
    >>> result = pairwise_mcnemar(right)
    >>> result.pvalue.round(4)[0], result.pvalue_adjusted.round(4)[0]
    (array([1.    , 0.0312, 1.    ]), array([   nan, 0.0938, 1.    ]))
    """
    kwargs = {"method": method, "correction": correction, "nan_policy": nan_policy}
    family = dims_tuple(family)
    names = ("statistic", "pvalue", "pvalue_adjusted", "b", "c", "n_samples")
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "pairwise_mcnemar", keep=(dim, pairs))
        roles = {f"family[{i}]": d for i, d in enumerate(family)}
        _xr.check_dims("pairwise_mcnemar", scores, {**roles, "pairs": pairs, "paired": dim})
        pair_dim = f"{pairs}_b"
        return _xr.apply_labelled(
            "pairwise_mcnemar", _km.pairwise_mcnemar, [scores], [[*family, pairs, dim]],
            {name: (name, [*family, pairs, pair_dim]) for name in names},
            kwargs={**kwargs, "family_axes": len(family)},
            new_dims={pair_dim: pairs},
            attrs={"paired": dim, "pairs": pairs, "family": ",".join(map(str, family)),
                   **kwargs},
        )
    axes = [*(numpy_axis("pairwise_mcnemar", "family", f) for f in family),
            _xr.numpy_axis("pairwise_mcnemar", "pairs", pairs, "model", -2),
            _xr.numpy_axis("pairwise_mcnemar", "paired", dim, "sample", -1)]
    return _xr.apply_numpy(_km.pairwise_mcnemar, [x], [axes], {n: n for n in names},
                           PairwiseMcNemarResult,
                           kwargs={**kwargs, "family_axes": len(family)})
