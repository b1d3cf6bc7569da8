"""Variance components (generalizability theory) and the score intervals built on them.

Oracles:

- statsmodels ``MixedLM.from_formula("y ~ 1", data, groups="g", re_formula="0",
  vc_formula={"m": "0+C(m)", ...}).fit(reml=True)`` on one group holding the
  whole crossed design: REML equals the ANOVA estimates on a complete cube when
  none is negative;
- the textbook expected-mean-squares formulas (``rankstats._kernels.variance.anova``,
  Brennan 2001 ch. 3), written apart from Henderson's method;
- simulation from planted components: unbiasedness with missing cells, the
  coverage of the intervals, and the coverage of the score intervals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import rankstats
from rankstats import stability
from rankstats._kernels import variance as kv
from rankstats.errors import InputTypeError, OptionError, RankstatsWarning

PLANTED = np.array([1.0, 0.3, 0.5, 0.2, 0.4, 0.1, 0.6])
NAMES = [
    "model",
    "template",
    "sample",
    "model:template",
    "model:sample",
    "template:sample",
    "model:template:sample+error",
]


def simulate(planted, tasks, models, templates, samples, seed):
    """Scores ``(model, task, template, sample)`` of the crossed random-effects model."""
    rng = np.random.default_rng(seed)
    k = 3 if samples else 2
    sizes = (models, templates, samples)[:k]
    x = 0.0
    for variance, effect in zip(planted, kv.effects(k), strict=True):
        shape = tuple(sizes[a] if a in effect else 1 for a in range(k))
        x = x + np.sqrt(variance) * rng.standard_normal((tasks, *shape))
    dims = ("model", "task", "template", "sample")[: k + 1]
    return xr.DataArray(np.moveaxis(x, 0, 1), dims=dims)


# --------------------------------------------------------------------------- estimates


@pytest.mark.parametrize("shape", [(4, 3, 5), (2, 2, 2), (7, 2, 9)])
def test_complete_tasks_give_the_anova_estimates(shape):
    x = np.random.default_rng(sum(shape)).normal(size=(3, *shape))
    np.testing.assert_allclose(kv.henderson(x, 3)[0], kv.anova(x, 3), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        kv.henderson(x[..., 0], 2)[0], kv.anova(x[..., 0], 2), rtol=1e-10, atol=1e-12
    )


def test_anova_matches_the_two_way_textbook_formulas():
    # model x template, one score a cell: sigma2_m = (MS_m - MS_e) / n_t, sigma2_t likewise
    x = np.random.default_rng(5).normal(size=(6, 4))
    m, t = x.shape
    grand = x.mean()
    ms_m = t * ((x.mean(1) - grand) ** 2).sum() / (m - 1)
    ms_t = m * ((x.mean(0) - grand) ** 2).sum() / (t - 1)
    resid = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + grand
    ms_e = (resid**2).sum() / ((m - 1) * (t - 1))
    np.testing.assert_allclose(kv.anova(x, 2), [(ms_m - ms_e) / t, (ms_t - ms_e) / m, ms_e])


def _mixedlm(scores):
    """REML variance components of one task by statsmodels (the oracle)."""
    import statsmodels.formula.api as smf

    m, t, i = np.indices(scores.shape)
    data = pd.DataFrame({"y": scores.ravel(), "m": m.ravel(), "t": t.ravel(), "i": i.ravel()})
    for a, b in (("m", "t"), ("m", "i"), ("t", "i")):
        data[a + b] = data[a].astype(str) + "_" + data[b].astype(str)
    data["g"] = 1
    formula = {name: f"0+C({name})" for name in ("m", "t", "i", "mt", "mi", "ti")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the optimiser's convergence chatter
        fit = smf.mixedlm("y ~ 1", data, groups="g", vc_formula=formula, re_formula="0").fit(
            reml=True, method="lbfgs"
        )
    found = dict(zip(fit.model.exog_vc.names, fit.vcomp, strict=True))
    return np.array([found[n] for n in ("m", "t", "i", "mt", "mi", "ti")] + [fit.scale])


def test_equals_statsmodels_reml_on_a_small_complete_cube():
    pytest.importorskip("statsmodels")
    # REML equals ANOVA only inside the parameter space: the first of 20 small cubes whose
    # estimates are all positive
    cubes = simulate([1.0, 0.5, 0.6, 0.3, 0.4, 0.2, 0.5], 20, 4, 3, 5, seed=0)
    vc = rankstats.variance_components(cubes, n_resamples=20, seed=0)
    inside = (vc.estimate > 0).all("component").values
    assert inside.any()
    first = int(np.argmax(inside))
    ours = vc.estimate.isel(task=first).values
    np.testing.assert_allclose(ours, _mixedlm(cubes.isel(task=first).values), rtol=1e-3)


def test_equals_statsmodels_reml_without_samples():
    pytest.importorskip("statsmodels")
    import statsmodels.formula.api as smf

    cube = simulate([1.0, 0.4, 0.5], 1, 8, 6, 0, seed=2)
    ours = rankstats.variance_components(cube, n_resamples=20, seed=0).estimate
    assert list(ours.component.values) == ["model", "template", "model:template+error"]
    x = cube.isel(task=0).values
    m, t = np.indices(x.shape)
    data = pd.DataFrame({"y": x.ravel(), "m": m.ravel(), "t": t.ravel(), "g": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm(
            "y ~ 1", data, groups="g", vc_formula={"m": "0+C(m)", "t": "0+C(t)"}, re_formula="0"
        ).fit(reml=True, method="lbfgs")
    assert (ours.values > 0).all()
    np.testing.assert_allclose(ours.isel(task=0).values, [*fit.vcomp, fit.scale], rtol=1e-3)


def test_unbiased_with_missing_cells():
    # Henderson I is unbiased under cells missing at random: the mean over 300 tasks of
    # 8 x 6 x 20 with a fifth of the cells missing lies within 4 standard errors of the truth
    cube = simulate(PLANTED, 300, 8, 6, 20, seed=11)
    rng = np.random.default_rng(12)
    cube = cube.where(rng.random(cube.shape) > 0.2)
    estimate = kv.henderson(cube.transpose("task", ...).values, 3)[0]
    assert np.isfinite(estimate).all()
    mean, se = estimate.mean(0), estimate.std(0, ddof=1) / np.sqrt(len(estimate))
    assert (np.abs(mean - PLANTED) < 4 * se).all(), (mean, se)


def test_missing_cells_are_counted_and_padding_is_not():
    cube = simulate(PLANTED, 2, 4, 3, 5, seed=1)
    values = cube.values.copy()
    values[0, 0, 1, 2] = np.nan  # one missing cell in task 0
    values[:, 1, 2, :] = np.nan  # task 1 has two templates: the third is padding
    vc = rankstats.variance_components(cube.copy(data=values), n_resamples=10, seed=0)
    assert vc.n_missing.values.tolist() == [1, 0]
    assert vc.n_cells.values.tolist() == [59, 40]
    padded = rankstats.variance_components(
        cube.isel(task=[1], template=[0, 1]), n_resamples=10, seed=0
    )
    np.testing.assert_allclose(vc.estimate.isel(task=1), padded.estimate.isel(task=0))


def test_a_task_with_one_template_is_nan_with_a_warning():
    cube = simulate(PLANTED, 2, 4, 3, 5, seed=1)
    values = cube.values.copy()
    values[:, 1, 1:, :] = np.nan
    with pytest.warns(RankstatsWarning, match="1 slice"):
        vc = rankstats.variance_components(cube.copy(data=values), n_resamples=10, seed=0)
    assert vc.estimate.isel(task=1).isnull().all()
    assert vc.estimate.isel(task=0).notnull().all()


def test_dask_chunks_and_extra_dims_give_the_same_answer():
    pytest.importorskip("dask")
    cube = simulate(PLANTED, 4, 5, 4, 6, seed=3).assign_coords(task=list("abcd"))
    eager = rankstats.variance_components(cube, n_resamples=30, seed=9)
    lazy = rankstats.variance_components(cube.chunk(task=1), n_resamples=30, seed=9)
    assert lazy.estimate.chunks is not None
    xr.testing.assert_allclose(eager, lazy.compute())
    # the seed fixes each task's draws, so a task alone gets its own interval again
    alone = rankstats.variance_components(cube, n_resamples=30, seed=9)
    xr.testing.assert_allclose(alone.sel(task="c"), eager.sel(task="c"))


def test_options_and_inputs_are_checked():
    cube = simulate(PLANTED, 1, 3, 3, 3, seed=0)
    with pytest.raises(OptionError, match="n_resamples"):
        rankstats.variance_components(cube, n_resamples=0)
    with pytest.raises(OptionError, match="confidence_level"):
        rankstats.variance_components(cube, confidence_level=1.5)
    with pytest.raises(InputTypeError, match="score cube"):
        rankstats.variance_components(cube.values)


# --------------------------------------------------------------------------- intervals


def _coverage(planted, tasks, sizes, n_resamples, seed, missing=0.0):
    cube = simulate(planted, tasks, *sizes, seed=seed)
    if missing:  # cells missing at random: the whole-task simulation, not the mean squares
        cube = cube.where(np.random.default_rng(seed + 2).random(cube.shape) >= missing)
    vc = rankstats.variance_components(cube, n_resamples=n_resamples, seed=seed + 1)
    truth = xr.DataArray(np.asarray(planted), dims="component")
    return ((vc.low <= truth) & (truth <= vc.high)).mean("task")


def test_intervals_cover_the_planted_values():
    # 400 simulated cubes of 10 models x 8 templates x 30 samples, 1000 replicates each
    covered = _coverage(PLANTED, 400, (10, 8, 30), 1000, seed=0)
    assert (covered >= 0.9).all(), covered.to_series()


def test_intervals_cover_without_samples():
    covered = _coverage([1.0, 0.2, 0.5], 400, (12, 10, 0), 1000, seed=5)
    assert (covered >= 0.9).all(), covered.to_series()


def test_intervals_cover_with_missing_cells():
    # 100 cubes of 8 x 6 x 20 with a tenth of the cells missing, 150 replicates each
    covered = _coverage(PLANTED, 100, (8, 6, 20), 150, seed=3, missing=0.1)
    assert (covered >= 0.9).all(), covered.to_series()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("planted", "sizes"),
    [
        (PLANTED, (10, 8, 30)),
        ([0.5, 0.05, 0.5, 0.0, 0.3, 0.0, 1.0], (6, 5, 20)),  # components at 0
        ([2.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], (5, 4, 10)),  # few of everything
    ],
)
def test_intervals_cover_the_planted_values_at_scale(planted, sizes):
    # the figures quoted in docs/stability.md (run with -s to see them)
    covered = _coverage(planted, 400, sizes, 1000, seed=1)
    print(f"\ncoverage over 400 cubes of {sizes}:", covered.to_series().round(3).to_dict())
    assert (covered >= 0.9).all(), covered.to_series()


@pytest.mark.slow
def test_intervals_cover_the_planted_values_with_missing_cells_at_scale():
    # the figures quoted in docs/stability.md (run with -s to see them)
    covered = _coverage(PLANTED, 400, (10, 8, 30), 300, seed=1, missing=0.1)
    print("\ncoverage, a tenth of the cells missing:", covered.to_series().round(3).to_dict())
    assert (covered >= 0.9).all(), covered.to_series()


# --------------------------------------------------------------------------- score intervals


def test_score_se_is_the_absolute_error_variance():
    cube = simulate(PLANTED, 2, 6, 5, 8, seed=4)
    c = rankstats.variance_components(cube, n_resamples=10, seed=0).estimate.clip(min=0)
    ci = stability.score_intervals(cube)
    t, s = 5, 8
    expected = ((c[1] + c[3]) / t + (c[2] + c[4]) / s + (c[5] + c[6]) / (t * s)) ** 0.5
    np.testing.assert_allclose(ci.se.values, np.broadcast_to(expected.values, ci.se.shape))
    np.testing.assert_allclose(ci.score.values, cube.mean(("template", "sample")).values)
    np.testing.assert_allclose(ci.high - ci.score, 1.959964 * ci.se, rtol=1e-6)


def test_score_se_weights_missing_cells_by_their_shares():
    # a model seen on 2 of 3 templates (every sample) has template weight (1/2)^2 * 2 = 1/2
    x = np.random.default_rng(0).normal(size=(3, 3, 4))
    x[0, 2] = np.nan
    observed = ~np.isnan(x)
    components = np.arange(1.0, 8.0)
    got = kv.score_variance(components, observed, 3)
    t, s = 2, 4
    expected = (2 + 4) / t + (3 + 5) / s + (6 + 7) / (t * s)
    assert got[0] == pytest.approx(expected)
    assert got[1] == pytest.approx((2 + 4) / 3 + (3 + 5) / 4 + (6 + 7) / 12)


def score_coverage(n_cubes, n_resamples, seed, sizes=(6, 5, 30)):
    """Coverage of the models' universe scores by both methods, over ``n_cubes`` cubes."""
    rng = np.random.default_rng(seed)
    models, templates, samples = sizes
    shapes = [
        (models, 1, 1),
        (1, templates, 1),
        (1, 1, samples),
        (models, templates, 1),
        (models, 1, samples),
        (1, templates, samples),
        (models, templates, samples),
    ]
    effects = [
        np.sqrt(v) * rng.standard_normal((n_cubes, *s))
        for v, s in zip(PLANTED, shapes, strict=True)
    ]
    cube = xr.DataArray(
        np.moveaxis(sum(effects), 0, 1), dims=("model", "task", "template", "sample")
    )
    truth = xr.DataArray(effects[0][:, :, 0, 0].T, dims=("model", "task"))
    found = {}
    for method in ("components", "bootstrap"):
        ci = stability.score_intervals(cube, method, n_resamples=n_resamples, seed=seed)
        found[method] = float(((ci.low <= truth) & (truth <= ci.high)).mean())
    return found


def test_score_intervals_from_components_cover_better_than_the_two_way_bootstrap():
    found = score_coverage(60, 200, seed=0)
    assert found["components"] >= 0.85, found
    assert found["components"] > found["bootstrap"], found


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [(6, 3, 20), (6, 10, 50), (6, 30, 100)])
def test_score_interval_coverage_at_scale(sizes):
    # the figures quoted in docs/stability.md (run with -s to see them)
    found = score_coverage(400, 500, seed=1, sizes=sizes)
    print(f"\nscore coverage over 400 cubes of {sizes}:", found)
    assert found["components"] >= 0.9, found


def test_score_intervals_options():
    cube = simulate(PLANTED, 1, 3, 3, 3, seed=0)
    with pytest.raises(OptionError, match="method"):
        stability.score_intervals(cube, method="percentile")


# --------------------------------------------------------------------------- report


def test_variance_summary_and_its_figure():
    cube = rankstats.datasets.load("mizrahi2024").isel(task=slice(0, 4))
    summary = stability.variance_summary(cube, n_resamples=20, seed=0)
    np.testing.assert_allclose(summary.variance_share.sum("component"), 1.0)
    assert set(summary.data_vars) >= {
        "variance_share",
        "variance_estimate",
        "variance_low",
        "variance_high",
        "g_coefficient",
        "replication_tau",
        "templates_for_tau",
        "variance_cells_missing",
    }
    assert (summary.templates_for_tau > 0).all()
    pytest.importorskip("matplotlib")
    from rankstats.plot import to_png
    from rankstats.plot.variance import plot_variance_components

    ax = plot_variance_components(summary)
    assert len(ax.patches) == 4 * 3
    assert to_png(ax)[:4] == b"\x89PNG"


@pytest.mark.parametrize("samples", [True, False])
def test_variance_summary_is_the_components_and_the_plan(samples):
    # one pass of the moment equations serves both: the numbers must be theirs exactly
    cube = rankstats.datasets.load("mizrahi2024").isel(task=slice(0, 3))
    if not samples:
        cube = rankstats.template_scores(cube)
    summary = stability.variance_summary(cube, n_resamples=25, seed=4, target_tau=0.8)
    vc = stability.variance_components(cube, n_resamples=25, seed=4)
    planned = rankstats.plan(cube, target_tau=0.8)
    for name in ("estimate", "low", "high"):
        np.testing.assert_array_equal(summary[f"variance_{name}"].values, vc[name].values)
    np.testing.assert_array_equal(summary.variance_cells_missing.values, vc.n_missing.values)
    for mine, theirs in (
        ("g_coefficient", "g_coefficient_now"),
        ("replication_tau", "tau_now"),
        ("templates_for_tau", "n_templates_needed_fixed_samples"),
    ):
        np.testing.assert_array_equal(summary[mine].values, planned[theirs].values)


# --------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    shape=st.tuples(st.integers(2, 5), st.integers(2, 4), st.integers(2, 5)),
    seed=st.integers(0, 2**16),
    scale=st.floats(0.1, 10),
    shift=st.floats(-5, 5),
    missing=st.floats(0, 0.3),
)
def test_components_scale_with_the_scores_and_ignore_order(shape, seed, scale, shift, missing):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    x[rng.random(shape) < missing] = np.nan
    found = kv.henderson(x, 3)[0]
    # a shift changes nothing, a scale multiplies every component by its square
    np.testing.assert_allclose(
        kv.henderson(scale * x + shift, 3)[0], scale**2 * found, rtol=1e-6, atol=1e-9 * scale**2
    )
    # the order of the models, templates and samples does not matter
    order = [rng.permutation(n) for n in shape]
    permuted = x[order[0]][:, order[1]][:, :, order[2]]
    np.testing.assert_allclose(kv.henderson(permuted, 3)[0], found, rtol=1e-6, atol=1e-9)
    # the components solve the moment equations, the total sum of squares' among them
    if np.isfinite(found).all():
        observed = ~np.isnan(x)
        total = np.nansum((x - np.nanmean(x)) ** 2)
        matrix = kv.design(observed.astype(float), 3)[1]
        assert total == pytest.approx(matrix[-1] @ found, rel=1e-6, abs=1e-9)


def test_score_intervals_and_plan_on_dask_chunks():
    pytest.importorskip("dask")
    cube = simulate(PLANTED, 4, 5, 4, 6, seed=3).assign_coords(task=list("abcd"))
    lazy = stability.score_intervals(cube.chunk(task=1))
    assert lazy.se.chunks is not None
    xr.testing.assert_allclose(stability.score_intervals(cube), lazy.compute())
    xr.testing.assert_allclose(rankstats.plan(cube), rankstats.plan(cube.chunk(task=1)))
    summary = stability.variance_summary(cube.chunk(task=2), n_resamples=20, seed=0)
    xr.testing.assert_allclose(
        stability.variance_summary(cube, n_resamples=20, seed=0), summary.compute()
    )


@pytest.mark.parametrize("k", [2, 3])
def test_mean_square_shortcut_has_the_simulated_distribution(k):
    # complete tasks draw their mean squares; the whole-task simulation must agree in law
    planted = PLANTED if k == 3 else PLANTED[[0, 1, 6]]
    levels = np.array([[6, 5, 8][:k]])
    shortcut = kv.mean_square_draws(planted[None], levels, 4000, [np.random.default_rng(1)], k)
    observed = np.ones((1, *levels[0]), dtype=bool)
    simulated = kv._simulate_tasks(planted[None], observed, 4000, [np.random.default_rng(2)], k)
    se = simulated.std(-1) / np.sqrt(4000)
    assert (np.abs(shortcut.mean(-1) - simulated.mean(-1)) < 4 * np.sqrt(2) * se).all()
    np.testing.assert_allclose(shortcut.std(-1), simulated.std(-1), rtol=0.06)
    for q in (0.05, 0.5, 0.95):
        np.testing.assert_allclose(
            np.quantile(shortcut, q, -1), np.quantile(simulated, q, -1), rtol=0.1, atol=0.01
        )


@pytest.mark.parametrize("k", [2, 3])
def test_crossed_shortcut_equals_the_sum_over_cells(k):
    """Fully crossed patterns (padding drops whole levels) take closed-form coefficients;
    they equal the general sums over margins' cells, pattern by pattern."""
    from rankstats._kernels import variance as kv

    def by_cells(observed):
        counts = {s: kv._margin(observed, s, k) for s in kv.subsets(k)}
        rows = [
            np.stack(
                [
                    kv._total(kv._ratio(counts[kv._union(s, r)] ** 2, counts[s]), k)
                    for r in kv.effects(k)
                ],
                axis=-1,
            )
            for s in kv.subsets(k)
        ]
        K = np.stack(rows, axis=-2)
        return K[..., 1:, :] - K[..., :1, :]

    rng = np.random.default_rng(k)
    for _ in range(30):
        sizes = tuple(int(n) for n in rng.integers(2, 6, size=k))
        observed = np.ones((4, *sizes))
        level = [0] * k
        axis = int(rng.integers(k))
        index = [slice(None)] * k
        index[axis] = int(rng.integers(sizes[axis]))
        observed[(1, *index)] = 0  # a padded level: still crossed
        observed[(2, *level)] = 0  # a hole: not crossed
        observed[3, ..., 0] = 0  # the last facet's first level padded everywhere
        _, A, good = kv.design(observed.astype(bool), k)
        expected = np.where(good[..., None, None], by_cells(observed), np.eye(A.shape[-1]))
        np.testing.assert_allclose(A, expected, rtol=1e-12, atol=1e-9)
