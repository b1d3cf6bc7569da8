"""The winner's curse: coverage of the selection-adjusted interval, by simulation.

Estimates are drawn N(mu, Sigma) with a known truth; the observed leader's
(or each of the observed best k's) adjusted interval should cover its true
score at the stated level, where the naive estimate ± z se under-covers in a
near tie. ``simulate`` is also what docs/claims.md quotes
(``python tests/test_winners_curse.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankstats._kernels.winners import truncated_cdf, winner_intervals
from rankstats.errors import DimensionError, MissingValueError, OptionError
from rankstats.stability import winner_interval

LEVEL = 0.95


def simulate(mu, runs, *, covariance=None, top_k=1, seed=0, confidence_level=LEVEL):
    """Coverage of the adjusted and naive intervals, and the share of adjusted estimates above
    the truth (1/2 for a median-unbiased estimate)."""
    rng = np.random.default_rng(seed)
    mu = np.asarray(mu, dtype=float)
    m = mu.size
    covariance = np.eye(m) if covariance is None else np.asarray(covariance)
    root = np.linalg.cholesky(covariance)
    x = mu + rng.standard_normal((runs, m)) @ root.T
    result = winner_intervals(
        x,
        np.broadcast_to(covariance, (runs, m, m)),
        confidence_level=confidence_level,
        top_k=top_k,
    )
    truth = mu[result["selected"]]
    adjusted = (result["low"] <= truth) & (truth <= result["high"])
    naive = (result["naive_low"] <= truth) & (truth <= result["naive_high"])
    return adjusted.mean(), naive.mean(), (result["adjusted"] > truth).mean()


def _margin(runs, level=LEVEL):
    """Three Monte Carlo standard errors of a coverage rate."""
    return 3 * np.sqrt(level * (1 - level) / runs)


@pytest.mark.parametrize(
    ("label", "mu", "top_k"),
    [
        ("10 tied", np.zeros(10), 1),
        ("2 tied", np.zeros(2), 1),
        ("5, gaps of 0.5", -0.5 * np.arange(5), 1),
        ("5, gaps of 3", -3.0 * np.arange(5), 1),
        ("10 tied, top 3", np.zeros(10), 3),
    ],
)
def test_adjusted_interval_covers(label, mu, top_k):
    runs = 4000
    adjusted, _, above = simulate(mu, runs, top_k=top_k, seed=len(label))
    assert abs(adjusted - LEVEL) <= _margin(runs), label
    assert abs(above - 0.5) <= 4 * np.sqrt(0.25 / runs), label  # median-unbiased


def test_naive_interval_undercovers_in_a_near_tie():
    adjusted, naive, _ = simulate(np.zeros(10), 4000, seed=11)
    assert naive < LEVEL - 0.1  # about 0.78
    assert abs(adjusted - LEVEL) <= _margin(4000)


def test_correlated_estimates():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 6))
    covariance = a @ a.T / 6 + 0.3 * np.eye(6)
    adjusted, naive, _ = simulate(np.zeros(6), 4000, covariance=covariance, seed=12)
    assert abs(adjusted - LEVEL) <= _margin(4000)
    assert naive < LEVEL - 0.05


@pytest.mark.slow
@pytest.mark.parametrize("m", [2, 5, 20, 50])
def test_adjusted_interval_covers_larger(m):
    for gap in (0.0, 0.2, 1.0):
        adjusted, _, _ = simulate(-gap * np.arange(m), 20000, seed=m)
        assert abs(adjusted - LEVEL) <= _margin(20000)


def test_truncated_cdf_matches_scipy():
    y = np.array([0.5, 2.0, 10.0, 0.1])
    mean = np.array([0.0, -3.0, -40.0, 5.0])
    low = np.array([0.0, 1.0, 9.9, -1.0])
    high = np.array([np.inf, np.inf, np.inf, 0.2])
    expected = stats.truncnorm.cdf(y, low - mean, high - mean, loc=mean)
    np.testing.assert_allclose(truncated_cdf(y, mean, 1.0, low, high), expected, rtol=1e-8)


def test_clear_leader_gives_the_naive_interval():
    result = winner_interval([10.0, 0.0], [1.0, 1.0])
    np.testing.assert_allclose(
        [result.low.item(), result.high.item()],
        [result.naive_low.item(), result.naive_high.item()],
        rtol=1e-9,
    )
    assert result.adjusted_estimate.item() == pytest.approx(10.0)


def test_lower_is_better_mirrors():
    est = pd.Series({"a": 0.3, "b": 0.35, "c": 0.9})
    se = pd.Series({"a": 0.05, "b": 0.05, "c": 0.05})
    low = winner_interval(est, se, higher_is_better=False, top_k=2)
    high = winner_interval(-est, se, top_k=2)
    assert low.model.values.tolist() == ["a", "b"]
    np.testing.assert_allclose(low.low, -high.high)
    np.testing.assert_allclose(low.adjusted_estimate, -high.adjusted_estimate)


def test_covariance_equals_standard_errors():
    est = pd.Series({"a": 0.7, "b": 0.69, "c": 0.5})
    one = winner_interval(est, est * 0 + 0.02)
    two = winner_interval(est, covariance=np.diag([0.02**2] * 3))
    np.testing.assert_allclose(one.low, two.low)
    np.testing.assert_allclose(one.high, two.high)


def test_errors():
    with pytest.raises(OptionError, match="exactly one"):
        winner_interval([1.0, 2.0])
    with pytest.raises(OptionError, match="top_k"):
        winner_interval([1.0, 2.0], [1.0, 1.0], top_k=3)
    with pytest.raises(MissingValueError, match="b"):
        winner_interval(pd.Series({"a": 1.0, "b": np.nan}), pd.Series({"a": 1.0, "b": 1.0}))
    with pytest.raises(DimensionError):
        winner_interval([1.0, 2.0], [1.0])
    with pytest.raises(OptionError, match="confidence_level"):
        winner_interval([1.0, 2.0], [1.0, 1.0], confidence_level=95)
    with pytest.raises(OptionError, match="top_k > 1"):
        winner_interval([1.0, 2.0, 0.0], covariance=[[1, 1, 0], [1, 1, 0], [0, 0, 1.0]], top_k=2)


if __name__ == "__main__":  # the figures docs/claims.md quotes
    for label, mu, k in [
        ("2 models tied", np.zeros(2), 1),
        ("10 models tied", np.zeros(10), 1),
        ("50 models tied", np.zeros(50), 1),
        ("5 models, gaps of 0.5 se", -0.5 * np.arange(5), 1),
        ("5 models, gaps of 3 se", -3.0 * np.arange(5), 1),
        ("10 models tied, top 3", np.zeros(10), 3),
    ]:
        adjusted, naive, above = simulate(mu, 20000, top_k=k, seed=1)
        print(f"{label}: adjusted {adjusted:.3f}, naive {naive:.3f}, estimate above {above:.3f}")
