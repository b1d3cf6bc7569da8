"""Clustered standard errors: statsmodels oracle, structure, simulations, errors.

Oracle (statsmodels >= 0.14; checked with 0.15), to a relative tolerance of 1e-10:

* mean: ``OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": sample_ids})``
  (default ``use_correction=True``: factor G/(G-1) * (N-1)/(N-K), K = 1) for
  ``se_cluster``; ``cov_kwds={..., "use_correction": False}`` for
  ``small_sample=False``; ``OLS(y, ones).fit().bse`` (nonrobust) for ``se_naive``;
* paired difference: the same regressions of ``d = y_a - y_b`` on the cells both
  models observe; ``pvalues`` with ``use_t=False`` (normal) and ``use_t=True``
  (t on G - 1 degrees of freedom, statsmodels' default ``df_correction=True``).
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

import rankstats
from rankstats.errors import DimensionError, MissingValueError, OptionError, RankstatsWarning
from rankstats.statistics.clustered import clustered_difference, clustered_se

RTOL = 1e-10


def close(actual, desired):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float), np.asarray(desired, dtype=float), rtol=RTOL, atol=1e-15
    )


def _scores(seed, models=4, templates=6, samples=40, item_sd=1.2):
    """Binary scores driven by item difficulty and model skill: (model, template, sample)."""
    rng = np.random.default_rng(seed)
    item = rng.normal(0, item_sd, samples)
    skill = rng.normal(0, 0.7, models)
    template = rng.normal(0, 0.3, templates)
    logit = skill[:, None, None] + template[None, :, None] - item[None, None, :]
    return (rng.random((models, templates, samples)) < 1 / (1 + np.exp(-logit))).astype(float)


def _fit(y, groups, **kwargs):
    design = np.ones((y.size, 1))
    return sm.OLS(y, design).fit(cov_type="cluster", cov_kwds={"groups": groups, **kwargs})


def _cells(x):
    """Observed cells of a (template, sample) block and their sample ids."""
    observed = ~np.isnan(x)
    return x[observed], np.broadcast_to(np.arange(x.shape[1]), x.shape)[observed]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("small_sample", [True, False])
def test_mean_matches_statsmodels(seed, small_sample):
    x = _scores(seed)
    x[1, 2, [3, 17]] = np.nan  # holes: compared on the observed cells under "omit"
    x[2, :, 30:] = np.nan  # fewer samples for one model (structure)
    out = clustered_se(x, nan_policy="omit", small_sample=small_sample)
    for m in range(len(x)):
        y, groups = _cells(x[m])
        fit = _fit(y, groups, use_correction=small_sample)
        close(out.mean_score[m], fit.params[0])
        close(out.se_cluster[m], fit.bse[0])
        close(out.se_naive[m], sm.OLS(y, np.ones((y.size, 1))).fit().bse[0])
        close(out.design_effect[m], (fit.bse[0] / out.se_naive[m]) ** 2)
        assert out.n_cells[m] == y.size and out.n_clusters[m] == np.unique(groups).size


@pytest.mark.parametrize("use_t", [False, True])
def test_paired_difference_matches_statsmodels(use_t):
    x = _scores(3, models=5)
    x[4, 1, 5] = np.nan
    out = clustered_difference(x, nan_policy="omit", use_t=use_t)
    for a in range(5):
        for b in range(5):
            if a == b:
                continue
            both = ~np.isnan(x[a]) & ~np.isnan(x[b])
            d = np.where(both, x[a] - x[b], np.nan)
            y, groups = _cells(d)
            design = np.ones((y.size, 1))
            fit = sm.OLS(y, design).fit(
                cov_type="cluster", cov_kwds={"groups": groups}, use_t=use_t
            )
            close(out.difference[a, b], fit.params[0])
            close(out.se_cluster[a, b], fit.bse[0])
            close(out.se_naive[a, b], sm.OLS(y, design).fit().bse[0])
            close(out.statistic[a, b], fit.tvalues[0])
            close(out.pvalue[a, b], fit.pvalues[0])
            if use_t:
                assert out.dof[a, b] == fit.df_resid_inference
    np.testing.assert_allclose(out.difference, -out.difference.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out.se_cluster, out.se_cluster.T, rtol=1e-12)
    assert (np.diag(out.difference) == 0).all() and np.isnan(np.diag(out.pvalue)).all()


def _cube(x, tasks=("t",)):
    models, templates, samples = x.shape[-3:]
    x = x.reshape(-1, models, templates, samples)
    return rankstats.from_records(
        [
            {
                "model": f"m{m}",
                "task": tasks[t],
                "template": f"p{p}",
                "sample": f"s{s}",
                "score": x[t, m, p, s],
            }
            for t in range(len(tasks))
            for m in range(models)
            for p in range(templates)
            for s in range(samples)
            if not np.isnan(x[t, m, p, s])
        ]
    )


def test_cube_gives_the_numpy_answer_per_task_and_model():
    a, b = _scores(4), _scores(5)
    b[:, :, 25:] = np.nan  # task b has 25 samples (padding in the cube)
    b[:, 4:] = np.nan  # and 4 templates
    b[3] = np.nan  # model 3 never ran task b: NaN, no warning
    cube = _cube(np.stack([a, b]), tasks=("a", "b"))
    data = clustered_se(cube)
    assert set(data.dims) == {"model", "task"}
    for t, x in (("a", a), ("b", b)):
        plain = clustered_se(x)
        close(data.se_cluster.sel(task=t).values[:3], plain.se_cluster[:3])
        close(data.mean_score.sel(task=t).values[:3], plain.mean_score[:3])
    assert np.isnan(data.se_cluster.sel(task="b", model="m3"))
    pairs = clustered_difference(cube)
    assert pairs.difference.dims[-2:] == ("model", "model_b")
    close(pairs.se_cluster.sel(task="a").values, clustered_difference(a).se_cluster)
    assert pairs.attrs["cluster"] == "sample"


def test_naive_understates_when_items_drive_the_scores():
    """Simulation: 2000 benchmarks whose items decide most of each score."""
    rng = np.random.default_rng(11)
    reps, templates, samples = 2000, 8, 30
    item = rng.normal(0, 3.0, (reps, 1, samples))
    p = 1 / (1 + np.exp(-(0.3 - item)))
    x = (rng.random((reps, templates, samples)) < p).astype(float)
    out = clustered_se(x)
    spread = out.mean_score.std(ddof=1)  # the actual sampling variability of the mean
    assert np.sqrt(np.mean(out.se_cluster**2)) == pytest.approx(spread, rel=0.08)
    assert np.sqrt(np.mean(out.se_naive**2)) < 0.5 * spread
    assert np.mean(out.design_effect) > 4


def test_design_effect_is_one_for_independent_templates():
    """Simulation: every cell an independent draw, so items carry no shared signal."""
    rng = np.random.default_rng(12)
    x = (rng.random((3000, 6, 40)) < 0.6).astype(float)
    out = clustered_se(x)
    assert np.mean(out.design_effect) == pytest.approx(1.0, abs=0.02)
    spread = out.mean_score.std(ddof=1)
    assert np.sqrt(np.mean(out.se_cluster**2)) == pytest.approx(spread, rel=0.05)


def test_pairing_helps_and_clustering_still_matters():
    """The item effect both models share cancels in the difference; each one's does not."""
    rng = np.random.default_rng(13)
    shared = rng.normal(0, 1.5, (1500, 1, 1, 40))
    own = rng.normal(0, 1.0, (1500, 2, 1, 40))
    p = 1 / (1 + np.exp(-(shared + own + np.array([0.2, 0.0])[:, None, None])))
    x = (rng.random((1500, 2, 5, 40)) < p).astype(float)
    out = clustered_difference(x)
    difference = out.difference[:, 0, 1]
    assert np.sqrt(np.mean(out.se_cluster[:, 0, 1] ** 2)) == pytest.approx(
        difference.std(ddof=1), rel=0.08
    )
    assert np.mean(out.design_effect[:, 0, 1]) > 1.5


def test_nan_policies():
    x = _scores(6)
    x[0, 1, 2] = np.nan
    propagate = clustered_se(x)
    assert np.isnan(propagate.se_cluster[0]) and np.isnan(propagate.mean_score[0])
    assert np.isfinite(propagate.se_cluster[1:]).all()
    with pytest.raises(MissingValueError, match=r"clustered_se: 1 missing cell\(s\)"):
        clustered_se(x, nan_policy="raise")
    pairs = clustered_difference(x)
    assert np.isnan(pairs.se_cluster[0, 1:]).all() and np.isfinite(pairs.se_cluster[1, 2])
    y = _scores(7)
    y[1, :, 30:] = np.nan  # model 1 lacks ten samples model 0 has: unmatched pair
    assert np.isfinite(clustered_se(y).se_cluster).all()
    assert np.isnan(clustered_difference(y).se_cluster[0, 1])
    with pytest.raises(MissingValueError, match="one model of a pair has and the other lacks"):
        clustered_difference(y, nan_policy="raise")
    assert np.isfinite(clustered_difference(y, nan_policy="omit").se_cluster[0, 1])


def test_degenerate_blocks_warn_and_give_nan():
    with pytest.warns(RankstatsWarning, match="fewer than two samples"):
        out = clustered_se(np.array([[1.0], [0.0], [1.0]]))
    assert np.isnan(out.se_cluster) and np.isfinite(out.se_naive)
    with pytest.warns(RankstatsWarning, match="the scores are constant"):
        out = clustered_se(np.ones((3, 4)))
    assert out.se_cluster == 0 and np.isnan(out.design_effect)
    assert np.isnan(clustered_se(np.full((3, 4), np.nan)).mean_score)  # absent: no warning


def test_errors_name_the_dimension():
    cube = rankstats.datasets.load("mizrahi2024")
    with pytest.raises(DimensionError, match="sample dimension 'sample' is not among"):
        clustered_se(cube)
    with pytest.raises(DimensionError, match="no named dimensions"):
        clustered_se(np.zeros((2, 3)), sample="item")
    with pytest.raises(OptionError, match="nan_policy='skip'"):
        clustered_difference(np.zeros((2, 2, 3)), nan_policy="skip")
