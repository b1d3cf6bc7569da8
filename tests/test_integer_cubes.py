"""Binary cubes held as int8 or bool: resampled without a float copy, to the same results.

A binary cube read from netCDF holds int8 scores; the bootstrap converts them
to floats one block at a time (``_kernels.resample.weighted_sums``), so every
replicate must equal the float64 cube's, whatever the block and the chunk of
slices. The peaks themselves are measured in ``benchmarks/bench_scaling.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from rankstats import stability
from rankstats._kernels import resample as _kr


def binary_cube(models=6, tasks=3, templates=7, samples=40, seed=0):
    rng = np.random.default_rng(seed)
    skill = np.linspace(-1, 1, models)[:, None, None, None]
    template = rng.normal(0, 0.5, (1, tasks, templates, 1))
    p = 1 / (1 + np.exp(-(skill + template)))
    score = (rng.random((models, tasks, templates, samples)) < p).astype(float)
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), score)},
        coords={"model": [f"m{i}" for i in range(models)], "task": [f"t{i}" for i in range(tasks)]},
        attrs={"score_kind": "binary", "higher_is_better": 1, "metric": "accuracy"},
    )


def _equal(a, b):
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=name)


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.uint8])
@pytest.mark.parametrize("convert_block", [1, 300, 2**22])
@pytest.mark.parametrize("budget", [1, 2**26])
def test_replicates_of_an_integer_cube_equal_the_float_cube(
    dtype, convert_block, budget, monkeypatch
):
    # convert_block 1: a model at a time; 300: several models of one slice; 2**22: slices
    monkeypatch.setattr(_kr, "_CONVERT_BLOCK", convert_block)
    monkeypatch.setattr(_kr, "BUDGET", budget)
    cube = binary_cube()
    held = cube.assign(score=cube["score"].astype(dtype))
    for over in ("samples", "both"):
        kwargs = {"n_resamples": 30, "over": over, "seed": 1}
        _equal(stability.replicates(held, **kwargs), stability.replicates(cube, **kwargs))


def test_leaderboard_of_an_int8_cube_equals_the_float_cube():
    cube = binary_cube(models=9, samples=60)
    held = cube.assign(score=cube["score"].astype(np.int8))
    _equal(
        stability.leaderboard(held, n_resamples=50, seed=0),
        stability.leaderboard(cube, n_resamples=50, seed=0),
    )


def test_a_chunked_int8_cube_equals_the_eager_float_cube():
    pytest.importorskip("dask")
    cube = binary_cube()
    held = cube.assign(score=cube["score"].astype(np.int8)).chunk({"model": 2})
    _equal(
        stability.replicates(held, n_resamples=20, seed=3).compute(),
        stability.replicates(cube, n_resamples=20, seed=3),
    )


def test_an_int8_cube_draws_the_float_cubes_weights():
    cube = binary_cube()
    held = cube.assign(score=cube["score"].astype(np.int8))
    for over in ("samples", "templates", "both"):
        xr.testing.assert_identical(
            stability.bootstrap_weights(held, 25, over, seed=4),
            stability.bootstrap_weights(cube, 25, over, seed=4),
        )


@pytest.mark.parametrize("block", [1, 7, 2**19])
def test_draws_do_not_depend_on_their_block(block, monkeypatch):
    real = np.ones((3, 50), dtype=bool)
    real[1, 40:] = False  # a slice with fewer real units: the other branch
    expected = _kr.draw_counts(np.random.default_rng(5), real, 40)
    monkeypatch.setattr(_kr, "_DRAW_BLOCK", block)
    np.testing.assert_array_equal(_kr.draw_counts(np.random.default_rng(5), real, 40), expected)


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (1, 0, 2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8])
# a model of 6 x 9 float32 takes 216 bytes: a model at a time, two models a block (the
# last one short), three slices a block (the last one short), everything at once
@pytest.mark.parametrize("block", [1, 2 * 216, 3 * 5 * 216, 2**22])
def test_weighted_sums_equal_one_matrix_product(order, dtype, block, monkeypatch):
    monkeypatch.setattr(_kr, "_CONVERT_BLOCK", block)
    rng = np.random.default_rng(0)
    # a view of another axis order, as the labelled wrapper hands the kernel the cube
    values = rng.integers(0, 2, (4, 5, 6, 9)).astype(dtype).transpose(order)
    rows = rng.integers(0, 3, (values.shape[0], 9, 11)).astype(np.float32)
    c, m, p, s = values.shape
    expected = (np.ascontiguousarray(values, dtype=np.float32).reshape(c, m * p, s) @ rows).reshape(
        c, m, p, -1
    )
    np.testing.assert_array_equal(_kr.weighted_sums(values, rows, np.float32), expected)


def _exact_oracle(x, n_samples, n_templates):
    values = x[~np.isnan(x)]
    if values.size and not np.all(values == np.round(values)):
        return False
    largest = np.abs(values).max() if values.size else 0.0
    return largest * max(n_samples, 1) * max(n_templates, 1) < 2**24


@pytest.mark.parametrize(
    "case", ["binary", "nan", "fraction", "large", "inf", "all-nan", "empty", "negative"]
)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("block", [1, 7, 2**20])
def test_exact_in_float32_matches_its_definition(case, transposed, block):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, (3, 4, 5, 6)).astype(float)
    if case == "nan":
        x[rng.random(x.shape) < 0.3] = np.nan
    elif case == "fraction":
        x[2, 3, 4, 5] = 0.5  # the last element, in the last block
    elif case == "large":
        x[0, 0, 0, 0] = 2**20  # an integer, but 30 of them overflow float32's integers
    elif case == "inf":
        x[1, 1, 1, 1] = np.inf
    elif case == "all-nan":
        x[:] = np.nan
    elif case == "empty":
        x = x[:, :0]
    elif case == "negative":
        x -= 3
    if transposed:
        x = x.transpose(2, 0, 3, 1)
    expected = _exact_oracle(x, 6, 5)
    assert _kr.exact_in_float32(x, 6, 5, block=block) == expected
    if case == "fraction":
        assert not expected
    if case == "large":
        assert not expected and _kr.exact_in_float32(x, 1, 1, block=block)
