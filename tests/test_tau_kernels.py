"""The two ways of counting Kendall's tau pairs agree to the last bit, and with scipy.

The pair-sign product (``kernel="signs"``) and sort-and-merge (``kernel="merge"``,
Knight 1966) count the same integers, so every output must be identical, NaN
where NaN, with ties, missing values and every ``nan_policy``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from rankstats._kernels import concordance as k
from rankstats._kernels import subsample as sub
from rankstats._kernels import tau_merge as tm


def _brute_inversions(y):
    i, j = np.triu_indices(y.shape[-1], 1)
    return (y[..., i] > y[..., j]).sum(-1)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 16, 17, 31, 64, 100])
def test_inversions_match_a_count_of_every_pair(n):
    rng = np.random.default_rng(n)
    for high in (2, n + 1, 5 * n):
        y = rng.integers(0, high, size=(4, 3, n))
        np.testing.assert_array_equal(tm.inversions(y), _brute_inversions(y))


def _scores(rng, shape, levels, holes):
    x = rng.integers(0, levels, size=shape).astype(float)
    x[rng.random(shape) < holes] = np.nan
    return x


def _same(a, b):
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
@pytest.mark.parametrize("variant", ["a", "b", "c"])
@pytest.mark.parametrize(
    "n, levels, holes",
    [(5, 3, 0.0), (40, 4, 0.0), (40, 40, 0.1), (70, 1000, 0.0), (33, 1000, 0.05), (2, 2, 0.0)],
)
def test_tau_pair_merge_equals_signs(nan_policy, variant, n, levels, holes):
    rng = np.random.default_rng(n + levels)
    x = _scores(rng, (3, 4, n), levels, holes)
    y = _scores(rng, (3, 4, n), levels, holes)
    x[0, 0] = 1.0  # a constant ranking
    y[1, 1] = np.nan  # an absent judge
    with warnings.catch_warnings(record=True) as signs_warned:
        warnings.simplefilter("always")
        signs = k.tau_pair(x, y, variant=variant, nan_policy=nan_policy, kernel="signs")
    with warnings.catch_warnings(record=True) as merge_warned:
        warnings.simplefilter("always")
        merge = k.tau_pair(x, y, variant=variant, nan_policy=nan_policy, kernel="merge")
    _same(signs, merge)
    assert [str(w.message) for w in signs_warned] == [str(w.message) for w in merge_warned]


@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
@pytest.mark.parametrize("variant", ["a", "b", "c"])
@pytest.mark.parametrize(
    "m, n, levels, holes", [(6, 12, 3, 0.0), (5, 30, 30, 0.1), (4, 80, 1000, 0.0), (7, 20, 5, 0.2)]
)
def test_tau_matrix_merge_equals_signs(nan_policy, variant, m, n, levels, holes):
    rng = np.random.default_rng(m * n)
    x = _scores(rng, (2, m, n), levels, holes)
    x[0, 1] = 2.0  # constant row
    x[1, 2] = np.nan  # absent row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signs = k.tau_matrix(x, variant=variant, nan_policy=nan_policy, kernel="signs")
        merge = k.tau_matrix(x, variant=variant, nan_policy=nan_policy, kernel="merge")
    _same(signs, merge)


@pytest.mark.parametrize("n", [10, 50, 200])
@pytest.mark.parametrize("levels", [3, 10, 10_000])
def test_merge_matches_scipy_with_ties(n, levels):
    rng = np.random.default_rng(levels)
    x = rng.integers(0, levels, size=(5, n)).astype(float)
    y = rng.integers(0, levels, size=(5, n)).astype(float)
    out = k.tau_pair(x, y, kernel="merge", method="asymptotic")
    for row in range(5):
        # scipy.stats.kendalltau(x, y, variant="b", method="asymptotic")
        expected = stats.kendalltau(x[row], y[row], method="asymptotic")
        np.testing.assert_allclose(out["tau"][row], expected.statistic, rtol=1e-12)
        np.testing.assert_allclose(out["pvalue"][row], expected.pvalue, rtol=1e-10)


def test_merge_omit_is_pairwise_deletion_like_scipy():
    rng = np.random.default_rng(3)
    x = _scores(rng, (4, 120), 6, 0.1)
    y = _scores(rng, (4, 120), 6, 0.1)
    out = k.tau_pair(x, y, kernel="merge", nan_policy="omit")
    for row in range(4):
        both = ~np.isnan(x[row]) & ~np.isnan(y[row])
        # scipy.stats.kendalltau(x, y) on the objects both observe
        expected = stats.kendalltau(x[row][both], y[row][both])
        np.testing.assert_allclose(out["tau"][row], expected.statistic, rtol=1e-12)
        np.testing.assert_allclose(out["pvalue"][row], expected.pvalue, rtol=1e-10)
        assert out["n_objects"][row] == both.sum()


def test_auto_picks_merge_for_many_objects_and_gives_the_same():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, size=(3, k.MERGE_FROM + 5)).astype(float)
    y = rng.integers(0, 50, size=x.shape).astype(float)
    assert k.use_merge(x.shape[-1])
    _same(k.tau_pair(x, y), k.tau_pair(x, y, kernel="signs"))


@pytest.mark.parametrize("m", [5, 40, 90])
@pytest.mark.parametrize("ties", ["average", "min"])
def test_subsample_merge_equals_signs(m, ties):
    rng = np.random.default_rng(m)
    x = rng.integers(0, 4, size=(3, 12, m)).astype(float)
    x[1, :, -2:] = np.nan  # absent models
    x[2, 3:, :] = np.nan  # padded templates
    keys = rng.random((3, 30, 12))
    ks = np.arange(1, 13)
    quantiles = np.array([0.1, 0.5, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signs = sub.subsample_curves(x, keys, ks, quantiles, ties=ties, tau_kernel="signs")
        merge = sub.subsample_curves(x, keys, ks, quantiles, ties=ties, tau_kernel="merge")
        small = sub.subsample_curves(
            x, keys, ks, quantiles, ties=ties, tau_kernel="merge", budget=1
        )
    _same(signs, merge)
    _same(signs, small)


@pytest.mark.parametrize("variant", ["a", "b", "c"])
@pytest.mark.parametrize("method", ["auto", "asymptotic", "exact"])
@pytest.mark.parametrize("n", [5, 33, 34, 150])
def test_one_untied_pair_equals_the_batched_path(variant, method, n):
    # a 1-d untied pair takes its own short path; a batch of one the general one
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = x + rng.normal(scale=1.5, size=n)
    single = k.tau_pair(x, y, variant=variant, method=method, kernel="merge")
    batched = k.tau_pair(x[None], y[None], variant=variant, method=method, kernel="merge")
    for name in ("tau", "pvalue", "n_objects"):
        assert np.asarray(single[name]).tobytes() == np.asarray(batched[name])[0].tobytes(), name


@pytest.mark.parametrize("levels", [2, 6, 40, 400])  # runs longer and shorter than tm.LAGS
@pytest.mark.parametrize("seed", [0, 1])
def test_tied_pairs_count_every_equal_pair_of_the_used_prefix(levels, seed):
    rng = np.random.default_rng(seed)
    values = np.sort(rng.integers(0, levels, (30, 57)), axis=-1)
    used = np.arange(57) < rng.integers(0, 58, 30)[:, None]
    ordered = np.where(used, values, levels)  # unused entries last, all equal
    i, j = np.triu_indices(57, 1)
    want = ((ordered[:, i] == ordered[:, j]) & used[:, j]).sum(-1)
    np.testing.assert_array_equal(tm.tied_pairs(ordered, used), want)
    assert want.max() > (tm.LAGS * (tm.LAGS - 1) // 2 if levels == 2 else 0)
