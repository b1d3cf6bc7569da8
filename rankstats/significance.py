"""Does the template matter? Friedman's test, McNemar's test and Cochran's Q."""

from __future__ import annotations

from . import _xr
from ._kernels import significance as _ks
from ._results import CochranQResult, FriedmanResult, McNemarResult
from .concordance import _concordance

__all__ = ["cochran_q", "friedman", "mcnemar"]

_FRIEDMAN_OUTPUTS = {
    "statistic": "chi2",
    "pvalue": "pvalue",
    "dof": "dof",
    "kendall_w": "w",
    "f": "f",
    "f_dof1": "f_dof1",
    "f_dof2": "f_dof2",
    "f_pvalue": "f_pvalue",
    "n_blocks": "n_judges",
    "n_treatments": "n_objects",
}
_MCNEMAR_OUTPUTS = {name: name for name in ("statistic", "pvalue", "b", "c", "n_samples")}
_COCHRAN_OUTPUTS = {name: name for name in ("statistic", "pvalue", "dof", "n_blocks",
                                            "n_treatments")}


def friedman(
    x,
    blocks="model",
    treatments="template",
    *,
    ties="average",
    correction=True,
    nan_policy="propagate",
):
    r"""Friedman's test of whether treatments differ within blocks.

    By default the blocks are the models and the treatments the templates:
    does the template change the scores? Swap them (``blocks="template",
    treatments="model"``) to ask whether the models differ.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., blocks, treatments)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    blocks, treatments : str or int
        Dimension names (axis numbers for NumPy input).
    ties : {"average", "min", "max", "dense", "ordinal"}
        How treatments tied within a block are ranked.
    correction : bool, default True
        Divide the statistic by the tie correction, as
        :func:`scipy.stats.friedmanchisquare` does.
    nan_policy : {"propagate", "omit", "raise"}
        ``omit`` drops blocks with a missing treatment (listwise deletion).
        Treatments missing in every block and blocks missing everywhere are
        structure and drop out first.

    Returns
    -------
    xarray.Dataset or FriedmanResult
        ``statistic`` (the chi-square), ``pvalue``, ``dof``, ``kendall_w``,
        the Iman–Davenport ``f`` with ``f_dof1``, ``f_dof2`` and
        ``f_pvalue``, and the number of blocks and treatments used.

    Notes
    -----
    With b blocks, k treatments and :math:`R_j` the rank sum of treatment j,

    .. math:: \chi^2_F = \frac{12/(b k (k+1)) \sum_j R_j^2 - 3 b (k+1)}
              {1 - \sum T / (b (k^3 - k))} = b (k - 1) W

    on k - 1 degrees of freedom, T summing :math:`t^3 - t` over the tie
    groups of every block. The Iman–Davenport statistic
    :math:`F = (b - 1) \chi^2_F / (b (k - 1) - \chi^2_F)` is referred to
    F(k - 1, (b - 1)(k - 1)).

    References
    ----------
    .. [1] Friedman, M. (1937). The use of ranks to avoid the assumption of
       normality implicit in the analysis of variance. JASA, 32(200), 675-701.
    .. [2] Corder, G. W., & Foreman, D. I. (2011). Nonparametric Statistics
       for Non-Statisticians. Wiley.

    See Also
    --------
    kendall_w : the same computation read as agreement between judges.
    scipy.stats.friedmanchisquare, pingouin.friedman : one slice at a time.

    Examples
    --------
    Four models (rows) scored under three templates (columns):

    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.9, 0.7, 0.5],
    ...                    [0.8, 0.6, 0.6],
    ...                    [0.7, 0.4, 0.2],
    ...                    [0.5, 0.6, 0.3]])
    >>> result = rankstats.friedman(scores)
    >>> round(float(result.statistic), 4), round(float(result.pvalue), 4)
    (5.7333, 0.0569)
    """
    kwargs = {"ties": ties, "correction": correction, "nan_policy": nan_policy,
              "statistic": "friedman", "roles": ("blocks", "treatments")}
    return _concordance("friedman", x, blocks, treatments, kwargs, _FRIEDMAN_OUTPUTS,
                        FriedmanResult, {"blocks": blocks, "treatments": treatments})


def mcnemar(x, y=None, *, dim="sample", pairs=None, method="exact", nan_policy="propagate"):
    r"""McNemar's test on paired binary correctness.

    Either compares ``x`` with ``y`` (e.g. two templates, or two models,
    scored on the same samples), or, with ``pairs``, every pair of positions
    along one dimension of ``x`` at once.

    Parameters
    ----------
    x, y : array_like, xarray.DataArray or score cube
        Binary scores (0 or 1; NaN for missing) along ``dim``. Labelled
        inputs must agree on every shared coordinate.
    dim : str or int, default "sample"
        The dimension of the paired observations (axis for NumPy input).
    pairs : str or int, optional
        With ``y`` omitted: test every pair of positions along this dimension
        (e.g. ``"template"``); the result gains ``f"{pairs}_b"``.
    method : {"exact", "midp", "chi2", "chi2_cc"}
        Exact binomial, mid-p, chi-square, or chi-square with Edwards'
        continuity correction :math:`(|b - c| - 1)^2 / (b + c)` (unclamped, as
        R and statsmodels compute it).
    nan_policy : {"propagate", "omit", "raise"}
        ``omit`` is pairwise deletion of samples missing on either side.
        Samples missing everywhere (padding) drop out first.

    Returns
    -------
    xarray.Dataset or McNemarResult
        ``statistic`` (min(b, c) for the exact and mid-p tests, the chi-square
        otherwise), two-sided ``pvalue``, the discordant counts ``b`` (x right,
        y wrong) and ``c`` (x wrong, y right), and ``n_samples``.

    Notes
    -----
    The exact p-value is :math:`\min(1, 2 P[B \le \min(b, c)])` for
    :math:`B \sim \mathrm{Binomial}(b + c, 1/2)`. The mid-p value counts
    the tables more extreme than the observed one in full and the observed
    table's own probability by half (Fagerland et al. 2013):
    :math:`2 P[B \le \min(b, c)] - P[B = \min(b, c)]` when b differs from c,
    and :math:`1 - P[B = b] / 2` when b = c. With no
    discordant pair (b = c = 0) there is no evidence either way: the exact and
    mid-p tests give p = 1 and the chi-square forms NaN (with a
    :class:`~rankstats.errors.RankstatsWarning`).

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika, 12(2).
    .. [2] Fagerland, M. W., Lydersen, S., & Laake, P. (2013). The McNemar
       test for binary matched-pairs data: mid-p and asymptotic are better
       than exact conditional. BMC Medical Research Methodology, 13, 91.

    See Also
    --------
    statsmodels.stats.contingency_tables.mcnemar, pingouin.chi2_mcnemar

    Examples
    --------
    >>> import rankstats
    >>> first = [1, 1, 1, 1, 1, 1, 1, 0, 1, 1]
    >>> second = [0, 0, 1, 0, 0, 1, 1, 0, 0, 1]
    >>> result = rankstats.mcnemar(first, second)
    >>> int(result.b), int(result.c), round(float(result.pvalue), 4)
    (5, 0, 0.0625)
    """
    kwargs = {"method": method, "nan_policy": nan_policy}
    if y is None:
        if pairs is None:
            raise TypeError("mcnemar: give y, or pairs= to test every pair along a dimension")
        return _mcnemar_all_pairs(x, dim, pairs, kwargs)
    if pairs is not None:
        raise TypeError("mcnemar: give either y or pairs=, not both")
    if _xr.is_labelled(x) or _xr.is_labelled(y):
        if not (_xr.is_labelled(x) and _xr.is_labelled(y)):
            raise TypeError("mcnemar: give x and y both labelled (xarray) or both NumPy")
        xs = _xr.scores_of(x, "mcnemar", keep=(dim,))
        ys = _xr.scores_of(y, "mcnemar", keep=(dim,))
        _xr.check_dims("mcnemar", xs, {"paired": dim})
        _xr.check_dims("mcnemar", ys, {"paired": dim})
        return _xr.apply_labelled(
            "mcnemar",
            _ks.mcnemar_pair,
            [xs, ys],
            [[dim], [dim]],
            {name: (key, []) for name, key in _MCNEMAR_OUTPUTS.items()},
            kwargs=kwargs,
            attrs={"paired": dim, **kwargs},
        )
    axis = _xr.numpy_axis("mcnemar", "paired", dim, "sample", -1)
    return _xr.apply_numpy(
        _ks.mcnemar_pair, [x, y], [[axis], [axis]], _MCNEMAR_OUTPUTS, McNemarResult,
        kwargs=kwargs,
    )


def _mcnemar_all_pairs(x, dim, pairs, kwargs):
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "mcnemar", keep=(dim, pairs))
        _xr.check_dims("mcnemar", scores, {"paired": dim, "pairs": pairs})
        pair_dim = f"{pairs}_b"
        return _xr.apply_labelled(
            "mcnemar",
            _ks.mcnemar_matrix,
            [scores],
            [[pairs, dim]],
            {name: (key, [pairs, pair_dim]) for name, key in _MCNEMAR_OUTPUTS.items()},
            kwargs=kwargs,
            new_dims={pair_dim: pairs},
            attrs={"paired": dim, "pairs": pairs, **kwargs},
        )
    axes = [
        _xr.numpy_axis("mcnemar", "pairs", pairs, "template", -2),
        _xr.numpy_axis("mcnemar", "paired", dim, "sample", -1),
    ]
    return _xr.apply_numpy(
        _ks.mcnemar_matrix, [x], [axes], _MCNEMAR_OUTPUTS, McNemarResult, kwargs=kwargs
    )


def cochran_q(x, blocks="sample", treatments="template", *, nan_policy="propagate"):
    r"""Cochran's Q test of whether k treatments succeed equally often on the same blocks.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Binary scores. NumPy input is ``(..., blocks, treatments)`` unless
        axes are given. The default asks whether the templates differ in
        accuracy over the same samples, per model and task.
    blocks, treatments : str or int
        Dimension names (axis numbers for NumPy input).
    nan_policy : {"propagate", "omit", "raise"}
        ``omit`` drops blocks with a missing treatment (listwise deletion).

    Returns
    -------
    xarray.Dataset or CochranQResult
        ``statistic`` (Q), ``pvalue``, ``dof`` (k - 1), ``n_blocks`` and
        ``n_treatments``.

    Notes
    -----
    .. math:: Q = (k - 1) \frac{k \sum_j C_j^2 - T^2}{k T - \sum_i R_i^2}

    with :math:`C_j` the successes of treatment j, :math:`R_i` those of block
    i and T the total, referred to :math:`\chi^2_{k-1}`. Blocks with the same
    outcome under every treatment add nothing; if all are so, Q is NaN.

    References
    ----------
    .. [1] Cochran, W. G. (1950). The comparison of percentages in matched
       samples. Biometrika, 37(3/4), 256-266.

    See Also
    --------
    pingouin.cochran, statsmodels.stats.contingency_tables.cochrans_q
    mcnemar : the two-treatment case, pair by pair.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> outcomes = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0],
    ...                      [1, 0, 0], [1, 1, 0]])
    >>> result = rankstats.cochran_q(outcomes)
    >>> round(float(result.statistic), 4), round(float(result.pvalue), 4)
    (6.0, 0.0498)
    """
    kwargs = {"nan_policy": nan_policy}
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "cochran_q", keep=(blocks, treatments))
        _xr.check_dims("cochran_q", scores, {"blocks": blocks, "treatments": treatments})
        return _xr.apply_labelled(
            "cochran_q",
            _ks.cochran_q,
            [scores],
            [[blocks, treatments]],
            {name: (key, []) for name, key in _COCHRAN_OUTPUTS.items()},
            kwargs=kwargs,
            attrs={"blocks": blocks, "treatments": treatments, **kwargs},
        )
    axes = [
        _xr.numpy_axis("cochran_q", "blocks", blocks, "sample", -2),
        _xr.numpy_axis("cochran_q", "treatments", treatments, "template", -1),
    ]
    return _xr.apply_numpy(_ks.cochran_q, [x], [axes], _COCHRAN_OUTPUTS, CochranQResult,
                           kwargs=kwargs)

