"""Oracle parity with pingouin: Kendall's W, Friedman, McNemar and Cochran's Q.

Every value is checked against pingouin to a relative tolerance of 1e-10.
Oracles (pingouin >= 0.5.4; checked with 0.7.0):

* ``pingouin.friedman(data, dv, within, subject, method="chisq" | "f")``: columns
  ``W``, ``Q``, ``ddof1``, ``p_unc`` (chisq) and ``F``, ``ddof1``, ``ddof2``,
  ``p_unc`` (f). pingouin's ``subject`` is the rankstats judge (Kendall's W)
  or block (Friedman); ``within`` is the ranked object or treatment.
* ``pingouin.chi2_mcnemar(data, x, y, correction=...)``: ``chi2``,
  ``p_approx``, ``p_exact``.
* ``pingouin.cochran(data, dv, within, subject)``: ``Q``, ``dof``, ``p_unc``.

Kendall's W is also worked by hand on a small example with ties.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats

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


def long_frame(x: np.ndarray) -> pd.DataFrame:
    """(subjects, within) values as pingouin's long format; NaN cells are left out."""
    rows, cols = np.nonzero(~np.isnan(x))
    return pd.DataFrame({"subject": rows, "within": cols, "dv": x[rows, cols]})


def pg_friedman(x: np.ndarray, method: str = "chisq") -> pd.Series:
    # oracle: pingouin.friedman(data, dv="dv", within="within", subject="subject", method=method)
    out = pingouin.friedman(
        data=long_frame(x), dv="dv", within="within", subject="subject", method=method
    )
    return out.loc["Friedman"]


def _ranking_data(kind: str, seed: int) -> np.ndarray:
    """Judges (rows) x objects (columns)."""
    rng = np.random.default_rng(seed)
    if kind == "untied":
        return rng.normal(size=(5, 7)) + np.arange(7) * 0.4
    if kind == "ties":
        return rng.integers(0, 3, size=(8, 5)).astype(float)
    if kind == "many_judges":
        return rng.integers(0, 10, size=(60, 4)) / 10 + np.arange(4) * 0.05
    if kind == "proportions":
        return rng.integers(0, 20, size=(12, 16)) / 20
    if kind == "two_objects":
        return rng.integers(0, 3, size=(9, 2)).astype(float)
    raise AssertionError(kind)


CASES = [
    pytest.param("untied", 1, id="untied"),
    pytest.param("ties", 2, id="ties"),
    pytest.param("many_judges", 3, id="many_judges"),
    pytest.param("proportions", 4, id="proportions"),
    pytest.param("two_objects", 5, id="two_objects"),
]


# --------------------------------------------------------------------------- Kendall's W


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_kendall_w_matches_pingouin_chisq(kind, seed):
    x = _ranking_data(kind, seed)
    result = rankstats.kendall_w(x)
    expected = pg_friedman(x)
    close(result.statistic, expected["W"])
    close(result.chi2, expected["Q"])
    close(result.dof, expected["ddof1"])
    close(result.pvalue, expected["p_unc"])


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_kendall_w_matches_pingouin_f(kind, seed):
    x = _ranking_data(kind, seed)
    result = rankstats.kendall_w(x)
    expected = pg_friedman(x, method="f")
    close(result.statistic, expected["W"])
    close(result.f, expected["F"])
    close(result.f_kbs_dof1, expected["ddof1"])
    close(result.f_kbs_dof2, expected["ddof2"])
    close(result.f_kbs_pvalue, expected["p_unc"])


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_kendall_w_iman_davenport_f(kind, seed):
    x = _ranking_data(kind, seed)
    result = rankstats.kendall_w(x)
    m, n = x.shape
    w = pg_friedman(x)["W"]
    # oracle: pingouin's W, then F = (m - 1) W / (1 - W) on (n - 1, (m - 1)(n - 1)) by hand,
    # referred to scipy.stats.f.sf
    f = (m - 1) * w / (1 - w)
    close(result.f, f)
    close(result.f_dof1, n - 1)
    close(result.f_dof2, (m - 1) * (n - 1))
    close(result.f_pvalue, stats.f.sf(f, n - 1, (m - 1) * (n - 1)))


def test_kendall_w_of_a_cube_judges_templates_objects_models():
    rng = np.random.default_rng(9)
    scores = rng.integers(0, 8, size=(3, 6, 5)) / 8  # task x model x template
    cube = rankstats.from_records(
        [
            {"model": f"m{i}", "task": f"t{t}", "template": f"p{j}", "score": scores[t, i, j]}
            for t in range(3)
            for i in range(6)
            for j in range(5)
        ]
    )
    result = rankstats.kendall_w(cube)
    for t in range(3):
        # subject = template (judge), within = model (object)
        expected = pg_friedman(scores[t].T)
        close(result.statistic.sel(task=f"t{t}"), expected["W"])
        close(result.pvalue.sel(task=f"t{t}"), expected["p_unc"])


def test_kendall_w_omit_is_pingouin_listwise_deletion():
    x = _ranking_data("proportions", 11)
    x[[1, 4, 4, 9], [0, 3, 7, 15]] = np.nan
    result = rankstats.kendall_w(x, nan_policy="omit")
    # pingouin drops every subject (judge) with a missing value
    expected = pg_friedman(x)
    close(result.statistic, expected["W"])
    close(result.pvalue, expected["p_unc"])
    assert float(result.n_judges) == 9


# --------------------------------------------------------------------------- Friedman


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_friedman_matches_pingouin(kind, seed):
    x = _ranking_data(kind, seed)  # blocks x treatments
    result = rankstats.friedman(x)
    expected = pg_friedman(x)
    close(result.statistic, expected["Q"])
    close(result.pvalue, expected["p_unc"])
    close(result.kendall_w, expected["W"])
    close(result.dof, expected["ddof1"])


def test_friedman_omit_is_pingouin_listwise_deletion():
    x = _ranking_data("ties", 12)
    x[[0, 6], [2, 4]] = np.nan
    result = rankstats.friedman(x, nan_policy="omit")
    expected = pg_friedman(x)
    close(result.statistic, expected["Q"])
    close(result.pvalue, expected["p_unc"])
    assert float(result.n_blocks) == 6


def test_friedman_of_a_cube_blocks_models_treatments_templates():
    rng = np.random.default_rng(13)
    scores = rng.integers(0, 6, size=(7, 4)) / 6  # model x template
    cube = rankstats.from_records(
        [
            {"model": f"m{i}", "task": "t", "template": f"p{j}", "score": scores[i, j]}
            for i in range(7)
            for j in range(4)
        ]
    )
    result = rankstats.friedman(cube).isel(task=0)
    # subject = model (block), within = template (treatment)
    expected = pg_friedman(scores)
    close(result.statistic, expected["Q"])
    close(result.pvalue, expected["p_unc"])


# --------------------------------------------------------------------------- W by hand

# Three judges rank four objects (higher score = better = rank 1), average ranks:
#
#   judge 1: scores 4 3 2 1  -> ranks 1    2    3    4
#   judge 2: scores 4 3 3 1  -> ranks 1    2.5  2.5  4      one tie of 2: T = 2^3 - 2 = 6
#   judge 3: scores 3 4 2 2  -> ranks 2    1    3.5  3.5    one tie of 2: T = 6
#   rank sums R             =       4    5.5  9    11.5    mean 7.5
#   S = 3.5^2 + 2^2 + 1.5^2 + 4^2 = 34.5
#
#   W = 12 S / (m^2 (n^3 - n) - m sum T) = 414 / (9 * 60 - 3 * 12) = 414 / 504 = 23/28
#   uncorrected: 414 / 540 = 23/30
#   chi2 = m (n - 1) W = 9 * 23/28 = 207/28 on 3 degrees of freedom
#   F (Iman-Davenport) = (m - 1) W / (1 - W) = 2 * 23/5 = 46/5 on (3, 6)
#   F (Kendall-Babington Smith) dof = (3 - 2/3, 2 * (3 - 2/3)) = (7/3, 14/3)
#
# With ties="min" the ranks are 1 2 3 4 / 1 2 2 4 / 2 1 3 3, rank sums 4 5 8 11 (mean 7),
# S = 9 + 4 + 1 + 16 = 30, and the uncorrected W = 12 * 30 / 540 = 2/3 (the form the
# paper's Table 3 uses). Corrected, the denominator is m times the judges' summed squared
# rank deviations, 3 * (5 + 4.75 + 2.75) = 37.5, so W = 30 / 37.5 = 4/5.
HAND = np.array([[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 3.0, 1.0], [3.0, 4.0, 2.0, 2.0]])


def f(q: Fraction) -> float:
    return float(q)


def test_kendall_w_by_hand_with_ties():
    result = rankstats.kendall_w(HAND)
    close(result.statistic, f(Fraction(23, 28)))
    close(result.chi2, f(Fraction(207, 28)))
    close(result.pvalue, stats.chi2.sf(207 / 28, 3))
    close(result.f, f(Fraction(46, 5)))
    close(result.f_dof2, 6.0)
    close(result.f_pvalue, stats.f.sf(46 / 5, 3, 6))
    close(result.f_kbs_dof1, f(Fraction(7, 3)))
    close(result.f_kbs_dof2, f(Fraction(14, 3)))
    close(result.f_kbs_pvalue, stats.f.sf(46 / 5, 7 / 3, 14 / 3))


def test_kendall_w_by_hand_uncorrected():
    close(rankstats.kendall_w(HAND, tie_correction=False).statistic, f(Fraction(23, 30)))


def test_kendall_w_by_hand_min_ranks():
    close(rankstats.kendall_w(HAND, ties="min", tie_correction=False).statistic, f(Fraction(2, 3)))
    close(rankstats.kendall_w(HAND, ties="min").statistic, 0.8)


def test_friedman_by_hand_is_w_read_the_other_way():
    # judges = blocks, objects = treatments: chi2 = b (k - 1) W = 207/28
    result = rankstats.friedman(HAND)
    close(result.statistic, f(Fraction(207, 28)))
    close(result.kendall_w, f(Fraction(23, 28)))
    close(result.f, f(Fraction(46, 5)))


def test_kendall_w_by_hand_agrees_with_pingouin():
    expected = pg_friedman(HAND)
    close(expected["W"], f(Fraction(23, 28)))  # the oracle agrees with the hand computation
    close(rankstats.kendall_w(HAND).statistic, expected["W"])


# --------------------------------------------------------------------------- McNemar


def _paired(n: int, p_x: float, p_y: float, seed: int):
    rng = np.random.default_rng(seed)
    x = (rng.random(n) < p_x).astype(float)
    flip = rng.random(n) < 0.35
    y = np.where(flip, (rng.random(n) < p_y).astype(float), x)
    return x, y


MCNEMAR_CASES = [
    pytest.param(20, 0.5, 0.5, 1, id="n20"),
    pytest.param(40, 0.7, 0.3, 2, id="n40-unequal"),
    pytest.param(200, 0.6, 0.55, 3, id="n200"),
    pytest.param(1000, 0.2, 0.4, 4, id="n1000"),
    pytest.param(15, 0.9, 0.1, 5, id="n15-skewed"),
]


def pg_mcnemar(x, y, correction):
    data = pd.DataFrame({"x": x.astype(int), "y": y.astype(int)})
    # oracle: pingouin.chi2_mcnemar(data, "x", "y", correction=correction)
    _, out = pingouin.chi2_mcnemar(data, "x", "y", correction=correction)
    return out.loc["mcnemar"]


@pytest.mark.parametrize(("n", "p_x", "p_y", "seed"), MCNEMAR_CASES)
@pytest.mark.parametrize(("method", "correction"), [("chi2_cc", True), ("chi2", False)])
def test_mcnemar_chi2_matches_pingouin(n, p_x, p_y, seed, method, correction):
    x, y = _paired(n, p_x, p_y, seed)
    result = rankstats.mcnemar(x, y, method=method)
    expected = pg_mcnemar(x, y, correction)
    close(result.statistic, expected["chi2"])
    close(result.pvalue, expected["p_approx"])


@pytest.mark.parametrize(("n", "p_x", "p_y", "seed"), MCNEMAR_CASES)
def test_mcnemar_exact_matches_pingouin(n, p_x, p_y, seed):
    x, y = _paired(n, p_x, p_y, seed)
    result = rankstats.mcnemar(x, y, method="exact")
    close(result.pvalue, pg_mcnemar(x, y, True)["p_exact"])


def test_mcnemar_counts_match_pingouin_crosstab():
    x, y = _paired(60, 0.6, 0.4, 6)
    # oracle: pingouin.dichotomous_crosstab(data, "x", "y"); b = (x=1, y=0), c = (x=0, y=1)
    table = pingouin.dichotomous_crosstab(pd.DataFrame({"x": x, "y": y}), "x", "y")
    result = rankstats.mcnemar(x, y)
    assert float(result.b) == table.at[1, 0]
    assert float(result.c) == table.at[0, 1]
    assert float(result.n_samples) == 60


# --------------------------------------------------------------------------- Cochran's Q


def _binary_blocks(n_blocks: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rate = np.linspace(0.3, 0.7, k)
    return (rng.random((n_blocks, k)) < rate).astype(float)


COCHRAN_CASES = [
    pytest.param(12, 3, 1, id="12x3"),
    pytest.param(30, 5, 2, id="30x5"),
    pytest.param(200, 4, 3, id="200x4"),
    pytest.param(25, 2, 4, id="25x2"),
]


def pg_cochran(x: np.ndarray) -> pd.Series:
    # oracle: pingouin.cochran(data, dv="dv", within="within", subject="subject")
    return pingouin.cochran(data=long_frame(x), dv="dv", within="within", subject="subject").loc[
        "cochran"
    ]


@pytest.mark.parametrize(("n_blocks", "k", "seed"), COCHRAN_CASES)
def test_cochran_q_matches_pingouin(n_blocks, k, seed):
    x = _binary_blocks(n_blocks, k, seed)
    result = rankstats.cochran_q(x)
    expected = pg_cochran(x)
    close(result.statistic, expected["Q"])
    close(result.pvalue, expected["p_unc"])
    close(result.dof, expected["dof"])


def test_cochran_q_omit_is_pingouin_listwise_deletion():
    x = _binary_blocks(30, 4, 7)
    x[[2, 2, 17, 29], [0, 3, 1, 2]] = np.nan
    result = rankstats.cochran_q(x, nan_policy="omit")
    expected = pg_cochran(x)
    close(result.statistic, expected["Q"])
    close(result.pvalue, expected["p_unc"])
    assert float(result.n_blocks) == 27


def test_cochran_q_of_a_cube_blocks_samples_treatments_templates():
    rng = np.random.default_rng(17)
    correct = (rng.random((2, 3, 40)) < np.array([0.3, 0.5, 0.6])[:, None]).astype(float)
    cube = rankstats.from_records(
        [
            {
                "model": f"m{i}",
                "task": "t",
                "template": f"p{j}",
                "sample": f"s{s}",
                "score": correct[i, j, s],
            }
            for i in range(2)
            for j in range(3)
            for s in range(40)
        ]
    )
    result = rankstats.cochran_q(cube).isel(task=0)
    for i in range(2):
        expected = pg_cochran(correct[i].T)  # subject = sample, within = template
        close(result.statistic.sel(model=f"m{i}"), expected["Q"])
        close(result.pvalue.sel(model=f"m{i}"), expected["p_unc"])
