"""Properties of Friedman's test, McNemar's test and Cochran's Q."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats.testing import strategies as rs

TIES = ("average", "min", "max", "dense", "ordinal")
MCNEMAR_METHODS = ("exact", "midp", "chi2", "chi2_cc")

floats = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def close(actual, expected, rel=1e-9, abs_=1e-12):
    np.testing.assert_allclose(actual, expected, rtol=rel, atol=abs_)


def score_blocks(
    elements=None,
    min_blocks=2,
    max_blocks=8,
    min_treatments=2,
    max_treatments=6,
    *,
    kind=None,
    ties=None,
):
    """(blocks, treatments) scores in which some block does not tie every treatment."""
    options = {
        "judges": (min_blocks, max_blocks),
        "objects": (min_treatments, max_treatments),
        "constant_rows": "not_all",
        "ties": ties,
    }
    if elements is None and kind is None:
        return st.one_of(
            rs.score_matrices(kind=None, **options), rs.score_matrices(elements=floats, **options)
        )
    return rs.score_matrices(kind=kind or "continuous", elements=elements, **options)


# --------------------------------------------------------------------------- Friedman


@given(x=score_blocks(), ties=st.sampled_from(TIES), correction=st.booleans())
def test_friedman_is_kendall_w_read_the_other_way(x, ties, correction):
    f = rankstats.friedman(x, ties=ties, tie_correction=correction)
    w = rankstats.kendall_w(x, ties=ties, tie_correction=correction)
    assert f.statistic == w.chi2
    assert f.pvalue == w.pvalue
    assert f.kendall_w == w.statistic
    assert (f.n_blocks, f.n_treatments) == x.shape
    assert f.dof == x.shape[1] - 1
    assert 0.0 <= f.pvalue <= 1.0
    assert 0.0 <= f.f_pvalue <= 1.0


@given(x=score_blocks(), ties=st.sampled_from(TIES), correction=st.booleans())
def test_friedman_iman_davenport_identity(x, ties, correction):
    f = rankstats.friedman(x, ties=ties, tie_correction=correction)
    b, k = x.shape
    assume(f.kendall_w < 1)
    close(f.f, (b - 1) * f.statistic / (b * (k - 1) - f.statistic), abs_=1e-10)
    assert (f.f_dof1, f.f_dof2) == (k - 1, (b - 1) * (k - 1))


@settings(max_examples=2 * settings.default.max_examples)
@given(
    x=st.one_of(
        score_blocks(min_treatments=3, kind="continuous", ties=5),
        score_blocks(min_treatments=3, kind="binary"),
        score_blocks(floats, min_treatments=3, ties="none"),
    )
)
def test_friedman_matches_scipy(x):
    expected = stats.friedmanchisquare(*x.T)
    actual = rankstats.friedman(x)
    close(actual.statistic, expected.statistic)
    close(actual.pvalue, expected.pvalue, abs_=0)


@given(x=score_blocks(), seed=st.integers(0, 2**32 - 1))
def test_friedman_invariant_to_permuting_blocks_and_treatments(x, seed):
    rng = np.random.default_rng(seed)
    shuffled = x[rng.permutation(x.shape[0])][:, rng.permutation(x.shape[1])]
    close(rankstats.friedman(shuffled).statistic, rankstats.friedman(x).statistic)


# --------------------------------------------------------------------------- McNemar


def paired_outcomes(min_n=1, max_n=40):
    """Two sides' 0/1 outcomes on the same samples."""
    return rs.score_matrices(judges=2, objects=(min_n, max_n), kind="binary").map(tuple)


def discordant_counts(x, y):
    return int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())


def contingency_table(x, y):
    return np.array(
        [
            [((x == 1) & (y == 1)).sum(), ((x == 1) & (y == 0)).sum()],
            [((x == 0) & (y == 1)).sum(), ((x == 0) & (y == 0)).sum()],
        ]
    )


@given(pair=paired_outcomes(), method=st.sampled_from(MCNEMAR_METHODS))
def test_mcnemar_pvalue_in_unit_interval_and_counts(pair, method):
    x, y = pair
    b, c = discordant_counts(x, y)
    assume(b + c > 0 or method in ("exact", "midp"))
    r = rankstats.mcnemar(x, y, method=method)
    assert 0.0 <= r.pvalue <= 1.0
    assert (r.b, r.c, r.n_samples) == (b, c, len(x))
    assert r.statistic >= 0


@given(pair=paired_outcomes(), method=st.sampled_from(MCNEMAR_METHODS))
def test_mcnemar_swapping_sides_swaps_b_and_c(pair, method):
    x, y = pair
    assume(method in ("exact", "midp") or (x != y).any())
    xy = rankstats.mcnemar(x, y, method=method)
    yx = rankstats.mcnemar(y, x, method=method)
    assert (yx.b, yx.c) == (xy.c, xy.b)
    assert yx.statistic == xy.statistic
    assert yx.pvalue == xy.pvalue


@given(pair=paired_outcomes())
def test_mcnemar_exact_pvalue_is_at_least_midp(pair):
    x, y = pair
    exact = rankstats.mcnemar(x, y, method="exact").pvalue
    midp = rankstats.mcnemar(x, y, method="midp").pvalue
    assert midp <= exact
    b, c = discordant_counts(x, y)
    if b + c:
        # mid-p = P[more extreme than b] + P[as extreme as b] / 2 under Binomial(b + c, 1/2),
        # extremeness being the distance from (b + c) / 2
        n = b + c
        outcomes = np.arange(n + 1)
        pmf = stats.binom.pmf(outcomes, n, 0.5)
        distance, observed = np.abs(outcomes - n / 2), abs(b - n / 2)
        expected = pmf[distance > observed].sum() + pmf[distance == observed].sum() / 2
        close(midp, expected)
    else:
        assert exact == midp == 1.0


@given(pair=paired_outcomes(), method=st.sampled_from(MCNEMAR_METHODS))
def test_mcnemar_matches_statsmodels(pair, method):
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    x, y = pair
    table = contingency_table(x, y)
    b, c = table[0, 1], table[1, 0]
    if method == "midp":
        assume(b + c > 0)
        expected = stats.binomtest(int(min(b, c)), int(b + c), 0.5).pvalue
        # the exact test is the binomial test; mid-p only removes half the observed point mass
        assert rankstats.mcnemar(x, y, method=method).pvalue <= expected
        return
    assume(method == "exact" or b + c > 0)
    expected = contingency.mcnemar(table, exact=method == "exact", correction=method == "chi2_cc")
    actual = rankstats.mcnemar(x, y, method=method)
    close(actual.statistic, expected.statistic)
    close(actual.pvalue, expected.pvalue, abs_=0)


@given(pair=paired_outcomes(), extra_both=st.integers(0, 20), extra_neither=st.integers(0, 20))
def test_mcnemar_exact_ignores_concordant_pairs(pair, extra_both, extra_neither):
    x, y = pair
    padded_x = np.concatenate([x, np.ones(extra_both), np.zeros(extra_neither)])
    padded_y = np.concatenate([y, np.ones(extra_both), np.zeros(extra_neither)])
    before = rankstats.mcnemar(x, y)
    after = rankstats.mcnemar(padded_x, padded_y)
    assert after.pvalue == before.pvalue
    assert (after.b, after.c) == (before.b, before.c)
    assert after.n_samples == len(x) + extra_both + extra_neither


@given(pair=paired_outcomes(min_n=2), method=st.sampled_from(("exact", "midp")), data=st.data())
def test_mcnemar_omit_is_pairwise_deletion(pair, method, data):
    x, y = pair
    holes_x = data.draw(rs.missing_masks(x.shape), label="holes_x")
    holes_y = data.draw(rs.missing_masks(y.shape), label="holes_y")
    # a side with no observation at all is padding, and a sample missing on both sides
    # is absent: neither is missing data
    assume(not holes_x.all() and not holes_y.all())
    both = ~holes_x & ~holes_y
    assume(both.any())
    actual = rankstats.mcnemar(
        np.where(holes_x, np.nan, x), np.where(holes_y, np.nan, y), method=method, nan_policy="omit"
    )
    expected = rankstats.mcnemar(x[both], y[both], method=method)
    assert (actual.b, actual.c, actual.n_samples) == (expected.b, expected.c, both.sum())
    assert actual.pvalue == expected.pvalue


@given(data=st.data(), method=st.sampled_from(("exact", "midp")))
def test_mcnemar_all_pairs_equal_pairwise_calls(data, method):
    x = data.draw(rs.score_matrices(judges=(2, 5), objects=(1, 30), kind="binary"), label="x")
    m = x.shape[0]
    r = rankstats.mcnemar(x, pairs_over="template", method=method)
    assert r.pvalue.shape == (m, m)
    np.testing.assert_array_equal(r.b, r.c.T)
    np.testing.assert_array_equal(np.diag(r.pvalue), 1.0)
    for i in range(m):
        for j in range(m):
            pair = rankstats.mcnemar(x[i], x[j], method=method)
            assert (r.b[i, j], r.c[i, j]) == (pair.b, pair.c)
            close(r.pvalue[i, j], pair.pvalue, rel=1e-14, abs_=0)


def test_mcnemar_chi2_without_discordant_pairs_warns():
    with pytest.warns(rankstats.RankstatsWarning, match="discordant"):
        result = rankstats.mcnemar([1.0, 0.0], [1.0, 0.0], method="chi2")
    assert math.isnan(result.pvalue)


# --------------------------------------------------------------------------- Cochran's Q


def binary_blocks(min_blocks=1, max_blocks=15, min_treatments=2, max_treatments=5, slices=None):
    """(blocks, treatments) binary outcomes in which some block is mixed."""
    return rs.score_matrices(
        judges=(min_blocks, max_blocks),
        objects=(min_treatments, max_treatments),
        kind="binary",
        constant_rows="not_all",
        slices=slices,
    )


@given(x=binary_blocks())
def test_cochran_q_is_nonnegative_with_valid_pvalue(x):
    r = rankstats.cochran_q(x)
    assert r.statistic >= 0
    assert 0.0 <= r.pvalue <= 1.0
    assert (r.n_blocks, r.n_treatments, r.dof) == (x.shape[0], x.shape[1], x.shape[1] - 1)
    # Q never exceeds (k - 1) times the number of mixed blocks
    mixed = (np.ptp(x, axis=1) > 0).sum()
    assert r.statistic <= (x.shape[1] - 1) * mixed * (1 + 1e-12)


@given(x=binary_blocks(), seed=st.integers(0, 2**32 - 1))
def test_cochran_q_invariant_to_permutations(x, seed):
    rng = np.random.default_rng(seed)
    shuffled = x[rng.permutation(x.shape[0])][:, rng.permutation(x.shape[1])]
    before, after = rankstats.cochran_q(x), rankstats.cochran_q(shuffled)
    assert after.statistic == before.statistic
    assert after.pvalue == before.pvalue


@given(x=binary_blocks(min_treatments=2, max_treatments=2))
def test_cochran_q_with_two_treatments_is_mcnemar_chi2(x):
    b, c = discordant_counts(x[:, 0], x[:, 1])
    q = rankstats.cochran_q(x)
    close(q.statistic, (b - c) ** 2 / (b + c))
    mcnemar = rankstats.mcnemar(x[:, 0], x[:, 1], method="chi2")
    close(q.statistic, mcnemar.statistic)
    close(q.pvalue, mcnemar.pvalue, abs_=0)


@given(x=binary_blocks(), ones=st.integers(0, 10), zeros=st.integers(0, 10))
def test_cochran_q_ignores_blocks_without_variation(x, ones, zeros):
    k = x.shape[1]
    padded = np.concatenate([x, np.ones((ones, k)), np.zeros((zeros, k))])
    before, after = rankstats.cochran_q(x), rankstats.cochran_q(padded)
    assert after.statistic == before.statistic
    assert after.n_blocks == x.shape[0] + ones + zeros


@given(x=binary_blocks(min_treatments=2, max_treatments=6))
def test_cochran_q_matches_statsmodels(x):
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    expected = contingency.cochrans_q(x)
    actual = rankstats.cochran_q(x)
    close(actual.statistic, expected.statistic)
    close(actual.pvalue, expected.pvalue, abs_=0)


@given(x=binary_blocks(max_blocks=10, slices=(1, 4)))
def test_cochran_q_is_computed_slice_by_slice(x):
    s = x.shape[0]
    batched = rankstats.cochran_q(x)
    for i in range(s):
        single = rankstats.cochran_q(x[i])
        assert batched.statistic[i] == single.statistic
        assert batched.pvalue[i] == single.pvalue


@given(x=binary_blocks(min_blocks=2), data=st.data())
def test_cochran_q_omit_drops_incomplete_blocks(x, data):
    holes = data.draw(rs.missing_masks(x.shape), label="holes")
    with_holes = np.where(holes, np.nan, x)
    treatments = ~np.isnan(with_holes).all(axis=0)
    complete = ~np.isnan(with_holes[:, treatments]).any(axis=1)
    kept = with_holes[complete][:, treatments]
    assume(kept.shape[0] >= 1 and kept.shape[1] >= 2 and np.ptp(kept, axis=1).max() > 0)
    actual = rankstats.cochran_q(with_holes, nan_policy="omit")
    expected = rankstats.cochran_q(kept)
    assert actual.statistic == expected.statistic
    assert (actual.n_blocks, actual.n_treatments) == kept.shape


@given(x=binary_blocks(min_blocks=2, min_treatments=2, max_treatments=6))
def test_cochran_q_is_tie_corrected_friedman_on_binary_data(x):
    close(rankstats.cochran_q(x).statistic, rankstats.friedman(x).statistic, abs_=1e-10)


@given(data=st.data(), method=st.sampled_from(MCNEMAR_METHODS))
def test_mcnemar_all_pairs_omit_equals_pairwise_deletion(data, method):
    x = data.draw(rs.score_matrices(judges=(2, 4), objects=(2, 25), kind="binary"), label="x")
    m = x.shape[0]
    holes = data.draw(rs.missing_masks(x.shape), label="holes")
    assume(not holes.all(axis=1).any())
    with_holes = np.where(holes, np.nan, x)
    warn = method.startswith("chi2")
    for i in range(m):
        for j in range(i + 1, m):
            both = ~holes[i] & ~holes[j]
            b, c = discordant_counts(x[i][both], x[j][both])
            assume(both.any() and (b + c > 0 or not warn))
    r = rankstats.mcnemar(with_holes, pairs_over="template", method=method, nan_policy="omit")
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            both = ~holes[i] & ~holes[j]
            pair = rankstats.mcnemar(x[i][both], x[j][both], method=method)
            assert (r.b[i, j], r.c[i, j], r.n_samples[i, j]) == (pair.b, pair.c, both.sum())
            close(r.pvalue[i, j], pair.pvalue, rel=1e-14, abs_=0)


@given(x=binary_blocks(max_blocks=8, max_treatments=4))
def test_labelled_cochran_q_and_mcnemar_match_numpy(x):
    xr = pytest.importorskip("xarray")
    labelled = xr.DataArray(x, dims=("sample", "template"))
    q = rankstats.cochran_q(labelled)
    assert float(q.statistic) == rankstats.cochran_q(x).statistic
    pairs = rankstats.mcnemar(labelled, pairs_over="template")
    assert pairs.pvalue.dims == ("template", "template_b")
    np.testing.assert_array_equal(
        pairs.pvalue.values, rankstats.mcnemar(x.T, pairs_over="template").pvalue
    )
