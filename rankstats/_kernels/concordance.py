"""Kendall's W, the Friedman test, and Kendall's tau: NumPy kernels over the last axes.

Blocks are ``(..., judges, objects)``: each judge (row) ranks the objects
(columns). Leading axes are independent slices, computed in one pass.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from .ranking import (
    check_choice,
    missing_among_present,
    rank_last,
    sum_over_tie_groups,
    usable_judges,
    warn_nan,
)

TAU_VARIANTS = ("a", "b", "c")
TAU_METHODS = ("auto", "asymptotic", "exact")
# Exact null distributions of the discordant-pair count are tabulated up to this n.
MAX_EXACT_N = 170


def concordance(
    x,
    *,
    ties="average",
    correction=True,
    nan_policy="propagate",
    higher_is_better=True,
    statistic="kendall_w",
    roles=("judges", "objects"),
):
    """Kendall's W over ``(..., judges, objects)`` and the tests derived from it.

    Returns a dict of arrays shaped like the leading axes: ``w``, ``chi2``,
    ``dof``, ``pvalue``, the F approximation with Iman–Davenport degrees of
    freedom (``f``, ``f_dof1``, ``f_dof2``, ``f_pvalue``) and with
    Kendall–Babington Smith's (``f_kbs_dof1``, ``f_kbs_dof2``, ``f_kbs_pvalue``),
    and the effective ``n_judges`` and ``n_objects``.
    """
    x = np.asarray(x, dtype=float)
    used, objects_present, poisoned = usable_judges(x, nan_policy, statistic)
    keep = used[..., :, None] & objects_present[..., None, :]
    ranks, _ = rank_last(np.where(keep, x, np.nan), ties, higher_is_better)
    ranks = np.where(keep, ranks, 0.0)
    m = used.sum(axis=-1).astype(float)
    n = objects_present.sum(axis=-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rank_sums = ranks.sum(axis=-2)
        mean_rank_sum = rank_sums.sum(axis=-1) / n
        spread = np.where(objects_present, rank_sums - mean_rank_sum[..., None], 0.0)
        s = (spread**2).sum(axis=-1)
        if correction:
            # Sum over judges of the observed rank variance; with average ranks this is
            # (m(n^3 - n) - sum T) / 12, Kendall's tie-corrected denominator divided by m.
            judge_mean = ranks.sum(axis=-1) / n[..., None]
            judge_spread = np.where(keep, ranks - judge_mean[..., None], 0.0)
            denominator = m * (judge_spread**2).sum(axis=(-2, -1))
        else:
            denominator = m**2 * (n**3 - n) / 12.0
        w = np.maximum(s / denominator, 0.0)
        # rounding may overshoot 1 by an ulp; beyond that W is kept as computed, since the
        # uncorrected form with non-average ranks is not bounded by 1 (see kendall_w Notes)
        w = np.where((w > 1.0) & (w < 1.0 + 1e-12), 1.0, w)

    few_judges = m < 2
    few_objects = n < 2
    all_tied = ~few_judges & ~few_objects & (denominator == 0)
    # a slice with no score at all is structure (a model never run on a task), not news
    telling = ~poisoned & objects_present.any(axis=-1)
    judges, objects = roles
    warn_nan(statistic, few_judges & telling, f"fewer than two {judges}")
    warn_nan(statistic, few_objects & ~few_judges & telling, f"fewer than two {objects}")
    warn_nan(statistic, all_tied & telling, f"all {judges} tie all {objects}")
    w = np.where(poisoned | few_judges | few_objects | all_tied, np.nan, w)

    # degrees of freedom describe a test that exists only where W does
    dof = np.where(np.isnan(w), np.nan, n - 1.0)
    m = np.where(np.isnan(w), np.nan, m)
    chi2 = m * dof * w
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (m - 1.0) * w / (1.0 - w)
    f_dof2 = (m - 1.0) * dof
    kbs_dof1 = dof - 2.0 / np.where(m > 0, m, np.nan)
    kbs_dof2 = (m - 1.0) * kbs_dof1
    stats = _scipy_stats()
    return {
        "w": w,
        "chi2": chi2,
        "dof": dof,
        "pvalue": stats.chi2.sf(chi2, dof),
        "f": f,
        "f_dof1": dof,
        "f_dof2": f_dof2,
        "f_pvalue": stats.f.sf(f, dof, f_dof2),
        "f_kbs_dof1": kbs_dof1,
        "f_kbs_dof2": kbs_dof2,
        "f_kbs_pvalue": stats.f.sf(f, kbs_dof1, kbs_dof2),
        "n_judges": used.sum(axis=-1).astype(float),
        "n_objects": n,
    }


def _scipy_stats():
    # scipy.stats costs a few hundred milliseconds to import; pay it on first use only.
    from scipy import stats

    return stats


def _pair_blocks(n: int, batch: int, budget: int = 1 << 22):
    """Split the pairs i < j of n objects into blocks of rows i that fit in ``budget`` cells."""
    rows_per_block = max(1, budget // max(1, batch * n))
    for start in range(0, n, rows_per_block):
        stop = min(n, start + rows_per_block)
        i, j = np.nonzero(np.arange(start, stop)[:, None] < np.arange(n)[None, :])
        yield i + start, j


def _concordance_counts(x, observed):
    """Concordant minus discordant object pairs i < j, for every pair of rows a, b.

    ``x`` is ``(..., m, n)``; the result is ``(..., m, m)``. A pair of objects
    counts for rows a and b only where both rows observe both objects.
    """
    *lead, m, n = x.shape
    con_minus_dis = np.zeros((*lead, m, m))
    batch = int(np.prod(lead, dtype=np.int64)) * m
    for i, j in _pair_blocks(n, batch):
        both = observed[..., i] & observed[..., j]
        with np.errstate(invalid="ignore"):
            sign = np.where(both, np.sign(x[..., i] - x[..., j]), 0.0)
        con_minus_dis += sign @ np.swapaxes(sign, -1, -2)
    return con_minus_dis


def _tie_terms_complete(x):
    """Per-row tie sums when every pair of rows is compared on the same objects."""
    _, size = rank_last(x, "average")
    terms = {
        "tie_pairs": sum_over_tie_groups(size, lambda t: t * (t - 1) / 2),
        "t0": sum_over_tie_groups(size, lambda t: t * (t - 1) * (t - 2)),
        "t1": sum_over_tie_groups(size, lambda t: t * (t - 1) * (2 * t + 5)),
        "classes": sum_over_tie_groups(size, lambda t: np.ones_like(t)),
    }
    # Row a restricted to the objects it shares with row b: identical to row a here.
    return {key: np.broadcast_to(value[..., :, None], (*value.shape, value.shape[-1]))
            for key, value in terms.items()}


def _tie_terms_pairwise(x, observed):
    """Tie sums of row a restricted to the objects observed in both a and b, for all a, b."""
    ranks, _ = rank_last(x, "dense")
    n = x.shape[-1]
    labels = np.where(np.isnan(ranks), -1, ranks - 1).astype(np.int64)
    groups = labels[..., None, :] == np.arange(n)[:, None]  # (..., m, group, object)
    # t[..., a, b, g]: size of a's tie group g among objects observed in b too
    t = np.einsum("...agi,...bi->...abg", groups.astype(float), observed.astype(float))
    return {
        "tie_pairs": (t * (t - 1) / 2).sum(-1),
        "t0": (t * (t - 1) * (t - 2)).sum(-1),
        "t1": (t * (t - 1) * (2 * t + 5)).sum(-1),
        "classes": (t > 0).sum(-1).astype(float),
    }


@lru_cache(maxsize=8)
def _discordance_cdf(max_n: int):
    """Null cdf of the discordant-pair count for n = 0..max_n untied objects.

    Row n holds P(D <= c) for c = 0..max_n(max_n-1)/2, D being the number of
    inversions of a uniform random permutation (Kendall 1970, ch. 4).
    """
    width = max_n * (max_n - 1) // 2 + 1
    table = np.ones((max_n + 1, width))
    pmf = np.array([1.0])
    for n in range(2, max_n + 1):
        pmf = np.convolve(pmf, np.full(n, 1.0 / n))
        table[n, : pmf.size] = np.cumsum(pmf)
    return table


def _exact_pvalue(size, con_minus_dis, tot):
    """Two-sided exact p-values for untied samples, looked up in the tabulated null."""
    n = np.where(np.isfinite(size), size, 0).astype(np.int64)
    discordant = np.rint((tot - con_minus_dis) / 2.0)
    c = np.where(np.isfinite(discordant), np.minimum(discordant, tot - discordant), 0)
    c = np.maximum(c, 0).astype(np.int64)
    if n.size == 0:
        return np.zeros(n.shape)
    max_n = int(n.max())
    if max_n > MAX_EXACT_N and (c[n > MAX_EXACT_N] > 1).any():
        raise ValueError(
            f"kendall_tau: exact p-values are tabulated for at most {MAX_EXACT_N} objects; "
            "use method='asymptotic'"
        )
    table = _discordance_cdf(min(max_n, MAX_EXACT_N))
    inside = n <= MAX_EXACT_N
    cdf = table[np.where(inside, n, 0), np.where(inside, np.minimum(c, table.shape[1] - 1), 0)]
    # Beyond the table only c <= 1 is allowed: P(D <= c) = (1 + c(n-1)) / n!
    big_n = np.maximum(n, 1).astype(float)
    outside = np.exp(np.log1p(c * (big_n - 1)) - special.gammaln(big_n + 1))
    return np.minimum(1.0, 2.0 * np.where(inside, cdf, outside))


def tau_matrix(x, *, variant="b", method="auto", nan_policy="propagate"):
    """Kendall's tau between every pair of rows of ``(..., m, n)``.

    Returns a dict of ``(..., m, m)`` arrays: ``tau``, ``pvalue`` and
    ``n_objects`` (the objects both rows observe). P-values are scipy's:
    tie-corrected asymptotic normal, no continuity correction; exact for
    untied samples of at most 33 objects under ``method="auto"``.
    """
    check_choice("variant", variant, TAU_VARIANTS)
    check_choice("method", method, TAU_METHODS)
    x = np.asarray(x, dtype=float)
    objects_present, judges_present, holes = missing_among_present(x, nan_policy, "kendall_tau")
    x = np.where(objects_present[..., None, :], x, np.nan)
    observed = ~np.isnan(x)
    con_minus_dis = _concordance_counts(x, observed)
    if nan_policy == "omit" and holes.any():
        # pairwise deletion: each pair of rows is compared on the objects both observe
        terms = _tie_terms_pairwise(x, observed)
        size = observed.astype(float) @ np.swapaxes(observed, -1, -2).astype(float)
        holes = np.zeros_like(holes)
    else:
        terms = _tie_terms_complete(x)
        n_present = objects_present.sum(-1).astype(float)
        size = np.broadcast_to(n_present[..., None, None], con_minus_dis.shape)
    x_ties = terms["tie_pairs"]
    y_ties = np.swapaxes(x_ties, -1, -2)
    tot = size * (size - 1) / 2
    pair_present = judges_present[..., :, None] & judges_present[..., None, :]
    pair_poisoned = holes[..., :, None] | holes[..., None, :]
    constant = (size >= 2) & ((x_ties == tot) | (y_ties == tot))
    too_small = size < 2
    undefined = ~pair_present | pair_poisoned | constant | too_small
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            # one square root of the product keeps tau(a, b) == tau(b, a) to the last bit
            tau = con_minus_dis / np.sqrt((tot - x_ties) * (tot - y_ties))
        elif variant == "a":
            tau = con_minus_dis / tot
        else:
            classes = np.minimum(terms["classes"], np.swapaxes(terms["classes"], -1, -2))
            tau = 2 * con_minus_dis / (size**2 * (classes - 1) / classes)
        tau = np.clip(tau, -1.0, 1.0)

        pairs_count = size * (size - 1)
        x0, y0 = terms["t0"], np.swapaxes(terms["t0"], -1, -2)
        x1, y1 = terms["t1"], np.swapaxes(terms["t1"], -1, -2)
        third = np.where(x0 * y0 == 0, 0.0, x0 * y0 / (9 * pairs_count * (size - 2)))
        var = (pairs_count * (2 * size + 5) - x1 - y1) / 18 + 2 * x_ties * y_ties / pairs_count
        var = var + third
        z = con_minus_dis / np.sqrt(var)
        asymptotic = 2.0 * special.ndtr(-np.abs(z))
    untied = (x_ties == 0) & (y_ties == 0) & ~undefined
    if method == "exact":
        if (~untied & ~undefined).any():
            raise ValueError("kendall_tau: ties found; method='exact' needs untied data")
        use_exact = untied
    elif method == "auto":
        discordant = (tot - con_minus_dis) / 2
        use_exact = untied & ((size <= 33) | (np.minimum(discordant, tot - discordant) <= 1))
    else:
        use_exact = np.zeros_like(untied)
    exact = np.ones_like(tau)
    if use_exact.any():
        exact[use_exact] = _exact_pvalue(size[use_exact], con_minus_dis[use_exact],
                                         tot[use_exact])
    pvalue = np.where(use_exact, exact, asymptotic)
    m = x.shape[-2]
    # count each unordered pair of distinct rows once
    off_structure = pair_present & ~pair_poisoned & (np.arange(m)[:, None] < np.arange(m))
    warn_nan("kendall_tau", constant & off_structure, "a ranking is constant (all ties)",
             among=off_structure)
    warn_nan("kendall_tau", too_small & off_structure, "fewer than two shared objects",
             among=off_structure)
    tau = np.where(undefined, np.nan, tau)
    pvalue = np.where(undefined, np.nan, pvalue)
    return {"tau": tau, "pvalue": pvalue, "n_objects": np.where(pair_present, size, 0.0)}


def tau_pair(x, y, *, variant="b", method="auto", nan_policy="propagate"):
    """Kendall's tau between ``x`` and ``y`` along the last axis (broadcast together)."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    both = np.stack([x, y], axis=-2)
    out = tau_matrix(both, variant=variant, method=method, nan_policy=nan_policy)
    return {key: value[..., 0, 1] for key, value in out.items()}
