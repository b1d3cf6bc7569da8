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
