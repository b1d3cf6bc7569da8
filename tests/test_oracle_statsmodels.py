"""Oracle parity with statsmodels: McNemar's test and Cochran's Q.

Every value is checked to a relative tolerance of 1e-10.
Oracles (statsmodels >= 0.14; checked with 0.15):

* ``statsmodels.stats.contingency_tables.mcnemar(table, exact=..., correction=...)``
  on the 2x2 table ``[[both right, x right only], [y right only, both wrong]]``.
* ``statsmodels.stats.contingency_tables.cochrans_q(x)`` on (blocks, treatments).
* mid-p McNemar, which statsmodels does not offer: by hand from
  ``scipy.stats.binom`` as ``2 * cdf(min(b, c)) - pmf(min(b, c))``, and the
  worked example of Fagerland, Lydersen & Laake (2013).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import rankstats

RTOL = 1e-10


def close(actual, desired):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float),
        np.asarray(desired, dtype=float),
        rtol=RTOL,
        atol=0,
        equal_nan=False,
    )


def table_of(x, y):
    """2x2 table with x's outcome on rows and y's on columns, 1 (right) first."""
    return np.array(
        [
            [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
            [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
        ]
    )


def _paired(n: int, p_x: float, p_y: float, seed: int):
    rng = np.random.default_rng(seed)
    x = (rng.random(n) < p_x).astype(float)
    redraw = rng.random(n) < 0.4
    y = np.where(redraw, (rng.random(n) < p_y).astype(float), x)
    return x, y


def _discordant(b: int, c: int):
    """x and y with b samples (1, 0), c samples (0, 1) and two concordant ones."""
    x = np.array([1.0] * b + [0.0] * c + [1.0, 0.0])
    y = np.array([0.0] * b + [1.0] * c + [1.0, 0.0])
    return x, y


MCNEMAR_CASES = [
    pytest.param(10, 0.5, 0.5, 1, id="n10"),
    pytest.param(30, 0.8, 0.3, 2, id="n30-unequal"),
    pytest.param(100, 0.5, 0.5, 3, id="n100"),
    pytest.param(500, 0.4, 0.6, 4, id="n500"),
    pytest.param(5000, 0.5, 0.52, 5, id="n5000"),
]


# --------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize(("n", "p_x", "p_y", "seed"), MCNEMAR_CASES)
def test_mcnemar_exact_matches_statsmodels(n, p_x, p_y, seed):
    x, y = _paired(n, p_x, p_y, seed)
    result = rankstats.mcnemar(x, y, method="exact")
    # oracle: statsmodels.stats.contingency_tables.mcnemar(table, exact=True)
    expected = sm_mcnemar(table_of(x, y), exact=True)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


@pytest.mark.parametrize(("n", "p_x", "p_y", "seed"), MCNEMAR_CASES)
@pytest.mark.parametrize(("method", "correction"), [("chi2_cc", True), ("chi2", False)])
def test_mcnemar_chi2_matches_statsmodels(n, p_x, p_y, seed, method, correction):
    x, y = _paired(n, p_x, p_y, seed)
    result = rankstats.mcnemar(x, y, method=method)
    # oracle: statsmodels.stats.contingency_tables.mcnemar(table, exact=False,
    #         correction=correction)
    expected = sm_mcnemar(table_of(x, y), exact=False, correction=correction)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


@pytest.mark.parametrize(("b", "c"), [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (4, 4)])
@pytest.mark.parametrize(
    ("method", "exact", "correction"),
    [("exact", True, True), ("chi2_cc", False, True), ("chi2", False, False)],
)
def test_mcnemar_small_discordant_counts_match_statsmodels(b, c, method, exact, correction):
    # chi2_cc is unclamped, as statsmodels: |b - c| < 1 gives (|b - c| - 1)^2 / (b + c) > 0
    x, y = _discordant(b, c)
    result = rankstats.mcnemar(x, y, method=method)
    # oracle: statsmodels.stats.contingency_tables.mcnemar(table, exact=..., correction=...)
    expected = sm_mcnemar(table_of(x, y), exact=exact, correction=correction)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


@pytest.mark.parametrize(("n", "p_x", "p_y", "seed"), MCNEMAR_CASES)
def test_mcnemar_midp_by_hand_from_the_binomial(n, p_x, p_y, seed):
    x, y = _paired(n, p_x, p_y, seed)
    b = np.sum((x == 1) & (y == 0))
    c = np.sum((x == 0) & (y == 1))
    k = min(b, c)
    expected = _midp(b, c)
    result = rankstats.mcnemar(x, y, method="midp")
    close(result.pvalue, expected)
    close(result.statistic, k)
    assert (float(result.b), float(result.c)) == (b, c)


def _midp(b, c):
    """Mid-p as Fagerland et al. (2013, supplementary material) compute it."""
    k, n = min(b, c), b + c
    # oracle: 2 * scipy.stats.binom.cdf(k, n, 0.5) - scipy.stats.binom.pmf(k, n, 0.5), and
    # "if n12 = n21, the mid-p-value equals 1 - 0.5 * binompdf(n12, n, 0.5)"
    if b == c:
        return 1.0 - 0.5 * stats.binom.pmf(k, n, 0.5)
    return 2 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5)


@pytest.mark.parametrize(("b", "c"), [(3, 3), (0, 5), (5, 0), (1, 2), (10, 10), (7, 20)])
def test_mcnemar_midp_by_hand_small_counts(b, c):
    x, y = _discordant(b, c)
    close(rankstats.mcnemar(x, y, method="midp").pvalue, _midp(b, c))


def test_mcnemar_midp_with_equal_discordant_counts_follows_fagerland():
    # Fagerland et al. (2013, supplementary material): "If n12 = n21, the mid-p-value equals
    # 1 - 0.5 * binompdf(n12, n, 0.5)". For b = c = 3: 1 - 0.5 * 20/64 = 27/32.
    x, y = _discordant(3, 3)
    close(rankstats.mcnemar(x, y, method="midp").pvalue, 27 / 32)


# b = 3 (x right, y wrong), c = 9 (x wrong, y right), n = b + c = 12, B ~ Binomial(12, 1/2):
#   P[B <= 3] = (1 + 12 + 66 + 220) / 4096 = 299/4096,   P[B = 3] = 220/4096
#   exact  = 2 * 299/4096              = 598/4096
#   mid-p  = 598/4096 - 220/4096       = 378/4096
#   chi2   = (9 - 3)^2 / 12            = 3
#   chi2_cc = (|9 - 3| - 1)^2 / 12     = 25/12
HAND_X = np.array([1.0] * 3 + [0.0] * 9 + [1.0] * 5 + [0.0] * 4)
HAND_Y = np.array([0.0] * 3 + [1.0] * 9 + [1.0] * 5 + [0.0] * 4)


@pytest.mark.parametrize(
    ("method", "statistic", "pvalue"),
    [
        ("exact", 3.0, float(Fraction(598, 4096))),
        ("midp", 3.0, float(Fraction(378, 4096))),
        ("chi2", 3.0, stats.chi2.sf(3.0, 1)),
        ("chi2_cc", 25 / 12, stats.chi2.sf(25 / 12, 1)),
    ],
)
def test_mcnemar_by_hand(method, statistic, pvalue):
    result = rankstats.mcnemar(HAND_X, HAND_Y, method=method)
    close(result.statistic, statistic)
    close(result.pvalue, pvalue)
    assert (float(result.b), float(result.c), float(result.n_samples)) == (3, 9, 21)


# Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1: airway
# hyper-responsiveness before and after stem cell transplantation in 21 children,
#   before AHR / after AHR 1, before AHR / after none 1, before none / after AHR 7, none/none 12.
# The paper reports p = 0.034 (asymptotic), 0.070 (exact conditional) and 0.039 (mid-p).
FAGERLAND_BEFORE = np.array([1.0] * 2 + [0.0] * 19)
FAGERLAND_AFTER = np.array([1.0, 0.0] + [1.0] * 7 + [0.0] * 12)


@pytest.mark.parametrize(
    ("method", "printed"), [("chi2", 0.034), ("exact", 0.070), ("midp", 0.039)]
)
def test_mcnemar_fagerland_2013_example(method, printed):
    result = rankstats.mcnemar(FAGERLAND_BEFORE, FAGERLAND_AFTER, method=method)
    assert (float(result.b), float(result.c)) == (1, 7)
    assert round(float(result.pvalue), 3) == printed


def test_mcnemar_all_pairs_matches_statsmodels():
    rng = np.random.default_rng(8)
    rates = np.array([0.3, 0.45, 0.5, 0.6, 0.8])
    x = (rng.random((5, 80)) < rates[:, None]).astype(float)  # template x sample
    result = rankstats.mcnemar(x, pairs_over="template", method="chi2")
    for a in range(5):
        for b in range(5):
            if a == b:
                continue
            # oracle: statsmodels mcnemar(table_of(x[a], x[b]), exact=False, correction=False)
            expected = sm_mcnemar(table_of(x[a], x[b]), exact=False, correction=False)
            close(result.statistic[a, b], expected.statistic)
            close(result.pvalue[a, b], expected.pvalue)
            assert result.b[a, b] == np.sum((x[a] == 1) & (x[b] == 0))


def test_mcnemar_all_pairs_exact_matches_statsmodels():
    rng = np.random.default_rng(9)
    x = (rng.random((4, 50)) < 0.5).astype(float)
    result = rankstats.mcnemar(x, pairs_over="template")
    expected = np.ones((4, 4))
    for a in range(4):
        for b in range(4):
            if a != b:
                # oracle: statsmodels mcnemar(table_of(x[a], x[b]), exact=True)
                expected[a, b] = sm_mcnemar(table_of(x[a], x[b]), exact=True).pvalue
    close(result.pvalue, expected)


def test_mcnemar_of_a_cube_compares_templates_over_samples():
    rng = np.random.default_rng(10)
    correct = (rng.random((3, 2, 60)) < 0.5).astype(float)  # model x template x sample
    cube = rankstats.from_records(
        [
            {
                "model": f"m{i}",
                "task": "t",
                "template": f"p{j}",
                "sample": f"s{s}",
                "score": correct[i, j, s],
            }
            for i in range(3)
            for j in range(2)
            for s in range(60)
        ]
    )
    template_coords = ["template_id"]
    p0 = cube.score.isel(template=0).drop_vars(template_coords)
    p1 = cube.score.isel(template=1).drop_vars(template_coords)
    pair = rankstats.mcnemar(p0, p1, method="chi2_cc")
    every_pair = rankstats.mcnemar(cube, pairs_over="template", method="chi2_cc")
    assert every_pair.statistic.dims[-2:] == ("template", "template_b")
    for i in range(3):
        # oracle: statsmodels mcnemar(table, exact=False, correction=True)
        expected = sm_mcnemar(table_of(correct[i, 0], correct[i, 1]), exact=False, correction=True)
        where = {"model": f"m{i}", "task": "t"}
        close(pair.statistic.sel(where), expected.statistic)
        close(pair.pvalue.sel(where), expected.pvalue)
        close(every_pair.statistic.sel(where).isel(template=0, template_b=1), expected.statistic)
        close(every_pair.pvalue.sel(where).isel(template=0, template_b=1), expected.pvalue)


# --------------------------------------------------------------------------- Cochran's Q


def _binary_blocks(n_blocks: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rate = np.linspace(0.25, 0.75, k)
    return (rng.random((n_blocks, k)) < rate).astype(float)


@pytest.mark.parametrize(
    ("n_blocks", "k", "seed"),
    [(8, 3, 1), (40, 4, 2), (300, 6, 3), (50, 2, 4), (20, 10, 5)],
    ids=["8x3", "40x4", "300x6", "50x2", "20x10"],
)
def test_cochran_q_matches_statsmodels(n_blocks, k, seed):
    x = _binary_blocks(n_blocks, k, seed)
    result = rankstats.cochran_q(x)
    # oracle: statsmodels.stats.contingency_tables.cochrans_q(x), x = (blocks, treatments)
    expected = cochrans_q(x)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    close(result.dof, expected.df)


def test_cochran_q_over_leading_axes():
    rng = np.random.default_rng(6)
    x = (rng.random((3, 25, 4)) < 0.5).astype(float)
    result = rankstats.cochran_q(x)
    for i in range(3):
        # oracle: statsmodels cochrans_q(x[i])
        expected = cochrans_q(x[i])
        close(result.statistic[i], expected.statistic)
        close(result.pvalue[i], expected.pvalue)


def test_cochran_q_with_two_treatments_is_mcnemar_without_correction():
    x = _binary_blocks(60, 2, 7)
    q = rankstats.cochran_q(x)
    # oracle: statsmodels mcnemar(table, exact=False, correction=False)
    expected = sm_mcnemar(table_of(x[:, 0], x[:, 1]), exact=False, correction=False)
    close(q.statistic, expected.statistic)
    close(q.pvalue, expected.pvalue)


# Six blocks, three treatments:
#   1 1 0 | 2      column totals C = 5 4 2, total T = 11
#   1 0 1 | 2      row totals    R = 2 2 3 1 1 2, sum R^2 = 23
#   1 1 1 | 3
#   1 0 0 | 1      Q = (k - 1)(k sum C^2 - T^2) / (k T - sum R^2)
#   0 1 0 | 1        = 2 (3 * 45 - 121) / (33 - 23) = 28/10 = 2.8
#   1 1 0 | 2      p = chi2(2).sf(2.8) = exp(-1.4)
HAND_Q = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)


def test_cochran_q_by_hand():
    result = rankstats.cochran_q(HAND_Q)
    close(result.statistic, 2.8)
    close(result.pvalue, np.exp(-1.4))
    assert (float(result.dof), float(result.n_blocks), float(result.n_treatments)) == (2, 6, 3)
    close(cochrans_q(HAND_Q).statistic, 2.8)  # and the oracle agrees with the hand computation
