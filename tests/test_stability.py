"""Bootstrap resampling, intervals, rank intervals and win probabilities (rankstats.stability).

Three layers, as for every statistic:

* oracles: :func:`scipy.stats.bootstrap` (percentile and BCa) on one-task cubes, where
  rankstats draws exactly scipy's resamples from the same seed; and a per-replicate
  Python loop that materialises every resampled task (np.repeat of the drawn samples
  and templates) and calls the public statistics on it;
* the contract: NumPy == xarray, dask == eager, chunking, dimension order, extra dims,
  attributes, errors, nan_policy;
* coverage by simulation: cubes drawn from a known model, many tasks at once (each task
  one repetition), the share of 95% intervals that cover the truth.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import rankstats
from rankstats import stability
from rankstats._kernels import intervals as _ki
from rankstats._kernels import resample as _kr
from rankstats.errors import (
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
    RankstatsWarning,
)
from rankstats.results import (
    BootstrapWeightsResult,
    IntervalsResult,
    LeaderboardResult,
    ReplicatesResult,
)

LAYOUT = {"t0": (4, 30), "t1": (3, 25), "t2": (5, 20)}  # task: (templates, samples)
N_MODELS = 5
ABSENT = (("t1", 4), ("t2", 2))  # (task, model) never run
METRICS = ("avgp", "maxp", "saturation", "cps")


def ragged_cube(seed=0, binary=True, hole=False):
    """Scores (model, task, template, sample): ragged tasks, padding and absent models.

    ``hole`` removes model 1's scores on template 1 of task t0 (a genuine hole).
    """
    rng = np.random.default_rng(seed)
    n_templates = max(p for p, _ in LAYOUT.values())
    n_samples = max(s for _, s in LAYOUT.values())
    score = np.full((N_MODELS, len(LAYOUT), n_templates, n_samples), np.nan)
    ability = np.linspace(0.35, 0.75, N_MODELS)[:, None, None]
    ids = np.full((len(LAYOUT), n_templates), "", dtype=object)
    for t, (task, (p, s)) in enumerate(LAYOUT.items()):  # building test data
        if binary:
            values = (rng.random((N_MODELS, p, s)) < ability).astype(float)
        else:
            values = rng.integers(0, 9, (N_MODELS, p, s)) / 8.0
        score[:, t, :p, :s] = values
        ids[t, :p] = [f"{task}-p{i}" for i in range(p)]
    tasks = list(LAYOUT)
    for task, model in ABSENT:
        score[model, tasks.index(task)] = np.nan
    if hole:
        score[1, 0, 1] = np.nan
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), score)},
        coords={
            "model": [f"m{i}" for i in range(N_MODELS)],
            "task": tasks,
            "template_id": (("task", "template"), ids),
        },
        attrs={"higher_is_better": 1, "score_kind": "binary" if binary else "proportion"},
    )


# --------------------------------------------------------------------------- draws


def test_weights_sum_to_each_tasks_real_units_and_skip_padding():
    cube = ragged_cube()
    draws = stability.bootstrap_weights(cube, n_resamples=200, over="both", seed=3)
    assert draws.attrs["n_resamples"] == 200 and draws.attrs["over"] == "both"
    for task, (p, s) in LAYOUT.items():
        sw = draws.sample_weight.sel(task=task).values
        tw = draws.template_weight.sel(task=task).values
        np.testing.assert_array_equal(sw.sum(-1), s)
        np.testing.assert_array_equal(tw.sum(-1), p)
        assert not sw[:, s:].any() and not tw[:, p:].any()
        # every real unit is drawn about once per replicate on average
        assert abs(sw[:, :s].mean() - 1) < 0.1 and abs(tw[:, :p].mean() - 1) < 0.15


def test_seed_reproduces_and_generator_is_accepted():
    cube = ragged_cube()
    a = stability.bootstrap_weights(cube, n_resamples=50, over="both", seed=11)
    b = stability.bootstrap_weights(cube, n_resamples=50, over="both", seed=11)
    c = stability.bootstrap_weights(
        cube, n_resamples=50, over="both", seed=np.random.default_rng(11)
    )
    d = stability.bootstrap_weights(cube, n_resamples=50, over="both", seed=12)
    xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())
    xr.testing.assert_equal(a.drop_attrs(), c.drop_attrs())
    assert c.attrs["seed"] == "Generator" and a.attrs["seed"] == 11
    assert not np.array_equal(a.sample_weight, d.sample_weight)


def test_one_task_draws_are_scipys_draws():
    x = xr.DataArray(np.ones((2, 3, 17)), dims=("model", "template", "sample"))
    draws = stability.bootstrap_weights(x, n_resamples=40, over="both", seed=5)
    rng = np.random.default_rng(5)
    samples = rng.integers(0, 17, (40, 17))  # scipy.stats.bootstrap: one data argument after
    templates = rng.integers(0, 3, (40, 3))  # the other, rng.integers(0, n, (B, n)) each
    counts = lambda idx, n: np.stack([np.bincount(row, minlength=n) for row in idx])  # noqa: E731
    np.testing.assert_array_equal(draws.sample_weight.values, counts(samples, 17))
    np.testing.assert_array_equal(draws.template_weight.values, counts(templates, 3))


def test_draw_counts_with_padding_inside_a_task():
    real = np.array([[True, False, True, True, False], [True, True, False, False, False]])
    counts = _kr.draw_counts(np.random.default_rng(0), real, 300)
    assert (counts[:, ~real] == 0).all()
    np.testing.assert_array_equal(counts.sum(-1), np.broadcast_to([3, 2], (300, 2)))


# --------------------------------------------------------------------------- loop oracle


def looped(cube, draws, b, nan_policy="propagate", higher_is_better=True):
    """Statistics of replicate ``b`` from the materialised resampled cube, task by task.

    The drawn samples (templates) are repeated by index, per-template scores are means
    over the drawn samples, and the public statistics see a template drawn twice as
    two columns.
    """
    x = cube.score.transpose("task", "model", "template", "sample").values
    out = {name: [] for name in ("score", *METRICS, "kendall_w", "rank")}
    for t in range(x.shape[0]):  # the oracle loops over tasks on purpose
        block = x[t]
        if "sample_weight" in draws:
            counts = draws.sample_weight.isel(replicate=b).values[t]
            block = block[:, :, np.repeat(np.arange(block.shape[-1]), counts)]
        observed = ~np.isnan(block)
        with np.errstate(invalid="ignore"):
            score = np.where(observed, block, 0).sum(-1) / observed.sum(-1)
        if "template_weight" in draws:
            counts = draws.template_weight.isel(replicate=b).values[t]
        else:
            counts = (~np.isnan(score).all(0)).astype(int)
        drawn = score[:, np.repeat(np.arange(score.shape[1]), counts)]
        metrics = rankstats.prompt_metrics(
            drawn, nan_policy=nan_policy, higher_is_better=higher_is_better
        )
        out["score"].append(score)
        for name in METRICS:
            out[name].append(getattr(metrics, name))
        with warnings.catch_warnings():  # a draw may leave W undefined: NaN is compared
            warnings.simplefilter("ignore", RankstatsWarning)
            w = rankstats.kendall_w(drawn.T, nan_policy=nan_policy).statistic
        out["kendall_w"].append(w)
        # exact rational ties must stay ties whatever the summation order
        out["rank"].append(
            rankstats.rank(np.round(metrics.avgp, 9), higher_is_better=higher_is_better)
        )
    return {name: np.stack(values) for name, values in out.items()}


def ours(reps, b):
    found = {}
    for name in ("score", *METRICS, "kendall_w", "rank"):
        if name in reps:
            order = [d for d in ("task", "model", "template") if d in reps[name].dims]
            found[name] = reps[name].isel(replicate=b).transpose(*order).values
    return found


@pytest.mark.parametrize("over", ["samples", "templates", "both"])
def test_vectorised_equals_per_replicate_loop(over):
    cube = ragged_cube(seed=1)
    draws = stability.bootstrap_weights(cube, n_resamples=8, over=over, seed=2)
    reps = stability.replicates(cube, over=over, weights=draws, dtype=np.float64)
    for b in range(8):
        expected, found = looped(cube, draws, b), ours(reps, b)
        for name, value in found.items():
            np.testing.assert_allclose(
                value, expected[name], rtol=1e-12, atol=1e-14, err_msg=f"{name}, replicate {b}"
            )
    # the comparison can fail: the loop tells replicates apart
    other = looped(cube, draws, 1)
    assert not np.allclose(ours(reps, 0)["avgp"], other["avgp"], equal_nan=True)


def test_continuous_scores_equal_the_loop_in_float64():
    cube = ragged_cube(seed=4, binary=False)
    draws = stability.bootstrap_weights(cube, n_resamples=5, over="both", seed=0)
    reps = stability.replicates(cube, over="both", weights=draws, dtype=np.float64)
    for b in range(5):
        expected, found = looped(cube, draws, b), ours(reps, b)
        for name in ("score", *METRICS, "kendall_w"):
            np.testing.assert_allclose(found[name], expected[name], rtol=1e-12, atol=1e-14)


def test_lower_is_better_equals_the_loop():
    cube = ragged_cube(seed=14)
    cube = cube.assign(score=1 - cube.score).assign_attrs(higher_is_better=0)  # error rates
    draws = stability.bootstrap_weights(cube, n_resamples=6, over="both", seed=5)
    reps = stability.replicates(cube, over="both", weights=draws, dtype=np.float64)
    assert reps.attrs["higher_is_better"] == "False"
    for b in range(6):
        expected = looped(cube, draws, b, higher_is_better=False)
        for name, value in ours(reps, b).items():
            np.testing.assert_allclose(value, expected[name], rtol=1e-12, atol=1e-14, err_msg=name)
    board = stability.leaderboard(reps)
    best = board.score.argmin("model")  # the lowest error rate ranks first
    np.testing.assert_array_equal(board["rank"].isel(model=best), board["rank"].min("model"))
    assert (board["rank"].min("model") <= 1.5).all()
    wins = stability.win_probability(reps)
    low = wins.win.sel(model="m4", model_b="m0", task="t0")  # m4 errs least
    assert float(low) > 0.5


def test_omit_equals_the_loop_with_omit():
    cube = ragged_cube(seed=1, hole=True)
    draws = stability.bootstrap_weights(cube, n_resamples=6, over="both", seed=8)
    reps = stability.replicates(
        cube, over="both", weights=draws, nan_policy="omit", dtype=np.float64
    )
    for b in range(6):
        expected, found = looped(cube, draws, b, nan_policy="omit"), ours(reps, b)
        for name in ("avgp", "maxp", "kendall_w"):
            np.testing.assert_allclose(found[name], expected[name], rtol=1e-12)


def test_propagate_is_nan_at_the_hole_only():
    reps = stability.replicates(ragged_cube(seed=1, hole=True), n_resamples=20, over="both", seed=0)
    avgp = reps.avgp.sel(task="t0")
    assert np.isnan(reps.avgp_estimate.sel(task="t0", model="m1"))
    assert np.isnan(avgp.sel(model="m1")).all() and not np.isnan(avgp.sel(model="m0")).any()
    assert np.isnan(reps.kendall_w.sel(task="t0")).all()
    assert not np.isnan(reps.kendall_w.sel(task="t1")).any()
    with pytest.raises(MissingValueError, match="missing per-template score"):
        stability.replicates(
            ragged_cube(seed=1, hole=True), n_resamples=5, seed=0, nan_policy="raise"
        )


def test_estimates_are_the_public_statistics():
    cube = ragged_cube(seed=2)
    reps = stability.replicates(cube, n_resamples=10, over="both", seed=0, dtype=np.float64)
    metrics = rankstats.prompt_metrics(cube)
    for name in METRICS:
        xr.testing.assert_allclose(reps[f"{name}_estimate"], metrics[name].drop_attrs(), rtol=1e-12)
    w = rankstats.kendall_w(cube).statistic
    xr.testing.assert_allclose(reps.kendall_w_estimate, w.drop_attrs(), rtol=1e-12)
    scores = rankstats.template_scores(cube)
    np.testing.assert_allclose(reps.score_estimate.transpose(*scores.dims), scores, rtol=1e-12)
    ranks = rankstats.rank(metrics.avgp.round(9))
    np.testing.assert_array_equal(reps.rank_estimate.transpose(*ranks.dims), ranks)


# --------------------------------------------------------------------------- scipy oracle


def one_task(seed, shape=(2, 3, 30)):
    rng = np.random.default_rng(seed)
    values = (rng.random(shape) < rng.uniform(0.3, 0.8, shape[:2])[..., None]).astype(float)
    return xr.DataArray(values, dims=("model", "template", "sample"))


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_per_template_score_intervals_match_scipy(method):
    x = one_task(0)
    ci = stability.intervals(
        x,
        n_resamples=999,
        over="samples",
        seed=7,
        method=method.lower(),
        statistics=["score"],
        dtype=np.float64,
    )
    for m in range(2):
        for p in range(3):
            values = x.values[m, p]
            res = stats.bootstrap(
                (np.arange(values.size),),
                lambda i, axis=-1, v=values: v[i].mean(axis=axis),
                n_resamples=999,
                method=method,
                rng=np.random.default_rng(7),
            )
            found = ci.isel(model=m, template=p)
            np.testing.assert_allclose(
                [found.score_low, found.score_high, found.score_se],
                [res.confidence_interval.low, res.confidence_interval.high, res.standard_error],
                rtol=1e-10,
                atol=1e-12,
            )


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_two_way_avgp_intervals_match_scipy_two_samples(method):
    # scipy resamples its two data arguments independently: the sample and template
    # indices, exactly the two-way bootstrap; BCa combines both jackknifes as rankstats does
    x = one_task(1, (2, 6, 25))
    ci = stability.intervals(
        x, n_resamples=999, over="both", seed=3, method=method.lower(), statistics=["avgp"]
    )
    for m in range(2):
        values = x.values[m]

        def avgp(samples, templates, axis=-1, v=values):
            picked = v[templates[..., :, None], samples[..., None, :]]
            return picked.sum(axis=(-2, -1)) / (samples.shape[-1] * templates.shape[-1])

        res = stats.bootstrap(
            (np.arange(25), np.arange(6)),
            avgp,
            n_resamples=999,
            method=method,
            rng=np.random.default_rng(3),
        )
        found = ci.isel(model=m)
        np.testing.assert_allclose(
            [found.avgp_low, found.avgp_high],
            [res.confidence_interval.low, res.confidence_interval.high],
            rtol=1e-10,
        )


def kendall_w_reference(scores):
    """W of (models, judges) scores, with scipy's ranks; judges may repeat."""
    ranks = stats.rankdata(-scores, axis=0)
    m, n = scores.shape[1], scores.shape[0]
    ties = sum(
        float((c**3 - c).sum())
        for c in (np.unique(column, return_counts=True)[1] for column in scores.T)
    )
    spread = ((ranks.sum(1) - ranks.sum(1).mean()) ** 2).sum()
    return 12.0 * spread / (m**2 * (n**3 - n) - m * ties)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_w_over_templates_matches_scipy(method):
    rng = np.random.default_rng(4)
    scores = np.round(rng.uniform(0, 1, (6, 14)) + np.linspace(0, 0.6, 6)[:, None], 1) / 2
    x = xr.DataArray(scores, dims=("model", "template"))
    ci = stability.intervals(
        x,
        n_resamples=499,
        over="templates",
        seed=9,
        method=method.lower(),
        statistics=["kendall_w"],
    )
    res = stats.bootstrap(
        (np.arange(14),),
        lambda i: kendall_w_reference(scores[:, i]),
        vectorized=False,
        n_resamples=499,
        method=method,
        rng=np.random.default_rng(9),
    )
    np.testing.assert_allclose(
        [ci.kendall_w_low, ci.kendall_w_high],
        [res.confidence_interval.low, res.confidence_interval.high],
        rtol=1e-10,
    )
    assert ci.kendall_w == pytest.approx(kendall_w_reference(scores), rel=1e-12)


def test_confidence_interval_of_given_replicates_matches_scipy():
    rng = np.random.default_rng(2)
    data = rng.gamma(2.0, size=40)
    res = stats.bootstrap(
        (data,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(1)
    )
    jack = np.array([np.delete(data, i).mean() for i in range(data.size)])
    a = _kr.acceleration(jack, np.ones(data.size, bool), np.zeros(data.size, np.int8))
    ci = stability.confidence_interval(res.bootstrap_distribution, data.mean(), a, method="bca")
    np.testing.assert_allclose([ci.low, ci.high], res.confidence_interval, rtol=1e-12)
    labelled = stability.confidence_interval(
        xr.DataArray(res.bootstrap_distribution, dims="replicate"), data.mean(), a, method="bca"
    )
    assert float(labelled.low) == pytest.approx(float(ci.low), rel=1e-14)
    assert labelled.attrs["method"] == "bca" and labelled.attrs["n_resamples"] == 2000


def test_rank_intervals_are_outward_order_statistics():
    reps = stability.replicates(ragged_cube(seed=3), n_resamples=101, seed=1, statistics=["rank"])
    ci = stability.intervals(reps)
    ranks = reps["rank"].transpose("replicate", "model", "task").values
    np.testing.assert_array_equal(
        ci.rank_low.transpose("model", "task"), np.quantile(ranks, 0.025, axis=0, method="lower")
    )
    np.testing.assert_array_equal(
        ci.rank_high.transpose("model", "task"), np.quantile(ranks, 0.975, axis=0, method="higher")
    )


# --------------------------------------------------------------------------- contract


def test_numpy_input_equals_xarray_input():
    cube = ragged_cube(seed=5)
    labelled = stability.replicates(cube, n_resamples=30, over="both", seed=4)
    array = cube.score.transpose("task", "model", "template", "sample").values
    plain = stability.replicates(array, n_resamples=30, over="both", seed=4)
    np.testing.assert_array_equal(plain.avgp, labelled.avgp.transpose("task", "model", "replicate"))
    np.testing.assert_array_equal(
        plain.score, labelled.score.transpose("task", "model", "template", "replicate")
    )
    board = stability.leaderboard(array, n_resamples=30, over="both", seed=4)
    assert isinstance(board, LeaderboardResult) and board.rank.shape == (3, N_MODELS)
    np.testing.assert_array_equal(
        board.rank,
        stability.leaderboard(cube, n_resamples=30, over="both", seed=4)["rank"].transpose(
            "task", "model"
        ),
    )
    result = stability.bootstrap(array, n_resamples=4, seed=0)
    assert result.score.shape == (3, N_MODELS, 5, 4) and result.template_weight.shape == (3, 4, 5)


def test_dask_equals_eager():
    pytest.importorskip("dask")
    cube = ragged_cube(seed=6)
    eager = stability.replicates(cube, n_resamples=20, over="both", seed=1)
    lazy = stability.replicates(cube.chunk({"task": 1}), n_resamples=20, over="both", seed=1)
    xr.testing.assert_allclose(lazy.compute(), eager)


@pytest.mark.parametrize("over", ["samples", "both"])
@pytest.mark.parametrize("kind", ["binary", "proportion"])
def test_chunked_cube_is_bootstrapped_from_sums_as_eager(over, kind):
    # chunked cubes take the two-pass path (per-template sums over samples, then the
    # statistics); padding, an absent model and a hole must come out as in memory
    pytest.importorskip("dask")
    rng = np.random.default_rng(3)
    x = rng.random((4, 3, 6, 50))
    x = (x < 0.6).astype(float) if kind == "binary" else x.round(2)
    x[:, 1, 5, :] = np.nan  # a padding template
    x[:, 2, :, 40:] = np.nan  # padding samples
    x[3, 0] = np.nan  # a model absent from a task
    x[0, 2, 1, 7] = np.nan  # a hole
    cube = xr.Dataset(
        {"score": (("model", "task", "template", "sample"), x)},
        coords={"model": list("abcd"), "task": ["t0", "t1", "t2"]},
        attrs={"score_kind": kind},
    )
    eager = stability.replicates(cube, n_resamples=40, over=over, seed=1, nan_policy="omit")
    lazy = stability.replicates(
        cube.chunk({"model": 1, "task": 1}), n_resamples=40, over=over, seed=1, nan_policy="omit"
    )
    assert lazy.avgp.chunks is not None
    xr.testing.assert_allclose(lazy.compute().transpose(*eager.dims), eager, rtol=1e-6)


def test_dimension_order_and_extra_dims():
    cube = ragged_cube(seed=7)
    base = stability.replicates(cube, n_resamples=15, over="both", seed=2)
    moved = stability.replicates(
        cube.transpose("sample", "template", "task", "model"), n_resamples=15, over="both", seed=2
    )
    xr.testing.assert_allclose(moved.transpose(*base.avgp.dims, ...).avgp, base.avgp)
    other = ragged_cube(seed=8)
    stacked = xr.concat([cube, other], dim="shot")
    both = stability.replicates(stacked, n_resamples=15, over="both", seed=2)
    alone = stability.replicates(
        other,
        over="both",
        weights=stability.bootstrap_weights(cube, n_resamples=15, over="both", seed=2),
    )
    xr.testing.assert_allclose(both.avgp.isel(shot=0), base.avgp)
    xr.testing.assert_allclose(both.avgp.isel(shot=1), alone.avgp)


def test_chunking_does_not_change_results():
    cube = ragged_cube(seed=9)
    x = cube.score.transpose("task", "model", "template", "sample").values
    draws = stability.bootstrap_weights(cube, n_resamples=12, over="both", seed=0)
    tw = draws.template_weight.transpose("task", "replicate", "template").values
    sw = draws.sample_weight.transpose("task", "replicate", "sample").values
    whole = _kr.replicate_statistics(x, tw, sw, jackknife=True)
    pieces = _kr.replicate_statistics(x, tw, sw, jackknife=True, budget=1)
    for key, value in whole.items():
        np.testing.assert_allclose(pieces[key], value, rtol=1e-13, equal_nan=True, err_msg=key)


def test_attrs_record_the_resampling():
    cube = ragged_cube()
    ci = stability.intervals(
        cube,
        n_resamples=40,
        over="templates",
        seed=5,
        method="bca",
        confidence_level=0.9,
        statistics=["avgp", "kendall_w"],
    )
    assert ci.attrs["n_resamples"] == 40 and ci.attrs["seed"] == 5
    assert ci.attrs["over"] == "templates" and ci.attrs["method"] == "bca"
    assert ci.attrs["confidence_level"] == 0.9
    board = stability.leaderboard(cube, n_resamples=40, seed=5)
    assert board.attrs["over"] == "samples" and board.attrs["score"] == "avgp"
    assert set(board.dims) == {"model", "task"}
    reps = stability.replicates(cube, n_resamples=40, seed=5)
    assert reps.score.dims == ("replicate", "model", "task", "template")
    assert reps.score.dtype == np.float32
    assert reps.attrs["statistics"].split() == list(_kr.STATISTICS)


def test_intervals_of_given_replicates_equal_those_of_the_cube():
    cube = ragged_cube(seed=10)
    reps = stability.replicates(cube, n_resamples=60, over="both", seed=3, jackknife=True)
    for method in ("percentile", "bca"):
        direct = stability.intervals(cube, n_resamples=60, over="both", seed=3, method=method)
        xr.testing.assert_allclose(stability.intervals(reps, method=method), direct)


def test_bootstrap_returns_scores_and_template_weights():
    cube = ragged_cube(seed=11)
    boot = stability.bootstrap(cube, n_resamples=7, over="both", seed=4)
    reps = stability.replicates(cube, n_resamples=7, over="both", seed=4, statistics=["score"])
    xr.testing.assert_equal(boot.drop_vars("template_weight").drop_attrs(), reps.score.drop_attrs())
    assert boot.template_weight.dims == ("replicate", "task", "template")
    fixed = stability.bootstrap(cube, n_resamples=7, over="templates", seed=4)
    scores = rankstats.template_scores(cube)
    np.testing.assert_allclose(fixed.isel(replicate=3).transpose(*scores.dims), scores, rtol=1e-6)
    assert not (
        fixed.template_weight.isel(replicate=0) == fixed.template_weight.isel(replicate=1)
    ).all()
    samples = stability.bootstrap(cube, n_resamples=7, seed=4)
    np.testing.assert_array_equal(
        samples.template_weight.sel(task="t1").isel(replicate=0), [1, 1, 1, 0, 0]
    )


@pytest.mark.parametrize("over", ["templates", "both"])
def test_drawn_templates_feed_the_public_statistics(over):
    # the weights route (replicates) and the copy route (drawn_templates + the public
    # statistics over a replicate dim, no loop) agree
    cube = ragged_cube(seed=15)
    boot = stability.bootstrap(cube, n_resamples=9, over=over, seed=6, dtype=np.float64)
    drawn = stability.drawn_templates(boot)
    reps = stability.replicates(cube, n_resamples=9, over=over, seed=6)
    metrics = rankstats.prompt_metrics(drawn)
    for name in METRICS:
        xr.testing.assert_allclose(
            metrics[name].drop_attrs().transpose(*reps[name].dims), reps[name], rtol=1e-12
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)  # a draw may leave W undefined
        w = rankstats.kendall_w(drawn).statistic
    xr.testing.assert_allclose(
        w.drop_attrs().transpose(*reps.kendall_w.dims), reps.kendall_w, rtol=1e-12
    )
    counts = boot.template_weight.sum("template")
    np.testing.assert_array_equal((drawn.drawn_template >= 0).sum("template"), counts)


def test_drawn_positions_repeat_each_template_by_its_count():
    counts = np.array([[0, 2, 1, 0], [1, 1, 1, 1], [3, 0, 0, 0]])
    np.testing.assert_array_equal(
        _kr.drawn_positions(counts), [[1, 1, 2, -1], [0, 1, 2, 3], [0, 0, 0, -1]]
    )


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda c: stability.replicates(c, n_resamples=10, over="items"),
            OptionError,
            "replicates: over='items' is not allowed; over must be one of 'samples'",
        ),
        (
            lambda c: stability.replicates(rankstats.template_scores(c), n_resamples=10),
            DimensionError,
            "resamples the 'sample' dimension",
        ),
        (
            lambda c: stability.replicates(c, n_resamples=1),
            OptionError,
            "n_resamples=1 is not allowed; n_resamples must be an integer of at least 2",
        ),
        (
            lambda c: stability.replicates(c, n_resamples=10, seed="x"),
            OptionError,
            "seed='x' is not allowed",
        ),
        (lambda c: stability.replicates(c, n_resamples=10, seed=-1), OptionError, "seed=-1"),
        (
            lambda c: stability.replicates(c, n_resamples=10, statistics=["tau"]),
            OptionError,
            "statistics=\\['tau'\\] is not allowed",
        ),
        (
            lambda c: stability.replicates(
                c, n_resamples=10, over="templates", statistics=["score"]
            ),
            OptionError,
            "do not vary",
        ),
        (lambda c: stability.replicates(c, n_resamples=10, dtype=np.int32), OptionError, "dtype="),
        (
            lambda c: stability.replicates(c, n_resamples=10, jackknife="yes"),
            OptionError,
            "jackknife='yes'",
        ),
        (
            lambda c: stability.replicates(c, n_resamples=10, weights={"sample_weight": 1}),
            OptionError,
            "weights is not allowed",
        ),
        (
            lambda c: stability.replicates(c, n_resamples=10, B=10),
            InputTypeError,
            "replicates: got an unexpected keyword argument 'B'",
        ),
        (lambda c: stability.intervals(c, n_resamples=10, method="bc"), OptionError, "method='bc'"),
        (
            lambda c: stability.intervals(c, n_resamples=10, confidence_level=95),
            OptionError,
            "confidence_level=95 is not allowed; confidence_level must be a number "
            "strictly between",
        ),
        (
            lambda c: stability.intervals(stability.replicates(c, n_resamples=10), method="bca"),
            OptionError,
            "jackknife=True",
        ),
        (
            lambda c: stability.leaderboard(
                stability.replicates(c, n_resamples=10, statistics=["avgp"])
            ),
            OptionError,
            "lack statistic",
        ),
        (
            lambda c: stability.leaderboard(stability.replicates(c, n_resamples=10), by="maxp"),
            OptionError,
            "rank the models by 'avgp'",
        ),
        (
            lambda c: stability.replicates(
                c, weights=stability.bootstrap_weights(c, n_resamples=5), over="both"
            ),
            OptionError,
            "over='both'",
        ),
        (lambda c: stability.replicates(c, n_resamples=10, by="w"), OptionError, "by='w'"),
        (
            lambda c: stability.leaderboard(c, n_resamples=10, model=0),
            OptionError,
            "model=0 is not allowed; model must be a dimension name",
        ),
        (
            lambda c: stability.replicates(c.score.rename(sample="item"), n_resamples=10),
            DimensionError,
            "'sample'",
        ),
        (
            lambda c: stability.leaderboard(np.ones((2, 3)), n_resamples=10),
            DimensionError,
            "leaderboard: NumPy input must be",
        ),
        (
            lambda c: stability.leaderboard([["a", "b"]], n_resamples=10, over="templates"),
            InputTypeError,
            "leaderboard: give a score cube",
        ),
        (lambda c: stability.drawn_templates(c.score), InputTypeError, "template_weight"),
        (
            lambda c: stability.confidence_interval(np.ones(1), 1.0),
            DimensionError,
            "at least two replicates",
        ),
        (lambda c: stability.confidence_interval(np.ones(5), 1.0, dim=1.5), OptionError, "dim=1.5"),
    ],
)
def test_errors_name_the_value_at_fault(call, error, match):
    with pytest.raises(error, match=match):
        call(ragged_cube())


def _no_compute(*args, **kwargs):
    raise AssertionError("a dask graph was computed before the options were checked")


_EVERY = [
    stability.leaderboard,
    stability.intervals,
    stability.replicates,
    stability.win_probability,
    stability.bootstrap,
    stability.bootstrap_weights,
]


@pytest.mark.parametrize(
    ("functions", "option", "match"),
    [
        (
            [stability.leaderboard, stability.intervals],
            {"confidence_level": 1.5},
            "confidence_level=1.5",
        ),
        (_EVERY, {"over": "bogus"}, "over='bogus'"),
        (_EVERY, {"n_resamples": 0}, "n_resamples=0"),
        (_EVERY, {"seed": 1.5}, "seed=1.5"),
        (_EVERY[:4], {"nan_policy": "drop"}, "nan_policy='drop'"),
        (_EVERY[:4], {"higher_is_better": "yes"}, "higher_is_better='yes'"),
    ],
)
def test_options_are_checked_before_any_work(functions, option, match, monkeypatch):
    dask = pytest.importorskip("dask")
    drawn = []
    monkeypatch.setattr(_kr, "draw_counts", lambda *args, **kwargs: drawn.append(args))
    lazy = ragged_cube().chunk({"task": 1})
    with dask.config.set(scheduler=_no_compute):
        for function in functions:
            with pytest.raises(OptionError, match=f"{function.__name__}: {match}"):
                function(lazy, **option)
    assert not drawn, "a bootstrap was drawn before the options were checked"


def test_numpy_results_are_frozen_result_objects():
    cube = ragged_cube(seed=2)
    array = cube.score.transpose("task", "model", "template", "sample").values
    reps = stability.replicates(array, n_resamples=8, seed=0, statistics=["avgp", "rank"])
    ci = stability.intervals(array, n_resamples=8, seed=0, statistics="avgp")
    draws = stability.bootstrap_weights(array, n_resamples=8, seed=0)
    assert isinstance(reps, ReplicatesResult) and isinstance(ci, IntervalsResult)
    assert isinstance(draws, BootstrapWeightsResult) and draws.template_weight is None
    assert draws.sample_weight.shape == (3, 8, 30)
    assert reps.avgp.shape == (3, N_MODELS, 8) and reps.maxp is None
    assert ci.avgp_low.shape == (3, N_MODELS) and ci.rank_low is None
    assert "maxp" not in repr(reps) and "avgp=<array shape=(3, 5, 8)>" in repr(reps)
    for result in (reps, ci, draws):
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.avgp = None


def test_bca_undefined_warns_and_gives_nan():
    replicates = np.concatenate([np.full(50, 2.0), np.full(50, 3.0)])
    with pytest.warns(RankstatsWarning, match="one side of the estimate"):
        ci = stability.confidence_interval(replicates, 1.0, method="bca")
    assert np.isnan(ci.low) and np.isnan(ci.high)
    with pytest.warns(RankstatsWarning, match="replicates are undefined"):
        ci = stability.confidence_interval(np.r_[replicates, np.nan], 2.5)
    assert np.isnan(ci.low)


def test_structure_alone_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stability.intervals(ragged_cube(), n_resamples=30, over="both", seed=0, method="bca")
        stability.leaderboard(ragged_cube(), n_resamples=30, seed=0)
        stability.win_probability(ragged_cube(), n_resamples=30, seed=0)


# --------------------------------------------------------------------------- leaderboards


def test_tie_groups_are_components_of_overlapping_rank_intervals():
    rank = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    low = np.array([1.0, 1.0, 3.0, 3.0, 5.0, 6.0])
    high = np.array([2.0, 2.0, 4.0, 5.0, 5.0, 6.0])
    np.testing.assert_array_equal(_ki.tie_groups(rank, low, high), [1, 1, 2, 2, 2, 3])
    # a late, wide interval links back to the first model; an interval not containing
    # its own rank is widened to contain it
    low2, high2 = np.array([1.0, 2.0, 3.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(_ki.tie_groups(np.arange(1.0, 5), low2, high2), [1] * 4)
    np.testing.assert_array_equal(
        _ki.tie_groups([1.0, 2.0, 3.0], [1.0, 3.0, 3.0], [1.0, 3.0, 3.0]), [1, 2, 2]
    )
    groups = _ki.tie_groups([2.0, np.nan, 1.0], [1.0, np.nan, 1.0], [2.0, np.nan, 1.0])
    np.testing.assert_array_equal(groups, [1, np.nan, 1])


def test_arena_rank_counts_models_whose_interval_lies_strictly_above():
    low = np.array([0.80, 0.70, 0.55, 0.40])
    high = np.array([0.90, 0.82, 0.70, 0.56])
    np.testing.assert_array_equal(_ki.arena_ranks(low, high), [1, 1, 2, 3])
    np.testing.assert_array_equal(
        _ki.arena_ranks(-high, -low, higher_is_better=False), [1, 1, 2, 3]
    )


def test_leaderboard_on_a_cube_with_absent_models():
    board = stability.leaderboard(ragged_cube(seed=12), n_resamples=200, seed=0)
    t1 = board.sel(task="t1")
    assert np.isnan(t1.sel(model="m4").to_array()).all()
    present = t1.drop_sel(model="m4")
    rank = present["rank"]  # Dataset.rank is a method: the variable is read by key
    assert set(rank.values) == {1.0, 2.0, 3.0, 4.0}
    assert (present.rank_low <= rank).all() and (rank <= present.rank_high).all()
    assert (present.score_low <= present.score).all()
    assert (present.arena_rank <= rank).all()


def test_win_probability_equals_counting_replicates():
    cube = ragged_cube(seed=13)
    reps = stability.replicates(cube, n_resamples=50, over="both", seed=1, statistics=["avgp"])
    wins = stability.win_probability(reps)
    values = reps.avgp.transpose("task", "model", "replicate").values
    for t in range(3):  # the oracle counts pair by pair
        for i in range(N_MODELS):
            for j in range(N_MODELS):
                a, b = values[t, i], values[t, j]
                expected = np.nan if np.isnan(a).all() or np.isnan(b).all() else (a > b).mean()
                found = wins.win.isel(task=t, model=i, model_b=j)
                np.testing.assert_allclose(found, expected)
    total = wins.win + wins.win.rename(model="model_b", model_b="model") + wins.tie
    np.testing.assert_allclose(total.where(total.notnull(), 1.0), 1.0)
    assert wins.win.dims == ("model", "model_b", "task")
    assert list(wins.model_b.values) == list(wins.model.values)


# --------------------------------------------------------------------------- coverage


def cube_of(values):
    """Repetitions as tasks: (repetition, model, template[, sample])."""
    return xr.DataArray(values, dims=("task", "model", "template", "sample")[: values.ndim])


def items_from(rng, truth, n_samples, shared=0.5):
    """Binary scores with P(correct) = truth exactly, correlated through shared items.

    A score is ``latent < truth`` with a uniform latent that is, with probability
    ``shared``, the item's own (the same for every model and template), else private.
    """
    shape = (*truth.shape, n_samples)
    own = rng.random((truth.shape[0], *(1,) * (truth.ndim - 1), n_samples))
    latent = np.where(rng.random(shape) < shared, own, rng.random(shape))
    return (latent < truth[..., None]).astype(float)


def covered(low, high, truth):
    return float(((low <= truth) & (truth <= high)).mean())


def simulate_samples(repetitions, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.3, 0.8, (4, 5))  # (model, template), fixed templates
    x = items_from(rng, np.broadcast_to(truth, (repetitions, 4, 5)), 150)
    ci = stability.intervals(
        cube_of(x), n_resamples=500, over="samples", seed=1, statistics=["score", "avgp"]
    )
    return (
        covered(ci.score_low, ci.score_high, truth),
        covered(ci.avgp_low, ci.avgp_high, truth.mean(1)),
    )


def simulate_templates(repetitions, seed=0, method="percentile"):
    rng = np.random.default_rng(seed)
    mean = np.array([0.5, 0.6, 0.7, 0.8])  # the mean over the population of templates
    spread = np.array([1.0, 0.5, 1.5, 1.0])[:, None]
    x = mean[:, None] + rng.uniform(-0.2, 0.2, (repetitions, 1, 40)) * spread
    ci = stability.intervals(
        cube_of(x), n_resamples=500, over="templates", seed=1, method=method, statistics=["avgp"]
    )
    return covered(ci.avgp_low, ci.avgp_high, mean)


def simulate_both(repetitions, seed=0):
    rng = np.random.default_rng(seed)
    mean = np.array([0.5, 0.6, 0.7, 0.8])
    truth = mean[:, None] + rng.uniform(-0.15, 0.15, (repetitions, 1, 20))
    x = items_from(rng, truth, 80)
    found = {}
    for over in ("both", "samples", "templates"):
        ci = stability.intervals(
            cube_of(x), n_resamples=500, over=over, seed=1, statistics=["avgp"]
        )
        found[over] = covered(ci.avgp_low, ci.avgp_high, mean)
    return found


def simulate_ranks(repetitions, truth, n_templates, n_samples, shared, seed=0):
    rng = np.random.default_rng(seed)
    probability = np.broadcast_to(truth[:, None], (repetitions, truth.size, n_templates))
    x = items_from(rng, probability, n_samples, shared)
    board = stability.leaderboard(
        cube_of(x), n_resamples=500, over="samples", seed=2, rank_sets="bootstrap"
    )
    true_rank = stats.rankdata(-truth)
    hit = (board.rank_low <= true_rank) & (true_rank <= board.rank_high)
    return float(hit.mean()), float(hit.mean("task").min()), float(hit.all("model").mean())


def test_coverage_over_samples_of_per_template_scores_and_avgp():
    score, avgp = simulate_samples(120)
    assert 0.93 <= score <= 0.97, score
    assert 0.93 <= avgp <= 0.97, avgp


def test_coverage_over_templates_of_avgp():
    assert 0.93 <= simulate_templates(200) <= 0.97
    assert 0.93 <= simulate_templates(200, method="bca") <= 0.97


def test_coverage_over_both_is_conservative_and_one_way_under_covers():
    found = simulate_both(120)
    assert 0.93 <= found["both"] <= 0.99, found
    # ignoring either source of variation under-covers the population mean
    assert found["samples"] < 0.93 and found["templates"] < 0.93, found


def test_rank_intervals_cover_separated_models():
    mean, worst, _ = simulate_ranks(150, np.array([0.8, 0.72, 0.64, 0.56, 0.48]), 5, 100, 0.5)
    assert mean >= 0.95 and worst >= 0.93, (mean, worst)


def test_rank_intervals_under_cover_near_ties_as_documented():
    # sixteen models 0.003 apart: the best and worst models' bootstrap intervals, centred
    # on their observed ranks, miss their true ranks far more often than 5% (the
    # simultaneous rank sets that leaderboard gives by default do not: test_ranksets.py)
    truth = 0.6 + 0.003 * np.arange(16)[::-1]
    mean, worst, jointly = simulate_ranks(100, truth, 5, 50, 0.3)
    assert mean < 0.93 and worst < 0.8 and jointly < 0.5, (mean, worst, jointly)


@pytest.mark.slow
def test_coverage_large_simulation():
    score, avgp = simulate_samples(600, seed=1)
    assert 0.935 <= score <= 0.965 and 0.935 <= avgp <= 0.965, (score, avgp)
    assert 0.93 <= simulate_templates(1000, seed=1) <= 0.965
    both = simulate_both(500, seed=1)["both"]
    assert 0.94 <= both <= 0.985, both
    mean, worst, _ = simulate_ranks(
        500, np.array([0.8, 0.72, 0.64, 0.56, 0.48]), 5, 100, 0.5, seed=1
    )
    assert mean >= 0.95 and worst >= 0.94


@pytest.mark.parametrize("holes", [False, True])
def test_sample_sums_equal_the_weighted_sums(holes):
    # complete cells take a shortcut for the counts; cells with holes a matrix product
    rng = np.random.default_rng(5)
    x = (rng.random((2, 3, 4, 30)) < 0.6).astype(float)
    x[..., 25:] = np.nan  # padding samples
    x[1, 2] = np.nan  # an absent model
    if holes:
        x[0, 1, 2, 3] = np.nan
    real = ~np.isnan(x).all(axis=(1, 2))
    rows = np.swapaxes(_kr.draw_counts(rng, real, 7), 0, 1)  # (slice, B, sample)
    total, count = _kr.sample_sums(x, rows, np.float32)
    observed = ~np.isnan(x)
    filled = np.where(observed, x, 0.0)
    np.testing.assert_array_equal(total[..., 0], filled.sum(-1))
    np.testing.assert_array_equal(count[..., 0], observed.sum(-1))
    np.testing.assert_array_equal(total[..., 1:], np.einsum("tmps,tbs->tmpb", filled, rows))
    np.testing.assert_array_equal(
        count[..., 1:], np.einsum("tmps,tbs->tmpb", observed.astype(float), rows)
    )
