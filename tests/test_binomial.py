"""The exact binomial test: scipy oracle, labelled and dask forms, option checks.

Oracle: ``scipy.stats.binomtest(k, n, p, alternative=...)`` (SciPy >= 1.7; checked
with 1.17): its ``statistic`` (k / n) and ``pvalue``.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

import rankstats
from rankstats import binomial_test
from rankstats.results import BinomialTestResult


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_binomial_test_agrees_with_scipy(alternative):
    rng = np.random.default_rng(1)
    n = np.concatenate([rng.integers(1, 3000, 300), [1, 1, 2, 10, 10, 2700, 5400]])
    p = np.concatenate(
        [rng.choice([0.5, 1 / 3, 0.25, 0.01, 0.99], 300), [0.5, 0.5, 0.5, 0.3, 0.3, 0.5, 0.5]]
    )
    k = np.concatenate([rng.binomial(n[:300], rng.random(300)), [0, 1, 1, 3, 10, 1350, 2000]])
    found = binomial_test(k, n, p, alternative=alternative)
    # oracle: scipy.stats.binomtest(k, n, p, alternative=alternative)
    expected = [
        binomtest(int(a), int(b), c, alternative=alternative)
        for a, b, c in zip(k, n, p, strict=True)
    ]
    np.testing.assert_allclose(found.pvalue, [e.pvalue for e in expected], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(found.statistic, [e.statistic for e in expected], rtol=1e-15)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 500), data=st.data(), p=st.floats(0.001, 0.999, allow_subnormal=False))
def test_binomial_test_property_equals_scipy(n, data, p):
    k = data.draw(st.integers(0, n))
    found = binomial_test(k, n, p)
    assert float(found.pvalue) == pytest.approx(binomtest(k, n, p).pvalue, rel=1e-11, abs=1e-300)
    assert 0.0 <= float(found.pvalue) <= 1.0
    assert float(found.statistic) == binomtest(k, n, p).statistic


def test_numpy_input_gives_a_frozen_result():
    result = binomial_test([3, 0], [10, 0], 0.5)
    assert isinstance(result, BinomialTestResult)
    with pytest.raises(AttributeError):
        result.statistic = 0.0
    assert result.statistic[0] == 0.3 and np.isnan(result.statistic[1])
    assert np.isnan(result.pvalue[1])  # no trial, no test
    assert result.k.tolist() == [3.0, 0.0] and result.n.tolist() == [10.0, 0.0]


def test_binomial_test_labelled_equals_numpy():
    k = xr.DataArray([[3, 7], [0, 10]], dims=("model", "group"))
    n = xr.DataArray([10, 10], dims="group")
    labelled = binomial_test(k, n, 0.5)
    plain = binomial_test(k.values, n.values[None, :], 0.5)
    assert set(labelled.data_vars) == {"statistic", "pvalue", "k", "n"}
    for name in labelled.data_vars:
        np.testing.assert_array_equal(labelled[name].values, getattr(plain, name))
    assert labelled.pvalue.dims == ("model", "group")
    assert labelled.attrs["statistic"] == "binomial_test"
    assert labelled.attrs["alternative"] == "two-sided"
    assert np.isnan(binomial_test(0, 0, 0.5).pvalue)
    # p labelled too, broadcast by name
    chance = xr.DataArray([0.5, 0.25], dims="model")
    by_model = binomial_test(k, n, chance, alternative="greater")
    assert float(by_model.pvalue.isel(model=1, group=0)) == pytest.approx(
        binomtest(0, 10, 0.25, alternative="greater").pvalue
    )


def test_dask_input_stays_lazy_and_equals_eager():
    k = xr.DataArray(np.arange(12.0).reshape(3, 4), dims=("model", "task"))
    n = xr.full_like(k, 12.0)
    eager = binomial_test(k, n, 1 / 3)
    lazy = binomial_test(k.chunk({"model": 1}), n.chunk({"model": 1}), 1 / 3)
    for name in lazy.data_vars:
        assert isinstance(lazy[name].data, da.Array), name
    xr.testing.assert_allclose(lazy.compute(), eager)


def test_bad_input_raises_before_any_work():
    with pytest.raises(rankstats.errors.OptionError, match="alternative='bigger'"):
        binomial_test(3, 10, alternative="bigger")
    k = xr.DataArray([3.0, 4.0], dims="model")
    with pytest.raises(rankstats.errors.InputTypeError, match="labelled"):
        binomial_test(k, np.array([10.0, 10.0]))
    with pytest.raises(rankstats.errors.InputTypeError, match="Dataset"):
        binomial_test(k.to_dataset(name="score"), k)
