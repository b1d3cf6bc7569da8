"""The distribution across templates against the planted truth and a one-hot Rasch reference.

Planted cubes (``rankstats.planted_cube``) with normal, bimodal, skewed and
model-specific effects, partial designs of 200, 400 and 800 cells per model
(2, 4 and 8 per template), and the errors of ``estimate_distribution`` and of
the reference the PromptEval paper describes (``onehot_rasch``: a logistic
regression on one-hot template and sample covariates with an L2 penalty,
fitted per model) on the same cells. Errors: the Wasserstein-1 distance to
the true distribution of per-template accuracy (mean absolute difference of
the quantile functions at 1, ..., 99%) and the absolute errors of the 5% and
95% quantiles, averaged over the models. The fast tests use small numbers of
cubes; the slow one is the acceptance grid.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import rankstats
from rankstats.analyses.estimators import onehot_rasch
from rankstats.analyses.irt import per_sample_scores, positions
from rankstats.errors import OptionError

LEVELS = np.round(np.linspace(0.01, 0.99, 99), 2)
LOW, HIGH = int(np.argmin(abs(LEVELS - 0.05))), int(np.argmin(abs(LEVELS - 0.95)))


def _one_thread():
    # L-BFGS-B calls BLAS; its threads only contend on a small shared machine
    try:
        import threadpoolctl
    except ImportError:  # pragma: no cover - the timings only, not the values
        return contextlib.nullcontext()
    return threadpoolctl.threadpool_limits(1)


def _cube(shape, models, seed):
    extra = {"model_sample_sd": 1.0} if shape == "model-specific" else {"template_shape": shape}
    return rankstats.planted_cube(models=models, templates=100, samples=100, seed=seed, **extra)


def _errors(shape, budget, models, seed):
    """(W1, 5% error, 95% error) of rankstats and of the reference, one cube and design."""
    cube = _cube(shape, models, seed)
    partial = cube.where(rankstats.random_design(cube, budget=budget, seed=seed + 1000))
    truth = rankstats.template_scores(cube).isel(task=0).transpose("model", "template").values
    exact = np.quantile(truth, LEVELS, axis=-1).T
    fitted = rankstats.estimate_distribution(partial, quantiles=LEVELS, n_resamples=100, seed=seed)
    ours = fitted.quantiles.isel(task=0).transpose("model", "quantile").values
    scores = per_sample_scores(partial, "test").transpose("task", "model", "template", "sample")
    templates, samples = positions(scores)
    with _one_thread():
        reference = onehot_rasch(scores.values, templates[:, None, :], samples[:, None, :])[0]
    theirs = np.quantile(reference, LEVELS, axis=-1).T
    out = []
    for q in (ours, theirs):
        gap = np.abs(q - exact)
        out.append([gap.mean(), gap[:, LOW].mean(), gap[:, HIGH].mean()])
    return np.array(out), fitted


def _compare(shape, budget, models, seeds):
    """Mean errors (estimator, metric) over the cubes and the standard error of the difference."""
    runs = np.array([_errors(shape, budget, models, seed)[0] for seed in range(seeds)])
    difference = runs[:, 0] - runs[:, 1]
    se = difference.std(0, ddof=1) / np.sqrt(seeds)
    return runs.mean(0), se


def test_the_template_spread_is_not_shrunk_with_two_cells_per_template():
    # measured over 6 cubes (16 models, 200 cells per model): the estimated 5-95% range
    # of per-template accuracy 1.01 times the true one (0.88-1.16 per cube), the fitted
    # sd 0.64 against the planted 0.7 (a plug-in marginal likelihood gave 0.2-0.4)
    ratios, sds = [], []
    for seed in range(3):
        cube = rankstats.planted_cube(models=16, templates=100, samples=100, seed=seed)
        partial = cube.where(rankstats.random_design(cube, budget=200, seed=seed))
        out = rankstats.estimate_distribution(partial, n_resamples=100, seed=seed)
        truth = rankstats.template_scores(cube)
        true_range = truth.quantile(0.95, "template") - truth.quantile(0.05, "template")
        fitted_range = out.quantiles.sel(quantile=0.95) - out.quantiles.sel(quantile=0.05)
        ratios.append(float((fitted_range / true_range).mean()))
        sds.append(float(out.template_sd.mean()))
        assert out.template_sd_identified.all()
        assert set(np.unique(out.template_prior.values)) == {"normal"}
    assert 0.8 < np.mean(ratios) < 1.2, ratios
    assert 0.5 < np.mean(sds) < 0.9, sds


def test_no_spread_is_flagged_as_not_identified():
    cube = rankstats.planted_cube(
        models=8, templates=60, samples=60, template_sd=0.0, interaction_sd=0.0, seed=3
    )
    partial = cube.where(rankstats.random_design(cube, budget=120, seed=3))
    out = rankstats.estimate_distribution(partial, n_resamples=20, seed=0)
    assert not out.template_sd_identified.any()
    assert float(out.template_sd.max()) < 0.3


def test_bimodal_effects_keep_their_low_tail():
    # 15% of the templates 3 logits below the rest: at 2 cells per template the normal
    # prior with the pairwise spread, at 8 the nonparametric or mixture prior chosen by
    # cross-validated marginal likelihood; the 5% quantile against the reference's
    for budget, seeds in ((200, 2), (800, 2)):
        runs = [_errors("bimodal", budget, 8, seed) for seed in range(seeds)]
        ours = np.mean([r[0][0, 1] for r in runs])
        theirs = np.mean([r[0][1, 1] for r in runs])
        assert ours < 0.7 * theirs, (budget, ours, theirs)
    priors = {str(v) for r in runs for v in np.unique(r[1].template_prior.values)}
    assert priors <= {"mixture", "nonparametric"}, priors


@pytest.mark.parametrize("budget", [200, 400, 800])
def test_no_worse_than_the_reference_on_a_normal_cube_fast(budget):
    means, se = _compare("normal", budget, 8, 3)
    # W1, 5% and 95% errors: rankstats' no larger than the reference's beyond twice the
    # Monte Carlo error of the difference (and a floor for the few cubes)
    assert np.all(means[0] <= means[1] + np.maximum(2 * se, 0.004)), (means, se)


# the regimes where the reference is still closer beyond Monte Carlo error, measured by
# the slow grid below (6 cubes of 16 models each)
_BEHIND = {
    # with two cells per template the skew barely moves the likelihood (the planted shape
    # itself adds 0 to 2 to the log marginal likelihood of a pool of 1600 templates), so
    # the normal is kept, and its upper tail lies too high
    ("skewed", 200): "the normal prior's upper tail, a skew two cells per template cannot show",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("shape", "budget"),
    [
        pytest.param(
            shape,
            budget,
            marks=[pytest.mark.xfail(strict=False, reason=_BEHIND[(shape, budget)])]
            if (shape, budget) in _BEHIND
            else [],
        )
        for shape in ("normal", "bimodal", "skewed", "model-specific")
        for budget in (200, 400, 800)
    ],
)
def test_no_worse_than_the_reference_full(shape, budget):
    means, se = _compare(shape, budget, 16, 6)
    assert np.all(means[0] <= means[1] + 2 * se), (means, se)


def _tail_coverage(seeds, models=16, budget=200):
    """How often the nominal 95% intervals of the 5% and 95% quantiles hold the truth."""
    covered = []
    for seed in range(seeds):
        cube = rankstats.planted_cube(models=models, templates=100, samples=100, seed=seed + 50)
        partial = cube.where(rankstats.random_design(cube, budget=budget, seed=seed))
        out = rankstats.estimate_distribution(
            partial, quantiles=[0.05, 0.95], n_resamples=200, seed=seed
        )
        exact = rankstats.template_scores(cube).quantile([0.05, 0.95], "template")
        exact = exact.transpose(*out.quantiles.dims)
        held = (out.quantiles_low <= exact) & (exact <= out.quantiles_high)
        covered.append(held.values.reshape(-1, 2))
    return np.concatenate(covered).mean(0)


def test_tail_intervals_cover_with_two_cells_per_template_fast():
    # measured (slow test, 10 cubes x 16 models, 200 cells per model): 0.956 and 0.950
    coverage = _tail_coverage(3)
    assert np.all((coverage >= 0.85) & (coverage <= 1.0)), coverage


@pytest.mark.slow
def test_tail_intervals_cover_with_two_cells_per_template_full():
    coverage = _tail_coverage(10)
    assert np.all(np.abs(coverage - 0.95) <= 0.05), coverage


def test_the_normal_stays_where_the_effects_are_normal_and_every_family_runs():
    cube = rankstats.planted_cube(models=16, templates=100, samples=100, seed=0)
    partial = cube.where(rankstats.random_design(cube, budget=800, seed=1000))
    # 8 cells per template: the shapes are tried, and the normal, their special case, kept
    out = rankstats.estimate_distribution(partial, n_resamples=20, seed=0)
    assert set(np.unique(out.template_prior.values)) == {"normal"}
    for family in ("normal-per-model", "mixture", "nonparametric"):
        forced = rankstats.estimate_distribution(
            partial, template_prior=family, n_resamples=20, seed=0
        )
        assert set(np.unique(forced.template_prior.values)) == {family}
        assert 0.4 < float(forced.template_sd.mean()) < 1.0, family
    with pytest.raises(OptionError, match="template_prior='flat'"):
        rankstats.estimate_distribution(partial, template_prior="flat")
