"""The tiled scan of the simultaneous family's maxima (rankstats._kernels.ranksets._Tiles).

Oracle: the largest scaled deviation over every counted pair, written as its
definition (the same float products, so equal, not close); and whole rank
sets through the tiles against the dense pair kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats._kernels import ranksets as _krs
from tests.test_ranksets import ragged


def definition(deviation, weight, flip, floor=None):
    """max over counted pairs (j, k) of (d_j - d_k) w_jk (``flip``: (d_k - d_j) w_jk)."""
    mine, theirs = deviation[..., :, None], deviation[..., None, :]
    scaled = (theirs - mine if flip else mine - theirs) * weight[:, None]
    best = np.fmax.reduce(scaled.reshape(*scaled.shape[:2], -1), axis=-1)
    return best if floor is None else np.fmax(best, floor)


@st.composite
def scans(draw):
    """Deviations with ties and repeats, weights with zeros and uncounted (NaN) pairs."""
    rankings, replicates = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    objects = draw(st.integers(2, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    levels = draw(st.sampled_from([3, 50, 0]))  # 0: continuous values
    deviation = rng.normal(size=(rankings, replicates, objects))
    if levels:
        deviation = np.round(deviation * levels) / levels
    weight = rng.gamma(2.0, size=(rankings, objects, objects))
    weight = (weight + np.swapaxes(weight, 1, 2)) / 2
    weight[rng.random(weight.shape) < draw(st.sampled_from([0.0, 0.1]))] = 0.0
    pattern = draw(st.sampled_from(["upper", "band", "random", "none"]))
    position = np.arange(objects)
    counted = position[:, None] < position[None, :]
    if pattern == "band":
        counted &= position[None, :] - position[:, None] <= draw(st.integers(1, 5))
    elif pattern == "random":
        counted = counted & (rng.random(weight.shape) < 0.3)
    elif pattern == "none":
        counted = np.zeros_like(weight, dtype=bool)
    weight = np.where(counted, weight, np.nan)
    floor = None
    if draw(st.booleans()):
        floor = rng.normal(2.0, 2.0, (rankings, replicates))
        floor[rng.random(floor.shape) < 0.2] = -np.inf
    return deviation, weight, floor


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    case=scans(),
    flip=st.booleans(),
    tile=st.sampled_from([1, 3, 8]),
    block=st.sampled_from([1, 64, 2**18]),
)
def test_tiles_give_the_largest_scaled_deviation_exactly(case, flip, tile, block):
    deviation, weight, floor = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_krs, "TILE", tile)
        patch.setattr(_krs, "DENSE_SHARE", np.inf)  # never hand back to the dense scan
        got = _krs._Tiles(deviation, weight).largest(flip, block, floor)
    np.testing.assert_array_equal(got, definition(deviation, weight, flip, floor))


def test_a_leaderboard_sized_scan_rules_out_most_tiles():
    """On replicates like a leaderboard's, the bounds leave few tiles to scale."""
    rng = np.random.default_rng(0)
    m, n = 256, 100
    common = rng.normal(0, 0.5, (1, n, 1))  # what every model shares in a replicate
    deviation = common + rng.normal(0, 1, (1, n, m))
    spread = np.sqrt(1 + rng.random((1, m, m)))
    weight = 1.0 / ((spread + np.swapaxes(spread, 1, 2)) / 2)
    upper = np.arange(m)[:, None] < np.arange(m)[None, :]
    weight = np.where(upper, weight, np.nan)
    scaled = []
    tiles = _krs._Tiles(deviation, weight)
    original = tiles._scaled

    def counting(rankings, ranking, replicate, tile, flip, block, kept=None, floor=None):
        scaled.append(len(tile))
        return original(rankings, ranking, replicate, tile, flip, block, kept, floor=floor)

    tiles._scaled = counting
    got = tiles.largest(False, 2**18)
    assert got is not None  # the tiles paid: no hand-back to the dense scan
    np.testing.assert_array_equal(got, definition(deviation, weight, False))
    counted = (
        upper.reshape(m // _krs.TILE, _krs.TILE, m // _krs.TILE, _krs.TILE).any(axis=(1, 3)).sum()
        * n
    )
    assert sum(scaled) < 0.1 * counted


@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize("with_play", [False, True])
def test_rows_bounded_by_the_floor_give_the_same_maxima(flip, with_play):
    """Scaling only the rows whose bound beats the floor changes no maximum above it."""
    rng = np.random.default_rng(3)
    s, n, m = 2, 30, 37  # a partial last tile
    deviation = np.round(rng.normal(0, 1, (s, n, m)), 1)  # ties within tiles
    weight = rng.uniform(0.2, 3.0, (s, m, m))
    weight[rng.random((s, m, m)) < 0.1] = np.nan  # pairs not counted
    upper = np.arange(m)[:, None] < np.arange(m)[None, :]
    weight = np.where(upper, weight, np.nan)
    tiles = _krs._Tiles(deviation, weight)
    kept = None
    if with_play:
        kept = tiles._tiled(rng.random((s, m, m)) < 0.6, False)
    ranking, replicate, tile = (
        a.ravel()
        for a in np.meshgrid(np.arange(s), np.arange(n), np.arange(tiles.blocks**2), indexing="ij")
    )
    everything = tiles._scaled(np.arange(s), ranking, replicate, tile, flip, 2**10, kept)
    for floor in (
        np.full(len(tile), -np.inf),
        rng.normal(0, 2, len(tile)),
        np.nan_to_num(everything, nan=0.0) - 0.05,
        np.nan_to_num(everything, nan=0.0),
    ):
        pruned = tiles._scaled(np.arange(s), ranking, replicate, tile, flip, 2**10, kept, floor)
        np.testing.assert_array_equal(np.fmax(floor, pruned), np.fmax(floor, everything))
        above = everything > floor
        np.testing.assert_array_equal(pruned[above], everything[above])


@pytest.mark.parametrize("share", [np.inf, 0.0, _krs.DENSE_SHARE])
@pytest.mark.parametrize("stepdown", [True, False])
@pytest.mark.parametrize("gaussian", [False, True])
def test_rank_sets_through_the_tiles_equal_the_dense_kernel(share, stepdown, gaussian, monkeypatch):
    """Tiles of 8 over 41 models (a partial last tile), every step of the stepdown."""
    replicates, estimate = ragged(4, models=41, n=90)
    monkeypatch.setattr(_krs, "TILED_FROM", 2)
    monkeypatch.setattr(_krs, "DENSE_SHARE", share)
    for level, budget in ((0.95, _krs.BUDGET), (0.5, 4096)):
        options = dict(confidence_level=level, gaussian=gaussian, stepdown=stepdown, budget=budget)
        tiled = _krs.rank_sets(replicates, estimate, np.array([9.0, np.nan, 4.0]), **options)
        dense = _krs.rank_sets(
            replicates, estimate, np.array([9.0, np.nan, 4.0]), pair_kernel="dense", **options
        )
        for key in tiled:
            np.testing.assert_array_equal(tiled[key], dense[key], err_msg=key)


def spread_cube(n_models=96, seed=3):
    """Binary scores of models spread from 95% to 30% correct: 3 tasks, 6 templates."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(0.95, 0.3, n_models)[:, None, None, None]
    x = (rng.random((n_models, 3, 6, 100)) < truth).astype(float)
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), x)},
        coords={"model": [f"m{i}" for i in range(n_models)], "task": ["t0", "t1", "t2"]},
        attrs={"higher_is_better": 1, "score_kind": "binary"},
    )


@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_a_leaderboard_above_the_tile_threshold_equals_the_scan_of_every_pair(
    nan_policy, monkeypatch
):
    """Through the public API, 96 models with absent and incomplete ones, 8-model tiles."""
    from rankstats import stability

    cube = spread_cube()
    cube["score"][10, 2, 1, :5] = np.nan  # incomplete on one task
    cube["score"][20:30, 0] = np.nan  # ten models absent from one task
    options = dict(n_resamples=150, over="both", seed=1, nan_policy=nan_policy)
    assert cube.sizes["model"] >= _krs.TILED_FROM
    found = []
    largest = _krs._Tiles.largest

    def spy(self, *args, **kwargs):
        found.append(largest(self, *args, **kwargs))
        return found[-1]

    monkeypatch.setattr(_krs._Tiles, "largest", spy)
    tiled = stability.leaderboard(cube, **options)
    assert any(value is not None for value in found)  # the tiles did the work
    monkeypatch.setattr(_krs, "TILED_FROM", 10**9)
    every_pair = stability.leaderboard(cube, **options)
    assert tiled["rank_low"].notnull().any()
    for name in tiled.data_vars:
        np.testing.assert_array_equal(tiled[name].values, every_pair[name].values, err_msg=name)


# --------------------------------------------------------------------------- float32 bounds


@st.composite
def bound_cases(draw):
    """Tile extremes, weights and floors over many magnitudes, with NaN weights and floors."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = (draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 9)))
    exponent = draw(st.sampled_from([-40, -25, -8, 0, 8, 25]))
    high = rng.normal(0, 1, size) * 10.0 ** (exponent + rng.integers(-3, 4, size))
    low = high - np.abs(rng.normal(0, 1, size)) * 10.0 ** (exponent + rng.integers(-3, 4, size))
    low = np.where(rng.random(size) < 0.3, rng.permutation(low.ravel()).reshape(size), low)
    weight = rng.gamma(1.0, 1.0, (size[0], size[2], size[2])) * 10.0 ** rng.integers(-30, 5)
    weight[rng.random(weight.shape) < 0.2] = np.nan
    weight[rng.random(weight.shape) < 0.1] = 0.0
    exact = np.maximum(high[..., :, None] - low[..., None, :], 0.0) * weight[:, None]
    # floors at, just below and just above bounds, and anywhere
    floor = np.where(
        rng.random(size[:2]) < 0.5,
        np.nan_to_num(exact.reshape(*size[:2], -1)[..., 0], nan=1.0),
        rng.normal(0, 1, size[:2]) * 10.0 ** (exponent + rng.integers(-4, 4, size[:2])),
    )
    floor = floor * draw(st.sampled_from([1.0, 1 - 2.0**-52, 1 + 2.0**-52, 1 - 1e-7, 1 + 1e-7]))
    floor[rng.random(floor.shape) < 0.1] = np.nan
    floor[rng.random(floor.shape) < 0.1] = -np.inf
    return high, low, weight, floor


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(case=bound_cases())
def test_a_float32_bound_keeps_every_tile_the_float64_bound_keeps(case):
    """The narrowed bounds may keep more tiles, never fewer (so the maxima are the same)."""
    high, low, weight, floor = case
    wide = np.maximum(high[..., :, None] - low[..., None, :], 0.0) * weight[:, None]
    kept = wide > np.fmax(floor, -np.inf)[..., None, None]
    h, lo, w, narrow = _krs._bounding(high, low, weight)
    assert narrow == (max(np.abs(high).max(), np.abs(low).max()) < _krs.NARROW_RANGE)
    bound = np.subtract(h[..., :, None], lo[..., None, :])
    np.maximum(bound, 0.0, out=bound)
    bound *= w[:, None]
    with np.errstate(invalid="ignore"):
        found = bound > _krs._lowered(floor, narrow)[..., None, None]
    assert bound.dtype == (np.float32 if narrow else np.float64)
    assert not (kept & ~found).any()
    if not narrow:  # float64 as it is: the same tiles
        np.testing.assert_array_equal(found, kept)


@pytest.mark.parametrize("scale", [1e-20, 1.0, 1e20, 1e31])
@pytest.mark.parametrize("flip", [False, True])
def test_float32_and_float64_bounds_give_the_same_maxima(scale, flip, monkeypatch):
    """Every tiny, ordinary and huge magnitude: the narrowed bounds' maxima are the definition."""
    rng = np.random.default_rng(5)
    s, n, m = 2, 40, 70
    deviation = rng.normal(0, 1, (s, n, m)) * scale
    weight = rng.uniform(0.5, 2.0, (s, m, m)) / scale
    weight = np.where(np.arange(m)[:, None] < np.arange(m)[None, :], weight, np.nan)
    floor = np.where(rng.random((s, n)) < 0.5, -np.inf, rng.normal(3.0, 1.0, (s, n)))
    monkeypatch.setattr(_krs, "DENSE_SHARE", np.inf)
    narrow = _krs._Tiles(deviation, weight).largest(flip, 2**12, floor)
    monkeypatch.setattr(_krs, "NARROW_RANGE", 0.0)  # float64 bounds throughout
    wide = _krs._Tiles(deviation, weight).largest(flip, 2**12, floor)
    np.testing.assert_array_equal(narrow, wide)
    np.testing.assert_array_equal(narrow, definition(deviation, weight, flip, floor))


# --------------------------------------------------------------------------- only the quantile


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    level=st.sampled_from([0.5, 0.9, 0.95, 0.99, 0.999, 0.01]),
    levels=st.sampled_from([0, 3, 20]),
    returned=st.sampled_from(["floor", "lower", "between"]),
)
def test_maxima_kept_above_the_lifted_floor_keep_the_quantile(seed, n, level, levels, returned):
    """Any maxima that the lifted floor's contract allows give the quantile bit for bit."""
    rng = np.random.default_rng(seed)
    true = rng.normal(3.0, 1.0, (2, n))
    if levels:  # ties among the maxima and with their lower bounds
        true = np.round(true * levels) / levels
    lower = np.where(rng.random(true.shape) < 0.3, true, true - rng.exponential(1.0, true.shape))
    floor = _krs._lifted(lower, level)
    assert (floor >= lower).all()
    below = {
        "floor": floor,
        "lower": lower,
        "between": lower + (floor - lower) * rng.random(true.shape),
    }[returned]
    found = np.where(true > floor, true, np.minimum(below, floor))
    np.testing.assert_array_equal(
        np.quantile(found, level, axis=-1), np.quantile(true, level, axis=-1)
    )


@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
def test_the_sorted_kernel_for_a_quantile_gives_the_quantile_of_the_exact_maxima(level):
    """Above the tile threshold: the quantile of every step equals the exact maxima's."""
    rng = np.random.default_rng(11)
    s, m, n = 2, 90, 120
    loading = rng.normal(0, 0.01, (s, m, 3))
    covariance = loading @ np.swapaxes(loading, 1, 2)
    covariance[:, np.arange(m), np.arange(m)] += rng.uniform(4e-4, 16e-4, (s, m))
    estimate = np.linspace(1.0, 0.0, m) * 0.5 + rng.normal(0, 0.02, (s, m))
    deviation = np.linalg.cholesky(covariance) @ rng.standard_normal((m, n))
    present = np.ones((s, m), dtype=bool)
    assert m >= _krs.TILED_FROM
    pairs = _krs._Pairs.normal([covariance.copy()], deviation, estimate, present)
    quick = _krs._Sorted(pairs, estimate, present, _krs.BUDGET)
    exact = _krs._Sorted(pairs, estimate, present, _krs.BUDGET)
    active, index = pairs.pairs.copy(), np.arange(s)
    for _ in range(4):  # steps of the stepdown
        wanted = exact.maxima(index, active, _krs.BUDGET)
        np.testing.assert_array_equal(
            wanted, _krs._Subset(pairs, index).maxima(active, None, _krs.BUDGET)
        )
        found = quick.maxima(index, active, _krs.BUDGET, level=level)
        assert (found <= wanted).any()  # only the quantile is kept: some maxima differ
        np.testing.assert_array_equal(
            np.quantile(found, level, axis=-1), np.quantile(wanted, level, axis=-1)
        )
        c = np.quantile(wanted, level, axis=-1)
        active &= ~(pairs.t > c[:, None, None])
    # asked for the exact maxima afterwards, the kernel scans G again
    np.testing.assert_array_equal(
        quick.maxima(index, active, _krs.BUDGET),
        _krs._Subset(pairs, index).maxima(active, None, _krs.BUDGET),
    )


@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
def test_normal_rank_sets_above_the_tile_threshold_equal_the_dense_kernel(level):
    """100 correlated estimates: tiles, float32 bounds and lifted floors give the dense sets."""
    rng = np.random.default_rng(2)
    m = 100
    loading = rng.normal(0, 0.01, (m, 4))
    covariance = loading @ loading.T + np.diag(rng.uniform(4e-4, 16e-4, m))
    estimate = np.linspace(1.0, 0.0, m) * 0.3 + rng.normal(0, 0.03, m)
    estimate[7] = np.nan  # absent
    options = dict(n_draws=150, seed=4, confidence_level=level)
    tiled = _krs.normal_rank_sets(estimate, covariance, **options)
    dense = _krs.normal_rank_sets(estimate, covariance, pair_kernel="dense", **options)
    for key in tiled:
        np.testing.assert_array_equal(tiled[key], dense[key], err_msg=key)
    assert (tiled["low"] > 1).any() and (tiled["high"] < m - 1).any()  # pairs rejected


@pytest.mark.parametrize("m", [2, 13, 16, 37])
def test_each_objects_heaviest_partner_is_the_first_argmax(m):
    """Read from the tiles: ties take the first, a row with no pair takes 0 (np.argmax)."""
    rng = np.random.default_rng(m)
    weight = rng.integers(0, 4, (3, m, m)).astype(float)  # many ties
    weight[rng.random(weight.shape) < 0.3] = np.nan
    weight[1, 0] = np.nan  # a row with no pair counted
    weight[2] = np.where(rng.random((m, m)) < 0.1, np.inf, 1.0)
    tiles = _krs._Tiles(rng.normal(size=(3, 4, m)), weight)
    np.testing.assert_array_equal(
        tiles.partner, np.argmax(np.where(np.isnan(weight), -np.inf, weight), axis=-1)
    )
