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
from rankstats.stability.winners import replicate_leaders

LEVEL = 0.95


def simulate(
    mu,
    runs,
    *,
    covariance=None,
    top_k=1,
    seed=0,
    confidence_level=LEVEL,
    method="conditional",
    items=None,
):
    """Coverage of the adjusted and naive intervals, and the share of adjusted estimates above
    the truth (1/2 for a median-unbiased estimate).

    With ``items``, ``mu`` are accuracies and each estimate the mean of
    ``items`` Bernoulli draws (independent models), with its binomial
    standard error at the truth: scores on a lattice, with ties.
    """
    rng = np.random.default_rng(seed)
    mu = np.asarray(mu, dtype=float)
    m = mu.size
    if items is not None:
        x = rng.binomial(items, mu, (runs, m)) / items
        covariance = np.diag(mu * (1 - mu) / items)
    else:
        covariance = np.eye(m) if covariance is None else np.asarray(covariance)
        root = np.linalg.cholesky(covariance)
        x = mu + rng.standard_normal((runs, m)) @ root.T
    result = winner_intervals(
        x,
        np.broadcast_to(covariance, (runs, m, m)),
        confidence_level=confidence_level,
        top_k=top_k,
        hybrid=(1 - confidence_level) / 10 if method == "hybrid" else None,
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


@pytest.mark.parametrize(
    ("label", "mu", "top_k"),
    [
        ("10 tied", np.zeros(10), 1),
        ("5, gaps of 0.5", -0.5 * np.arange(5), 1),
        ("10 tied, top 3", np.zeros(10), 3),
    ],
)
def test_hybrid_interval_covers_at_least_the_level(label, mu, top_k):
    runs = 4000
    adjusted, _, _ = simulate(mu, runs, top_k=top_k, seed=len(label), method="hybrid")
    # at least the level, and not far above it (beta = alpha / 10 is what it may give away)
    assert LEVEL - _margin(runs) <= adjusted <= LEVEL + (1 - LEVEL) / 10 + _margin(runs), label


@pytest.mark.parametrize(("models", "items"), [(10, 200), (10, 50), (50, 500)])
def test_on_accuracies_the_hybrid_covers_where_the_conditional_does_not(models, items):
    runs = 4000
    mu = np.full(models, 0.6)
    conditional, _, _ = simulate(mu, runs, items=items, seed=items)
    hybrid, _, _ = simulate(mu, runs, items=items, seed=items, method="hybrid")
    assert conditional < LEVEL - 0.03  # ties and one-item margins: 0.78-0.89
    assert hybrid >= LEVEL - _margin(runs)


def test_hybrid_is_the_default_and_conditional_is_kept():
    est, se = [0.705, 0.70, 0.62], [0.01, 0.01, 0.01]
    default = winner_interval(est, se)
    hybrid = winner_interval(est, se, method="hybrid")
    conditional = winner_interval(est, se, method="conditional")
    assert default.low.item() == hybrid.low.item() != conditional.low.item()
    assert "hybrid" in default.attrs["method"] and "conditional" in conditional.attrs["method"]
    # the hybrid stays inside the projection interval, of the Sidak critical value
    c = stats.norm.ppf(1 - (1 - (1 - 0.005) ** (1 / 3)) / 2)
    assert 0.705 - c * 0.01 - 1e-12 <= hybrid.low.item() < hybrid.high.item() <= 0.705 + c * 0.01
    with pytest.raises(OptionError, match="method"):
        winner_interval(est, se, method="zoom")


def test_an_exact_tie_gives_the_projection_interval():
    tied = winner_interval([0.7, 0.7, 0.5], [0.02, 0.02, 0.02])
    c = stats.norm.ppf(1 - (1 - (1 - 0.005) ** (1 / 3)) / 2)
    np.testing.assert_allclose(
        [tied.low.item(), tied.high.item()], [0.7 - c * 0.02, 0.7 + c * 0.02]
    )


def test_projection_critical_value_of_a_correlated_covariance():
    from rankstats._kernels.winners import projection_critical

    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4))
    covariance = a @ a.T + np.eye(4)
    c = projection_critical(covariance, 0.05)
    sd = np.sqrt(np.diag(covariance))
    draws = rng.multivariate_normal(np.zeros(4), covariance, 200_000) / sd
    share = (np.abs(draws).max(1) <= c).mean()
    assert abs(share - 0.95) < 0.004  # 20,000 draws inside, 200,000 here
    independent = projection_critical(np.diag(sd**2), 0.05)
    assert independent == pytest.approx(stats.norm.ppf(1 - (1 - 0.95 ** (1 / 4)) / 2))


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


def test_clear_leader_gives_the_hybrid_of_a_normal_truncated_to_the_projection():
    # far from the others, only |X - mu| <= c truncates: a closed form to check against
    result = winner_interval([10.0, 0.0], [1.0, 1.0])
    c = stats.norm.ppf(1 - (1 - (1 - 0.005) ** (1 / 2)) / 2)
    level = (0.05 - 0.005) / (1 - 0.005)
    inside = stats.norm.cdf(c) - stats.norm.cdf(-c)

    def offset(p):
        return stats.norm.ppf(stats.norm.cdf(-c) + p * inside)

    np.testing.assert_allclose(
        [result.low.item(), result.adjusted_estimate.item(), result.high.item()],
        [10 - offset(1 - level / 2), 10.0, 10 - offset(level / 2)],
        rtol=1e-9,
    )


def test_clear_leader_gives_the_naive_interval():
    result = winner_interval([10.0, 0.0], [1.0, 1.0], method="conditional")
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
        hybrid, _, hybrid_above = simulate(mu, 20000, top_k=k, seed=1, method="hybrid")
        print(
            f"{label}: conditional {adjusted:.3f}, hybrid {hybrid:.3f}, naive {naive:.3f}, "
            f"estimate above: conditional {above:.3f}, hybrid {hybrid_above:.3f}"
        )
    for models, items in [(2, 200), (10, 50), (10, 200), (50, 500)]:
        mu = np.full(models, 0.6)
        adjusted, naive, above = simulate(mu, 20000, items=items, seed=1)
        hybrid, _, hybrid_above = simulate(mu, 20000, items=items, seed=1, method="hybrid")
        print(
            f"{models} models tied at 0.6, {items} items: conditional {adjusted:.3f}, "
            f"hybrid {hybrid:.3f}, naive {naive:.3f}, estimate above: conditional "
            f"{above:.3f}, hybrid {hybrid_above:.3f}"
        )


# ---- every task's leader at once, and in `rankstats stability` ------------------------------


def _per_task_oracle(estimates, covariances, level=0.95):
    """winner_interval task by task, each on the models ranked there."""
    rows = []
    for est, cov in zip(estimates, covariances, strict=True):
        keep = ~np.isnan(est)
        got = winner_interval(est[keep], covariance=cov[np.ix_(keep, keep)], confidence_level=level)
        rows.append(
            (
                int(np.flatnonzero(keep)[got.model.item()]),
                *(got[v].item() for v in ("adjusted_estimate", "low", "high")),
            )
        )
    return rows


def test_task_leaders_equal_winner_interval_task_by_task():
    import xarray as xr

    from rankstats.stability.winners import task_leaders

    rng = np.random.default_rng(3)
    tasks, models = 5, 7
    estimates = rng.normal(0, 0.02, (tasks, models)) + np.linspace(0, 0.03, models)
    estimates[1, 2] = np.nan
    factor = rng.normal(0, 0.01, (tasks, models, models))
    covariances = factor @ factor.transpose(0, 2, 1) + 1e-4 * np.eye(models)
    out = task_leaders(
        xr.DataArray(estimates, dims=("task", "model"), coords={"model": list("abcdefg")}),
        xr.DataArray(covariances, dims=("task", "model", "model_other")),
        confidence_level=0.9,
    )
    for t, (leader, adjusted, low, high) in enumerate(
        _per_task_oracle(estimates, covariances, 0.9)
    ):
        assert out.model.values[t] == "abcdefg"[leader]
        # task 1 lacks a model: its projection's Monte Carlo draws differ in dimension
        np.testing.assert_allclose(
            [out.adjusted_estimate[t], out.low[t], out.high[t]],
            [adjusted, low, high],
            rtol=0 if t == 1 else 1e-9,
            atol=0.002 if t == 1 else 0,
        )
    flipped = task_leaders(
        xr.DataArray(-estimates, dims=("task", "model"), coords={"model": list("abcdefg")}),
        xr.DataArray(covariances, dims=("task", "model", "model_other")),
        confidence_level=0.9,
        higher_is_better=False,
    )
    np.testing.assert_allclose(flipped.adjusted_estimate, -out.adjusted_estimate)
    np.testing.assert_allclose(flipped.low, -out.high)


def test_stability_prints_and_writes_the_adjusted_leader(tmp_path, capsys):
    import json

    import rankstats
    from rankstats.cli import main
    from rankstats.stability import replicates

    cube = rankstats.planted_cube(models=5, templates=15, samples=20, seed=2)
    path = rankstats.save(cube, tmp_path / "c.nc")
    out = tmp_path / "s.json"
    arguments = ["stability", str(path), "--n-resamples", "300", "--seed", "4"]
    assert main([*arguments, "--json", str(out)]) == 0
    assert "adjusted for the winner's curse" in capsys.readouterr().out
    (row,) = json.loads(out.read_text())["tables"]["leaders"]
    # the same draws, rebuilt here, and the covariance computed by numpy
    reps = replicates(cube, n_resamples=300, seed=4, over="both")
    expected = replicate_leaders(reps).isel(task=0)
    assert row["model"] == expected.model.item()
    np.testing.assert_allclose(
        [row["adjusted_estimate"], row["low"], row["high"]],
        [expected[v].item() for v in ("adjusted_estimate", "low", "high")],
        rtol=1e-9,
    )


def test_replicate_leaders_equal_the_kernel_given_numpy_covariance_and_max_t():
    import rankstats
    from rankstats._kernels import winners as kernel
    from rankstats.stability import replicates

    cube = rankstats.planted_cube(models=6, templates=15, samples=20, seed=5)
    reps = replicates(cube, n_resamples=400, seed=1, over="both")
    draws = reps["avgp"].isel(task=0).transpose("model", "replicate").to_numpy().astype(float)
    estimates = reps["avgp_estimate"].isel(task=0).to_numpy()
    covariance = np.cov(draws)
    conditional = replicate_leaders(reps, method="conditional").isel(task=0)
    expected = winner_interval(
        pd.Series(estimates, index=reps.model.to_numpy()),
        covariance=covariance,
        method="conditional",
    )
    assert conditional.model.item() == expected.model.item()
    for name in ("adjusted_estimate", "low", "high"):
        assert conditional[name].item() == pytest.approx(expected[name].item(), rel=1e-9)
    # the hybrid's critical value: the replicates' max-t, written out here
    standardised = np.abs(draws - draws.mean(1, keepdims=True)) / draws.std(1, ddof=1)[:, None]
    critical = np.quantile(standardised.max(0), 1 - 0.005)
    selected = np.array([np.argmax(estimates)])
    solved = kernel._adjusted(
        estimates,
        selected,
        np.sqrt(covariance[selected, selected]),
        kernel.truncation_bounds(estimates, covariance, selected, 1),
        0.95,
        0.005,
        critical,
    )
    hybrid = replicate_leaders(reps).isel(task=0)
    np.testing.assert_allclose(
        [hybrid.adjusted_estimate, hybrid.low, hybrid.high],
        [solved["adjusted"][0], solved["low"][0], solved["high"][0]],
        rtol=1e-9,
    )


def test_stability_adjusts_the_leader_from_the_cube_standard_errors(tmp_path):
    import json

    import rankstats
    from rankstats.cli import main

    scores = {"a": 0.712, "b": 0.705, "c": 0.64, "d": 0.60}
    errors = {"a": 0.012, "b": 0.01, "c": 0.015, "d": 0.02}
    rows = [
        {"model": m, "task": "t", "template": "original", "score": s, "standard_error": errors[m]}
        for m, s in scores.items()
    ]
    path = rankstats.save(rankstats.from_records(rows), tmp_path / "published.nc")
    out = tmp_path / "s.json"
    assert main(["stability", str(path), "--seed", "0", "--quiet", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["tables"]["leaders"]
    # the file stores float32: the oracle reads what was stored
    saved = rankstats.open_cube(path).squeeze(["task", "template"])
    expected = winner_interval(
        saved["score"].to_series(), saved["standard_error"].to_series().astype(float)
    )
    assert row["model"] == "a"
    np.testing.assert_allclose(
        [row["adjusted_estimate"], row["low"], row["high"]],
        [expected[v].item() for v in ("adjusted_estimate", "low", "high")],
        rtol=1e-9,
    )
    assert row["adjusted_estimate"] < scores["a"]


def test_report_shows_the_adjusted_leader_of_its_own_draws():
    import rankstats
    from rankstats import render
    from rankstats.stability import replicates

    cube = rankstats.planted_cube(models=4, templates=12, samples=15, seed=1)
    analysis = rankstats.report(cube, n_resamples=100, seed=0)
    reps = replicates(cube, 100, "both", seed=0, nan_policy="omit")
    expected = replicate_leaders(reps).isel(task=0)
    assert analysis["leader"].item() == expected.model.item()
    np.testing.assert_allclose(
        [
            analysis[v].item()
            for v in ("leader_adjusted", "leader_adjusted_low", "leader_adjusted_high")
        ],
        [expected[v].item() for v in ("adjusted_estimate", "low", "high")],
        rtol=1e-9,
    )
    (table,) = [s.table for s in render.sections(analysis) if s.key == "stability"]
    shown = table["adjusted AvgP"].dropna()
    assert list(shown.index.get_level_values("model")) == [expected.model.item()]


def test_the_leader_from_bootstrap_replicates_covers():
    import xarray as xr

    from rankstats.stability import replicates

    rng = np.random.default_rng(8)
    runs, models, items = 150, 10, 200
    covered = 0
    for run in range(runs):
        correct = (rng.random((models, 1, 1, items)) < 0.6).astype(float)
        cube = xr.DataArray(
            correct,
            dims=("model", "task", "template", "sample"),
            coords={"model": [f"m{i}" for i in range(models)], "task": ["t"], "template": ["o"]},
        )
        out = replicate_leaders(replicates(cube, 300, "samples", seed=run)).isel(task=0)
        covered += out.low.item() <= 0.6 <= out.high.item()
    # 400 runs measured 0.973 (docs/claims.md); the conditional interval 0.84 there
    assert covered / runs >= LEVEL - _margin(runs)
