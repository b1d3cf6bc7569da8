"""Rank confidence sets from estimates with standard errors or a covariance.

* oracles: the csranks R package's own output for 25 correlated estimates
  (``tests/data/csranks``, its README names the call); csranks' ``csdiffmeans``
  written here pair by pair from its definition, two-sided and one-sided (the family of
  ``cstaubest``), fed the same normal draws; the leaderboard's path through the same
  kernel, bit for bit; the leaderboard itself on the same data;
* the definition's edge cases: zero standard errors, tied estimates, two objects;
* input forms, labels and errors;
* coverage by simulation: normal estimates around known truths, many repetitions at
  once (each one position of an extra dimension), and the price of ignoring shared items.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats import stability
from rankstats._kernels import ranksets as _krs
from rankstats.errors import (
    CoordinateMismatchError,
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
    RankstatsError,
    RankstatsWarning,
)

DATA = Path(__file__).parent / "data" / "csranks"


def csranks_case():
    x = pd.read_csv(DATA / "estimates.csv")["x"].to_numpy()
    sigma = pd.read_csv(DATA / "covariance.csv").to_numpy()
    return x, sigma


# --------------------------------------------------------------------------- oracles


def test_simultaneous_sets_equal_csranks():
    x, sigma = csranks_case()
    expected = pd.read_csv(DATA / "sets_simultaneous.csv")
    found = stability.rank_sets(x, covariance=sigma, n_resamples=100_000, seed=0)
    np.testing.assert_array_equal(found["rank_low"].values, expected["L"])
    np.testing.assert_array_equal(found["rank_high"].values, expected["U"])


def test_marginal_sets_equal_csranks():
    """One bound (object 13's lower) has its t statistic 2.911 within Monte Carlo error of
    the last critical value (2.906 +- 0.007 over seeds, 100,000 draws): csranks' draws
    gave 6; ours give 6 or 7 by seed (6 with this one)."""
    x, sigma = csranks_case()
    expected = pd.read_csv(DATA / "sets_marginal.csv")
    found = stability.rank_sets(
        x, covariance=sigma, rank_sets="marginal", n_resamples=100_000, seed=10
    )
    np.testing.assert_array_equal(found["rank_low"].values, expected["L"])
    np.testing.assert_array_equal(found["rank_high"].values, expected["U"])


def csdiffmeans(x, sigma, z, level, cstype, indices=None, stepdown=True):
    """csranks' csdiffmeans pair by pair: which ordered pairs (i, j) are rejected.

    ``cstype`` "lower" (the two-sided rank sets with stepdown; reject "i better than j"
    when the lower bound of x_i - x_j exceeds 0) or "upper" (cstaubest's one-sided
    family; reject "j better than i" when the upper bound is below 0). ``z`` (R, p)
    draws of N(0, sigma)."""
    p = len(x)
    sd = np.sqrt(np.add.outer(np.diag(sigma), np.diag(sigma)) - 2 * sigma)
    indices = range(p) if indices is None else indices
    family = {(i, j) for i in indices for j in range(p) if i != j}
    if cstype == "lower" and len(family) < p * (p - 1):  # csranks' initialize_I0
        family |= {(j, i) for i in indices for j in range(p) if i != j}
    rejected = set()
    while True:
        pairs = sorted(family)
        a, b = np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])
        scaled = (z[:, a] - z[:, b]) / sd[a, b]
        c = np.quantile(scaled.max(1) if cstype == "lower" else (-scaled).max(1), level)
        t = (x[a] - x[b]) / sd[a, b]
        new = {
            pair
            for pair, value in zip(pairs, t, strict=True)
            if (value > c if cstype == "lower" else value < -c)
        }
        rejected |= new
        family -= new
        if not new or not family or not stepdown:
            return rejected


@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_is_csdiffmeans_pair_by_pair(seed):
    rng = np.random.default_rng(seed)
    p = 7
    a = rng.normal(0, 0.3, (p, p))
    sigma = a @ a.T / p + np.diag(rng.uniform(0.02, 0.08, p))
    x = np.array([2.0, 1.6, 1.5, 1.0, 0.9, 0.85, 0.2]) + rng.normal(0, 0.05, p)
    z = rng.multivariate_normal(np.zeros(p), sigma, size=4000)
    draws = z.T.copy()
    simultaneous = _krs.normal_rank_sets(x, sigma, draws=draws, confidence_level=0.9)
    marginal = _krs.normal_rank_sets(x, sigma, draws=draws, confidence_level=0.9, marginal=True)
    two_sided = csdiffmeans(x, sigma, z, 0.9, "lower")
    low = [1 + sum((k, j) in two_sided for k in range(p)) for j in range(p)]
    high = [p - sum((j, k) in two_sided for k in range(p)) for j in range(p)]
    np.testing.assert_array_equal(simultaneous["low"], low)
    np.testing.assert_array_equal(simultaneous["high"], high)
    # cstaubest: L of the one-sided "lower" rank sets over every object
    one_sided = csdiffmeans(x, sigma, z, 0.9, "upper")
    lower = [1 + sum((j, k) in one_sided for k in range(p)) for j in range(p)]
    np.testing.assert_array_equal(simultaneous["simultaneous_low"], lower)
    for j in range(p):
        own = csdiffmeans(x, sigma, z, 0.9, "lower", indices=[j])
        assert marginal["low"][j] == 1 + sum((k, j) in own for k in range(p))
        assert marginal["high"][j] == p - sum((j, k) in own for k in range(p))


@pytest.mark.parametrize("marginal", [False, True])
def test_the_leaderboard_path_through_the_kernel_is_the_same_bit_for_bit(marginal):
    """Replicates' covariance and gaussian draws given to the covariance path reproduce
    the replicate path (gaussian=True, no small-sample correction) exactly."""
    rng = np.random.default_rng(3)
    s, m, n = 3, 12, 400
    means = np.linspace(0.7, 0.5, m)
    replicates = means[:, None] + rng.normal(0, 0.02, (s, 1, n)) + rng.normal(0, 0.02, (s, m, n))
    estimate = means + rng.normal(0, 0.01, (s, m))
    estimate[1, 4] = np.nan
    spread = replicates - replicates.mean(-1, keepdims=True)
    spread = np.where(~np.isnan(estimate)[..., None], spread, 0.0)
    product = spread @ np.swapaxes(spread, 1, 2)
    covariance = (product + np.swapaxes(product, 1, 2)) / (2 * (n - 1))
    draws = _krs.gaussian_draws(spread)
    given = _krs.normal_rank_sets(
        estimate, covariance, draws=draws, confidence_level=0.9, marginal=marginal
    )
    from_replicates = _krs.rank_sets(
        replicates, estimate, confidence_level=0.9, marginal=marginal, gaussian=True
    )
    for key in from_replicates:
        np.testing.assert_array_equal(given[key], from_replicates[key])


def test_agrees_with_the_leaderboard_given_the_paired_covariance():
    """The leaderboard's rank sets and those of its own estimates with the covariance of
    its replicates: the same test, apart from the leaderboard's small-sample correction
    (which only widens) and the draws."""
    rng = np.random.default_rng(5)
    ability = np.linspace(1.2, -0.6, 8)
    difficulty = rng.normal(0, 1, 300)
    logit = ability[:, None, None] - difficulty[None, None, :] + rng.normal(0, 0.2, (8, 3, 1))
    correct = (rng.random(logit.shape) < 1 / (1 + np.exp(-logit))).astype(float)
    cube = xr.DataArray(correct[None], dims=["task", "model", "template", "sample"])
    reps = stability.replicates(cube, n_resamples=2000, seed=1, statistics=["avgp", "rank"])
    board = stability.leaderboard(reps, confidence_level=0.95)
    avgp = reps.avgp.isel(task=0).values  # (replicate, model) or (model, replicate)
    avgp = avgp if avgp.shape[0] == 8 else avgp.T
    covariance = np.cov(avgp)
    estimate = reps.avgp_estimate.isel(task=0).values
    sets = stability.rank_sets(estimate, covariance=covariance, n_resamples=20_000, seed=2)
    low, high = board.rank_low[0], board.rank_high[0]
    assert (low <= sets["rank_low"].values).all() and (high >= sets["rank_high"].values).all()
    width = (high - low).sum(), (sets["rank_high"] - sets["rank_low"]).values.sum()
    assert width[0] - width[1] <= 2


# --------------------------------------------------------------------------- definition


def test_zero_standard_errors_give_the_exact_ranks_and_ties_share_them():
    x = pd.Series([3.0, 2.0, 2.0, 1.0, 0.5], index=list("abcde"))
    se = pd.Series(0.0, index=x.index)
    found = stability.rank_sets(x, standard_errors=se, seed=0, top_k=1)
    np.testing.assert_array_equal(found["rank_low"], [1, 2, 2, 4, 5])
    np.testing.assert_array_equal(found["rank_high"], [1, 3, 3, 4, 5])
    np.testing.assert_array_equal(found["tie_group"], [1, 2, 2, 3, 4])
    np.testing.assert_array_equal(found["in_top_k"], [True, False, False, False, False])
    np.testing.assert_array_equal(found["rank"], [1, 2.5, 2.5, 4, 5])


def test_zero_standard_error_beside_positive_ones():
    """A known value is separated from an estimate exactly when the estimate's own
    interval excludes it: sigma_jk is then that estimate's standard error."""
    x = np.array([1.0, 0.0, -0.05])
    found = stability.rank_sets(x, standard_errors=[0.0, 0.04, 0.0], seed=0)
    np.testing.assert_array_equal(found["rank_low"], [1, 2, 2])
    np.testing.assert_array_equal(found["rank_high"], [1, 3, 3])
    sharp = stability.rank_sets(x, standard_errors=[0.0, 0.001, 0.0], seed=0)
    np.testing.assert_array_equal(sharp["rank_low"], [1, 2, 3])


def test_tied_estimates_are_never_separated():
    x = np.array([1.0, 1.0, 1.0, 0.0])
    found = stability.rank_sets(x, standard_errors=np.full(4, 0.01), seed=0)
    np.testing.assert_array_equal(found["rank_low"], [1, 1, 1, 4])
    np.testing.assert_array_equal(found["rank_high"], [3, 3, 3, 4])
    np.testing.assert_array_equal(found["tie_group"], [1, 1, 1, 2])


def test_two_objects_are_a_two_sided_z_test():
    """With two objects the simultaneous family is one pair in both directions: the
    critical value is the two-sided normal quantile, |t| > 1.96 at 95%."""
    for gap, separated in ((1.90, False), (2.02, True)):
        x = np.array([gap, 0.0])
        found = stability.rank_sets(
            x, standard_errors=[1 / np.sqrt(2)] * 2, n_resamples=200_000, seed=0
        )
        assert bool(found["rank_low"].values[1] == 2) is separated


def test_lower_is_better_mirrors_and_labels_travel():
    x, sigma = csranks_case()
    labels = [f"m{i}" for i in range(25)]
    up = stability.rank_sets(x, covariance=sigma, labels=labels, seed=4, top_k=3)
    down = stability.rank_sets(
        -x, covariance=sigma, labels=labels, seed=4, top_k=3, higher_is_better=False
    )
    for name in ("rank", "rank_low", "rank_high", "tie_group", "in_top_k"):
        xr.testing.assert_equal(up[name], down[name])
    assert list(up.model.values) == labels
    # a covariance labelled in another order is matched to the estimates by label
    order = np.random.default_rng(0).permutation(25)
    frame = pd.DataFrame(sigma, index=labels, columns=labels).iloc[order, order[::-1]]
    series = pd.Series(x, index=pd.Index(labels, name="model"))
    labelled = stability.rank_sets(series, covariance=frame, seed=4, top_k=3)
    xr.testing.assert_equal(labelled, up)
    errors = pd.Series(np.sqrt(np.diag(sigma)), index=labels).iloc[order]
    independent = stability.rank_sets(series, standard_errors=errors, seed=4)
    plain = stability.rank_sets(x, standard_errors=np.sqrt(np.diag(sigma)), labels=labels, seed=4)
    xr.testing.assert_equal(independent, plain)


def test_in_top_k_is_the_simultaneous_lower_bound_whatever_rank_sets_is():
    x, sigma = csranks_case()
    simultaneous = stability.rank_sets(x, covariance=sigma, seed=3, top_k=5)
    marginal = stability.rank_sets(x, covariance=sigma, seed=3, top_k=5, rank_sets="marginal")
    xr.testing.assert_equal(simultaneous["in_top_k"], marginal["in_top_k"])
    np.testing.assert_array_equal(simultaneous["in_top_k"], simultaneous["rank_low"].values <= 5)
    assert (marginal["rank_low"] >= simultaneous["rank_low"]).all()
    assert (marginal["rank_high"] <= simultaneous["rank_high"]).all()


# --------------------------------------------------------------------------- input forms


def test_series_array_and_dataarray_agree_and_extra_dims_are_rankings():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, (3, 6))
    se = rng.uniform(0.1, 0.4, (3, 6))
    models = list("abcdef")
    da = xr.DataArray(
        x, dims=["task", "model"], coords={"task": ["t1", "t2", "t3"], "model": models}
    )
    together = stability.rank_sets(da, standard_errors=da.copy(data=se), seed=1, top_k=2)
    assert together["rank_low"].dims == ("task", "model")
    for t in range(3):
        alone = stability.rank_sets(
            pd.Series(x[t], index=models),
            standard_errors=pd.Series(se[t], index=models),
            seed=1,
            top_k=2,
        )
        for name in (
            "estimate",
            "standard_error",
            "rank",
            "rank_low",
            "rank_high",
            "tie_group",
            "in_top_k",
        ):
            np.testing.assert_array_equal(together[name].values[t], alone[name].values)
    per_task = xr.DataArray(
        np.stack([np.diag(v**2) for v in se]),
        dims=["task", "model", "model_b"],
        coords={"task": da.task, "model": models, "model_b": models},
    )
    covariance = stability.rank_sets(da, covariance=per_task, seed=1, top_k=2)
    xr.testing.assert_equal(
        covariance[["rank_low", "rank_high"]], together[["rank_low", "rank_high"]]
    )
    assert together.attrs["rank_sets"] == "simultaneous"
    assert together.attrs["n_resamples"] == 1000 and together.attrs["seed"] == 1
    assert together.attrs["confidence_level"] == 0.95 and together.attrs["top_k"] == 2
    transposed = stability.rank_sets(da.T, standard_errors=da.copy(data=se), seed=1)
    assert transposed["rank_low"].dims == ("model", "task")


def test_nan_estimates_follow_nan_policy():
    x = pd.Series([1.0, np.nan, 0.5, 0.0], index=list("abcd"))
    se = pd.Series([0.01, np.nan, 0.01, 0.01], index=list("abcd"))
    with pytest.warns(RankstatsWarning, match="NaN"):
        propagated = stability.rank_sets(x, standard_errors=se, seed=0)
    assert propagated["rank_low"].isnull().all()
    omitted = stability.rank_sets(x, standard_errors=se, seed=0, nan_policy="omit")
    np.testing.assert_array_equal(omitted["rank_low"], [1, np.nan, 2, 3])
    np.testing.assert_array_equal(omitted["rank"], [1, np.nan, 2, 3])
    with pytest.raises(MissingValueError, match="'b'"):
        stability.rank_sets(x, standard_errors=se, nan_policy="raise")


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: stability.rank_sets([1.0, 2.0]), InputTypeError, "either"),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], covariance=np.eye(2)),
            InputTypeError,
            "not both",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0, 3.0], standard_errors=[1, 1]),
            DimensionError,
            "2 values, the estimates 3",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, -0.1]),
            OptionError,
            "non-negative",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, np.nan]),
            OptionError,
            "non-negative",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, np.inf]),
            OptionError,
            "finite",
        ),
        (lambda: stability.rank_sets([1.0], standard_errors=[1.0]), DimensionError, "at least two"),
        (
            lambda: stability.rank_sets([1.0, 2.0], covariance=[[1, 0.5], [0.2, 1]]),
            OptionError,
            "not symmetric",
        ),
        (
            lambda: stability.rank_sets(
                [1.0, 2.0, 0.0], covariance=[[1, 2, 0], [2, 1, 0], [0, 0, 1]]
            ),
            OptionError,
            "not positive semi-definite",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], covariance=[[0, 0.1], [0.1, 1]]),
            OptionError,
            "not positive semi-definite",
        ),
        (lambda: stability.rank_sets([1.0, 2.0], covariance=np.eye(3)), DimensionError, "2 x 2"),
        (
            lambda: stability.rank_sets(
                pd.Series([1.0, 2.0], index=["a", "b"]),
                standard_errors=pd.Series([1.0, 1.0], index=["a", "c"]),
            ),
            CoordinateMismatchError,
            "labels",
        ),
        (
            lambda: stability.rank_sets(
                pd.Series([1.0, 2.0], index=["a", "b"]),
                covariance=pd.DataFrame(np.eye(2), index=["a", "b"], columns=["a", "x"]),
            ),
            CoordinateMismatchError,
            "labels",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], labels=["a"]),
            DimensionError,
            "1 labels",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], labels=["a", "a"]),
            DimensionError,
            "repeat",
        ),
        (
            lambda: stability.rank_sets(["a", "b"], standard_errors=[1, 1]),
            InputTypeError,
            "numbers",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], rank_sets="bootstrap"),
            OptionError,
            "rank_sets",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], n_resamples=1),
            OptionError,
            "n_resamples",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], confidence_level=1.5),
            OptionError,
            "confidence_level",
        ),
        (
            lambda: stability.rank_sets([1.0, 2.0], standard_errors=[1, 1], top_k=0),
            OptionError,
            "top_k",
        ),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match) as caught:
        call()
    assert isinstance(caught.value, RankstatsError)


def test_semi_definite_covariances_are_allowed():
    """Perfectly correlated estimates (a singular covariance): their difference is
    known exactly, so they are separated whenever they differ."""
    sigma = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) * 0.01
    found = stability.rank_sets([0.5, 0.4, 0.45], covariance=sigma, seed=0)
    np.testing.assert_array_equal(found["rank_low"], [1, 2, 1])
    np.testing.assert_array_equal(found["rank_high"], [2, 3, 3])


def test_public_name():
    assert "rank_sets" in stability.__all__
    assert stability.rank_sets is rankstats.stability.rank_sets


# --------------------------------------------------------------------------- coverage


def truths(m, kind):
    """True values of m objects: near ties (0.3 standard errors apart) or clear gaps
    (3 standard errors), with standard error 1, and a block of exact ties."""
    step = {"near": 0.3, "gaps": 3.0}[kind]
    theta = -step * np.arange(m, dtype=float)
    theta[m // 2 : m // 2 + 3] = theta[m // 2]  # three exactly tied
    return theta


def simulate(m, kind, repetitions, n_resamples, seed, top_k):
    """Coverage of the simultaneous sets (all true ranks at once, each tied object's
    whole range of ranks) and of the top-k set, over repetitions vectorised as a dim."""
    rng = np.random.default_rng(seed)
    theta = truths(m, kind)
    se = rng.uniform(0.5, 1.5, m)
    x = theta + se * rng.standard_normal((repetitions, m))
    da = xr.DataArray(x, dims=["repetition", "model"])
    found = stability.rank_sets(
        da,
        standard_errors=da.copy(data=np.broadcast_to(se, x.shape)),
        n_resamples=n_resamples,
        seed=seed + 1,
        top_k=top_k,
    )
    best = (theta[None, :] > theta[:, None]).sum(1) + 1  # min rank of each true value
    worst = (theta[None, :] >= theta[:, None]).sum(1)  # max rank
    low, high = found["rank_low"].values, found["rank_high"].values
    covered = ((low <= best) & (high >= worst)).all(-1)
    top = best <= top_k  # the objects that may be among the true best top_k
    held = found["in_top_k"].values[:, top].all(-1)
    width = (high - low).mean()
    return covered.mean(), held.mean(), width


def monte_carlo_floor(level, repetitions):
    """Coverage a correct level-``level`` procedure stays above but once in ~1000 runs."""
    return level - 3.1 * np.sqrt(level * (1 - level) / repetitions)


@pytest.mark.parametrize("m, repetitions", [(10, 600), (50, 150)])
@pytest.mark.parametrize("kind", ["near", "gaps"])
def test_simultaneous_sets_and_top_k_cover(m, repetitions, kind):
    covered, held, _ = simulate(m, kind, repetitions, 1000, seed=m, top_k=3)
    assert covered >= monte_carlo_floor(0.95, repetitions)
    assert held >= monte_carlo_floor(0.95, repetitions)


@pytest.mark.slow
@pytest.mark.parametrize("m, repetitions", [(10, 4000), (50, 2000), (200, 400)])
@pytest.mark.parametrize("kind", ["near", "gaps"])
def test_rank_sets_coverage_large_simulation(m, repetitions, kind):
    covered, held, _ = simulate(m, kind, repetitions, 2000, seed=100 + m, top_k=5)
    assert covered >= monte_carlo_floor(0.95, repetitions)
    assert held >= monte_carlo_floor(0.95, repetitions)


def shared_items(m, n_items, repetitions, seed, spread=1.0, span=0.6):
    """Binary scores of m models on the same n items (a shared item difficulty of
    standard deviation ``spread`` in log-odds; abilities evenly spread over ``span``): the
    coverage and mean width of the sets from each model's own standard error, and from
    the paired covariance of the per-item scores."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(span, 0.0, m)
    difficulty = rng.normal(0, spread, (repetitions, 1, n_items))
    logit = ability[None, :, None] - difficulty
    p = 1 / (1 + np.exp(-logit))
    truth = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(0, spread, 200_000))))
    truth = truth.mean(-1)
    correct = (rng.random(p.shape) < p).astype(float)
    x = correct.mean(-1)
    se = correct.std(-1, ddof=1) / np.sqrt(n_items)
    centred = correct - x[..., None]
    covariance = centred @ np.swapaxes(centred, 1, 2) / (n_items - 1) / n_items
    da = xr.DataArray(x, dims=["repetition", "model"])
    independent = stability.rank_sets(da, standard_errors=da.copy(data=se), seed=1)
    paired = stability.rank_sets(
        da, covariance=xr.DataArray(covariance, dims=["repetition", "model", "model_b"]), seed=1
    )
    best = (truth[None, :] > truth[:, None]).sum(1) + 1
    worst = (truth[None, :] >= truth[:, None]).sum(1)
    out = {}
    for name, found in (("independent", independent), ("paired", paired)):
        low, high = found["rank_low"].values, found["rank_high"].values
        out[name] = (((low <= best) & (high >= worst)).all(-1).mean(), (high - low).mean())
    return out


def test_shared_items_make_independent_standard_errors_conservative():
    """Models scored on the same items are positively correlated: the standard error of
    a difference is smaller than the independent one, so the paired sets are narrower,
    and both cover."""
    found = shared_items(m=8, n_items=400, repetitions=200, seed=0, spread=2.0, span=2.0)
    for coverage, _ in found.values():
        assert coverage >= monte_carlo_floor(0.95, 200)
    assert found["paired"][1] < 0.85 * found["independent"][1]


@pytest.mark.slow
def test_shared_items_large_simulation():
    """Ten equal models (every separation false): the paired sets keep the level, the
    independent ones are conservative; ten spread models: the paired sets are narrower."""
    equal = shared_items(m=10, n_items=1000, repetitions=1000, seed=7, spread=2.0, span=0.0)
    assert equal["paired"][0] >= monte_carlo_floor(0.95, 1000)
    assert equal["independent"][0] >= 0.99
    spread = shared_items(m=10, n_items=1000, repetitions=1000, seed=7, spread=2.0, span=2.0)
    for coverage, _ in spread.values():
        assert coverage >= monte_carlo_floor(0.95, 1000)
    assert spread["paired"][1] < 0.8 * spread["independent"][1]


def test_no_warning_on_clean_input():
    x, sigma = csranks_case()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stability.rank_sets(x, covariance=sigma, seed=0)


# --------------------------------------------------------------------------- command line


def test_ranks_command(tmp_path, capsys):
    import json

    from rankstats.cli import main

    table = tmp_path / "board.csv"
    table.write_text(
        "model,accuracy,se\nm1,0.842,0.008\nm2,0.835,0.009\nm3,0.801,0.010\n"
        "m4,0.774,0.011\nm5,0.770,0.011\nm6,0.652,0.012\n"
    )
    out = tmp_path / "sets.json"
    assert (
        main(
            [
                "ranks",
                str(table),
                "--estimates",
                "accuracy",
                "--standard-errors",
                "se",
                "--top-k",
                "2",
                "--seed",
                "0",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "| m3 | 0.801 | 3 | 2-5 | 1 | yes |" in printed
    rows = json.loads(out.read_text())["tables"]["rank_sets"]
    expected = stability.rank_sets(
        pd.Series(
            [0.842, 0.835, 0.801, 0.774, 0.770, 0.652], index=["m1", "m2", "m3", "m4", "m5", "m6"]
        ),
        standard_errors=pd.Series(
            [0.008, 0.009, 0.010, 0.011, 0.011, 0.012], index=["m1", "m2", "m3", "m4", "m5", "m6"]
        ),
        top_k=2,
        seed=0,
    )
    assert [r["rank_low"] for r in rows] == list(expected["rank_low"].values)
    assert [r["in_top_k"] for r in rows] == list(expected["in_top_k"].values)
    covariance = tmp_path / "covariance.csv"
    labels = ["m1", "m2", "m3", "m4", "m5", "m6"]
    se = np.array([0.008, 0.009, 0.010, 0.011, 0.011, 0.012])
    pd.DataFrame(np.diag(se**2), index=labels, columns=labels).iloc[::-1, ::-1].to_csv(covariance)
    assert (
        main(
            [
                "ranks",
                str(table),
                "--estimates",
                "accuracy",
                "--covariance",
                str(covariance),
                "--seed",
                "0",
                "--quiet",
                "--csv",
                "-",
            ]
        )
        == 0
    )
    csv = capsys.readouterr().out
    assert csv.startswith("# rank_sets\nmodel,estimate,standard_error,rank,rank_low")
    assert main(["ranks", str(table), "--estimates", "acc", "--standard-errors", "se"]) == 2
    assert "not a column" in capsys.readouterr().err
    assert main(["ranks", str(table), "--estimates", "accuracy"]) == 2
    assert (
        main(
            [
                "ranks",
                str(table),
                "--estimates",
                "accuracy",
                "--standard-errors",
                "se",
                "--json",
                str(table),
            ]
        )
        == 2
    )  # an output that is an input
