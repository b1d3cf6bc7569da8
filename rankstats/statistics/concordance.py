"""Ranks and rank agreement: Kendall's W and Kendall's tau (pairs and all-pairs matrices)."""

from __future__ import annotations

import numpy as np

from .. import _options as o
from .. import _xr
from .._kernels import concordance as _k
from .._kernels.ranking import ranks as _ranks_kernel
from .._statistic import statistic
from ..errors import DimensionError
from ..results import KendallTauResult, KendallWResult

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

TIES = o.one_of(*o.TIES)
NAN_POLICY = o.one_of(*o.NAN_POLICIES)
_TAU_OPTIONS = {
    "variant": o.one_of("b", "a", "c"),
    "method": o.one_of("auto", "asymptotic", "exact"),
    "nan_policy": NAN_POLICY,
}


@statistic(
    roles={"dim": ("model", -1)}, options={"ties": TIES, "higher_is_better": o.optional_boolean}
)
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
    {ties}
    {higher_is_better}

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
    best_first = _xr.higher_is_better_of(x.original[0], higher_is_better)
    ranks = x.apply(
        _ranks_kernel,
        {"rank": "rank"},
        output_dims={"rank": ["dim"]},
        kwargs={"ties": ties, "higher_is_better": best_first},
        attrs={"higher_is_better": best_first},
    )
    if x.labelled:
        return (
            ranks["rank"]
            .transpose(*x.arrays[0].dims)
            .assign_attrs(ties=ties, higher_is_better=str(best_first))
        )
    return np.moveaxis(ranks, -1, x.roles["dim"]) if np.ndim(ranks) else ranks


@statistic(
    roles={"judges": ("template", -2), "objects": ("model", -1)},
    options={"ties": TIES, "tie_correction": o.boolean, "nan_policy": NAN_POLICY},
    result=KendallWResult,
)
def kendall_w(
    x,
    judges="template",
    objects="model",
    *,
    ties="average",
    tie_correction=True,
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
    {ties}
    {tie_correction}
    {nan_policy}
        ``omit`` drops incomplete judges (listwise deletion).

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

    over the tie groups of each judge. ``tie_correction=False`` drops the
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
    return x.apply(
        _k.concordance,
        _W_OUTPUTS,
        kwargs={
            "ties": ties,
            "correction": tie_correction,
            "nan_policy": nan_policy,
            "statistic": "kendall_w",
        },
    )


@statistic(
    roles={"dim": ("model", -1)}, options=_TAU_OPTIONS, result=KendallTauResult, inputs=("x", "y")
)
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
    return x.apply(
        _k.tau_pair,
        _TAU_OUTPUTS,
        kwargs={"variant": variant, "method": method, "nan_policy": nan_policy},
    )


@statistic(
    roles={"pairs_over": ("template", -2), "objects": ("model", -1)},
    options=_TAU_OPTIONS,
    result=KendallTauResult,
)
def kendall_tau_matrix(
    x,
    pairs_over="template",
    objects="model",
    *,
    variant="b",
    method="auto",
    nan_policy="propagate",
):
    r"""Kendall's tau between every pair of positions along ``pairs_over``, without a loop.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., pairs_over, objects)`` unless axes are
        given.
    pairs_over : str or int, default "template"
        The dimension whose pairs are compared; the result gains a second
        dimension ``f"{pairs_over}_b"`` with renamed copies of its coordinates
        (``template_id_b`` and so on).
    objects : str or int, default "model"
        The dimension holding the ranked objects.
    variant, method, nan_policy
        As :func:`kendall_tau`; ``omit`` compares each pair on the objects
        both observe.

    Returns
    -------
    xarray.Dataset or KendallTauResult
        ``statistic``, ``pvalue`` and ``n_objects`` over
        ``(..., pairs_over, pairs_over_b)``;
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
    pair_dim = f"{pairs_over}_b"
    if x.labelled and pair_dim in x.arrays[0].dims:
        raise DimensionError(f"kendall_tau_matrix: the input already has a {pair_dim!r} dimension")
    return x.apply(
        _k.tau_matrix,
        _TAU_OUTPUTS,
        output_dims={name: ["pairs_over", pair_dim] for name in _TAU_OUTPUTS},
        new_dims={pair_dim: "pairs_over"},
        kwargs={"variant": variant, "method": method, "nan_policy": nan_policy},
    )
