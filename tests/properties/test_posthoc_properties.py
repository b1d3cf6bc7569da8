"""Properties of the post-hoc tests, the incomplete-design tests and the p-value adjustments."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

import rankstats
from rankstats.statistics.posthoc import (
    adjust_pvalues,
    bonferroni_dunn,
    critical_difference,
    durbin,
    nemenyi,
    nonsignificant_groups,
    pairwise_mcnemar,
    skillings_mack,
)
from rankstats.testing import strategies as rs

METHODS = ("holm", "bonferroni", "bh", "by")
STATSMODELS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}

floats = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def close(actual, expected, rel=1e-9, abs_=1e-12):
    np.testing.assert_allclose(actual, expected, rtol=rel, atol=abs_, equal_nan=True)


def pvalue_families():
    """A 1-D family of p-values, some of them NaN (untested)."""
    return rs.pvalues((1, 25))


def complete_blocks(min_blocks=2, max_blocks=8, min_k=2, max_k=6, elements=None, nan="none"):
    """(blocks, treatments) scores in which some block does not tie every treatment."""
    options = {
        "judges": (min_blocks, max_blocks),
        "objects": (min_k, max_k),
        "constant_rows": "not_all",
        "nan": nan,
    }
    if elements is None:
        return st.one_of(
            rs.score_matrices(kind=None, ties=None, **options),
            rs.score_matrices(elements=floats, **options),
        )
    return rs.score_matrices(elements=elements, **options)


def _two_ranking_blocks(x):
    seen = ~np.isnan(x)
    high = np.where(seen, x, -np.inf).max(axis=1)
    low = np.where(seen, x, np.inf).min(axis=1)
    ranking = seen.sum(axis=1) >= 2
    return ranking.sum() >= 2 and bool((ranking & (high > low)).any())


def incomplete_blocks():
    """(blocks, treatments) scores with random holes; two blocks each rank two cells or more."""
    return complete_blocks(min_blocks=3, min_k=3, elements=floats, nan="scattered").filter(
        _two_ranking_blocks
    )


# --------------------------------------------------------------------------- adjust_pvalues


@given(p=pvalue_families(), method=st.sampled_from(METHODS))
def test_adjusted_pvalues_bound_the_raw_ones(p, method):
    adjusted = adjust_pvalues(p, method)
    seen = ~np.isnan(p)
    np.testing.assert_array_equal(np.isnan(adjusted), ~seen)
    assert (adjusted[seen] >= p[seen]).all()
    assert (adjusted[seen] <= 1.0).all()
    if seen.any():
        close(adjusted[seen], multipletests(p[seen], method=STATSMODELS[method])[1])


@given(p=pvalue_families(), method=st.sampled_from(METHODS))
def test_adjusted_pvalues_are_monotone_in_the_raw_ones(p, method):
    adjusted = adjust_pvalues(p, method)
    seen = ~np.isnan(p)
    raw, adj = p[seen], adjusted[seen]
    smaller = raw[:, None] <= raw[None, :]
    assert (adj[:, None] <= adj[None, :])[smaller].all()


@given(p=pvalue_families())
def test_adjustments_are_ordered(p):
    bh, by = adjust_pvalues(p, "bh"), adjust_pvalues(p, "by")
    holm, bonferroni = adjust_pvalues(p, "holm"), adjust_pvalues(p, "bonferroni")
    seen = ~np.isnan(p)
    tolerance = 1e-12
    assert (bh[seen] <= holm[seen] + tolerance).all()
    assert (holm[seen] <= bonferroni[seen] + tolerance).all()
    assert (bh[seen] <= by[seen] + tolerance).all()


@given(p=pvalue_families(), method=st.sampled_from(METHODS), seed=st.integers(0, 2**32 - 1))
def test_adjustment_commutes_with_permuting_the_family(p, method, seed):
    order = np.random.default_rng(seed).permutation(p.size)
    close(adjust_pvalues(p[order], method), adjust_pvalues(p, method)[order])


# --------------------------------------------------------------------------- critical difference


@given(
    k=st.integers(2, 30),
    n=st.integers(1, 200),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    test=st.sampled_from(["nemenyi", "bonferroni_dunn"]),
)
def test_critical_difference_shrinks_with_blocks_and_grows_with_treatments(k, n, alpha, test):
    cd = critical_difference(k, n, alpha, test=test)
    assert cd > critical_difference(k, n + 1, alpha, test=test)
    assert cd < critical_difference(k + 1, n, alpha, test=test)
    assert cd < critical_difference(k, n, alpha / 2, test=test)
    close(critical_difference(k, 4 * n, alpha, test=test), cd / 2)


@given(k=st.integers(3, 30), n=st.integers(1, 200))
def test_control_comparisons_need_a_smaller_difference(k, n):
    assert critical_difference(k, n, test="bonferroni_dunn") < critical_difference(k, n)


# ----------------------------------------------------------------------- Nemenyi, Bonferroni–Dunn


@given(x=complete_blocks())
def test_nemenyi_pvalues_are_symmetric_probabilities(x):
    result = nemenyi(x)
    k = x.shape[1]
    close(result.pvalue, result.pvalue.T, abs_=0)
    assert ((result.pvalue >= 0) & (result.pvalue <= 1)).all()
    close(np.diag(result.pvalue), np.ones(k))
    close(result.average_rank.sum(), k * (k + 1) / 2)
    gap = np.abs(result.average_rank[:, None] - result.average_rank[None, :])
    clear = np.abs(gap - result.critical_difference) > 1e-9
    np.testing.assert_array_equal(
        (result.pvalue < 0.05)[clear], (gap > result.critical_difference)[clear]
    )


@given(x=complete_blocks(min_k=3), seed=st.integers(0, 2**32 - 1))
def test_nemenyi_is_equivariant_under_permuting_treatments(x, seed):
    order = np.random.default_rng(seed).permutation(x.shape[1])
    result, shuffled = nemenyi(x), nemenyi(x[:, order])
    close(shuffled.average_rank, result.average_rank[order])
    close(shuffled.pvalue, result.pvalue[np.ix_(order, order)])


@given(x=complete_blocks(min_k=3), data=st.data())
def test_bonferroni_dunn_adjusted_bound_raw(x, data):
    control = data.draw(st.integers(0, x.shape[1] - 1))
    bonferroni = bonferroni_dunn(x, control=control)
    holm = bonferroni_dunn(x, control=control, p_adjust="holm")
    others = np.arange(x.shape[1]) != control
    raw = bonferroni.pvalue[others]
    assert (bonferroni.pvalue_adjusted[others] >= raw).all()
    assert (holm.pvalue_adjusted[others] <= bonferroni.pvalue_adjusted[others] + 1e-12).all()
    close(bonferroni.pvalue_adjusted[others], np.minimum(1.0, raw * (x.shape[1] - 1)))


@given(x=complete_blocks(min_k=3, max_k=7))
def test_groups_are_maximal_runs_of_nonsignificant_pairs(x):
    result = nemenyi(x)
    groups = nonsignificant_groups(result)
    ranks, cd = result.average_rank, result.critical_difference
    order = list(np.argsort(ranks, kind="stable"))
    for group in groups:
        positions = [order.index(j) for j in group]
        assert positions == list(range(positions[0], positions[0] + len(group)))
        assert np.ptp(ranks[group]) <= cd
        # maximal: neither neighbour in rank order joins the group
        before, after = positions[0] - 1, positions[-1] + 1
        if before >= 0:
            assert np.ptp(ranks[[order[before], *group]]) > cd
        if after < len(order):
            assert np.ptp(ranks[[*group, order[after]]]) > cd
    for a, b in itertools.pairwise(groups):
        assert not set(a) <= set(b) and not set(b) <= set(a)


# --------------------------------------------------------------------------- incomplete designs


@given(x=complete_blocks(), tie_correction=st.booleans())
def test_skillings_mack_is_friedman_on_complete_data(x, tie_correction):
    sm = skillings_mack(x, tie_correction=tie_correction)
    friedman = rankstats.friedman(x, blocks=0, treatments=1, tie_correction=tie_correction)
    close(sm.statistic, friedman.statistic, abs_=1e-9)
    assert sm.dof == friedman.dof
    close(sm.pvalue, friedman.pvalue, abs_=1e-9)


@given(x=complete_blocks())
def test_durbin_is_friedman_on_complete_data(x):
    # the documented factor is 1: Conover's T1 is the tie-corrected Friedman statistic
    d = durbin(x)
    friedman = rankstats.friedman(x, blocks=0, treatments=1)
    close(d.statistic, friedman.statistic, abs_=1e-9)
    close(d.f, friedman.f, abs_=1e-9)
    assert d.balanced == 1.0


@given(values=rs.score_matrices(judges=7, objects=3, elements=floats, ties="none"))
def test_skillings_mack_is_durbin_on_a_balanced_design(values):
    x = np.full((7, 7), np.nan)
    for block in range(7):  # the cyclic (7, 3, 1) design {0, 1, 3} + block
        x[block, [(block + d) % 7 for d in (0, 1, 3)]] = values[block]
    d = durbin(x)
    assert d.balanced == 1.0
    close(skillings_mack(x).statistic, d.statistic, abs_=1e-9)


@given(x=incomplete_blocks(), seed=st.integers(0, 2**32 - 1))
def test_skillings_mack_invariant_to_permutations_and_monotone_maps(x, seed):
    rng = np.random.default_rng(seed)
    rows, columns = rng.permutation(x.shape[0]), rng.permutation(x.shape[1])
    sm = skillings_mack(x)
    shuffled = skillings_mack(x[rows][:, columns])
    close(shuffled.statistic, sm.statistic, rel=1e-7, abs_=1e-9)
    assert shuffled.dof == sm.dof
    close(skillings_mack(np.arctan(x / 100.0)).statistic, sm.statistic, rel=1e-7, abs_=1e-9)
    close(skillings_mack(-x).statistic, sm.statistic, rel=1e-7, abs_=1e-9)
    assert sm.statistic >= -1e-9
    assert 1 <= sm.dof <= sm.n_treatments - 1


@given(x=incomplete_blocks())
def test_an_absent_treatment_changes_nothing(x):
    wider = np.concatenate([x, np.full((x.shape[0], 1), np.nan)], axis=1)
    for test in (durbin, skillings_mack):
        close(test(wider).statistic, test(x).statistic, abs_=1e-12)
        assert test(wider).n_treatments == test(x).n_treatments


@given(x=incomplete_blocks(), seed=st.integers(0, 2**32 - 1))
def test_durbin_invariant_to_permutations(x, seed):
    rng = np.random.default_rng(seed)
    rows, columns = rng.permutation(x.shape[0]), rng.permutation(x.shape[1])
    d, shuffled = durbin(x), durbin(x[rows][:, columns])
    close(shuffled.statistic, d.statistic, rel=1e-9, abs_=1e-12)
    close(shuffled.rank_sum, d.rank_sum[columns])
    assert shuffled.balanced == d.balanced
    assert np.isnan(d.statistic) or d.statistic >= -1e-12


# --------------------------------------------------------------------------- pairwise McNemar


@given(x=rs.score_matrices(judges=4, objects=15, kind="binary"), method=st.sampled_from(METHODS))
def test_pairwise_mcnemar_adjusted_is_symmetric_and_bounds_raw(x, method):
    result = pairwise_mcnemar(x, p_adjust=method)
    adjusted, raw = result.pvalue_adjusted, result.pvalue
    close(adjusted, adjusted.T, abs_=0)
    off = ~np.eye(4, dtype=bool)
    assert (adjusted[off] >= raw[off] - 1e-15).all()
    assert np.isnan(np.diag(adjusted)).all()
