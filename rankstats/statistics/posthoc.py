"""Which models differ? Tests across models on one set of tasks.

After Friedman's test says that models differ (:func:`nemenyi` reports it
too), :func:`nemenyi` compares every pair by average rank, with Demšar's
critical difference; :func:`bonferroni_dunn` compares every model with a
control. :func:`durbin` and :func:`skillings_mack` test designs in which
some models lack some tasks or templates; :func:`pairwise_mcnemar` compares
models item by item, with the multiple-testing adjustment of
:func:`adjust_pvalues` (``p_adjust``).

:func:`durbin` and :func:`skillings_mack` live in
:mod:`rankstats.statistics.incomplete`, :func:`adjust_pvalues` and
:func:`pairwise_mcnemar` in :mod:`rankstats.statistics.multitest`; all are
offered here and from :mod:`rankstats` too.

Blocks are the dimensions ranked within (e.g. ``("task",)`` on per-task
MaxP or AvgP, or ``("task", "template")`` on per-template scores), joined
into one axis of blocks; treatments are what is ranked (``"model"``). Every
other dimension is a slice, computed independently in the same call.
"""

from __future__ import annotations

import numpy as np

from .. import _options as o
from .. import _xr
from .._kernels import posthoc as _kp
from .._statistic import documented, statistic
from ..errors import DimensionError, InputTypeError, OptionError
from ..results import BonferroniDunnResult, NemenyiResult
from . import _blocks
from .concordance import NAN_POLICY, TIES
from .incomplete import durbin, skillings_mack
from .multitest import P_ADJUST, adjust_pvalues, pairwise_mcnemar

__all__ = [
    "adjust_pvalues",
    "bonferroni_dunn",
    "critical_difference",
    "durbin",
    "nemenyi",
    "nonsignificant_groups",
    "pairwise_mcnemar",
    "skillings_mack",
]

_FRIEDMAN = ("friedman_statistic", "friedman_pvalue", "dof", "n_blocks", "n_treatments")
_NEMENYI = {
    "slice": ("critical_difference", "q_alpha", *_FRIEDMAN),
    "treatment": ("average_rank",),
    "pair": ("statistic", "pvalue"),
}
_DUNN = {
    "slice": ("critical_difference", "q_alpha", *_FRIEDMAN),
    "treatment": ("statistic", "pvalue", "pvalue_adjusted", "average_rank"),
}
_TESTS = o.one_of("nemenyi", "bonferroni_dunn")


@documented
def critical_difference(n_treatments, n_blocks, alpha=0.05, *, test="nemenyi"):
    r"""Demšar's critical difference of average ranks.

    Two average ranks that differ by more than this differ significantly.

    Parameters
    ----------
    n_treatments, n_blocks : int or array_like
        k (models compared) and N (blocks, e.g. tasks); broadcast together.
    {alpha}
        The level is family-wise.
    test : {"nemenyi", "bonferroni_dunn"}, default "nemenyi"
        All pairs (Nemenyi) or every treatment against one control.

    Returns
    -------
    float or numpy.ndarray
        The critical difference, shaped like the broadcast inputs (a number,
        not a result object: this is a table lookup, not a test); NaN where
        k < 2 or N < 1.

    Notes
    -----
    .. math:: CD = q_\alpha \sqrt{k (k + 1) / (6 N)}

    For Nemenyi, :math:`q_\alpha` is the upper-alpha quantile of the
    studentized range of k normal variables with infinite degrees of
    freedom, divided by :math:`\sqrt 2`
    (``scipy.stats.studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``);
    for Bonferroni–Dunn it is the normal quantile at
    :math:`1 - \alpha / (2 (k - 1))`.

    References
    ----------
    .. [1] Demšar, J. (2006). Statistical comparisons of classifiers over
       multiple data sets. JMLR, 7, 1-30 (the table of critical values).

    See Also
    --------
    nemenyi, bonferroni_dunn : the tests that report it per slice.
    scipy.stats.studentized_range : the distribution behind Nemenyi's q.

    Examples
    --------
    Demšar's example: four classifiers on fourteen data sets.

    >>> import numpy as np
    >>> from rankstats import critical_difference
    >>> round(float(critical_difference(4, 14)), 4)
    1.2536
    >>> round(float(critical_difference(4, 14, test="bonferroni_dunn")), 4)
    1.1681

    Compare with SciPy:

    >>> from scipy import stats
    >>> q = stats.studentized_range.ppf(0.95, 4, np.inf) / np.sqrt(2)
    >>> round(float(q * np.sqrt(4 * 5 / (6 * 14))), 4)
    1.2536
    """
    checked = o.check_options(
        "critical_difference",
        {"alpha": o.probability, "test": _TESTS},
        {"alpha": alpha, "test": test},
    )
    return _kp.critical_difference(n_treatments, n_blocks, **checked)["critical_difference"][()]


@statistic(
    roles=_blocks.ROLES,
    options={
        "alpha": o.probability,
        "ties": TIES,
        "tie_correction": o.boolean,
        "nan_policy": NAN_POLICY,
        "higher_is_better": o.optional_boolean,
    },
    result=NemenyiResult,
)
def nemenyi(
    x,
    blocks=None,
    treatments="model",
    *,
    alpha=0.05,
    ties="average",
    tie_correction=True,
    nan_policy="propagate",
    higher_is_better=None,
):
    r"""Friedman's test over models with Nemenyi's comparison of every pair.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., blocks, treatments)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    {blocks}
    {treatments}
    {alpha}
        The level of the critical difference (family-wise).
    {ties}
    tie_correction : bool, default True
        Tie correction of the Friedman statistic, as :func:`rankstats.friedman`.
    {nan_policy}
        ``omit`` drops blocks missing a treatment (listwise deletion);
        :func:`skillings_mack` and :func:`durbin` use them instead.
        Treatments with no score in a slice and blocks with no score are
        structure and drop out first.
    {higher_is_better}

    Returns
    -------
    xarray.Dataset or NemenyiResult
        Per pair of treatments (dims ``treatments`` and
        ``f"{treatments}_b"``): ``statistic``
        :math:`|R_i - R_j| / \sqrt{k (k + 1) / (6 N)}` and ``pvalue``
        (1 on the diagonal). Per treatment: ``average_rank`` (1 = best).
        Per slice: ``critical_difference``, ``q_alpha``, the Friedman
        ``friedman_statistic``, ``friedman_pvalue`` and ``dof``, and
        ``n_blocks`` (N) and ``n_treatments`` (k).

    Notes
    -----
    With :math:`R_j` the average rank of treatment j over N blocks, the
    p-value of a pair is :math:`P(Q_{k,\infty} > \sqrt 2\, |R_i - R_j| / SE)`,
    :math:`SE = \sqrt{k (k + 1) / (6 N)}`, Q the studentized range: one
    family-wise test of all pairs, no further adjustment needed. The pair
    differs at level alpha exactly when :math:`|R_i - R_j| > CD`
    (:func:`critical_difference`). The standard error assumes untied ranks;
    ties make the test conservative. The omnibus statistic is Friedman's
    (as :func:`rankstats.friedman` with blocks and treatments as given);
    Demšar recommends the post-hoc test only when it rejects.

    References
    ----------
    .. [1] Nemenyi, P. B. (1963). Distribution-free multiple comparisons.
       PhD thesis, Princeton University.
    .. [2] Demšar, J. (2006). Statistical comparisons of classifiers over
       multiple data sets. JMLR, 7, 1-30.

    See Also
    --------
    scikit_posthocs.posthoc_nemenyi_friedman : the same p-values, one slice.
    nonsignificant_groups : the groups no pair test tells apart.
    rankstats.plot.posthoc.plot_critical_difference : Demšar's diagram.

    Examples
    --------
    Three models (columns) on five tasks (rows):

    >>> import numpy as np
    >>> from rankstats import nemenyi
    >>> scores = np.array([[0.9, 0.6, 0.3], [0.8, 0.7, 0.2], [0.7, 0.5, 0.6],
    ...                    [0.9, 0.4, 0.1], [0.6, 0.8, 0.2]])
    >>> result = nemenyi(scores)
    >>> result.average_rank
    array([1.2, 2. , 2.8])
    >>> round(float(result.critical_difference), 3), round(float(result.pvalue[0, 2]), 4)
    (1.482, 0.0307)

    Compare with scikit-posthocs:

    >>> import scikit_posthocs
    >>> expected = scikit_posthocs.posthoc_nemenyi_friedman(scores).to_numpy()
    >>> bool(np.allclose(result.pvalue, expected))
    True
    """
    return _blocks.run(
        x,
        _kp.nemenyi,
        _NEMENYI,
        {
            "alpha": alpha,
            "ties": ties,
            "correction": tie_correction,
            "nan_policy": nan_policy,
            "higher_is_better": higher_is_better,
        },
    )


@statistic(
    roles=_blocks.ROLES,
    options={
        "alpha": o.probability,
        "p_adjust": P_ADJUST,
        "ties": TIES,
        "nan_policy": NAN_POLICY,
        "higher_is_better": o.optional_boolean,
    },
    positions={"control": "treatments"},
    result=BonferroniDunnResult,
)
def bonferroni_dunn(
    x,
    control,
    blocks=None,
    treatments="model",
    *,
    alpha=0.05,
    p_adjust="bonferroni",
    ties="average",
    nan_policy="propagate",
    higher_is_better=None,
):
    r"""Every model against a control model, by average rank (Bonferroni–Dunn).

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores, as for :func:`nemenyi`.
    control : label or int
        The control treatment: a label of ``treatments`` (labelled input) or
        a position along it.
    {blocks}
    {treatments}
    {alpha}
        The level of the critical difference (family-wise, Bonferroni).
    {p_adjust}
        ``"bonferroni"`` is Dunn's test; Holm's step-down procedure, which
        Demšar (2006) also describes for comparisons with a control, is
        uniformly more powerful. The family is the k - 1 comparisons of a
        slice.
    {ties}
    {nan_policy}
        ``omit`` drops blocks missing a treatment (listwise deletion).
    {higher_is_better}

    Returns
    -------
    xarray.Dataset or BonferroniDunnResult
        Per treatment: ``statistic`` :math:`z_j = (R_j - R_c) / SE` (positive:
        ranked worse than the control), two-sided ``pvalue``,
        ``pvalue_adjusted`` and ``average_rank``; NaN for the control itself.
        Per slice: ``critical_difference``, ``q_alpha``, the tie-corrected
        Friedman ``friedman_statistic``, ``friedman_pvalue`` and ``dof``,
        ``n_blocks`` and ``n_treatments``.

    Notes
    -----
    :math:`SE = \sqrt{k (k + 1) / (6 N)}`; the critical difference uses
    :math:`q_\alpha = z_{1 - \alpha / (2 (k - 1))}`, so a model differs from
    the control at level alpha (Bonferroni) exactly when
    :math:`|R_j - R_c| > CD`. A slice whose control has no score gives NaN
    (with a :class:`~rankstats.errors.RankstatsWarning`).

    References
    ----------
    .. [1] Dunn, O. J. (1961). Multiple comparisons among means. JASA,
       56(293), 52-64.
    .. [2] Demšar, J. (2006). Statistical comparisons of classifiers over
       multiple data sets. JMLR, 7, 1-30.

    See Also
    --------
    scikit_posthocs.posthoc_siegel_friedman : the same z-tests, all pairs.
    statsmodels.stats.multitest.multipletests : the adjustment, one family.
    nemenyi : every pair instead of every model against one.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import bonferroni_dunn
    >>> scores = np.array([[0.9, 0.6, 0.3], [0.8, 0.7, 0.2], [0.7, 0.5, 0.6],
    ...                    [0.9, 0.4, 0.1], [0.6, 0.8, 0.2]])
    >>> result = bonferroni_dunn(scores, control=0)
    >>> result.statistic.round(4)
    array([   nan, 1.2649, 2.5298])
    >>> result.pvalue_adjusted.round(4)
    array([   nan, 0.4118, 0.0228])

    Compare with scikit-posthocs and statsmodels:

    >>> import scikit_posthocs
    >>> from statsmodels.stats.multitest import multipletests
    >>> raw = scikit_posthocs.posthoc_siegel_friedman(scores).to_numpy()[0, 1:]
    >>> multipletests(raw, method="bonferroni")[1].round(4)
    array([0.4118, 0.0228])
    """
    return _blocks.run(
        x,
        _kp.bonferroni_dunn,
        _DUNN,
        {
            "alpha": alpha,
            "correction": p_adjust,
            "ties": ties,
            "nan_policy": nan_policy,
            "higher_is_better": higher_is_better,
            "control": x.positions["control"],
        },
    )


# --------------------------------------------------------------------------- groups


def nonsignificant_groups(result, *, alpha=None, names=None) -> list[list]:
    """The groups of treatments that no test tells apart, in rank order.

    Parameters
    ----------
    result : xarray.Dataset or NemenyiResult
        One slice of :func:`nemenyi` (select the other dims first).
    alpha : float, optional
        Call a pair different when its ``pvalue`` is below ``alpha``.
        Default: when its average ranks differ by more than the critical
        difference (the same decision at the result's own alpha).
    names : sequence, optional
        Treatment names for a NumPy result (default: positions).

    Returns
    -------
    list of lists
        Each group (two or more treatments, best first) is a maximal run of
        treatments consecutive in average rank in which no pair differs,
        as the bars of Demšar's critical-difference diagram (and Orange's).

    Notes
    -----
    For Nemenyi's test these runs are exactly the maximal cliques of the
    "not different" graph: a pair differs when its average ranks differ by
    more than the critical difference, which is monotone in rank distance.
    With ``alpha`` the decision is the p-value's, the same one at the
    result's own level.

    References
    ----------
    .. [1] Demšar, J. (2006). Statistical comparisons of classifiers over
       multiple data sets. JMLR, 7, 1-30 (the critical-difference diagram).

    See Also
    --------
    nemenyi : the test whose result this reads.
    rankstats.plot.posthoc.plot_critical_difference : the groups as bars.
    scikit_posthocs.critical_difference_diagram : the diagram from a p-value matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import nemenyi, nonsignificant_groups
    >>> scores = np.array([[0.9, 0.6, 0.3], [0.8, 0.7, 0.2], [0.7, 0.5, 0.6],
    ...                    [0.9, 0.4, 0.1], [0.6, 0.8, 0.2]])
    >>> nonsignificant_groups(nemenyi(scores), names=["a", "b", "c"])
    [['a', 'b'], ['b', 'c']]
    """
    alpha = o.check_options(
        "nonsignificant_groups", {"alpha": o.optional(o.probability)}, {"alpha": alpha}
    )["alpha"]
    mean, significant, labels = _one_slice(result, alpha, names)
    runs = _kp.clique_runs(mean, significant)
    order, stop = runs["order"], runs["stop"]
    return [[labels[j] for j in order[i : stop[i] + 1]] for i in np.flatnonzero(runs["maximal"])]


def _one_slice(result, alpha, names):
    """Average ranks, the significance matrix and the treatment labels of one slice."""
    if _xr.is_labelled(result):
        treatments = result.attrs.get("treatments", "model")
        if f"{treatments}_b" not in result.dims or "average_rank" not in result:
            raise DimensionError(
                f"needs one slice of a nemenyi result (average ranks and pairwise p-values "
                f"over {treatments!r} and {treatments + '_b'!r}); got dims {tuple(result.dims)}"
            )
        extra = [d for d in result["average_rank"].dims if d != treatments]
        if extra:
            raise DimensionError(
                f"one slice needed; select along {', '.join(map(repr, extra))} first "
                f"(e.g. result.isel({extra[0]}=0))"
            )
        labels = result[treatments].values.tolist() if treatments in result.coords else None
        mean = result["average_rank"].values
        pvalue = result["pvalue"].transpose(treatments, f"{treatments}_b").values
        cd = float(result["critical_difference"])
    else:
        if not hasattr(result, "average_rank") or np.ndim(getattr(result, "pvalue", 0)) < 2:
            raise InputTypeError(f"needs a nemenyi result, not {type(result).__name__}")
        mean = np.asarray(result.average_rank, dtype=float)
        if mean.ndim != 1:
            raise DimensionError(
                f"one slice needed; the result has average ranks of shape {mean.shape}"
            )
        labels, pvalue, cd = None, np.asarray(result.pvalue), float(result.critical_difference)
    labels = list(names) if names is not None else labels or list(range(mean.size))
    if len(labels) != mean.size:
        raise OptionError(f"names: {len(labels)} name(s) given for {mean.size} treatments")
    if alpha is None:
        significant = np.abs(mean[:, None] - mean[None, :]) > cd
    else:
        significant = ~(pvalue >= alpha)
    return mean, significant, labels
