"""Does the template matter? Friedman's test, McNemar's test and Cochran's Q."""

from __future__ import annotations

import numpy as np

from .. import _options as o
from .._kernels import concordance as _kc
from .._kernels import significance as _ks
from .._statistic import statistic
from ..errors import InputTypeError
from ..results import CochranQResult, FriedmanResult, McNemarResult, _make_result
from .concordance import NAN_POLICY, TIES

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
_MCNEMAR_OUTPUTS = {
    name: name for name in ("statistic", "pvalue", "b", "c", "n_samples", "n_dropped")
}
_COCHRAN_OUTPUTS = {
    name: name for name in ("statistic", "pvalue", "dof", "n_blocks", "n_treatments")
}


@statistic(
    roles={"blocks": ("model", -2), "treatments": ("template", -1)},
    options={"ties": TIES, "tie_correction": o.boolean, "nan_policy": NAN_POLICY},
    result=FriedmanResult,
)
def friedman(
    x,
    blocks="model",
    treatments="template",
    *,
    ties="average",
    tie_correction=True,
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
    {ties}
    tie_correction : bool, default True
        Divide the statistic by the tie correction, as
        :func:`scipy.stats.friedmanchisquare` does.
    {nan_policy}
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
    return x.apply(
        _kc.concordance,
        _FRIEDMAN_OUTPUTS,
        kwargs={
            "ties": ties,
            "correction": tie_correction,
            "nan_policy": nan_policy,
            "statistic": "friedman",
            "roles": ("blocks", "treatments"),
        },
    )


def with_dropped(out: dict, observed) -> dict:
    """Add ``n_dropped`` to a McNemar kernel's outputs: the samples a pair leaves out.

    ``observed`` marks the scores of the ``(..., m, samples)`` block the
    pairs come from. A sample observed at some position of its slice but
    lacking on either side of a pair is left out of that pair's ``b``, ``c``
    and ``n_samples``; pairs with an absent side (``b`` is NaN) drop nothing.
    """
    present = observed.any(-2).sum(-1).astype(float)[..., None, None]
    out["n_dropped"] = np.where(np.isnan(out["b"]), 0.0, present - out["n_samples"])
    return out


def _mcnemar_matrix(x, **kwargs) -> dict:
    x = np.asarray(x, dtype=float)
    return with_dropped(_ks.mcnemar_matrix(x, **kwargs), ~np.isnan(x))


def _mcnemar_pair(x, y, **kwargs) -> dict:
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    out = _mcnemar_matrix(np.stack([x, y], axis=-2), **kwargs)
    return {key: value[..., 0, 1] for key, value in out.items()}


@statistic(
    roles={"pairs_over": ("template", -2), "dim": ("sample", -1)},
    options={"method": o.one_of("exact", "midp", "chi2", "chi2_cc"), "nan_policy": NAN_POLICY},
    result=McNemarResult,
    inputs=("x", "y"),
    optional_roles=("pairs_over",),
)
def mcnemar(x, y=None, *, dim="sample", pairs_over=None, method="exact", nan_policy="propagate"):
    r"""McNemar's test on paired binary correctness.

    Either compares ``x`` with ``y`` (e.g. two templates, or two models,
    scored on the same samples), or, with ``pairs_over``, every pair of positions
    along one dimension of ``x`` at once.

    Parameters
    ----------
    x, y : array_like, xarray.DataArray or score cube
        Binary scores (0 or 1; NaN for missing) along ``dim``. Labelled
        inputs must agree on every shared coordinate.
    dim : str or int, default "sample"
        The dimension of the paired observations (axis for NumPy input).
    pairs_over : str or int, optional
        With ``y`` omitted: test every pair of positions along this dimension
        (e.g. ``"template"``); the result gains ``f"{pairs_over}_b"``.
    method : {"exact", "midp", "chi2", "chi2_cc"}
        Exact binomial, mid-p, chi-square, or chi-square with Edwards'
        continuity correction :math:`(|b - c| - 1)^2 / (b + c)` (unclamped, as
        R and statsmodels compute it).
    {nan_policy}
        ``omit`` is pairwise deletion of samples missing on either side
        (``n_dropped`` counts them). Samples missing everywhere (padding)
        drop out first.

    Returns
    -------
    xarray.Dataset or McNemarResult
        ``statistic`` (min(b, c) for the exact and mid-p tests, the chi-square
        otherwise), two-sided ``pvalue``, the discordant counts ``b`` (x right,
        y wrong) and ``c`` (x wrong, y right), ``n_samples`` (the samples both
        sides score, which the test uses) and ``n_dropped`` (the samples of
        the slice that one side lacks, left out of the pair: pairwise
        deletion under ``omit``; under ``propagate`` a pair with
        ``n_dropped > 0`` is NaN). With ``pairs_over``, a sample that both
        positions of a pair lack but another position has counts as dropped
        for that pair. A pair with an absent side (no score at all) drops
        nothing: it is not tested.

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

    Under ``nan_policy="omit"`` a sample missing on one side is left out of
    the pair, and counted:

    >>> import numpy as np
    >>> result = rankstats.mcnemar([1, 1, np.nan, 0], [0, 1, 1, np.nan], nan_policy="omit")
    >>> int(result.n_samples), int(result.n_dropped)
    (2, 2)
    """
    kwargs = {"method": method, "nan_policy": nan_policy}
    if (y is None) == (pairs_over is None):
        raise InputTypeError(
            "mcnemar: give either y, or pairs_over= to test every pair along a dimension, not both"
        )
    if y is not None:
        if not x.labelled and x.roles["dim"] in (-1, 0):
            x_scores, y_scores = (np.asarray(a, dtype=float) for a in x.arrays)
            found = _ks.mcnemar_complete(x_scores, y_scores, method)
            if found is not None:
                return _make_result(McNemarResult, found)
        return x.apply(_mcnemar_pair, _MCNEMAR_OUTPUTS, core=["dim"], kwargs=kwargs)
    pair_dim = f"{pairs_over}_b" if x.labelled else None
    return x.apply(
        _mcnemar_matrix,
        _MCNEMAR_OUTPUTS,
        core=["pairs_over", "dim"],
        output_dims={name: ["pairs_over", pair_dim] for name in _MCNEMAR_OUTPUTS},
        new_dims={pair_dim: "pairs_over"} if x.labelled else None,
        kwargs=kwargs,
    )


@statistic(
    roles={"blocks": ("sample", -2), "treatments": ("template", -1)},
    options={"nan_policy": NAN_POLICY},
    result=CochranQResult,
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
    {nan_policy}
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
    return x.apply(_ks.cochran_q, _COCHRAN_OUTPUTS, kwargs={"nan_policy": nan_policy})
