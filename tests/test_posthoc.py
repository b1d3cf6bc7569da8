"""Post-hoc tests across models: oracles, hand computations, the calling contract, edge cases.

Oracles (checked with scikit-posthocs 0.17, statsmodels 0.15, SciPy 1.17):

* ``scikit_posthocs.posthoc_nemenyi_friedman(x)``: Nemenyi p-values;
* ``scikit_posthocs.posthoc_siegel_friedman(x)``: the z-tests of average ranks
  that Bonferroni–Dunn applies to the control's row;
* ``scikit_posthocs.test_durbin(x)``, ``posthoc_durbin(x)`` and
  ``posthoc_conover_friedman(x)``: Durbin's test and Conover's pairwise tests;
* ``statsmodels.stats.multitest.multipletests(p, method=...)``;
* ``scipy.stats.friedmanchisquare`` through :func:`rankstats.friedman`;
* Demšar (2006): the worked critical-difference example and the table of q_alpha;
  Conover (1999): the Durbin test's ice-cream example.
"""

from __future__ import annotations

import sys
import warnings

import dask.array as da
import numpy as np
import pytest
import scikit_posthocs as sp
import xarray as xr
from scipy import stats
from statsmodels.stats.multitest import multipletests

import rankstats
from rankstats.errors import DimensionError, MissingValueError, OptionError, RankstatsWarning
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

RTOL = 1e-10
SM_METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}


def close(actual, desired, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float),
        np.asarray(desired, dtype=float),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
    )


def scores(seed, blocks=12, k=5, tied=False):
    rng = np.random.default_rng(seed)
    if tied:
        return rng.integers(0, 4, size=(blocks, k)).astype(float)
    return rng.normal(size=(blocks, k))


# Conover (1999), the Durbin test: seven judges each rank three of seven ice creams (1 = best).
N = np.nan
CONOVER = np.array(
    [
        [2, 3, N, 1, N, N, N],
        [N, 3, 1, N, 2, N, N],
        [N, N, 2, 1, N, 3, N],
        [N, N, N, 1, 2, N, 3],
        [3, N, N, N, 1, 2, N],
        [N, 3, N, N, N, 1, 2],
        [3, N, 1, N, N, N, 2],
    ]
)


def cyclic_bibd(values):
    """The (7, 3, 1) cyclic design {0, 1, 3} + i filled with ``values`` (7 x 3)."""
    x = np.full((7, 7), np.nan)
    for block in range(7):
        x[block, [(block + d) % 7 for d in (0, 1, 3)]] = values[block]
    return x


# --------------------------------------------------------------------------- critical difference

# Demšar (2006), table of critical values: Nemenyi q_alpha for k = 2..10, to 3 decimals
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


def test_demsar_critical_difference_example():
    # Demšar (2006), worked example: k = 4 classifiers, N = 14 data sets, alpha = 0.05:
    # q = 2.569, CD = 2.569 * sqrt(4 * 5 / (6 * 14)) = 1.25 (1.2536 unrounded)
    assert round(float(critical_difference(4, 14)), 4) == 1.2536
    q = stats.studentized_range.ppf(0.95, 4, np.inf) / np.sqrt(2)
    close(critical_difference(4, 14), q * np.sqrt(20 / 84))


@pytest.mark.parametrize(("alpha", "table"), [(0.05, DEMSAR_Q05), (0.10, DEMSAR_Q10)])
def test_nemenyi_q_alpha_matches_demsar_table(alpha, table):
    ks = np.arange(2, 11)
    cd = critical_difference(ks, 6.0, alpha)
    q = cd / np.sqrt(ks * (ks + 1) / 36.0)
    np.testing.assert_allclose(q, table, atol=1.5e-3, rtol=0)


def test_bonferroni_dunn_critical_difference_by_hand():
    # q = z_{1 - alpha / (2 (k - 1))}: k = 4, alpha = 0.05 -> z_{0.991667} = 2.394 (Demšar's table)
    q = stats.norm.ppf(1 - 0.05 / 6)
    assert round(q, 3) == 2.394
    close(critical_difference(4, 14, test="bonferroni_dunn"), q * np.sqrt(20 / 84))


def test_critical_difference_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"alpha=1\.5"):
        critical_difference(4, 14, 1.5)
    with pytest.raises(ValueError, match="test='tukey'"):
        critical_difference(4, 14, test="tukey")
    assert np.isnan(critical_difference(1, 14))


# --------------------------------------------------------------------------- Nemenyi


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tied", [False, True])
def test_nemenyi_pvalues_match_scikit_posthocs(seed, tied):
    x = scores(seed, blocks=10 + seed, k=3 + seed, tied=tied)
    # oracle: scikit_posthocs.posthoc_nemenyi_friedman(x) (blocks are rows)
    expected = sp.posthoc_nemenyi_friedman(x).to_numpy()
    result = nemenyi(x)
    close(result.pvalue, expected)
    friedman = rankstats.friedman(x, blocks=0, treatments=1)
    close(result.friedman_statistic, friedman.statistic)
    close(result.friedman_pvalue, friedman.pvalue)


def test_nemenyi_average_ranks_best_first_and_higher_is_better():
    x = scores(1)
    result = nemenyi(x)
    # oracle: scipy.stats.rankdata(-x, axis=1).mean(0): rank 1 = highest score
    close(result.average_rank, stats.rankdata(-x, axis=1).mean(0))
    lower = nemenyi(x, higher_is_better=False)
    close(lower.average_rank, stats.rankdata(x, axis=1).mean(0))
    close(lower.pvalue, result.pvalue)
    k = x.shape[1]
    close(
        result.critical_difference,
        stats.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2) * np.sqrt(k * (k + 1) / 72),
    )


def test_nemenyi_honours_the_cube_attribute():
    records = [
        {"model": m, "task": f"t{t}", "template": "p", "score": s}
        for t, row in enumerate([[0.1, 0.5, 0.9], [0.2, 0.4, 0.3], [0.3, 0.6, 0.8]])
        for m, s in zip("abc", row, strict=True)
    ]
    cube = rankstats.from_records(records)
    ranks = nemenyi(cube, blocks="task").average_rank.isel(template=0)
    close(ranks, [3.0, 5 / 3, 4 / 3])
    loss = cube.assign_attrs(higher_is_better=0)
    close(nemenyi(loss, blocks="task").average_rank.isel(template=0), [1.0, 7 / 3, 8 / 3])


def test_nemenyi_significance_agrees_with_critical_difference():
    x = scores(7, blocks=30, k=6) + np.linspace(0, 1.5, 6)
    result = nemenyi(x)
    gap = np.abs(result.average_rank[:, None] - result.average_rank[None, :])
    np.testing.assert_array_equal(result.pvalue < 0.05, gap > result.critical_difference)


def test_nemenyi_blocks_over_two_dims_equal_stacked_blocks():
    rng = np.random.default_rng(3)
    data = xr.DataArray(
        rng.normal(size=(4, 5, 3)),
        dims=("model", "task", "template"),
        coords={"model": list("abcd")},
    )
    joined = nemenyi(data, blocks=("task", "template"))
    stacked = data.stack(block=("task", "template")).transpose("block", "model").values
    close(joined.pvalue, sp.posthoc_nemenyi_friedman(stacked).to_numpy())
    # the default blocks are every other dim
    close(nemenyi(data).pvalue, joined.pvalue)
    assert joined.attrs["blocks"] == "task,template"


# --------------------------------------------------------------------------- Bonferroni–Dunn


@pytest.mark.parametrize("control", [0, 2])
@pytest.mark.parametrize("p_adjust", ["bonferroni", "holm"])
def test_bonferroni_dunn_matches_siegel_friedman_and_multipletests(control, p_adjust):
    x = scores(11, blocks=15, k=5, tied=True)
    # oracle: scikit_posthocs.posthoc_siegel_friedman(x): two-sided z-tests of average ranks
    raw = sp.posthoc_siegel_friedman(x).to_numpy()[control]
    others = np.arange(5) != control
    result = bonferroni_dunn(x, control=control, p_adjust=p_adjust)
    close(result.pvalue[others], raw[others])
    assert np.isnan(result.pvalue[control]) and np.isnan(result.pvalue_adjusted[control])
    # oracle: statsmodels multipletests over the k - 1 comparisons
    close(result.pvalue_adjusted[others], multipletests(raw[others], method=p_adjust)[1])
    # by hand: z = (R_j - R_c) / sqrt(k (k + 1) / (6 N)), positive when ranked worse
    ranks = stats.rankdata(-x, axis=1).mean(0)
    close(result.statistic[others], (ranks - ranks[control])[others] / np.sqrt(30 / 90))


def test_bonferroni_dunn_control_by_label():
    data = xr.DataArray(scores(2, 10, 3), dims=("task", "model"), coords={"model": list("abc")})
    labelled = bonferroni_dunn(data, "b")
    close(labelled.pvalue_adjusted, bonferroni_dunn(data.values, control=1).pvalue_adjusted)
    assert labelled.attrs["control"] == "b"
    with pytest.raises(DimensionError, match=r"control 'z' is not a label of dimension 'model'"):
        bonferroni_dunn(data, "z")
    with pytest.raises(DimensionError, match="position along the treatments axis"):
        bonferroni_dunn(data.values, "b")


def test_bonferroni_dunn_absent_control_warns():
    x = scores(4, 8, 4)
    x[:, 2] = np.nan
    with pytest.warns(RankstatsWarning, match="the control treatment has no score"):
        result = bonferroni_dunn(x, control=2)
    assert np.isnan(result.pvalue).all()


# --------------------------------------------------------------------------- Durbin


def test_durbin_conover_example():
    # Conover (1999), by hand: t = 7, b = 7, k = 3, r = 3. Rank sums R = (8, 9, 4,
    # 3, 5, 6, 7), sum R^2 = 280; A = 7 * (1 + 4 + 9) = 98, C = 7 * 3 * 16 / 4 = 84;
    # T1 = (t - 1) (sum R^2 - r C) / (A - C) = 6 (280 - 252) / 14 = 12 on 6 df;
    # T2 = (12 / 6) / ((7 * 2 - 12) / (21 - 7 - 7 + 1)) = 8 on (6, 8) df.
    result = durbin(CONOVER, higher_is_better=False)
    close(result.rank_sum, [8, 9, 4, 3, 5, 6, 7])
    close(result.statistic, 12.0)
    close(result.f, 8.0)
    assert (float(result.dof), float(result.f_dof1), float(result.f_dof2)) == (6, 6, 8)
    assert float(result.balanced) == 1.0
    # oracle: scikit_posthocs.test_durbin(x) -> (p, statistic, df); p = chi2.sf(12, 6)
    with warnings.catch_warnings():  # the oracle's pandas calls, on data with NaN
        warnings.simplefilter("ignore")
        p, statistic, dof = sp.test_durbin(CONOVER)
        pairwise = sp.posthoc_durbin(CONOVER).to_numpy()
    assert dof == 6
    close(result.statistic, statistic)
    close(result.pvalue, p)
    assert round(float(result.pvalue), 5) == 0.06197
    close(result.f_pvalue, stats.f.sf(8.0, 6, 8))
    # oracle: scikit_posthocs.posthoc_durbin(x): Conover's pairwise t tests
    close(result.pairwise_pvalue, pairwise)


@pytest.mark.parametrize("seed", range(3))
def test_durbin_on_complete_data_is_friedman(seed):
    x = scores(seed, blocks=9, k=4, tied=True)
    result = durbin(x)
    friedman = rankstats.friedman(x, blocks=0, treatments=1)
    # factor 1: Conover's T1 is the tie-corrected Friedman statistic, T2 Iman-Davenport's F
    close(result.statistic, friedman.statistic)
    close(result.f, friedman.f)
    close(result.f_dof2, friedman.f_dof2)
    # oracle: scikit_posthocs.posthoc_conover_friedman(x) (Conover's t tests, unadjusted)
    close(result.pairwise_pvalue, sp.posthoc_conover_friedman(x).to_numpy())


def test_durbin_unbalanced_by_hand():
    # Blocks rank A, B, C (1 = best); block 3 lacks C, block 4 lacks B: not balanced.
    # R = (5, 7, 6); E = (2 + 2 + 1.5 + 1.5, 2 + 2 + 1.5, 2 + 2 + 1.5) = (7, 5.5, 5.5);
    # A = 2 (1 + 4 + 9) + 2 (1 + 4) = 38; C = 2 * 3 * 16 / 4 + 2 * 2 * 9 / 4 = 33;
    # T1 = 2 (4 + 2.25 + 0.25) / 5 = 2.6.
    x = np.array([[1, 2, 3], [1, 3, 2], [1, 2, N], [2, N, 1]], dtype=float)
    result = durbin(x, higher_is_better=False)
    close(result.statistic, 2.6)
    assert float(result.balanced) == 0.0
    assert np.isnan(result.pairwise_pvalue).all()


# --------------------------------------------------------------------------- Skillings–Mack


def skillings_mack_loop(x):
    """Skillings & Mack (1981) block by block: a reference with Python loops."""
    t = x.shape[1]
    adjusted = np.zeros(t)
    lam = np.zeros((t, t))
    for row in x:
        seen = ~np.isnan(row)
        k = seen.sum()
        if k < 2:
            continue
        ranks = stats.rankdata(-row[seen])
        adjusted[seen] += np.sqrt(12 / (k + 1)) * (ranks - (k + 1) / 2)
        lam += np.outer(seen, seen)
    np.fill_diagonal(lam, 0)
    sigma = np.diag(lam.sum(1)) - lam
    return adjusted @ np.linalg.pinv(sigma) @ adjusted, np.linalg.matrix_rank(sigma)


def test_skillings_mack_small_example_by_hand():
    # The blocks of test_durbin_unbalanced_by_hand. Weights sqrt(12 / 4) = sqrt(3) (k = 3) and
    # sqrt(12 / 3) = 2 (k = 2): A = (-2 sqrt3, sqrt3 + 1, sqrt3 - 1). Pairs share blocks
    # lambda_AB = 3, lambda_AC = 3, lambda_BC = 2, so Sigma = [[6, -3, -3], [-3, 5, -2],
    # [-3, -2, 5]]. Solving Sigma y = A with sum(y) = 0: y = (-2 sqrt3 / 9, sqrt3 / 9 + 1/7,
    # sqrt3 / 9 - 1/7), and SM = A.y = 12/9 + 6/9 + 2/7 = 16/7 on 2 df.
    x = np.array([[1, 2, 3], [1, 3, 2], [1, 2, N], [2, N, 1]], dtype=float)
    result = skillings_mack(x, higher_is_better=False)
    s3 = np.sqrt(3)
    close(result.adjusted_rank_sum, [-2 * s3, s3 + 1, s3 - 1])
    close(result.statistic, 16 / 7)
    assert float(result.dof) == 2
    close(result.pvalue, np.exp(-8 / 7))  # chi-square on 2 df: exp(-x / 2)


@pytest.mark.parametrize("seed", range(5))
def test_skillings_mack_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(10, 5))
    x[rng.random(x.shape) < 0.25] = np.nan
    statistic, rank = skillings_mack_loop(x)
    result = skillings_mack(x, tie_correction=False)
    close(result.statistic, statistic, rtol=1e-9)
    assert float(result.dof) == rank
    close(skillings_mack(x).statistic, statistic, rtol=1e-9)  # no ties: the same


def test_skillings_mack_skillings_and_mack_table_1():
    # Skillings & Mack (1981), table 1: four assembly methods in nine blocks, four cells missing
    # (as in the R package Skillings.Mack's example). Checked against the loop reference.
    y = np.array(
        [
            [3.2, 4.1, 3.8, 4.2],
            [3.1, 3.9, 3.4, 4.0],
            [4.3, 3.5, 4.6, 4.8],
            [3.5, 3.6, 3.9, 4.0],
            [3.6, 4.2, 3.7, 3.9],
            [4.5, 4.7, 3.7, N],
            [N, 4.2, 3.4, N],
            [4.3, 4.6, 4.4, 4.9],
            [3.5, N, 3.7, 3.9],
        ]
    )
    statistic, _ = skillings_mack_loop(y)
    result = skillings_mack(y, tie_correction=False)
    close(result.statistic, statistic, rtol=1e-9)
    assert (float(result.dof), float(result.n_blocks), float(result.n_observations)) == (3, 9, 32)


def test_skillings_mack_on_complete_data_is_friedman():
    x = scores(5, blocks=8, k=4, tied=True)
    close(skillings_mack(x).statistic, rankstats.friedman(x, blocks=0, treatments=1).statistic)
    close(
        skillings_mack(x, tie_correction=False).statistic,
        rankstats.friedman(x, blocks=0, treatments=1, tie_correction=False).statistic,
    )


def test_skillings_mack_on_a_balanced_design_is_durbin():
    values = np.random.default_rng(8).normal(size=(7, 3))
    x = cyclic_bibd(values)
    close(skillings_mack(x).statistic, durbin(x).statistic)
    close(skillings_mack(CONOVER).statistic, 12.0)


def test_skillings_mack_disconnected_design_loses_a_degree_of_freedom():
    # A and B only meet each other, C and D only each other: two separate comparisons
    x = np.array([[1, 2, N, N], [2, 1, N, N], [1, 3, N, N], [N, N, 1, 2], [N, N, 2, 5]])
    result = skillings_mack(x)
    assert float(result.dof) == 2
    statistic, rank = skillings_mack_loop(x)
    close(result.statistic, statistic, rtol=1e-9)
    assert rank == 2


# --------------------------------------------------------------------------- structure


@pytest.mark.parametrize("test", [nemenyi, durbin, skillings_mack])
def test_an_absent_model_and_padding_drop_out(test):
    x = scores(6, 9, 4)
    padded = np.full((11, 6), np.nan)
    padded[:9, [0, 1, 3, 4]] = x  # models 2 and 5 absent; blocks 9, 10 padding
    full, alone = test(padded), test(x)
    keep = [0, 1, 3, 4]
    for name, value in alone.to_dict().items():
        got = getattr(full, name)
        if np.ndim(value) == 1:
            close(got[keep], value)
            assert np.isnan(got[[2, 5]]).all()
        elif np.ndim(value) == 2:
            close(got[np.ix_(keep, keep)], value)
        else:
            close(got, value)


def test_incomplete_data_need_a_choice_for_nemenyi():
    x = scores(3, 8, 4)
    x[2, 1] = np.nan
    assert np.isnan(nemenyi(x).pvalue).all()
    close(nemenyi(x, nan_policy="omit").pvalue, nemenyi(np.delete(x, 2, axis=0)).pvalue)
    with pytest.raises(MissingValueError, match="1 missing value"):
        nemenyi(x, nan_policy="raise")
    assert np.isfinite(skillings_mack(x).statistic)


def test_single_block_slices_warn_and_give_nan():
    with pytest.warns(RankstatsWarning, match="fewer than two blocks"):
        result = nemenyi(np.array([[0.3, 0.2, 0.1]]))
    assert np.isnan(result.pvalue).all() and np.isnan(result.critical_difference)
    with pytest.warns(RankstatsWarning, match="every block ties"):
        assert np.isnan(skillings_mack(np.ones((4, 3))).statistic)
    with pytest.warns(RankstatsWarning, match="every block ties"):
        assert np.isnan(durbin(np.ones((4, 3))).statistic)


def test_block_dims_are_checked():
    data = xr.DataArray(scores(1, 5, 3), dims=("task", "model"))
    with pytest.raises(DimensionError, match=r"blocks dimension 'template'"):
        nemenyi(data, blocks="template")
    with pytest.raises(DimensionError, match="axis numbers for blocks"):
        nemenyi(data.values, blocks="task")
    with pytest.raises(ValueError, match="alpha=0"):
        nemenyi(data, alpha=0)


# --------------------------------------------------------------------------- adjust_pvalues


@pytest.mark.parametrize("method", list(SM_METHODS))
@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_adjust_pvalues_matches_multipletests(method, n):
    rng = np.random.default_rng(n)
    p = rng.uniform(size=n) ** 2
    p[: n // 3] = np.round(p[: n // 3], 1)  # some ties
    # oracle: statsmodels.stats.multitest.multipletests(p, method=...)[1]
    close(
        adjust_pvalues(p, method),
        multipletests(p, method=SM_METHODS[method])[1],
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("method", list(SM_METHODS))
def test_adjust_pvalues_leaves_nan_out_of_the_family(method):
    p = np.array([0.01, np.nan, 0.2, 0.03, np.nan, 0.04])
    got = adjust_pvalues(p, method)
    seen = ~np.isnan(p)
    close(got[seen], multipletests(p[seen], method=SM_METHODS[method])[1], rtol=0, atol=1e-12)
    assert np.isnan(got[~seen]).all()


def test_adjust_pvalues_along_a_dim():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=(3, 6))
    rows = adjust_pvalues(p, "holm", family=1)
    columns = adjust_pvalues(p, "holm", family=0)
    for i in range(3):
        close(rows[i], multipletests(p[i], method="holm")[1], rtol=0, atol=1e-12)
    for j in range(6):
        close(columns[:, j], multipletests(p[:, j], method="holm")[1], rtol=0, atol=1e-12)
    close(
        adjust_pvalues(p, "holm"),
        multipletests(p.ravel(), method="holm")[1].reshape(3, 6),
        rtol=0,
        atol=1e-12,
    )
    labelled = xr.DataArray(p, dims=("task", "model"))
    out = adjust_pvalues(labelled, "holm", family="model")
    assert out.dims == ("task", "model")
    close(out, rows)
    assert out.attrs["p_adjust"] == "holm"
    assert out.attrs["family"] == "model"


def test_adjust_pvalues_rejects_bad_input():
    with pytest.raises(ValueError, match=r"found 1\.5"):
        adjust_pvalues([0.1, 1.5])
    with pytest.raises(rankstats.ScoreValueError, match=r"found 1\.5"):
        adjust_pvalues(xr.DataArray([0.1, 1.5], dims="model"))
    with pytest.raises(OptionError, match="p_adjust='sidak'"):
        adjust_pvalues([0.1], "sidak")
    with pytest.raises(DimensionError, match="family"):
        adjust_pvalues(xr.DataArray([0.1], dims="model"), family="task")


# --------------------------------------------------------------------------- pairwise McNemar


def binary_cube():
    rng = np.random.default_rng(21)
    skill = np.array([0.9, 0.6, 0.55, 0.3])[:, None, None, None]
    values = (rng.random((4, 2, 3, 25)) < skill).astype(float)
    values[3, 1] = np.nan  # model m3 absent on task t1
    return xr.DataArray(
        values,
        dims=("model", "task", "template", "sample"),
        coords={"model": ["m0", "m1", "m2", "m3"], "task": ["t0", "t1"]},
    )


@pytest.mark.parametrize("p_adjust", list(SM_METHODS))
def test_pairwise_mcnemar_adjusts_the_upper_triangle(p_adjust):
    data = binary_cube()
    result = pairwise_mcnemar(data, p_adjust=p_adjust)
    raw = rankstats.mcnemar(data, pairs_over="model")
    close(result.pvalue, raw.pvalue)
    i, j = np.triu_indices(4, 1)
    for task in ("t0", "t1"):
        for template in range(3):
            one = result.sel(task=task, template=template)
            p = raw.pvalue.sel(task=task, template=template).values[i, j]
            tested = ~np.isnan(p)
            expected = multipletests(p[tested], method=SM_METHODS[p_adjust])[1]
            got = one.pvalue_adjusted.values
            close(got[i, j][tested], expected, rtol=0, atol=1e-12)
            close(got, got.T)
            assert np.isnan(np.diag(got)).all()
    assert int(result.pvalue_adjusted.sel(task="t1").notnull().sum()) == 3 * 2 * 3


def test_pairwise_mcnemar_family_over_tasks():
    data = binary_cube().isel(template=0)
    pooled = pairwise_mcnemar(data, family="task")
    raw = rankstats.mcnemar(data, pairs_over="model").pvalue.transpose("task", "model", "model_b")
    i, j = np.triu_indices(4, 1)
    p = raw.values[:, i, j].ravel()
    tested = ~np.isnan(p)
    got = pooled.pvalue_adjusted.transpose("task", "model", "model_b").values[:, i, j].ravel()
    close(got[tested], multipletests(p[tested], method="holm")[1], rtol=0, atol=1e-12)
    numpy = pairwise_mcnemar(data.transpose("task", "model", "sample").values, family=0)
    close(numpy.pvalue_adjusted, pooled.pvalue_adjusted.transpose("task", "model", "model_b"))


# --------------------------------------------------------------------------- groups and diagram


def test_nonsignificant_groups_are_maximal_runs():
    x = scores(9, blocks=25, k=6) + np.linspace(0, 2.0, 6)[::-1]
    result = nemenyi(x)
    groups = nonsignificant_groups(result)
    ranks, cd = result.average_rank, float(result.critical_difference)
    order = list(np.argsort(ranks))
    # by hand: from each model in rank order, the run reaching as far as ranks stay within CD
    expected = []
    for start, first in enumerate(order):
        run = [j for j in order[start:] if ranks[j] - ranks[first] <= cd]
        if len(run) > 1 and not any(set(run) <= set(g) for g in expected):
            expected.append(run)
    assert groups == expected
    by_p = nonsignificant_groups(result, alpha=0.05)
    assert by_p == groups


def test_nonsignificant_groups_of_a_labelled_slice():
    data = xr.DataArray(
        scores(2, 10, 3) + np.array([2.0, 1.0, 0.0]),
        dims=("task", "model"),
        coords={"model": ["x", "y", "z"]},
    )
    result = nemenyi(data)
    assert nonsignificant_groups(result) == nonsignificant_groups(
        nemenyi(data.values), names=["x", "y", "z"]
    )
    stacked = nemenyi(data.expand_dims(template=2), blocks="task")
    with pytest.raises(DimensionError, match="select along 'template' first"):
        nonsignificant_groups(stacked)
    with pytest.raises(DimensionError, match="one slice of a nemenyi result"):
        nonsignificant_groups(bonferroni_dunn(data, "x"))


def test_critical_difference_diagram():
    from rankstats.plot.posthoc import plot_critical_difference

    names = ["a", "b", "c", "d", "e"]
    result = nemenyi(scores(4, blocks=20, k=5) + np.linspace(0, 2.0, 5)[::-1])
    groups = nonsignificant_groups(result, names=names)
    for best in ("right", "left"):
        ax = plot_critical_difference(result, names=names, best=best, title="t")
        texts = [t.get_text() for t in ax.texts]
        assert "CD" in texts
        assert all(any(t.startswith(f"{n} (") for t in texts) for n in names)
        bars = [line for line in ax.lines if line.get_linewidth() == 3.0]
        assert len(bars) == len(groups)
        assert ax.get_title() == "t"
    with pytest.raises(ValueError, match="best='top'"):
        plot_critical_difference(result, best="top")


def test_posthoc_imports_no_matplotlib():
    import subprocess

    code = (
        "import sys, rankstats.statistics.posthoc; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- contract

CUBE_DIMS = ("model", "task", "template")


def template_cube(holes=False):
    rng = np.random.default_rng(99)
    values = rng.normal(size=(5, 3, 6))
    values[:, 2, 4:] = np.nan  # task t2 has four templates: padding
    values[4, 1] = np.nan  # model m4 absent on task t1
    if holes:
        values[1, 0, 2] = np.nan
        values[3, 2, 0] = np.nan
    return xr.DataArray(
        values,
        dims=CUBE_DIMS,
        coords={"model": [f"m{i}" for i in range(5)], "task": ["t0", "t1", "t2"]},
    )


CALLS = {
    "nemenyi": lambda x, **kw: nemenyi(x, **kw),
    "bonferroni_dunn": lambda x, **kw: bonferroni_dunn(x, "m1" if hasattr(x, "dims") else 1, **kw),
    "durbin": lambda x, **kw: durbin(x, **kw),
    "skillings_mack": lambda x, **kw: skillings_mack(x, **kw),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_labelled_equals_numpy_and_looping_tasks(name):
    call = CALLS[name]
    data = template_cube(holes=name in ("durbin", "skillings_mack"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)  # m4's absent task, t2's padding
        labelled = call(data, blocks="template")
        numpy = call(data.transpose("task", "template", "model").values)
    for field, value in numpy.to_dict().items():
        got = labelled[field]
        got = got.transpose("task", *[d for d in got.dims if d != "task"]).values
        close(got, value)
    for task in data.task.values:
        one = data.sel(task=task)
        present = one.notnull().any("template")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankstatsWarning)
            alone = call(one.sel(model=present), blocks="template")
        models = alone.model.values
        for field in ("pvalue", "average_rank", "rank_sum", "adjusted_rank_sum"):
            if field in alone:
                got = labelled[field].sel(task=task)
                for dim in {"model", "model_b"} & set(got.dims):
                    got = got.sel({dim: models})
                close(got, alone[field])


@pytest.mark.parametrize("name", list(CALLS))
def test_dask_chunked_equals_eager(name):
    call = CALLS[name]
    data = template_cube(holes=name in ("durbin", "skillings_mack")).isel(task=[0, 2])
    eager = call(data, blocks="template")
    lazy = call(data.chunk({"task": 1, "template": 2}), blocks="template")
    assert isinstance(lazy["pvalue"].data, da.Array)
    xr.testing.assert_allclose(lazy.compute(), eager, rtol=RTOL)


def test_dask_chunked_adjust_and_pairwise_mcnemar():
    data = binary_cube().isel(task=[0])
    eager = pairwise_mcnemar(data)
    lazy = pairwise_mcnemar(data.chunk({"template": 1, "sample": 10}))
    assert isinstance(lazy["pvalue_adjusted"].data, da.Array)
    xr.testing.assert_allclose(lazy.compute(), eager)
    p = eager.pvalue
    xr.testing.assert_allclose(
        adjust_pvalues(p.chunk({"template": 1}), "bh", family=("model", "model_b")).compute(),
        adjust_pvalues(p, "bh", family=("model", "model_b")),
    )


def test_one_block_gives_nan_with_a_warning_like_friedman():
    one = np.array([[0.9, 0.5, 0.1]])
    for test in (rankstats.friedman, rankstats.durbin, rankstats.skillings_mack):
        with pytest.warns(rankstats.RankstatsWarning, match="fewer than two"):
            assert np.isnan(test(one).statistic)
