"""Which models differ when some lack some tasks or templates? Durbin and Skillings–Mack.

Each block ranks only the models it observes; missing cells are the design,
not values to delete. :func:`durbin` suits balanced incomplete block designs
(and gives Conover's pairwise comparisons there); :func:`skillings_mack`
any pattern of missing cells.
"""

from __future__ import annotations

from .. import _options as o
from .._kernels import incomplete as _ki
from .._statistic import statistic
from ..results import DurbinResult, SkillingsMackResult
from . import _blocks
from .concordance import TIES

__all__ = ["durbin", "skillings_mack"]

_DURBIN = {
    "slice": (
        "statistic",
        "pvalue",
        "dof",
        "f",
        "f_dof1",
        "f_dof2",
        "f_pvalue",
        "n_blocks",
        "n_treatments",
        "n_observations",
        "balanced",
    ),
    "treatment": ("rank_sum",),
    "pair": ("pairwise_statistic", "pairwise_pvalue"),
}
_SKILLINGS_MACK = {
    "slice": ("statistic", "pvalue", "dof", "n_blocks", "n_treatments", "n_observations"),
    "treatment": ("adjusted_rank_sum",),
}


@statistic(
    roles=_blocks.ROLES,
    options={"ties": TIES, "higher_is_better": o.optional_boolean},
    result=DurbinResult,
)
def durbin(x, blocks=None, treatments="model", *, ties="average", higher_is_better=None):
    r"""Durbin's test for incomplete block designs, with Conover's pairwise comparisons.

    Use it when some models lack some blocks (a model not run on some
    templates or tasks): each block ranks only the models it observes.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores; NaN marks a cell the design does not observe. NumPy input
        is ``(..., blocks, treatments)`` unless axes are given.
    {blocks}
    {treatments}
    {ties}
    {higher_is_better}

    Returns
    -------
    xarray.Dataset or DurbinResult
        Per slice: ``statistic`` (T1), ``pvalue`` (chi-square on ``dof``
        = t - 1), the F form ``f`` with ``f_dof1``, ``f_dof2`` and
        ``f_pvalue``, ``n_blocks`` (b), ``n_treatments`` (t),
        ``n_observations`` and ``balanced`` (1.0 for a balanced design, 0.0
        otherwise). Per treatment: ``rank_sum``. Per pair:
        ``pairwise_statistic`` and ``pairwise_pvalue`` (Conover's t test,
        unadjusted; balanced designs only, NaN otherwise).

    Notes
    -----
    Ranks run within each block over its observed cells. With :math:`R_j`
    the rank sum of treatment j, :math:`k_i` the size of block i,
    :math:`A = \sum r_{ij}^2` and :math:`C = \sum_i k_i (k_i + 1)^2 / 4`,

    .. math:: T_1 = (t - 1) \frac{\sum_j (R_j - E_j)^2}{A - C},\quad
              E_j = \sum_{i \ni j} (k_i + 1) / 2,

    :math:`T_2 = \frac{T_1 / (t - 1)}{(n - b - T_1) / (n - b - t + 1)}` on
    F(t - 1, n - b - t + 1), n the observations. In a balanced incomplete
    block design (every block k treatments, every treatment r blocks, every
    pair together in λ blocks) :math:`E_j = r (k + 1) / 2` and these are
    Conover's T1 and T2, tie-corrected through A. On complete data they are
    :func:`rankstats.friedman`'s tie-corrected statistic and its
    Iman–Davenport F, exactly (factor 1). The chi-square reference assumes
    balance: in other designs the statistic is computed the same way but its
    null distribution is only roughly chi-square, so use
    :func:`skillings_mack` there (``balanced`` says which case holds). Pair
    i, j differs by :math:`|R_i - R_j| / \sqrt{(A - C)\, 2 r (1 - T_1 /
    (b (k - 1))) / (b k - b - t + 1)}` on Student's t. Blocks observing
    fewer than two treatments are dropped; there is no ``nan_policy``: the
    missing cells are the design.

    References
    ----------
    .. [1] Durbin, J. (1951). Incomplete blocks in ranking experiments.
       British Journal of Statistical Psychology, 4(2), 85-90.
    .. [2] Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd
       ed., Wiley (the Durbin test for balanced incomplete blocks).

    See Also
    --------
    scikit_posthocs.test_durbin, scikit_posthocs.posthoc_durbin : one slice.
    skillings_mack : any pattern of missing cells.

    Examples
    --------
    Conover's ice-cream example: seven judges (rows) each rank three of
    seven varieties (1 = preferred; NaN = not tasted).

    >>> import numpy as np
    >>> from rankstats import durbin
    >>> n = np.nan
    >>> ranks = np.array([[2, 3, n, 1, n, n, n], [n, 3, 1, n, 2, n, n],
    ...                   [n, n, 2, 1, n, 3, n], [n, n, n, 1, 2, n, 3],
    ...                   [3, n, n, n, 1, 2, n], [n, 3, n, n, n, 1, 2],
    ...                   [3, n, 1, n, n, n, 2]])
    >>> result = durbin(ranks, higher_is_better=False)
    >>> float(result.statistic), round(float(result.pvalue), 4), float(result.f)
    (12.0, 0.062, 8.0)

    Compare with scikit-posthocs (its ``test_durbin`` returns the p-value,
    the statistic and the degrees of freedom; its pandas calls warn on NaN):

    >>> import warnings
    >>> import scikit_posthocs
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     pvalue, statistic, dof = scikit_posthocs.test_durbin(ranks)
    >>> float(statistic), round(float(pvalue), 4), dof
    (12.0, 0.062, 6)
    """
    return _blocks.run(x, _ki.durbin, _DURBIN, {"ties": ties, "higher_is_better": higher_is_better})


@statistic(
    roles=_blocks.ROLES,
    options={"ties": TIES, "tie_correction": o.boolean, "higher_is_better": o.optional_boolean},
    result=SkillingsMackResult,
)
def skillings_mack(
    x,
    blocks=None,
    treatments="model",
    *,
    ties="average",
    tie_correction=True,
    higher_is_better=None,
):
    r"""Skillings and Mack's test: Friedman's test for any pattern of missing cells.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores; NaN marks a cell the design does not observe. NumPy input
        is ``(..., blocks, treatments)`` unless axes are given.
    {blocks}
    {treatments}
    {ties}
    tie_correction : bool, default True
        Use each block's own (tied) ranks for the null covariance, which
        makes the statistic equal Friedman's tie-corrected one on complete
        data. False gives Skillings and Mack's published statistic, which
        assumes untied ranks; the two agree without ties.
    {higher_is_better}

    Returns
    -------
    xarray.Dataset or SkillingsMackResult
        Per slice: ``statistic`` (SM), ``pvalue`` (chi-square on ``dof``),
        ``dof``, ``n_blocks``, ``n_treatments`` and ``n_observations``. Per
        treatment: ``adjusted_rank_sum`` (:math:`A_j`).

    Notes
    -----
    Block i ranks its :math:`k_i` observed cells; a missing cell counts as
    the block's middle rank :math:`(k_i + 1) / 2`. Then

    .. math:: A_j = \sum_i \sqrt{12 / (k_i + 1)}\, (r_{ij} - (k_i + 1) / 2),
              \qquad SM = A^\top \Sigma^{-} A,

    :math:`\Sigma^{-}` the Moore–Penrose inverse of the null covariance of A:
    :math:`\Sigma_{jl} = -\lambda_{jl}` (blocks holding both j and l),
    :math:`\Sigma_{jj} = \sum_{l \ne j} \lambda_{jl}`. With
    ``tie_correction=True`` block i contributes :math:`w_i^2 s_i^2` (its ranks'
    variance, :math:`w_i^2 = 12 / (k_i + 1)`) in place of :math:`k_i - 1`
    and :math:`w_i^2 s_i^2 / (k_i - 1)` in place of 1: the same without
    ties. SM is referred to chi-square on rank(Σ) degrees of freedom: t - 1
    when the treatments are connected through shared blocks, fewer when they
    split into groups never ranked together. On complete data SM is
    Friedman's statistic; on a balanced incomplete design without ties it is
    Durbin's T1. Blocks with fewer than two observations are dropped; there
    is no ``nan_policy``: the missing cells are the design. The chi-square
    reference is asymptotic; small designs with many ties call for a
    permutation p-value.

    References
    ----------
    .. [1] Skillings, J. H., & Mack, G. A. (1981). On the use of a
       Friedman-type statistic in balanced and unbalanced block designs.
       Technometrics, 23(2), 171-177.

    See Also
    --------
    durbin : balanced incomplete block designs, with pairwise comparisons.
    rankstats.friedman : complete blocks.
    scipy.stats.friedmanchisquare : the same statistic on complete blocks.

    Examples
    --------
    Four models on five tasks; model 3 was not run on two tasks:

    >>> import numpy as np
    >>> from rankstats import skillings_mack
    >>> scores = np.array([[0.9, 0.6, 0.3, 0.5], [0.8, 0.7, 0.2, np.nan],
    ...                    [0.7, 0.5, 0.6, 0.4], [0.9, 0.4, 0.1, np.nan],
    ...                    [0.6, 0.8, 0.2, 0.3]])
    >>> result = skillings_mack(scores)
    >>> round(float(result.statistic), 4), round(float(result.pvalue), 4), float(result.dof)
    (9.0666, 0.0284, 3.0)

    On complete blocks it is Friedman's statistic. Compare with SciPy:

    >>> from scipy import stats
    >>> complete = scores[[0, 2, 4]]
    >>> round(float(skillings_mack(complete).statistic), 4)
    5.4
    >>> round(float(stats.friedmanchisquare(*complete.T).statistic), 4)
    5.4
    """
    return _blocks.run(
        x,
        _ki.skillings_mack,
        _SKILLINGS_MACK,
        {"ties": ties, "correction": tie_correction, "higher_is_better": higher_is_better},
    )
