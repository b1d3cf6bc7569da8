"""Ranks and rank agreement: Kendall's W and Kendall's tau (pairs and all-pairs matrices)."""

from __future__ import annotations

import numpy as np

from . import _xr
from ._kernels import concordance as _k
from ._kernels.ranking import ranks as _ranks_kernel
from ._results import KendallTauResult, KendallWResult

__all__ = ["kendall_tau", "kendall_tau_matrix", "kendall_w", "rank"]

_W_OUTPUTS = {
    "statistic": "w",
    "pvalue": "pvalue",
    "chi2": "chi2",
    "dof": "dof",
    "f": "f",
    "f_dof1": "f_dof1",
    "f_dof2": "f_dof2",
    "f_pvalue": "f_pvalue",
    "f_kbs_dof1": "f_kbs_dof1",
    "f_kbs_dof2": "f_kbs_dof2",
    "f_kbs_pvalue": "f_kbs_pvalue",
    "n_judges": "n_judges",
    "n_objects": "n_objects",
}
_TAU_OUTPUTS = {"statistic": "tau", "pvalue": "pvalue", "n_objects": "n_objects"}


def rank(x, dim="model", *, ties="average", higher_is_better=None):
    """Rank values along one dimension; rank 1 is the best.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. A cube with a ``sample`` dimension is ranked on its
        per-template scores (mean over samples).
    dim : str or int, default "model"
        The dimension to rank along (an axis number for NumPy input; the
        default means the last axis there).
    ties : {"average", "min", "max", "dense", "ordinal"}
        How tied values are ranked, as in :func:`scipy.stats.rankdata`.
    higher_is_better : bool, optional
        Whether the highest score gets rank 1. Defaults to the cube's
        ``higher_is_better`` attribute, else True.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        Ranks, shaped like the input. Missing scores get no rank (NaN) and do
        not count in the others' ranks.

    Notes
    -----
    With ``ties="average"`` the k values tied at positions p..p+k-1 (1-based,
    best first) each get rank p + (k - 1) / 2, so the ranks of n values always
    sum to n(n + 1) / 2.

    See Also
    --------
    scipy.stats.rankdata : the same ranks, lowest value first.

    Examples
    --------
    >>> import rankstats
    >>> rankstats.rank([0.9, 0.5, 0.9, 0.1])
    array([1.5, 3. , 1.5, 4. ])
    >>> rankstats.rank([0.9, 0.5, 0.9, 0.1], ties="min")
    array([1., 3., 1., 4.])
    """
    best_first = _xr.higher_is_better_of(x, higher_is_better)
    kwargs = {"ties": ties, "higher_is_better": best_first}
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "rank", keep=(dim,))
        _xr.check_dims("rank", scores, {"ranking": dim})
        data = _xr.apply_labelled(
            "rank", _ranks_kernel, [scores], [[dim]], {"rank": ("rank", [dim])}, kwargs=kwargs
        )
        return data["rank"].transpose(*scores.dims).assign_attrs(
            ties=ties, higher_is_better=str(best_first)
        )
    axis = _xr.numpy_axis("rank", "ranking", dim, "model", -1)
    ranks = _xr.apply_numpy(_ranks_kernel, [x], [[axis]], {"rank": "rank"}, None, kwargs=kwargs)
    return np.moveaxis(ranks, -1, axis) if np.ndim(ranks) else ranks


def kendall_w(
    x,
    judges="template",
    objects="model",
    *,
    ties="average",
    correction=True,
    nan_policy="propagate",
):
    r"""Kendall's coefficient of concordance W: how far m judges agree on ranking n objects.

    By default the judges are the templates and the objects the models: do
    the templates agree on the model ranking?

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., judges, objects)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    judges, objects : str or int
        Dimension names (axis numbers for NumPy input).
    ties : {"average", "min", "max", "dense", "ordinal"}
        How each judge ranks tied objects.
    correction : bool, default True
        Correct the denominator for ties.
    nan_policy : {"propagate", "omit", "raise"}
        What to do with missing scores that remain once structure is removed
        (see Notes): return NaN, drop incomplete judges (listwise deletion),
        or raise :class:`~rankstats.errors.MissingValueError`.

    Returns
    -------
    xarray.Dataset or KendallWResult
        ``statistic`` (W), ``pvalue`` and ``chi2`` with ``dof`` (the Friedman
        chi-square implied by W), the F approximation ``f`` with the
        Iman–Davenport degrees of freedom (``f_dof1``, ``f_dof2``,
        ``f_pvalue``) and with Kendall–Babington Smith's
        (``f_kbs_dof1``, ``f_kbs_dof2``, ``f_kbs_pvalue``, as pingouin's
        ``friedman(method="f")``), and the number of judges and objects used.

    Notes
    -----
    With :math:`R_i` the rank sum of object i and :math:`S = \sum_i (R_i - \bar R)^2`,

    .. math:: W = \frac{12 S}{m^2 (n^3 - n) - m \sum T},
              \qquad T = \sum_g (t_g^3 - t_g)

    over the tie groups of each judge. ``correction=False`` drops the
    :math:`\sum T` term. For any ``ties`` method the corrected denominator is
    :math:`m \sum_j \sum_i (r_{ij} - \bar r_j)^2`, which equals the formula
    above for average ranks and keeps W in [0, 1] for the others. The
    uncorrected form assumes average ranks: with ``ties="min"``, ``"max"``,
    ``"dense"`` or ``"ordinal"`` and tied scores it can exceed 1, and is
    returned as computed, because published analyses used it.
    :math:`\chi^2 = m (n - 1) W` on n - 1 degrees of freedom;
    :math:`F = (m - 1) W / (1 - W)` on (n - 1, (m - 1)(n - 1)) degrees of
    freedom (Iman and Davenport) or on (n - 1 - 2/m, (m - 1)(n - 1 - 2/m))
    (Kendall and Babington Smith).

    Structure is not missingness: within each slice an object missing for
    every judge (a model never run on a task) and a judge missing for every
    object (a padded template position) drop out first. W is NaN, with a
    :class:`~rankstats.errors.RankstatsWarning`, when fewer than two judges or
    two objects remain, or when every judge ties all objects.

    References
    ----------
    .. [1] Kendall, M. G., & Babington Smith, B. (1939). The problem of m
       rankings. Annals of Mathematical Statistics, 10(3), 275-287.
    .. [2] Iman, R. L., & Davenport, J. M. (1980). Approximations of the
       critical region of the Friedman statistic. Communications in
       Statistics - Theory and Methods, 9(6), 571-595.

    See Also
    --------
    friedman : the same test with blocks and treatments named the other way.
    pingouin.friedman : W, chi-square and the F form for one slice.

    Examples
    --------
    Three templates (rows) rank four models (columns):

    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.9, 0.7, 0.5, 0.1],
    ...                    [0.8, 0.9, 0.4, 0.2],
    ...                    [0.7, 0.6, 0.6, 0.3]])
    >>> result = rankstats.kendall_w(scores)
    >>> round(float(result.statistic), 4), round(float(result.pvalue), 4)
    (0.8621, 0.0513)
    >>> float(result.chi2), float(result.dof)
    (7.758..., 3.0)
    """
    kwargs = {"ties": ties, "correction": correction, "nan_policy": nan_policy,
              "statistic": "kendall_w"}
    return _concordance("kendall_w", x, judges, objects, kwargs, _W_OUTPUTS, KendallWResult,
                        {"judges": judges, "objects": objects})


def _concordance(statistic, x, rows, columns, kwargs, outputs, result_type, roles):
    """Shared dispatch of Kendall's W and Friedman's test."""
    (row_role, row_dim), (column_role, column_dim) = roles.items()
    attrs = {**roles, **{k: v for k, v in kwargs.items() if k not in ("statistic", "roles")}}
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, statistic, keep=(rows, columns))
        _xr.check_dims(statistic, scores, roles)
        return _xr.apply_labelled(
            statistic,
            _k.concordance,
            [scores],
            [[rows, columns]],
            {name: (key, []) for name, key in outputs.items()},
            kwargs=kwargs,
            attrs=attrs,
        )
    axes = [
        _xr.numpy_axis(statistic, row_role, rows, row_dim, -2),
        _xr.numpy_axis(statistic, column_role, columns, column_dim, -1),
    ]
    return _xr.apply_numpy(_k.concordance, [x], [axes], outputs, result_type, kwargs=kwargs)


def kendall_tau(x, y, dim="model", *, variant="b", method="auto", nan_policy="propagate"):
    r"""Kendall's tau between two rankings along one dimension.

    Parameters
    ----------
    x, y : array_like, xarray.DataArray or score cube
        Two sets of scores, broadcast together (e.g. two templates' scores of
        the same models). Labelled inputs must agree on every shared
        coordinate.
    dim : str or int, default "model"
        The dimension holding the ranked objects (axis number for NumPy).
    variant : {"b", "a", "c"}
        tau-b (tie-corrected, the default), tau-a, or Stuart's tau-c.
    method : {"auto", "asymptotic", "exact"}
        P-value method, as :func:`scipy.stats.kendalltau`: ``auto`` is exact
        for untied samples of at most 33 objects (or, at any size, when at
        most one pair is discordant or at most one concordant), asymptotic
        otherwise.
        ``exact`` needs untied data and at most 170 objects (the null
        distribution is tabulated up to there), except for the extreme
        orderings, whose exact probability is closed-form at any size.
    nan_policy : {"propagate", "omit", "raise"}
        ``omit`` is pairwise deletion: objects missing in x or y are dropped.
        Objects missing in both are absent, not missing.

    Returns
    -------
    xarray.Dataset or KendallTauResult
        ``statistic`` (tau), ``pvalue`` (two-sided) and ``n_objects``.

    Notes
    -----
    With C concordant and D discordant pairs, :math:`n_0 = n(n-1)/2` and
    :math:`n_1, n_2` the pairs tied in x and in y,

    .. math:: \tau_b = \frac{C - D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}},\quad
              \tau_a = \frac{C - D}{n_0},\quad
              \tau_c = \frac{2 (C - D)}{n^2 (k - 1) / k}

    with k the smaller number of distinct values. The asymptotic p-value uses
    the tie-corrected variance of C - D (Kendall 1970) without continuity
    correction; it is the same for every variant. A constant ranking gives
    NaN and a :class:`~rankstats.errors.RankstatsWarning`.

    References
    ----------
    .. [1] Kendall, M. G. (1945). The treatment of ties in ranking problems.
       Biometrika, 33(3), 239-251.

    See Also
    --------
    kendall_tau_matrix : tau between every pair of templates at once.
    scipy.stats.kendalltau : the same statistic and p-value for one pair.

    Examples
    --------
    >>> import rankstats
    >>> result = rankstats.kendall_tau([0.9, 0.7, 0.5, 0.1], [0.8, 0.9, 0.4, 0.2])
    >>> round(float(result.statistic), 4), round(float(result.pvalue), 4)
    (0.6667, 0.3333)
    """
    kwargs = {"variant": variant, "method": method, "nan_policy": nan_policy}
    if _xr.is_labelled(x) or _xr.is_labelled(y):
        if not (_xr.is_labelled(x) and _xr.is_labelled(y)):
            raise TypeError("kendall_tau: give x and y both labelled (xarray) or both NumPy")
        xs = _xr.scores_of(x, "kendall_tau", keep=(dim,))
        ys = _xr.scores_of(y, "kendall_tau", keep=(dim,))
        _xr.check_dims("kendall_tau", xs, {"objects": dim})
        _xr.check_dims("kendall_tau", ys, {"objects": dim})
        return _xr.apply_labelled(
            "kendall_tau",
            _k.tau_pair,
            [xs, ys],
            [[dim], [dim]],
            {name: (key, []) for name, key in _TAU_OUTPUTS.items()},
            kwargs=kwargs,
            attrs={"objects": dim, **kwargs},
        )
    axis = _xr.numpy_axis("kendall_tau", "objects", dim, "model", -1)
    return _xr.apply_numpy(
        _k.tau_pair, [x, y], [[axis], [axis]], _TAU_OUTPUTS, KendallTauResult, kwargs=kwargs
    )


def kendall_tau_matrix(
    x, dim="template", objects="model", *, variant="b", method="auto", nan_policy="propagate"
):
    r"""Kendall's tau between every pair of positions along ``dim``, without a Python loop.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., dim, objects)`` unless axes are given.
    dim : str or int, default "template"
        The dimension whose pairs are compared; the result gains a second
        dimension ``f"{dim}_b"`` with renamed copies of its coordinates
        (``template_id_b`` and so on).
    objects : str or int, default "model"
        The dimension holding the ranked objects.
    variant, method, nan_policy
        As :func:`kendall_tau`; ``omit`` compares each pair on the objects
        both observe.

    Returns
    -------
    xarray.Dataset or KendallTauResult
        ``statistic``, ``pvalue`` and ``n_objects`` over ``(..., dim, dim_b)``;
        symmetric, with tau = 1 on the diagonal except for constant rows,
        which give NaN throughout. Padded positions give NaN.

    Notes
    -----
    For n objects the n(n-1)/2 pair signs of every row form a matrix S, and
    C - D for all pairs of rows is :math:`S S^T`, one matrix product per
    slice. The tie terms of the p-value come from each row's tie groups, or,
    under pairwise deletion, from the tie groups restricted to the objects a
    pair shares (an einsum over group indicators). Memory grows as
    :math:`m \cdot n^2` per slice for m rows and n objects.

    See Also
    --------
    kendall_tau : the same statistic for one pair.
    scipy.stats.kendalltau : the oracle for each entry.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.9, 0.7, 0.5, 0.1],
    ...                    [0.8, 0.9, 0.4, 0.2],
    ...                    [0.1, 0.5, 0.7, 0.9]])
    >>> rankstats.kendall_tau_matrix(scores).statistic.round(3)
    array([[ 1.   ,  0.667, -1.   ],
           [ 0.667,  1.   , -0.667],
           [-1.   , -0.667,  1.   ]])
    """
    kwargs = {"variant": variant, "method": method, "nan_policy": nan_policy}
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "kendall_tau_matrix", keep=(dim, objects))
        _xr.check_dims("kendall_tau_matrix", scores, {"pairs": dim, "objects": objects})
        pair_dim = f"{dim}_b"
        if pair_dim in scores.dims:
            raise ValueError(f"kendall_tau_matrix: the input already has a {pair_dim!r} dimension")
        return _xr.apply_labelled(
            "kendall_tau_matrix",
            _k.tau_matrix,
            [scores],
            [[dim, objects]],
            {name: (key, [dim, pair_dim]) for name, key in _TAU_OUTPUTS.items()},
            kwargs=kwargs,
            new_dims={pair_dim: dim},
            attrs={"pairs": dim, "objects": objects, **kwargs},
        )
    axes = [
        _xr.numpy_axis("kendall_tau_matrix", "pairs", dim, "template", -2),
        _xr.numpy_axis("kendall_tau_matrix", "objects", objects, "model", -1),
    ]
    return _xr.apply_numpy(
        _k.tau_matrix, [x], [axes], _TAU_OUTPUTS, KendallTauResult, kwargs=kwargs
    )
