"""Kendall's W, the Friedman test, and Kendall's tau: NumPy kernels over the last axes.

Blocks are ``(..., judges, objects)``: each judge (row) ranks the objects
(columns). Leading axes are independent slices, computed in one pass.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from ..errors import OptionError
from . import tau_merge as _tm
from .ranking import (
    NAN_POLICIES,
    check_choice,
    column_rank_sums,
    missing_among_present,
    rank_last,
    sum_over_tie_groups,
    usable_judges,
    warn_nan,
)

TAU_VARIANTS = ("a", "b", "c")
TAU_METHODS = ("auto", "asymptotic", "exact")
TAU_KERNELS = ("auto", "signs", "merge")
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
    if ties == "average" and correction:
        check_choice("nan_policy", nan_policy, NAN_POLICIES)
        found = _complete_concordance(x, higher_is_better)
        if found is not None:
            return found
    used, objects_present, poisoned = usable_judges(x, nan_policy, statistic)
    # absent objects, padding and judges dropped by listwise deletion rank 0, so they add
    # nothing to the sums below
    m = used.sum(axis=-1).astype(float)
    n = objects_present.sum(axis=-1).astype(float)
    if ties == "average":
        rank_sums, tie_sum = column_rank_sums(x, ties, higher_is_better, rows=used)
    else:
        ranks, _ = rank_last(x, ties, higher_is_better, fill=0.0, rows=used)
        rank_sums = ranks.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_rank_sum = rank_sums.sum(axis=-1) / n
        spread = np.where(objects_present, rank_sums - mean_rank_sum[..., None], 0.0)
        s = (spread**2).sum(axis=-1)
        if not correction:
            denominator = m**2 * (n**3 - n) / 12.0
        elif ties == "average":
            # Kendall's tie-corrected denominator, m^2 (n^3 - n) - m sum T, over 12
            denominator = (m**2 * (n**3 - n) - m * np.where(used, tie_sum, 0.0).sum(-1)) / 12
        else:
            # The same quantity for any ranks: m times the sum over judges of each judge's
            # squared deviations from its mean rank (sum of squares minus squared sum over n).
            judge_sums = ranks.sum(axis=-1)
            squares = np.einsum("...ji,...ji->...j", ranks, ranks)
            deviations = np.where(used, squares - judge_sums**2 / n[..., None], 0.0)
            denominator = m * np.maximum(deviations, 0.0).sum(axis=-1)
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
    if ((few_judges | few_objects | all_tied) & telling).any():
        warn_nan(statistic, few_judges & telling, f"fewer than two {judges}")
        warn_nan(statistic, few_objects & ~few_judges & telling, f"fewer than two {objects}")
        warn_nan(statistic, all_tied & telling, f"all {judges} tie all {objects}")
    w = np.where(poisoned | few_judges | few_objects | all_tied, np.nan, w)

    # degrees of freedom describe a test that exists only where W does
    judges_used, undefined = m, np.isnan(w)
    dof = np.where(undefined, np.nan, n - 1.0)
    m = np.where(undefined, np.nan, m)
    chi2 = m * dof * w
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (m - 1.0) * w / (1.0 - w)
    f_dof2 = (m - 1.0) * dof
    kbs_dof1 = dof - 2.0 / np.where(m > 0, m, np.nan)
    kbs_dof2 = (m - 1.0) * kbs_dof1
    return {
        "w": w,
        "chi2": chi2,
        "dof": dof,
        "pvalue": chi2_sf(chi2, dof),
        "f": f,
        "f_dof1": dof,
        "f_dof2": f_dof2,
        "f_pvalue": f_sf(f, dof, f_dof2),
        "f_kbs_dof1": kbs_dof1,
        "f_kbs_dof2": kbs_dof2,
        "f_kbs_pvalue": f_sf(f, kbs_dof1, kbs_dof2),
        "n_judges": judges_used,
        "n_objects": n,
    }


def _complete_concordance(x, higher_is_better):
    """:func:`concordance` with average ranks and the tie correction, on complete data.

    With no score missing every judge and object is used, so the masks of
    the general path select everything and fall away; the remaining
    operations are the general path's, in its order, so the numbers are the
    same. None where the general path must decide: a missing score (any
    ``nan_policy``), fewer than two judges or objects, or a W that is
    undefined or 1 (with their warnings and infinities).
    """
    if x.ndim < 2 or x.shape[-2] < 2 or x.shape[-1] < 2 or np.isnan(x).any():
        return None
    lead = x.shape[:-2]
    m = np.full(lead, float(x.shape[-2])) if lead else np.float64(x.shape[-2])
    n = np.full(lead, float(x.shape[-1])) if lead else np.float64(x.shape[-1])
    rank_sums, tie_sum = column_rank_sums(x, "average", higher_is_better)
    mean_rank_sum = rank_sums.sum(axis=-1) / n
    s = ((rank_sums - mean_rank_sum[..., None]) ** 2).sum(axis=-1)
    denominator = (m**2 * (n**3 - n) - m * tie_sum.sum(-1)) / 12
    if not (denominator.all() if lead else denominator):
        return None  # every judge ties every object somewhere: the general path warns
    w = np.maximum(s / denominator, 0.0)
    # as the general path: an ulp over 1 is 1, and W = 1 (an infinite F) goes there; one
    # slice stays a NumPy scalar, whose arithmetic costs less than 0-d arrays' and is the same
    if lead:
        w = np.where((w > 1.0) & (w < 1.0 + 1e-12), 1.0, w)
        if not (w < 1.0).all():
            return None
    elif not w < 1.0:
        return None
    dof = n - 1.0
    chi2 = m * dof * w
    f = (m - 1.0) * w / (1.0 - w)
    f_dof2 = (m - 1.0) * dof
    kbs_dof1 = dof - 2.0 / m
    kbs_dof2 = (m - 1.0) * kbs_dof1
    # every argument is finite here, so the tails warn of nothing
    return {
        "w": w,
        "chi2": chi2,
        "dof": dof,
        "pvalue": special.chdtrc(dof, np.maximum(chi2, 0)),
        "f": f,
        "f_dof1": dof,
        "f_dof2": f_dof2,
        "f_pvalue": special.fdtrc(dof, f_dof2, np.maximum(f, 0)),
        "f_kbs_dof1": kbs_dof1,
        "f_kbs_dof2": kbs_dof2,
        "f_kbs_pvalue": special.fdtrc(kbs_dof1, kbs_dof2, np.maximum(f, 0)),
        "n_judges": m,
        "n_objects": n,
    }


def _scipy_stats():
    # scipy.stats costs a few hundred milliseconds to import; pay it on first use only.
    from scipy import stats

    return stats


def chi2_sf(x, dof):
    """Upper tail of the chi-square distribution, as ``scipy.stats.chi2.sf`` computes it.

    NaN in ``x`` or ``dof`` gives NaN (``chdtrc`` propagates it).
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(special.chdtrc(dof, np.maximum(x, 0)))


def f_sf(x, dof1, dof2):
    """Upper tail of the F distribution, as ``scipy.stats.f.sf`` computes it.

    NaN in any argument gives NaN (``fdtrc`` propagates it).
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(special.fdtrc(dof1, dof2, np.maximum(x, 0)))


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
    # Row a restricted to the objects it shares with row b is row a itself here: the terms
    # are (..., m, 1) and broadcast against the pairs only where they are used.
    return {key: value[..., :, None] for key, value in terms.items()}


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
        raise OptionError(
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


def tau_matrix(x, *, variant="b", method="auto", nan_policy="propagate", kernel="auto"):
    """Kendall's tau between every pair of rows of ``(..., m, n)``.

    Returns a dict of ``(..., m, m)`` arrays: ``tau``, ``pvalue`` and
    ``n_objects`` (the objects both rows observe). P-values are scipy's:
    tie-corrected asymptotic normal, no continuity correction; exact for
    untied samples of at most 33 objects under ``method="auto"``.

    ``kernel`` picks how the concordant and discordant pairs are counted:
    ``"signs"`` (the pair-sign matrix product, O(m^2 n^2) flops in BLAS),
    ``"merge"`` (sort and merge, O(m^2 n log n)) or ``"auto"`` (by
    :func:`use_merge`). Both give the same integers, so the same results.
    """
    check_choice("variant", variant, TAU_VARIANTS)
    check_choice("method", method, TAU_METHODS)
    check_choice("kernel", kernel, TAU_KERNELS)
    x = np.asarray(x, dtype=float)
    objects_present, judges_present, holes = missing_among_present(x, nan_policy, "kendall_tau")
    x = np.where(objects_present[..., None, :], x, np.nan)
    observed = ~np.isnan(x)
    m, n = x.shape[-2:]
    merge = (kernel == "merge" or (kernel == "auto" and use_merge(n, m))) and x.size > 0
    pairwise = nan_policy == "omit" and holes.any()
    if merge:
        con_minus_dis, pair_terms, pair_size = _merge_counts_matrix(x, observed, pairwise)
    else:
        con_minus_dis = _concordance_counts(x, observed)
    if pairwise:
        # pairwise deletion: each pair of rows is compared on the objects both observe
        if merge:
            terms, size = pair_terms, pair_size
        else:
            terms = _tie_terms_pairwise(x, observed)
            size = observed.astype(float) @ np.swapaxes(observed, -1, -2).astype(float)
        holes = np.zeros_like(holes)
    else:
        terms = _tie_terms_complete(x)
        size = objects_present.sum(-1).astype(float)[..., None, None]
    y_terms = {key: np.swapaxes(value, -1, -2) for key, value in terms.items()}
    pair_present = judges_present[..., :, None] & judges_present[..., None, :]
    pair_poisoned = holes[..., :, None] | holes[..., None, :]
    # count each unordered pair of distinct rows once
    off_structure = pair_present & ~pair_poisoned & (np.arange(m)[:, None] < np.arange(m))
    tau, pvalue = _tau_from_counts(
        con_minus_dis,
        terms,
        y_terms,
        size,
        pair_present,
        pair_poisoned,
        off_structure,
        variant,
        method,
    )
    return {"tau": tau, "pvalue": pvalue, "n_objects": np.where(pair_present, size, 0.0)}


def _tau_from_counts(
    con_minus_dis,
    x_terms,
    y_terms,
    size,
    pair_present,
    pair_poisoned,
    off_structure,
    variant,
    method,
):
    """Tau and its p-value from C - D, each ranking's tie sums and the number of objects.

    Every array broadcasts to the shape of ``con_minus_dis`` (at least 1-d).
    """
    x_ties, y_ties = x_terms["tie_pairs"], y_terms["tie_pairs"]
    tot = size * (size - 1) / 2
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
            classes = np.minimum(x_terms["classes"], y_terms["classes"])
            tau = 2 * con_minus_dis / (size**2 * (classes - 1) / classes)
        tau = np.broadcast_to(tau, con_minus_dis.shape).copy()
        np.clip(tau, -1.0, 1.0, out=tau)

        # the variance of C - D under independence, tie-corrected (Kendall 1970), built in
        # place to keep few (m, m) arrays alive at once
        pairs_count = size * (size - 1)
        x0, y0 = x_terms["t0"], y_terms["t0"]
        x1, y1 = x_terms["t1"], y_terms["t1"]
        var = np.broadcast_to(x0 * y0, con_minus_dis.shape).copy()
        var /= 9 * pairs_count * (size - 2)
        var[np.broadcast_to(x0 * y0 == 0, var.shape)] = 0.0  # also where size = 2 (0/0)
        var += (pairs_count * (2 * size + 5) - x1 - y1) / 18
        var += 2 * x_ties * y_ties / pairs_count
        np.sqrt(var, out=var)
        np.divide(con_minus_dis, var, out=var)  # z
        np.abs(var, out=var)
        asymptotic = 2.0 * special.ndtr(-var)
        del var
    untied = (x_ties == 0) & (y_ties == 0) & ~undefined
    if method == "exact":
        if (~untied & ~undefined).any():
            raise OptionError("kendall_tau: ties found; method='exact' needs untied data")
        use_exact = untied
    elif method == "auto":
        discordant = (tot - con_minus_dis) / 2
        use_exact = untied & ((size <= 33) | (np.minimum(discordant, tot - discordant) <= 1))
    else:
        use_exact = np.zeros_like(untied)
    pvalue = asymptotic
    if use_exact.any():
        shape = use_exact.shape
        pvalue[use_exact] = _exact_pvalue(
            np.broadcast_to(size, shape)[use_exact],
            con_minus_dis[use_exact],
            np.broadcast_to(tot, shape)[use_exact],
        )
    warn_nan(
        "kendall_tau",
        constant & off_structure,
        "a ranking is constant (all ties)",
        among=off_structure,
    )
    warn_nan(
        "kendall_tau",
        too_small & off_structure,
        "fewer than two shared objects",
        among=off_structure,
    )
    undefined = np.broadcast_to(undefined, tau.shape)
    tau[undefined] = np.nan
    pvalue[undefined] = np.nan
    return tau, pvalue


#: Working memory of one chunk of row pairs in the merge kernel, in bytes.
MERGE_BUDGET = 64 * 2**20


def _merge_counts_matrix(x, observed, pairwise, budget=MERGE_BUDGET):
    """C - D between every pair of rows by sorting and merging, in chunks of row pairs.

    Returns ``(con_minus_dis, terms, size)``: ``(..., m, m)`` arrays; ``terms``
    (row a's tie sums among the objects both a and b observe) and ``size``
    only when ``pairwise``, else None.
    """
    *lead, m, n = x.shape
    codes = _tm.dense_codes(x, observed)
    # a row against itself: C - D is its untied pairs, and its tie sums are its own
    own = _tm.pair_counts(codes, codes, observed, terms=pairwise)
    con_minus_dis = np.zeros((*lead, m, m))
    diagonal = np.arange(m)
    con_minus_dis[..., diagonal, diagonal] = own["con_minus_dis"]
    names = ("tie_pairs", "t0", "t1", "classes")
    terms = size = None
    if pairwise:
        terms = {name: np.zeros((*lead, m, m)) for name in names}
        size = np.zeros((*lead, m, m))
        for name in names:
            terms[name][..., diagonal, diagonal] = own[f"x_{name}"]
        size[..., diagonal, diagonal] = own["size"]
    # without pairwise deletion a pair's tie sums are each row's own: a pair where a row
    # lacks an object another observes is undefined whatever its counts
    tied = None if pairwise else own["x_tie_pairs"]
    a, b = np.triu_indices(m, 1)
    per_pair = max(1, int(np.prod(lead, dtype=np.int64)) * n * 96)
    step = max(1, budget // per_pair)
    for start in range(0, a.size, step):
        ia, ib = a[start : start + step], b[start : start + step]
        counts = _tm.pair_counts(
            codes[..., ia, :],
            codes[..., ib, :],
            observed[..., ia, :] & observed[..., ib, :],
            terms=pairwise,
            x_tie_pairs=None if pairwise else tied[..., ia],
            y_tie_pairs=None if pairwise else tied[..., ib],
        )
        con_minus_dis[..., ia, ib] = counts["con_minus_dis"]
        con_minus_dis[..., ib, ia] = counts["con_minus_dis"]
        if pairwise:
            for name in names:
                terms[name][..., ia, ib] = counts[f"x_{name}"]
                terms[name][..., ib, ia] = counts[f"y_{name}"]
            size[..., ia, ib] = counts["size"]
            size[..., ib, ia] = counts["size"]
    return con_minus_dis, terms, size


def use_merge(n: int, m: int = 2) -> bool:
    """Whether sort-and-merge beats the pair-sign product for m rows of n objects.

    The sign product costs about n^2 per pair of rows in BLAS plus n^2 per row
    to build the signs; the merge about n log n per pair of rows at a larger
    constant, so the more rows share the signs, the later the merge pays.
    Measured (``benchmarks/bench_scaling.py --crossover``, ``benchmarks/README.md``):
    from 16 objects for one pair, from about m / 2 objects for m rows.
    """
    return n >= max(MERGE_FROM, m // 2)


#: The fewest objects for which the merge kernel is used (one pair of rankings).
MERGE_FROM = 16


def _tau_pair_untied(x, y, variant, method):
    """:func:`tau_pair`'s merge path for two complete 1-d rankings without ties, or None.

    Without ties or missing scores every tie sum is 0 (``t0`` is -0.0, as
    the general path sums it), the classes are the n objects, and C - D is
    the pairs less twice the inversions of y in x's order: all exact
    integers, handed to the same :func:`_tau_from_counts`, so the numbers are
    the same. A tie or a missing score returns None, for the general path.
    """
    n = x.size
    if np.isnan(x).any() or np.isnan(y).any():
        return None
    order = np.argsort(x)
    x_sorted = x[order]
    y_order = np.argsort(y)
    y_sorted = y[y_order]
    if (x_sorted[1:] == x_sorted[:-1]).any() or (y_sorted[1:] == y_sorted[:-1]).any():
        return None
    y_rank = np.empty(n, dtype=np.int32)
    y_rank[y_order] = np.arange(n, dtype=np.int32)
    discordant = _tm.inversions(y_rank[order][None, :])
    if method != "exact":
        found = _tau_untied_asymptotic(float(n), float(discordant[0]), variant, method)
        if found is not None:
            return found
    size = np.array([float(n)])
    con_minus_dis = size * (size - 1) / 2 - 2.0 * discordant
    zero = np.zeros(1)
    terms = {"tie_pairs": zero, "t0": np.array([-0.0]), "t1": zero, "classes": size}
    present, absent = np.ones(1, dtype=bool), np.zeros(1, dtype=bool)
    tau, pvalue = _tau_from_counts(
        con_minus_dis, terms, terms, size, present, absent, present, variant, method
    )
    return {"tau": tau.reshape(()), "pvalue": pvalue.reshape(()), "n_objects": size.reshape(())}


def _tau_untied_asymptotic(size, discordant, variant, method):
    """:func:`_tau_from_counts` for one untied pair whose p-value is the normal tail, or None.

    The same numbers, one pair at a time: with no ties every tie sum is
    zero, so the terms of :func:`_tau_from_counts` that hold them add or
    subtract an exact 0 and are left out, and every pair is defined. None where the exact
    p-value applies (``method="auto"`` on few objects or a near-perfect
    ordering), for :func:`_tau_from_counts`.
    """
    tot = size * (size - 1) / 2
    con_minus_dis = tot - 2.0 * discordant
    if method == "auto":
        half = (tot - con_minus_dis) / 2
        if size <= 33 or min(half, tot - half) <= 1:
            return None
    if variant == "b":
        tau = con_minus_dis / np.sqrt(tot * tot)
    elif variant == "a":
        tau = con_minus_dis / tot
    else:
        tau = 2 * con_minus_dis / (size**2 * (size - 1) / size)
    tau = min(max(tau, -1.0), 1.0)
    var = size * (size - 1) * (2 * size + 5) / 18
    pvalue = 2.0 * special.ndtr(-abs(con_minus_dis / np.sqrt(var)))
    return {
        "tau": np.array(tau, dtype=float),
        "pvalue": np.array(pvalue, dtype=float),
        "n_objects": np.array(size),
    }


def tau_pair(x, y, *, variant="b", method="auto", nan_policy="propagate", kernel="auto"):
    """Kendall's tau between ``x`` and ``y`` along the last axis (broadcast together)."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    n = x.shape[-1] if x.ndim else 1
    check_choice("kernel", kernel, TAU_KERNELS)
    if kernel == "signs" or (kernel == "auto" and not use_merge(n)) or x.size == 0 or x.ndim == 0:
        both = np.stack([x, y], axis=-2)
        out = tau_matrix(
            both, variant=variant, method=method, nan_policy=nan_policy, kernel="signs"
        )
        return {key: value[..., 0, 1] for key, value in out.items()}
    check_choice("variant", variant, TAU_VARIANTS)
    check_choice("method", method, TAU_METHODS)
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    if x.ndim == 1:
        found = _tau_pair_untied(x, y, variant, method)
        if found is not None:
            return found
    lead = x.shape[:-1]
    both = np.stack([x, y], axis=-2).reshape(-1, 2, n)
    objects_present, judges_present, holes = missing_among_present(both, nan_policy, "kendall_tau")
    both = np.where(objects_present[..., None, :], both, np.nan)
    observed = ~np.isnan(both)
    valid = observed[:, 0] & observed[:, 1]
    codes = _tm.dense_codes(both, observed)
    counts = _tm.pair_counts(
        codes[:, 0], codes[:, 1], valid, terms=nan_policy == "omit" and bool(holes.any())
    )
    names = ("tie_pairs", "t0", "t1", "classes")
    if nan_policy == "omit" and holes.any():
        size = counts["size"]
        holes = np.zeros_like(holes)
        x_terms = {name: counts[f"x_{name}"] for name in names}
        y_terms = {name: counts[f"y_{name}"] for name in names}
    else:
        # the sums the sign path uses, to the last bit
        size = objects_present.sum(-1).astype(float)
        terms = _tie_terms_complete(both)
        x_terms = {name: terms[name][:, 0, 0] for name in names}
        y_terms = {name: terms[name][:, 1, 0] for name in names}
    pair_present = judges_present[:, 0] & judges_present[:, 1]
    pair_poisoned = holes[:, 0] | holes[:, 1]
    tau, pvalue = _tau_from_counts(
        counts["con_minus_dis"],
        x_terms,
        y_terms,
        size,
        pair_present,
        pair_poisoned,
        pair_present & ~pair_poisoned,
        variant,
        method,
    )
    out = {"tau": tau, "pvalue": pvalue, "n_objects": np.where(pair_present, size, 0.0)}
    return {key: value.reshape(lead) for key, value in out.items()}
