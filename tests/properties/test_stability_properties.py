"""Properties of the bootstrap: draws, replicate statistics, intervals, leaderboards."""

from __future__ import annotations

import numpy as np
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats import stability
from rankstats._kernels import intervals as _ki
from rankstats.testing import strategies as rs

FEW = max(5, settings.default.max_examples // 3)
DIMS = ("task", "model", "template", "sample")


def cubes(binary=True, max_models=5, max_templates=5, max_samples=8):
    """Ragged (task, model, template, sample) scores: padded positions and absent models."""
    return rs.cubes(
        tasks=(1, 3),
        models=(2, max_models),
        templates=(2, max_templates),
        samples=(2, max_samples),
        kind="binary" if binary else "proportion",
        template_attributes=False,
    ).map(lambda cube: cube.score.transpose(*DIMS))


overs = st.sampled_from(["samples", "templates", "both"])
seeds = st.integers(0, 2**32 - 1)


@settings(max_examples=FEW)
@given(cube=cubes(), over=overs, seed=seeds)
def test_the_seed_reproduces_every_replicate(cube, over, seed):
    first = stability.replicates(cube, n_resamples=20, over=over, seed=seed)
    second = stability.replicates(cube, n_resamples=20, over=over, seed=seed)
    xr.testing.assert_identical(first, second)


@given(cube=cubes(), over=overs, seed=seeds)
def test_draws_sum_to_the_real_units_and_miss_padding(cube, over, seed):
    draws = stability.bootstrap_weights(cube, n_resamples=10, over=over, seed=seed)
    for kind, unit in (("sample", "sample"), ("template", "template")):
        if f"{kind}_weight" not in draws:
            continue
        weight = draws[f"{kind}_weight"]
        real = cube.notnull().any([d for d in DIMS if d not in ("task", unit)])
        np.testing.assert_array_equal(
            weight.sum(unit), real.sum(unit).broadcast_like(weight.sum(unit))
        )
        assert not (weight.where(~real, 0) > 0).any()


@settings(max_examples=FEW)
@given(cube=cubes(), over=st.sampled_from(["samples", "both"]), seed=seeds)
def test_percentile_intervals_contain_the_estimate_of_means(cube, over, seed):
    ci = stability.intervals(
        cube, n_resamples=2000, over=over, seed=seed, statistics=["score", "avgp"]
    )
    for name in ("score", "avgp"):
        defined = ci[name].notnull()
        assert (ci[f"{name}_low"].where(defined) <= ci[name] + 1e-6).where(defined, True).all()
        assert (ci[name] <= ci[f"{name}_high"] + 1e-6).where(defined, True).all()


@given(cube=cubes(), over=overs, seed=seeds)
def test_replicate_statistics_keep_their_bounds(cube, over, seed):
    reps = stability.replicates(
        cube,
        n_resamples=25,
        over=over,
        seed=seed,
        statistics=["avgp", "maxp", "saturation", "kendall_w", "rank"],
    )
    w = reps.kendall_w.values
    assert np.all((w[~np.isnan(w)] >= 0) & (w[~np.isnan(w)] <= 1))
    avgp, maxp = reps.avgp, reps.maxp
    assert ((avgp <= maxp + 1e-12) | avgp.isnull()).all()
    assert ((avgp >= 0) & (maxp <= 1) | avgp.isnull()).all()
    assert ((reps.saturation <= 1 + 1e-12) | reps.saturation.isnull()).all()
    # the models' ranks of a replicate are average ranks of the present models
    ranks = reps["rank"]
    n = ranks.notnull().sum("model")
    np.testing.assert_allclose(ranks.sum("model"), n * (n + 1) / 2)


@settings(max_examples=FEW)
@given(cube=cubes(), over=overs, seed=seeds)
def test_tie_groups_are_contiguous_runs_of_the_leaderboard(cube, over, seed):
    board = stability.leaderboard(cube, n_resamples=50, over=over, seed=seed)
    rank = board["rank"].transpose("task", "model").values
    groups = board.tie_group.transpose("task", "model").values
    for r, g in zip(rank, groups, strict=True):  # one leaderboard per task
        present = ~np.isnan(r)
        order = np.argsort(r[present], kind="stable")
        seen = g[present][order]
        assert seen[0] == 1 if seen.size else True
        steps = np.diff(seen)
        assert np.all((steps == 0) | (steps == 1))  # numbered 1, 2, ... without gaps
        assert np.isnan(g[~present]).all()
    arena = board.arena_rank.values
    assert np.all(arena[~np.isnan(arena)] >= 1)


@settings(max_examples=FEW)
@given(cube=cubes(binary=False), over=overs, seed=seeds)
def test_win_tie_and_loss_add_up_to_one(cube, over, seed):
    wins = stability.win_probability(cube, n_resamples=40, over=over, seed=seed)
    win = wins.win.transpose("task", "model", "model_b").values
    tie = wins.tie.transpose("task", "model", "model_b").values
    total = win + np.swapaxes(win, -1, -2) + tie
    defined = ~np.isnan(total)
    np.testing.assert_allclose(total[defined], 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        np.diagonal(tie, axis1=-2, axis2=-1)[~np.isnan(np.diagonal(tie, axis1=-2, axis2=-1))], 1.0
    )
    assert np.all((win[defined] >= 0) & (win[defined] <= 1))


@settings(max_examples=FEW)
@given(cube=cubes(), seed=seeds, perm_seed=seeds)
def test_permuting_models_permutes_the_results(cube, seed, perm_seed):
    perm = np.random.default_rng(perm_seed).permutation(cube.sizes["model"])
    base = stability.replicates(
        cube, n_resamples=15, over="both", seed=seed, statistics=["avgp", "kendall_w", "rank"]
    )
    moved = stability.replicates(
        cube.isel(model=perm),
        n_resamples=15,
        over="both",
        seed=seed,
        statistics=["avgp", "kendall_w", "rank"],
    )
    xr.testing.assert_allclose(moved.avgp, base.avgp.isel(model=perm))
    xr.testing.assert_allclose(moved["rank"], base["rank"].isel(model=perm))
    xr.testing.assert_allclose(moved.kendall_w, base.kendall_w)


@given(
    values=st.lists(st.integers(-5, 5), min_size=2, max_size=40),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]),
)
def test_interval_bounds_are_ordered_and_outward_contains_linear(values, level):
    replicates = np.asarray(values, dtype=float)
    linear = _ki.confidence_interval(replicates, np.median(replicates), confidence_level=level)
    outward = _ki.confidence_interval(
        replicates, np.median(replicates), confidence_level=level, interpolation="outward"
    )
    assert linear["low"] <= linear["high"]
    assert outward["low"] <= linear["low"] and linear["high"] <= outward["high"]
    assert outward["low"] in replicates and outward["high"] in replicates
