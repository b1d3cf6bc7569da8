"""Oracle parity with SciPy: ranks, Kendall's tau (pairs and matrices) and Friedman's test.

Every value is checked against SciPy to a relative tolerance of 1e-10.
Oracles (SciPy >= 1.11; checked with 1.17):

* ``scipy.stats.rankdata(a, method=..., axis=..., nan_policy="omit")``
* ``scipy.stats.kendalltau(x, y, variant=..., method=..., nan_policy=...)``
* ``scipy.stats.friedmanchisquare(*treatments)``
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import rankstats

RTOL = 1e-10
TIES = ["average", "min", "max", "dense", "ordinal"]


def close(actual, desired, *, equal_nan=False):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float),
        np.asarray(desired, dtype=float),
        rtol=RTOL,
        atol=0,
        equal_nan=equal_nan,
    )


# --------------------------------------------------------------------------- ranks


def _rank_data(kind: str) -> np.ndarray:
    rng = np.random.default_rng(20240101)
    if kind == "untied":
        return rng.normal(size=15)
    if kind == "ties":
        return rng.integers(0, 4, size=15).astype(float)
    if kind == "nan":
        x = rng.integers(0, 5, size=15).astype(float)
        x[[1, 6, 7, 12]] = np.nan
        return x
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["untied", "ties", "nan"])
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("higher_is_better", [True, False])
def test_rank_matches_rankdata(kind, ties, higher_is_better):
    x = _rank_data(kind)
    ranks = rankstats.rank(x, ties=ties, higher_is_better=higher_is_better)
    # oracle: scipy.stats.rankdata ranks the lowest value first, so rank 1 = best is rankdata(-x)
    key = -x if higher_is_better else x
    expected = stats.rankdata(key, method=ties, nan_policy="omit")
    np.testing.assert_array_equal(np.isnan(ranks), np.isnan(x))
    close(ranks, expected, equal_nan=True)


def test_rank_defaults_to_higher_is_better():
    x = _rank_data("ties")
    # oracle: scipy.stats.rankdata(-x, method="average")
    close(rankstats.rank(x), stats.rankdata(-x, method="average"))


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rank_along_an_axis_of_a_2d_array(ties, axis):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 6, size=(9, 11)).astype(float)
    x[2, 3] = x[5, 0] = np.nan
    # oracle: scipy.stats.rankdata(-x, method=ties, axis=axis, nan_policy="omit")
    expected = stats.rankdata(-x, method=ties, axis=axis, nan_policy="omit")
    ranks = rankstats.rank(x, dim=axis, ties=ties)
    close(ranks, expected, equal_nan=True)  # NaN where x is NaN, in both
    assert np.isnan(ranks).sum() == 2


@pytest.mark.parametrize("ties", TIES)
def test_rank_labelled_along_model(ties):
    rng = np.random.default_rng(11)
    values = rng.integers(0, 5, size=(3, 8)).astype(float)
    data = xr.DataArray(values, dims=["template", "model"])
    ranks = rankstats.rank(data, "model", ties=ties)
    assert ranks.dims == ("template", "model")
    # oracle: scipy.stats.rankdata(-values, method=ties, axis=1)
    close(ranks.values, stats.rankdata(-values, method=ties, axis=1))


@pytest.mark.parametrize("ties", TIES)
def test_rank_follows_a_lower_is_better_cube(ties):
    rng = np.random.default_rng(12)
    losses = rng.integers(0, 4, size=(6, 2)).astype(float)
    cube = rankstats.from_records(
        [
            {"model": f"m{i}", "task": "t", "template": f"p{j}", "score": losses[i, j]}
            for i in range(6)
            for j in range(2)
        ],
        higher_is_better=False,
    )
    ranks = rankstats.rank(cube, "model", ties=ties).isel(task=0).transpose("model", "template")
    # oracle: scipy.stats.rankdata(losses, method=ties, axis=0): the lowest loss ranks first
    close(ranks.values, stats.rankdata(losses, method=ties, axis=0))


# --------------------------------------------------------------------------- Kendall's tau


def _tau_pair(kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "untied":
        x = rng.normal(size=n)
        y = x + rng.normal(scale=1.5, size=n)
    elif kind == "ties":
        x = rng.integers(0, 4, size=n).astype(float)
        y = x + rng.integers(0, 3, size=n)
    elif kind == "ties_in_y":
        x = rng.normal(size=n)
        y = np.round(x + rng.normal(size=n))
    else:
        raise AssertionError(kind)
    return x, y


TAU_CASES = [
    pytest.param("untied", 5, 1, id="untied-n5"),
    pytest.param("untied", 12, 2, id="untied-n12"),
    pytest.param("untied", 33, 3, id="untied-n33"),
    pytest.param("untied", 34, 4, id="untied-n34"),
    pytest.param("untied", 80, 5, id="untied-n80"),
    pytest.param("ties", 6, 6, id="ties-n6"),
    pytest.param("ties", 20, 7, id="ties-n20"),
    pytest.param("ties", 150, 8, id="ties-n150"),
    pytest.param("ties_in_y", 25, 9, id="ties_in_y-n25"),
]


def _hand_tau_a(x, y):
    """(C - D) / (n (n - 1) / 2), counting pairs one by one."""
    n = len(x)
    s = sum(
        np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in itertools.combinations(range(n), 2)
    )
    return s / (n * (n - 1) / 2)


@pytest.mark.parametrize(("kind", "n", "seed"), TAU_CASES)
@pytest.mark.parametrize("variant", ["b", "c"])
@pytest.mark.parametrize("method", ["auto", "asymptotic"])
def test_kendall_tau_matches_scipy(kind, n, seed, variant, method):
    x, y = _tau_pair(kind, n, seed)
    result = rankstats.kendall_tau(x, y, variant=variant, method=method)
    # oracle: scipy.stats.kendalltau(x, y, variant=variant, method=method)
    expected = stats.kendalltau(x, y, variant=variant, method=method)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    assert float(result.n_objects) == n


@pytest.mark.parametrize(("kind", "n", "seed"), TAU_CASES)
def test_kendall_tau_a_by_hand(kind, n, seed):
    x, y = _tau_pair(kind, n, seed)
    result = rankstats.kendall_tau(x, y, variant="a")
    close(result.statistic, _hand_tau_a(x, y))
    # the p-value depends on C - D only, so it is tau-b's (oracle: scipy.stats.kendalltau(x, y))
    close(result.pvalue, stats.kendalltau(x, y).pvalue)


@pytest.mark.parametrize("n", [3, 9, 33, 34, 60, 170])
def test_kendall_tau_exact_matches_scipy(n):
    x, y = _tau_pair("untied", n, 100 + n)
    result = rankstats.kendall_tau(x, y, method="exact")
    # oracle: scipy.stats.kendalltau(x, y, method="exact")
    expected = stats.kendalltau(x, y, method="exact")
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


@pytest.mark.parametrize(
    ("n", "swaps"),
    [(40, 0), (40, 1), (100, 0), (100, 1), (171, 1)],
    ids=[
        "n40-concordant",
        "n40-one-inversion",
        "n100-concordant",
        "n100-one-inversion",
        "n171-one-inversion",
    ],
)
def test_kendall_tau_auto_is_exact_for_at_most_one_inversion(n, swaps):
    x = np.arange(n, dtype=float)
    y = x.copy()
    if swaps:
        y[[10, 11]] = y[[11, 10]]
    y = -y  # tau = -1 or nearly: the p-value sits in the other tail
    result = rankstats.kendall_tau(x, y)
    # oracle: scipy.stats.kendalltau(x, y) (method="auto" picks the exact test here)
    expected = stats.kendalltau(x, y)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


def test_kendall_tau_exact_with_ties_raises_like_scipy():
    x, y = _tau_pair("ties", 10, 3)
    # oracle: scipy.stats.kendalltau(x, y, method="exact") raises ValueError on ties
    with pytest.raises(ValueError, match=r"[Tt]ies"):
        stats.kendalltau(x, y, method="exact")
    with pytest.raises(ValueError, match="ties"):
        rankstats.kendall_tau(x, y, method="exact")


def test_kendall_tau_exact_beyond_the_table_raises():
    # scipy computes this one; rankstats tabulates the exact null up to 170 objects only
    x, y = _tau_pair("untied", 171, 5)
    with pytest.raises(ValueError, match="170"):
        rankstats.kendall_tau(x, y, method="exact")


@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_tau_omit_is_pairwise_deletion_like_scipy(variant):
    x, y = _tau_pair("ties", 30, 21)
    x[[0, 5, 9]] = np.nan
    y[[5, 17]] = np.nan
    result = rankstats.kendall_tau(x, y, variant=variant, nan_policy="omit")
    # oracle: scipy.stats.kendalltau(x, y, variant=variant, nan_policy="omit") drops the pairs
    # with a NaN on either side
    expected = stats.kendalltau(x, y, variant=variant, nan_policy="omit")
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    assert float(result.n_objects) == 26


@pytest.mark.parametrize("n", [16, 300, 2000])
@pytest.mark.parametrize("levels", [3, 50, None])
@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_tau_of_many_objects_matches_scipy(n, levels, variant):
    # from 16 objects tau is counted by sort and merge (Knight 1966), not by pair signs
    rng = np.random.default_rng(n)
    draw = (
        (lambda: rng.normal(size=n))
        if levels is None
        else (lambda: rng.integers(0, levels, size=n).astype(float))
    )
    x, y = draw(), draw()
    y = np.where(rng.random(n) < 0.5, x, y)  # some agreement, so the p-value is not ~1
    x[[1, 7]] = np.nan
    y[[7, 11]] = np.nan
    result = rankstats.kendall_tau(x, y, variant=variant, nan_policy="omit")
    # oracle: scipy.stats.kendalltau(x, y, variant=variant, nan_policy="omit")
    expected = stats.kendalltau(x, y, variant=variant, nan_policy="omit")
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    assert float(result.n_objects) == n - 3


def test_kendall_tau_matrix_of_many_objects_matches_a_scipy_loop():
    # 6 rows of 600 objects: the merge kernel for every pair of rows
    rng = np.random.default_rng(600)
    x = rng.integers(0, 40, size=(6, 600)).astype(float)
    result = rankstats.kendall_tau_matrix(x)
    for i, j in itertools.product(range(6), repeat=2):
        # oracle: scipy.stats.kendalltau(x[i], x[j])
        expected = stats.kendalltau(x[i], x[j])
        close(result.statistic[i, j], expected.statistic)
        close(result.pvalue[i, j], expected.pvalue)


def test_kendall_tau_broadcasts_over_leading_axes():
    rng = np.random.default_rng(31)
    x = rng.integers(0, 5, size=(3, 4, 12)).astype(float)
    y = rng.integers(0, 5, size=(4, 12)).astype(float)
    result = rankstats.kendall_tau(x, y)
    for i, j in itertools.product(range(3), range(4)):
        # oracle: scipy.stats.kendalltau(x[i, j], y[j])
        expected = stats.kendalltau(x[i, j], y[j])
        close(result.statistic[i, j], expected.statistic)
        close(result.pvalue[i, j], expected.pvalue)


def test_kendall_tau_labelled_pair_along_model():
    rng = np.random.default_rng(33)
    values = rng.integers(0, 5, size=(2, 3, 10)).astype(float)  # template x task x model
    first = xr.DataArray(values[0], dims=["task", "model"])
    second = xr.DataArray(values[1], dims=["task", "model"])
    result = rankstats.kendall_tau(first, second, variant="c")
    assert result.statistic.dims == ("task",)
    for t in range(3):
        # oracle: scipy.stats.kendalltau(values[0, t], values[1, t], variant="c")
        expected = stats.kendalltau(values[0, t], values[1, t], variant="c")
        close(result.statistic[t], expected.statistic)
        close(result.pvalue[t], expected.pvalue)


# --------------------------------------------------------------------------- tau matrices


def _tau_rows(kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "untied":
        base = rng.normal(size=10)
        return base + rng.normal(size=(5, 10))
    if kind == "ties":
        return rng.integers(0, 4, size=(6, 15)).astype(float)
    if kind == "large":
        base = rng.normal(size=60)
        return np.round(base + rng.normal(scale=0.8, size=(4, 60)), 1)
    raise AssertionError(kind)


def _scipy_tau_matrix(rows, variant, method, nan_policy="propagate"):
    m = rows.shape[0]
    tau = np.empty((m, m))
    pvalue = np.empty((m, m))
    for a, b in itertools.product(range(m), repeat=2):
        # oracle: scipy.stats.kendalltau(rows[a], rows[b], variant=..., method=..., nan_policy=...)
        res = stats.kendalltau(
            rows[a], rows[b], variant=variant, method=method, nan_policy=nan_policy
        )
        tau[a, b], pvalue[a, b] = res.statistic, res.pvalue
    return tau, pvalue


@pytest.mark.parametrize(("kind", "seed"), [("untied", 1), ("ties", 2), ("large", 3)])
@pytest.mark.parametrize("variant", ["b", "c"])
@pytest.mark.parametrize("method", ["auto", "asymptotic"])
def test_kendall_tau_matrix_matches_a_scipy_loop(kind, seed, variant, method):
    rows = _tau_rows(kind, seed)
    result = rankstats.kendall_tau_matrix(rows, variant=variant, method=method)
    tau, pvalue = _scipy_tau_matrix(rows, variant, method)
    close(result.statistic, tau)
    close(result.pvalue, pvalue)
    np.testing.assert_array_equal(result.n_objects, rows.shape[1])


def test_kendall_tau_matrix_exact_matches_a_scipy_loop():
    rows = _tau_rows("untied", 4)
    result = rankstats.kendall_tau_matrix(rows, method="exact")
    tau, pvalue = _scipy_tau_matrix(rows, "b", "exact")
    close(result.statistic, tau)
    close(result.pvalue, pvalue)


@pytest.mark.parametrize(("kind", "seed"), [("untied", 5), ("ties", 6)])
def test_kendall_tau_matrix_a_by_hand(kind, seed):
    rows = _tau_rows(kind, seed)
    result = rankstats.kendall_tau_matrix(rows, variant="a")
    m = rows.shape[0]
    expected = np.array([[_hand_tau_a(rows[a], rows[b]) for b in range(m)] for a in range(m)])
    close(result.statistic, expected)


@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_tau_matrix_omit_matches_scipy_pairwise(variant):
    rows = _tau_rows("ties", 8)
    rows[0, [1, 4]] = np.nan
    rows[2, [4, 9, 10]] = np.nan
    rows[5, 14] = np.nan
    result = rankstats.kendall_tau_matrix(rows, variant=variant, nan_policy="omit")
    tau, pvalue = _scipy_tau_matrix(rows, variant, "auto", nan_policy="omit")
    close(result.statistic, tau)
    close(result.pvalue, pvalue)
    observed = ~np.isnan(rows)
    np.testing.assert_array_equal(result.n_objects, observed @ observed.T.astype(int))


def test_kendall_tau_matrix_over_leading_axes():
    rng = np.random.default_rng(41)
    x = rng.integers(0, 6, size=(2, 3, 4, 9)).astype(float)
    result = rankstats.kendall_tau_matrix(x)
    for i, j in itertools.product(range(2), range(3)):
        tau, pvalue = _scipy_tau_matrix(x[i, j], "b", "auto")
        close(result.statistic[i, j], tau)
        close(result.pvalue[i, j], pvalue)


def test_kendall_tau_matrix_of_a_cube():
    rng = np.random.default_rng(43)
    scores = rng.integers(0, 10, size=(7, 4)) / 10  # model x template
    cube = rankstats.from_records(
        [
            {"model": f"m{i}", "task": "t", "template": f"p{j}", "score": scores[i, j]}
            for i in range(7)
            for j in range(4)
        ]
    )
    result = rankstats.kendall_tau_matrix(cube).isel(task=0)
    assert result.statistic.dims == ("template", "template_b")
    tau, pvalue = _scipy_tau_matrix(scores.T, "b", "auto")
    close(result.statistic.values, tau)
    close(result.pvalue.values, pvalue)


# --------------------------------------------------------------------------- Friedman


def _friedman_data(kind: str, seed: int) -> np.ndarray:
    """Blocks x treatments."""
    rng = np.random.default_rng(seed)
    if kind == "untied":
        return rng.normal(size=(10, 4)) + np.arange(4) * 0.3
    if kind == "ties":
        return rng.integers(0, 3, size=(8, 5)).astype(float)
    if kind == "many_blocks":
        return rng.integers(0, 4, size=(40, 3)).astype(float)
    if kind == "proportions":
        return rng.integers(0, 20, size=(6, 12)) / 20
    raise AssertionError(kind)


FRIEDMAN_CASES = [("untied", 1), ("ties", 2), ("many_blocks", 3), ("proportions", 4)]


@pytest.mark.parametrize(("kind", "seed"), FRIEDMAN_CASES)
def test_friedman_matches_scipy(kind, seed):
    x = _friedman_data(kind, seed)
    result = rankstats.friedman(x)
    # oracle: scipy.stats.friedmanchisquare(*treatments), one argument per treatment (column)
    expected = stats.friedmanchisquare(*x.T)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    assert float(result.dof) == x.shape[1] - 1
    assert float(result.n_blocks) == x.shape[0]
    assert float(result.n_treatments) == x.shape[1]


@pytest.mark.parametrize(("kind", "seed"), FRIEDMAN_CASES)
def test_friedman_uncorrected_is_scipy_times_the_tie_correction(kind, seed):
    x = _friedman_data(kind, seed)
    b, k = x.shape
    # scipy divides by c = 1 - sum(t^3 - t) / (b (k^3 - k)); undo it by hand
    tie_sum = sum(
        ((counts**3) - counts).sum()
        for counts in (np.unique(row, return_counts=True)[1] for row in x)
    )
    c = 1 - tie_sum / (b * (k**3 - k))
    # oracle: scipy.stats.friedmanchisquare(*x.T).statistic * c
    expected = stats.friedmanchisquare(*x.T).statistic * c
    close(rankstats.friedman(x, tie_correction=False).statistic, expected)


def test_friedman_swapped_axes_matches_scipy():
    x = _friedman_data("ties", 5)
    # treatments on axis 0, blocks on axis 1
    result = rankstats.friedman(x.T, blocks=1, treatments=0)
    # oracle: scipy.stats.friedmanchisquare(*x.T)
    expected = stats.friedmanchisquare(*x.T)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


def test_friedman_over_leading_axes():
    rng = np.random.default_rng(51)
    x = rng.integers(0, 4, size=(3, 9, 5)).astype(float)
    result = rankstats.friedman(x)
    for i in range(3):
        # oracle: scipy.stats.friedmanchisquare(*x[i].T)
        expected = stats.friedmanchisquare(*x[i].T)
        close(result.statistic[i], expected.statistic)
        close(result.pvalue[i], expected.pvalue)


def test_friedman_of_a_cube_blocks_models_treatments_templates():
    rng = np.random.default_rng(53)
    scores = rng.integers(0, 5, size=(2, 8, 6)) / 5  # task x model x template
    cube = rankstats.from_records(
        [
            {"model": f"m{i}", "task": f"t{t}", "template": f"p{j}", "score": scores[t, i, j]}
            for t in range(2)
            for i in range(8)
            for j in range(6)
        ]
    )
    result = rankstats.friedman(cube)
    for t in range(2):
        # oracle: scipy.stats.friedmanchisquare(*templates), each template's scores over models
        expected = stats.friedmanchisquare(*scores[t].T)
        close(result.statistic.sel(task=f"t{t}"), expected.statistic)
        close(result.pvalue.sel(task=f"t{t}"), expected.pvalue)


def test_friedman_of_a_cube_with_samples_uses_template_means():
    rng = np.random.default_rng(57)
    correct = rng.integers(0, 2, size=(5, 4, 7))  # model x template x sample
    cube = rankstats.from_records(
        [
            {
                "model": f"m{i}",
                "task": "t",
                "template": f"p{j}",
                "sample": f"s{s}",
                "score": float(correct[i, j, s]),
            }
            for i in range(5)
            for j in range(4)
            for s in range(7)
        ]
    )
    accuracy = correct.mean(axis=-1)
    # oracle: scipy.stats.friedmanchisquare(*accuracy.T)
    expected = stats.friedmanchisquare(*accuracy.T)
    result = rankstats.friedman(cube).isel(task=0)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
