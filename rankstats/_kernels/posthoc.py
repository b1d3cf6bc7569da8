"""Comparisons of treatments after Friedman's test: NumPy kernels over the last axes.

Inputs are ``(..., *blocks, treatments)``: the last ``block_axes`` axes before
the treatments are the blocks, joined into one axis. Average ranks run from 1
(the best) to k. Leading axes are independent slices, computed in one pass.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..errors import DimensionError, OptionError
from .concordance import _scipy_stats, concordance
from .multitest import ADJUST_METHODS, adjust_last
from .ranking import check_choice, column_rank_sums, rank_last, usable_judges, warn_nan


def join_blocks(x, block_axes: int):
    """``(..., *blocks, k)`` as ``(..., b, k)``: the block axes joined into one."""
    x = np.asarray(x, dtype=float)
    if block_axes < 1 or x.ndim < block_axes + 1:
        raise DimensionError(
            f"need {block_axes} block axis(es) and a treatment axis; got shape {x.shape}"
        )
    lead = x.shape[: x.ndim - block_axes - 1]
    return x.reshape(*lead, -1, x.shape[-1])


def studentized_range_quantile(level, k):
    """``q`` with P(range of k standard normals > q) = 1 - level, for an array of k.

    The quantile is computed once per distinct k (it is a root search over
    a numerical integral); NaN where k < 2.
    """
    k = np.asarray(k, dtype=float)
    ok = np.isfinite(k) & (k >= 2)
    distinct, inverse = np.unique(np.where(ok, k, 2.0), return_inverse=True)
    values = _scipy_stats().studentized_range.ppf(level, distinct, np.inf)
    return np.where(ok, values[inverse.reshape(k.shape)], np.nan)


def studentized_range_sf(q, k):
    """P(range of k standard normals > q), infinite degrees of freedom, elementwise.

    Each distinct (q, k) is integrated once: average ranks are often tied,
    so the pairs of a slice share few distinct differences.
    """
    q, k = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(k, dtype=float))
    ok = np.isfinite(q) & np.isfinite(k) & (k >= 2)
    if not ok.any():
        return np.full(q.shape, np.nan)
    pairs = np.stack([q[ok], k[ok]], axis=-1)
    distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
    tail = _scipy_stats().studentized_range.sf(distinct[:, 0], distinct[:, 1], np.inf)
    out = np.full(q.shape, np.nan)
    out[ok] = tail[inverse.ravel()]
    return out


def critical_difference(k, n, *, alpha=0.05, test="nemenyi"):
    """Demšar's critical difference of average ranks for k treatments and n blocks.

    ``nemenyi``: q / sqrt(2) with q the studentized-range quantile at
    1 - alpha (infinite df); ``bonferroni_dunn``: the normal quantile at
    1 - alpha / (2 (k - 1)). Either is multiplied by sqrt(k (k + 1) / (6 n)).
    Returns ``{"critical_difference", "q_alpha"}``.
    """
    check_choice("test", test, ("nemenyi", "bonferroni_dunn"))
    _check_alpha(alpha)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = (k >= 2) & (n >= 1)
    if test == "nemenyi":
        q_alpha = studentized_range_quantile(1.0 - alpha, k) / np.sqrt(2.0)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            q_alpha = special.ndtri(1.0 - alpha / (2.0 * (k - 1.0)))
    q_alpha = np.where(ok, q_alpha, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        standard_error = np.sqrt(k * (k + 1.0) / (6.0 * n))
    return {
        "critical_difference": np.where(ok, q_alpha * standard_error, np.nan),
        "q_alpha": q_alpha,
    }


def _check_alpha(alpha) -> None:
    if not 0.0 < float(alpha) < 1.0:
        raise OptionError(f"alpha={alpha!r} must lie strictly between 0 and 1")


def average_ranks(
    x,
    *,
    ties="average",
    correction=True,
    nan_policy="propagate",
    higher_is_better=True,
    statistic="nemenyi",
):
    """Friedman's test and the average rank of every treatment of ``(..., b, k)``.

    Returns the Friedman outputs of :func:`concordance` plus ``average_rank``
    (``(..., k)``; NaN for absent treatments and undefined slices) and the
    standard error ``se`` = sqrt(k (k + 1) / (6 b)) of an average rank
    difference under the null hypothesis.
    """
    omnibus = concordance(
        x,
        ties=ties,
        correction=correction,
        nan_policy=nan_policy,
        higher_is_better=higher_is_better,
        statistic=statistic,
        roles=("blocks", "treatments"),
    )
    used, present, _ = usable_judges(x, nan_policy, statistic)
    if ties == "average":
        rank_sums, _ = column_rank_sums(x, ties, higher_is_better, rows=used)
    else:
        rank_sums = rank_last(x, ties, higher_is_better, fill=0.0, rows=used)[0].sum(-2)
    n, k = omnibus["n_judges"], omnibus["n_objects"]
    defined = ~np.isnan(omnibus["w"])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = rank_sums / n[..., None]
        se = np.sqrt(k * (k + 1.0) / (6.0 * n))
    omnibus["average_rank"] = np.where(defined[..., None] & present, mean, np.nan)
    omnibus["se"] = np.where(defined, se, np.nan)
    return omnibus


def _friedman_fields(omnibus):
    return {
        "friedman_statistic": omnibus["chi2"],
        "friedman_pvalue": omnibus["pvalue"],
        "dof": omnibus["dof"],
        "n_blocks": omnibus["n_judges"],
        "n_treatments": omnibus["n_objects"],
    }


def nemenyi(
    x,
    *,
    alpha=0.05,
    ties="average",
    correction=True,
    nan_policy="propagate",
    higher_is_better=True,
    block_axes=1,
):
    """Friedman's test with Nemenyi's all-pairs comparison of average ranks.

    Returns a dict: per slice the Friedman fields, ``critical_difference`` and
    ``q_alpha``; per treatment ``average_rank``; per pair of treatments
    ``statistic`` = |R_i - R_j| / se and ``pvalue`` = P(studentized range of k
    > statistic * sqrt(2)), infinite df (1 on the diagonal).
    """
    _check_alpha(alpha)
    x = join_blocks(x, block_axes)
    omnibus = average_ranks(
        x,
        ties=ties,
        correction=correction,
        nan_policy=nan_policy,
        higher_is_better=higher_is_better,
        statistic="nemenyi",
    )
    mean, se, k = omnibus["average_rank"], omnibus["se"], omnibus["n_objects"]
    with np.errstate(invalid="ignore"):
        q = np.abs(mean[..., :, None] - mean[..., None, :]) / se[..., None, None]
    kk = np.broadcast_to(k[..., None, None], q.shape)
    upper = np.triu(np.ones(q.shape[-2:], dtype=bool), 1)
    pvalue = np.full(q.shape, np.nan)
    pvalue[..., upper] = studentized_range_sf(q[..., upper] * np.sqrt(2.0), kk[..., upper])
    pvalue = np.where(upper, pvalue, np.swapaxes(pvalue, -1, -2))
    diagonal = np.eye(q.shape[-1], dtype=bool) & ~np.isnan(q)
    pvalue = np.where(diagonal, 1.0, pvalue)
    cd = critical_difference(k, omnibus["n_judges"], alpha=alpha, test="nemenyi")
    return {
        **_friedman_fields(omnibus),
        "average_rank": mean,
        "statistic": q,
        "pvalue": pvalue,
        "critical_difference": np.where(np.isnan(se), np.nan, cd["critical_difference"]),
        "q_alpha": cd["q_alpha"],
    }


def bonferroni_dunn(
    x,
    *,
    control,
    alpha=0.05,
    correction="bonferroni",
    ties="average",
    nan_policy="propagate",
    higher_is_better=True,
    block_axes=1,
):
    """Every treatment against the ``control`` (an index on the last axis).

    ``statistic`` = (R_j - R_control) / se, two-sided normal ``pvalue``, and
    ``pvalue_adjusted`` over the k - 1 comparisons (Bonferroni, or Holm's
    step-down); NaN for the control itself. ``critical_difference`` uses the
    normal quantile at 1 - alpha / (2 (k - 1)).
    """
    _check_alpha(alpha)
    check_choice("correction", correction, ADJUST_METHODS)
    x = join_blocks(x, block_axes)
    k_all = x.shape[-1]
    if not -k_all <= int(control) < k_all:
        raise OptionError(
            f"bonferroni_dunn: control={control!r} is not a treatment position (there are {k_all})"
        )
    control = int(control) % k_all
    omnibus = average_ranks(
        x,
        ties=ties,
        nan_policy=nan_policy,
        higher_is_better=higher_is_better,
        statistic="bonferroni_dunn",
    )
    mean, se, k = omnibus["average_rank"], omnibus["se"], omnibus["n_objects"]
    reference = mean[..., control]
    defined = ~np.isnan(se)
    warn_nan(
        "bonferroni_dunn",
        defined & np.isnan(reference),
        "the control treatment has no score",
        among=defined,
    )
    with np.errstate(invalid="ignore"):
        z = (mean - reference[..., None]) / se[..., None]
    z[..., control] = np.nan
    pvalue = 2.0 * special.ndtr(-np.abs(z))
    cd = critical_difference(k, omnibus["n_judges"], alpha=alpha, test="bonferroni_dunn")
    return {
        **_friedman_fields(omnibus),
        "average_rank": mean,
        "statistic": z,
        "pvalue": pvalue,
        "pvalue_adjusted": adjust_last(pvalue, correction),
        "critical_difference": np.where(defined, cd["critical_difference"], np.nan),
        "q_alpha": cd["q_alpha"],
    }


def clique_runs(average_rank, significant):
    """The groups of treatments joined by a bar in a critical-difference diagram.

    ``average_rank`` is ``(..., k)``, ``significant`` ``(..., k, k)`` booleans.
    In rank order (ties by position), a run of consecutive treatments is a
    group when no pair in it differs significantly; the groups are the runs
    of two or more that no longer run contains (Demšar 2006; Orange).

    Returns ``order`` (treatment positions, best first; treatments without a
    rank last), ``stop`` (for the run starting at each sorted position, the
    sorted position of its last member) and ``maximal`` (whether that run is
    a group).
    """
    average_rank = np.asarray(average_rank, dtype=float)
    significant = np.asarray(significant, dtype=bool)
    k = average_rank.shape[-1]
    missing = np.isnan(average_rank)
    order = np.argsort(np.where(missing, np.inf, average_rank), axis=-1, kind="stable")
    ranked = ~np.take_along_axis(missing, order, axis=-1)
    rows = np.take_along_axis(significant, order[..., :, None], axis=-2)
    sig = np.take_along_axis(rows, order[..., None, :], axis=-1)
    later = np.arange(k)[:, None] < np.arange(k)
    bad = later & (sig | ~ranked[..., :, None] | ~ranked[..., None, :])
    # bad pairs (a, b), a < b, with a >= i and b <= j: [i, j] is a group iff none
    inside = np.cumsum(np.flip(np.cumsum(np.flip(bad, -2), axis=-2), -2), axis=-1)
    clique = (inside == 0) & (np.arange(k)[:, None] <= np.arange(k))
    stop = np.arange(k) + clique.sum(axis=-1) - 1
    previous = np.concatenate([np.full((*stop.shape[:-1], 1), -1), stop[..., :-1]], axis=-1)
    maximal = (stop > np.arange(k)) & (stop > previous)
    return {"order": order, "stop": stop, "maximal": maximal}
