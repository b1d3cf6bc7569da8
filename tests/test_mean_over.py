"""The mean over samples: blockwise and in place, equal to the last bit to xarray's own."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from rankstats import _xr


def _xarray_mean(x, dim):
    observed = x.notnull()
    total = x.where(observed, 0.0).sum(dim)
    count = observed.sum(dim)
    return (total / count.where(count > 0)).assign_attrs(x.attrs)


def _scores(order, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((3, 4, 5, 7))
    values[rng.random(values.shape) < 0.3] = np.nan
    values[0, 0, 0] = np.nan  # a template with no observed sample
    x = xr.DataArray(
        values,
        dims=("model", "task", "template", "sample"),
        name="score",
        coords={
            "model": ["a", "b", "c"],
            "sample_id": (("task", "sample"), np.arange(28).reshape(4, 7)),
            "template_id": (("task", "template"), np.arange(20).reshape(4, 5)),
        },
        attrs={"metric": "accuracy"},
    )
    return x.transpose(*order)


@pytest.mark.parametrize(
    "order",
    [
        ("model", "task", "template", "sample"),
        ("sample", "template", "model", "task"),
        ("task", "sample", "model", "template"),
    ],
)
@pytest.mark.parametrize("block", [1, 64, 2**25])
def test_mean_over_equals_xarray_bit_for_bit(order, block, monkeypatch):
    monkeypatch.setattr(_xr, "MEAN_BLOCK", block)
    x = _scores(order)
    xr.testing.assert_identical(_xr.mean_over(x, "sample"), _xarray_mean(x, "sample"))


def test_mean_over_of_integer_scores_needs_no_mask():
    x = (_scores(("model", "task", "template", "sample")).fillna(0) > 0.5).astype(np.int8)
    expected = _xarray_mean(x.astype(float), "sample")
    xr.testing.assert_allclose(_xr.mean_over(x, "sample"), expected, rtol=1e-15)


def test_mean_over_of_a_dask_array_takes_xarray_path():
    pytest.importorskip("dask")
    x = _scores(("model", "task", "template", "sample"))
    xr.testing.assert_identical(
        _xr.mean_over(x.chunk({"model": 1}), "sample").compute(), _xarray_mean(x, "sample")
    )
