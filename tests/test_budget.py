"""Budgeted estimators: simulations on cubes, the drivers, and their agreement."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats._kernels import budget as kernel
from rankstats.errors import CubeError, InputTypeError, OptionError, ScoreValueError
from rankstats.results import AvgPEstimate, MaxPEstimate


def per_sample_cube(seed=0, models=3, tasks=2, templates=12, samples=40):
    rng = np.random.default_rng(seed)
    ability = rng.random((models, tasks, templates, 1))
    scores = (rng.random((models, tasks, templates, samples)) < ability).astype(float)
    return xr.DataArray(
        scores,
        dims=("model", "task", "template", "sample"),
        coords={"model": [f"m{i}" for i in range(models)], "task": [f"t{i}" for i in range(tasks)]},
    )


# ---- MaxP: successive halving ---------------------------------------------------------------


def test_one_stage_over_every_sample_is_the_exact_argmax():
    cube = per_sample_cube()
    cube[0, 0, :, :] = np.nan  # a model never run on a task: absent, not an error
    cube[1, 1, 9:, :] = np.nan  # padding: task t1 has 9 templates for this model
    result = rankstats.simulate_maxp(cube, stages=[(None, None)], n_resamples=5, seed=0)
    exact = rankstats.maxp(rankstats.template_scores(cube), nan_policy="omit")
    np.testing.assert_allclose(result.maxp, exact)
    np.testing.assert_allclose(result.estimate, exact)
    assert np.isnan(result.found[0, 0]) and np.isnan(result.maxp[0, 0])
    np.testing.assert_array_equal(result.found.values[~np.isnan(result.found.values)], 1.0)
    assert float(result.calls[1, 1]) == 9 * 40 and float(result.calls[0, 1]) == 12 * 40


def test_calls_follow_the_stage_plan():
    cube = per_sample_cube(templates=30, samples=50)
    result = rankstats.simulate_maxp(
        cube, stages=[(None, 10), (8, 10), (3, None)], n_resamples=4, seed=1
    )
    np.testing.assert_array_equal(result.calls, 30 * 10 + 8 * 10 + 3 * 30)
    np.testing.assert_array_equal(result.full_calls, 30 * 50)


def test_a_dominant_template_is_always_found():
    scores = np.zeros((20, 30))
    scores[7] = 1.0
    result = rankstats.simulate_maxp(
        xr.DataArray(scores, dims=("template", "sample")),
        stages=[(None, 5), (4, None)],
        n_resamples=50,
        seed=0,
    )
    assert float(result.found) == 1.0 and float(result.shortfall) == 0.0
    assert np.isnan(float(result.shortfall_when_missed))


def test_two_templates_one_stage_matches_the_binomial_oracle():
    # P(pick the better) = P(X1 > X2) + P(X1 = X2) / 2, X_i ~ Binomial(m, p_i) independent
    p, m = np.array([0.55, 0.45]), 12
    k = np.arange(m + 1)
    f1, f2 = stats.binom.pmf(k, m, p[0]), stats.binom.pmf(k, m, p[1])
    exact = float(
        np.sum(
            f1[:, None]
            * f2[None, :]
            * ((k[:, None] > k[None, :]) + 0.5 * (k[:, None] == k[None, :]))
        )
    )
    result = rankstats.simulate_maxp(
        xr.DataArray(p, dims="template"), stages=[(None, m)], samples=m, n_resamples=40000, seed=3
    )
    assert abs(float(result.found) - exact) < 4 * np.sqrt(exact * (1 - exact) / 40000)
    assert float(result.shortfall_when_missed) == pytest.approx(0.1)


def test_lower_is_better_searches_for_the_minimum():
    scores = np.full((5, 20), 0.8)
    scores[2] = 0.1
    cube = xr.Dataset({"score": (("template", "sample"), scores)}, attrs={"higher_is_better": 0})
    result = rankstats.simulate_maxp(cube, stages=[(None, 4), (2, None)], n_resamples=20, seed=0)
    assert float(result.maxp) == pytest.approx(0.1) and float(result.found) == 1.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 9), st.integers(4, 25), st.integers(1, 4))
def test_search_bounds(seed, templates, samples, first):
    rng = np.random.default_rng(seed)
    scores = (rng.random((templates, samples)) < rng.random((templates, 1))).astype(float)
    stages = [(None, first), (max(1, templates // 2), first), (1, None)]
    result = rankstats.simulate_maxp(
        xr.DataArray(scores, dims=("template", "sample")), stages=stages, n_resamples=8, seed=seed
    )
    means = scores.mean(-1)
    assert 0.0 <= float(result.found) <= 1.0
    assert 0.0 <= float(result.shortfall) <= means.max() - means.min() + 1e-12
    assert float(result.calls) <= templates * samples
    assert float(result.maxp) == pytest.approx(means.max())


def test_driver_and_simulation_agree():
    rng = np.random.default_rng(5)
    scores = (rng.random((8, 30)) < np.linspace(0.3, 0.6, 8)[:, None]).astype(float)
    stages = [(None, 5), (3, 5), (1, None)]
    templates = [f"p{i}" for i in range(8)]
    samples = [f"s{i}" for i in range(30)]

    def score(pairs):
        return [scores[int(t[1:]), int(s[1:])] for t, s in pairs]

    best = np.flatnonzero(np.isclose(scores.mean(-1), scores.mean(-1).max()))
    wins = [
        int(
            templates.index(
                rankstats.estimate_maxp(score, templates, samples, stages=stages, seed=i).template
            )
            in best
        )
        for i in range(600)
    ]
    simulated = rankstats.simulate_maxp(
        xr.DataArray(scores, dims=("template", "sample")), stages=stages, n_resamples=4000, seed=0
    )
    found = float(simulated.found)
    assert abs(np.mean(wins) - found) < 4 * np.sqrt(found * (1 - found) / 600) + 0.01


def test_driver_scores_each_pair_once_and_counts_calls():
    asked = []

    def score(pairs):
        asked.extend(pairs)
        return [1.0 if t == "b" else 0.5 for t, _ in pairs]

    result = rankstats.estimate_maxp(
        score,
        ["a", "b", "c", "d"],
        [str(i) for i in range(9)],
        stages=[(None, 2), (2, 3), (1, None)],
        seed=0,
    )
    assert len(asked) == len(set(asked)) == result.calls == 4 * 2 + 2 * 3 + 1 * 4
    assert result.template == "b" and result.estimate == 1.0
    assert [s["calls"] for s in result.stages] == [8, 6, 4]


# ---- AvgP: random assignment ----------------------------------------------------------------


def test_avgp_one_repetition_has_the_exact_variance():
    # one repetition: (1/n) sum_s x[t_s, s], t_s uniform: Var = sum_s Var_t(x[., s]) / n^2
    cube = per_sample_cube(seed=2, models=1, tasks=1, templates=6, samples=30)[0, 0]
    x = cube.values
    exact_sd = np.sqrt(x.var(axis=0).sum()) / x.shape[1]
    result = rankstats.simulate_avgp(cube, templates_per_sample=3, n_resamples=20000, seed=0)
    assert float(result.avgp) == pytest.approx(x.mean())
    assert float(result.spread.sel(k=1)) == pytest.approx(exact_sd, rel=0.03)
    assert float(result.spread.sel(k=3)) == pytest.approx(exact_sd / np.sqrt(3), rel=0.03)
    assert abs(float(result.estimate.sel(k=1)) - x.mean()) < 4 * exact_sd / np.sqrt(20000)
    np.testing.assert_array_equal(result.calls, [30, 60, 90])


def test_avgp_from_proportions_is_binomial():
    p = np.array([0.2, 0.4, 0.9])
    result = rankstats.simulate_avgp(
        xr.DataArray(p, dims="template"),
        samples=50,
        templates_per_sample=2,
        n_resamples=20000,
        seed=4,
    )
    mean = p.mean()
    assert float(result.spread.sel(k=1)) == pytest.approx(np.sqrt(mean * (1 - mean) / 50), rel=0.03)
    assert float(result.full_calls) == 150


def test_first_within_counts_the_first_repetition_inside():
    errors = np.array([[0.05, 0.02, 0.005, 0.03], [0.2, 0.2, 0.2, 0.2], [0.001, 0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(kernel.first_within(errors, 0.01), [3.0, np.nan, 1.0])


def test_k_needed_matches_a_looped_count():
    cube = per_sample_cube(seed=7, models=2, tasks=2, templates=5, samples=20)
    result = rankstats.simulate_avgp(
        cube, templates_per_sample=15, n_resamples=300, tolerance=0.02, seed=0
    )
    # the running estimate after k rounds equals the mean of the rounds
    rng = np.random.default_rng(0)
    each = kernel.avgp_repetitions(
        cube.values, per_sample=True, n_samples=None, repetitions=15, trials=300, rng=rng
    )
    truth = cube.values.mean((-1, -2))
    for m in range(2):
        for t in range(2):
            needed = []
            for trial in each[m, t]:
                running = np.cumsum(trial) / np.arange(1, 16)
                inside = [
                    k + 1 for k, v in enumerate(running) if abs(v - truth[m, t]) < 0.02 - 1e-9
                ]
                if inside:
                    needed.append(inside[0])
            assert float(result.k_needed[m, t]) == pytest.approx(np.mean(needed))


def test_driver_avgp_memoises_and_averages():
    asked = []
    value = {"a": 1.0, "b": 0.0, "c": 0.5}

    def score(pairs):
        asked.extend(pairs)
        return [value[t] for t, _ in pairs]

    result = rankstats.estimate_avgp(
        score, list(value), [str(i) for i in range(40)], templates_per_sample=6, seed=1
    )
    assert len(asked) == len(set(asked)) == result.calls <= 6 * 40
    assert result.running[-1] == pytest.approx(result.rounds.mean())
    assert np.isnan(result.spread[0])
    assert result.spread[-1] == pytest.approx(np.std(result.rounds, ddof=1))


# ---- inputs ---------------------------------------------------------------------------------


def test_released_accuracies_use_template_samples():
    cube = rankstats.datasets.load("mizrahi2024").isel(task=[0], model=[0, 1])
    result = rankstats.simulate_maxp(cube, n_resamples=10, seed=0)
    templates = int((cube.template_id != "").sum())
    assert float(result.full_calls[0, 0]) == templates * 100
    assert float(result.calls[0, 0]) == templates * 10 + 100 * 10 + 10 * 80


def test_bad_inputs_are_named():
    with pytest.raises(CubeError, match="template_samples"):
        rankstats.simulate_avgp(xr.DataArray([0.5, 0.2], dims="template"))
    with pytest.raises(CubeError, match="proportions"):
        rankstats.simulate_maxp(xr.DataArray([3.0, 0.2], dims="template"), samples=4)
    with pytest.raises(OptionError, match=r"simulate_maxp: stages=.* stage 2: templates must"):
        rankstats.simulate_maxp(
            xr.DataArray([0.5, 0.2], dims="template"), samples=4, stages=[(None, 2), (0, None)]
        )
    with pytest.raises(InputTypeError, match="simulate_avgp: give a score cube"):
        rankstats.simulate_avgp(np.ones((2, 3)))
    with pytest.raises(CubeError, match="template_valid"):
        rankstats.simulate_avgp(xr.DataArray([0.5, 0.2], dims="template"), samples=4, valid=True)


_SCORES = xr.DataArray([0.5, 0.2], dims="template")


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, n_resamples=0),
            OptionError,
            "simulate_avgp: n_resamples=0 is not allowed; n_resamples must be an integer",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, templates_per_sample=0),
            OptionError,
            "simulate_avgp: templates_per_sample=0 is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, tolerance=0),
            OptionError,
            "simulate_avgp: tolerance=0.0 is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=0),
            OptionError,
            "simulate_avgp: samples=0 is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, correlation=2),
            OptionError,
            "simulate_avgp: correlation=2 is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, seed="x"),
            OptionError,
            "simulate_avgp: seed='x' is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, valid="yes"),
            OptionError,
            "simulate_avgp: valid='yes' is not allowed",
        ),
        (
            lambda: rankstats.simulate_avgp(_SCORES, samples=4, trials=5),
            InputTypeError,
            "simulate_avgp: got an unexpected keyword argument 'trials'",
        ),
        (
            lambda: rankstats.simulate_maxp(_SCORES, samples=4, stages=[]),
            OptionError,
            "simulate_maxp: stages=\\[\\] is not allowed; give at least one",
        ),
        (
            lambda: rankstats.simulate_maxp(_SCORES, samples=4, stages=[(2,)]),
            OptionError,
            "stage 1 must be \\(templates, samples\\)",
        ),
        (
            lambda: rankstats.estimate_avgp(None, ["a"], ["1"]),
            InputTypeError,
            "estimate_avgp: score must be a callable",
        ),
        (
            lambda: rankstats.estimate_avgp(len, ["a", "a"], ["1"]),
            OptionError,
            "estimate_avgp: templates is not allowed: .* 1 repeated",
        ),
        (
            lambda: rankstats.estimate_maxp(len, "ab", ["1"]),
            OptionError,
            "estimate_maxp: templates='ab' is not allowed",
        ),
        (
            lambda: rankstats.estimate_maxp(len, ["a"], [], seed=0),
            OptionError,
            "estimate_maxp: samples is not allowed",
        ),
        (
            lambda: rankstats.estimate_maxp(len, ["a"], ["1"], higher_is_better=1),
            OptionError,
            "estimate_maxp: higher_is_better=1 is not allowed",
        ),
        (
            lambda: rankstats.estimate_avgp(lambda pairs: [1.0], ["a", "b"], ["1", "2"], seed=0),
            ScoreValueError,
            "the scorer returned 1 scores for 2 pairs",
        ),
    ],
)
def test_options_are_checked_first_and_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_estimates_are_frozen_results():
    result = rankstats.estimate_avgp(
        lambda pairs: [1.0] * len(pairs), ["a", "b"], ["1", "2"], templates_per_sample=3, seed=0
    )
    assert isinstance(result, AvgPEstimate) and result.rounds.shape == (3,)
    best = rankstats.estimate_maxp(
        lambda pairs: [1.0] * len(pairs), ["a", "b"], ["1", "2"], stages=[(None, None)], seed=0
    )
    assert isinstance(best, MaxPEstimate) and best.to_dict()["calls"] == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        best.calls = 0
    from rankstats.analyses import budget

    assert budget.AvgPEstimate is AvgPEstimate and budget.MaxPEstimate is MaxPEstimate


def test_estimate_command_prints_the_tables(capsys):
    from rankstats.cli import main

    assert (
        main(
            [
                "estimate",
                "mizrahi2024",
                "--task",
                "homophones",
                "--task",
                "word_before",
                "--n-resamples",
                "20",
                "--templates-per-sample",
                "10",
                "--seed",
                "0",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "templates per sample (k) to come within 0.01" in out and "of 32 cases" in out
    assert "successive halving" in out


# ---- synthetic per-sample scores from accuracies --------------------------------------------


def test_synthetic_samples_keep_each_accuracy_and_nest_at_full_correlation():
    p = np.array([[0.3, 0.55, np.nan, 0.9], [0.1, 0.2, 0.4, 0.0]])
    rng = np.random.default_rng(0)
    nested = kernel.synthetic_samples(p, np.array([20, 10]), 1.0, rng)
    present = ~np.isnan(p)
    np.testing.assert_allclose(np.nanmean(nested[present], -1), p[present])
    assert np.isnan(nested[0, 2]).all() and np.isnan(nested[1, :, 10:]).all()
    # one shared latent order: a more accurate template succeeds wherever a less accurate does
    first = nested[0]
    assert np.all(first[3] >= first[1]) and np.all(first[1] >= first[0])
    loose = kernel.synthetic_samples(np.full((4000, 2), 0.5), 10, 0.0, rng)
    agreement = np.corrcoef(loose[:, 0].ravel(), loose[:, 1].ravel())[0, 1]
    assert abs(agreement) < 0.03


def test_correlated_replay_keeps_the_exact_metrics():
    cube = rankstats.datasets.load("mizrahi2024").isel(task=[2], model=[0, 5])
    result = rankstats.simulate_maxp(cube, n_resamples=20, correlation=0.7, seed=0)
    np.testing.assert_allclose(result.maxp, rankstats.maxp(cube, nan_policy="omit"))
    average = rankstats.simulate_avgp(
        cube, n_resamples=20, templates_per_sample=5, correlation=0.7, seed=0
    )
    np.testing.assert_allclose(average.avgp, rankstats.avgp(cube, nan_policy="omit"))
    assert "latent correlation 0.7" in result.attrs["samples"]
    with pytest.raises(ValueError, match="per-template scores only"):
        rankstats.simulate_maxp(per_sample_cube(), correlation=0.5)


# ---- per-sample outcomes from an item-difficulty model --------------------------------------


def test_item_model_keeps_each_template_s_accuracy_and_correlates_samples():
    rng = np.random.default_rng(0)
    p = np.array([[0.0, 0.15, 0.5, 0.85, 1.0, np.nan]])
    n = 40000
    scores = kernel.item_model_samples(p, n, 2.0, rng)
    accuracy = np.nanmean(scores[0, :5], -1)
    assert accuracy[0] == 0.0 and accuracy[4] == 1.0 and np.isnan(scores[0, 5]).all()
    for got, want in zip(accuracy[1:4], p[0, 1:4], strict=True):
        # given the difficulties, the mean of logistic(theta - b) over the samples is p exactly;
        # the Bernoulli draws add at most binomial noise
        assert abs(got - want) < 4 * np.sqrt(want * (1 - want) / n)
    # a hard sample is hard under every template: outcomes correlate across templates
    assert np.corrcoef(scores[0, 2], scores[0, 3])[0, 1] > 0.2
    independent = kernel.item_model_samples(p, n, 1e-9, rng)
    assert abs(np.corrcoef(independent[0, 2], independent[0, 3])[0, 1]) < 0.03


def test_item_model_replay_finds_the_best_template_more_often_than_independent_draws():
    cube = rankstats.datasets.load("mizrahi2024").isel(task=[0], model=[0, 1, 2])
    independent = rankstats.simulate_maxp(cube, n_resamples=30, seed=0)
    items = rankstats.simulate_maxp(cube, n_resamples=30, sample_sd=2.0, seed=0)
    assert "item-difficulty model" in items.attrs["samples"]
    assert float(items.found.mean()) > float(independent.found.mean())
    with pytest.raises(OptionError, match="give one"):
        rankstats.simulate_maxp(cube, correlation=0.5, sample_sd=1.0)
    with pytest.raises(OptionError, match="sample_sd"):
        rankstats.simulate_avgp(per_sample_cube(), sample_sd=1.0)


def test_estimate_command_says_which_template_prior_it_fitted(tmp_path, capsys):
    from rankstats.cli import main

    path = rankstats.save(
        rankstats.planted_cube(models=2, templates=12, samples=10, seed=0), tmp_path / "p.nc"
    )
    for prior, allowed in (
        ("nonparametric", {"nonparametric"}),
        ("auto", {"normal", "normal-per-model", "mixture", "nonparametric"}),
    ):
        arguments = ["estimate", str(path), "--method", "irt", "--budget", "40"]
        arguments += ["--template-prior", prior, "--n-resamples", "5", "--seed", "0"]
        assert main([*arguments, "--csv", "-"]) == 0
        table = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#")
        assert set(table["template_prior"]) <= allowed and len(table) == 2
