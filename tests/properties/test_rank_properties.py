"""Properties of rankstats.rank: ranks along the last axis, rank 1 = best."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import rankstats
from rankstats.testing import strategies as rs

TIES = ("average", "min", "max", "dense", "ordinal")

floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=8)


def tied_scores(nan="none", shape=shapes, elements=None):
    """Scores of every kind and tie density (or ``elements``), missing where ``nan`` says."""
    return rs.score_arrays(
        shape,
        kind=None if elements is None else "continuous",
        ties=None,
        nan=nan,
        elements=elements,
    )


def non_nan_count(x):
    return (~np.isnan(x)).sum(axis=-1)


@given(x=rs.score_arrays(shapes, elements=floats, ties="none"), ties=st.sampled_from(TIES))
def test_untied_ranks_are_a_permutation(x, ties):
    r = rankstats.rank(x, ties=ties)
    n = x.shape[-1]
    assert r.shape == x.shape
    expected = np.broadcast_to(np.arange(1.0, n + 1), x.shape)
    np.testing.assert_array_equal(np.sort(r, axis=-1), expected)
    # without ties every method gives the same ranks, and the largest value gets rank 1
    np.testing.assert_array_equal(r, rankstats.rank(x, ties="ordinal"))
    best = np.argmax(x, axis=-1)
    np.testing.assert_array_equal(np.take_along_axis(r, best[..., None], -1), 1.0)


@given(x=tied_scores("scattered"))
def test_average_ranks_sum_to_triangular_number(x):
    r = rankstats.rank(x)
    n = non_nan_count(x)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(x))
    np.testing.assert_allclose(np.nansum(r, axis=-1), n * (n + 1) / 2.0, rtol=0, atol=1e-9)


@given(x=tied_scores("scattered"))
def test_min_le_average_le_max(x):
    lo = rankstats.rank(x, ties="min")
    mid = rankstats.rank(x, ties="average")
    hi = rankstats.rank(x, ties="max")
    seen = ~np.isnan(x)
    assert np.all(lo[seen] <= mid[seen])
    assert np.all(mid[seen] <= hi[seen])
    # min and max ranks bracket a tie group whose size is hi - lo + 1; its average is the middle
    np.testing.assert_array_equal(mid[seen], (lo[seen] + hi[seen]) / 2.0)


@given(x=tied_scores("scattered"))
def test_ordinal_ranks_are_a_permutation_even_with_ties(x):
    r = rankstats.rank(x, ties="ordinal")
    for row, values in zip(r.reshape(-1, x.shape[-1]), x.reshape(-1, x.shape[-1]), strict=True):
        kept = row[~np.isnan(values)]
        np.testing.assert_array_equal(np.sort(kept), np.arange(1.0, kept.size + 1))


@given(x=tied_scores("scattered"))
def test_dense_ranks_are_consecutive(x):
    r = rankstats.rank(x, ties="dense")
    for row, values in zip(r.reshape(-1, x.shape[-1]), x.reshape(-1, x.shape[-1]), strict=True):
        seen = ~np.isnan(values)
        distinct = np.unique(values[seen])
        np.testing.assert_array_equal(np.unique(row[seen]), np.arange(1.0, distinct.size + 1))
        # equal values share a dense rank, and the larger value has the smaller rank
        for a, b in zip(values[seen], row[seen], strict=True):
            assert b == 1 + np.sum(distinct > a)


@given(x=st.one_of(tied_scores(), tied_scores(elements=floats)), ties=st.sampled_from(TIES))
def test_matches_scipy_rankdata_of_negated_scores(x, ties):
    expected = stats.rankdata(-x, method=ties, axis=-1)
    np.testing.assert_array_equal(rankstats.rank(x, ties=ties), expected)


@given(
    x=tied_scores(),
    ties=st.sampled_from(TIES),
    transform=rs.monotone_transforms(),
)
def test_invariant_under_strictly_increasing_transform(x, ties, transform):
    np.testing.assert_array_equal(
        rankstats.rank(transform(x), ties=ties), rankstats.rank(x, ties=ties)
    )


@given(x=tied_scores("scattered"), ties=st.sampled_from(TIES))
def test_lower_is_better_ranks_the_negated_scores(x, ties):
    np.testing.assert_array_equal(
        rankstats.rank(x, ties=ties, higher_is_better=False), rankstats.rank(-x, ties=ties)
    )


@given(x=tied_scores("scattered"))
def test_lower_is_better_reverses_the_order(x):
    n = non_nan_count(x)[..., None]
    # reversing the order maps rank r to n + 1 - r, and swaps min and max ranks of ties
    for ties, mirror in (("average", "average"), ("min", "max"), ("max", "min")):
        np.testing.assert_array_equal(
            rankstats.rank(x, ties=ties, higher_is_better=False),
            n + 1 - rankstats.rank(x, ties=mirror),
        )


@given(
    x=tied_scores("scattered", hnp.array_shapes(min_dims=2, max_dims=3, max_side=6)),
    ties=st.sampled_from(TIES),
    axis=st.integers(0, 2),
)
@example(x=np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), ties="average", axis=0)
def test_axis_argument_matches_moving_the_axis_last(x, ties, axis):
    axis %= x.ndim
    expected = np.moveaxis(rankstats.rank(np.moveaxis(x, axis, -1), ties=ties), -1, axis)
    out = rankstats.rank(x, dim=axis, ties=ties)
    assert out.shape == x.shape
    np.testing.assert_array_equal(out, expected)


@given(
    x=tied_scores("scattered", hnp.array_shapes(min_dims=2, max_dims=2, max_side=6)),
    ties=st.sampled_from(TIES),
)
def test_rows_are_ranked_independently(x, ties):
    batched = rankstats.rank(x, ties=ties)
    for i, row in enumerate(x):
        np.testing.assert_array_equal(batched[i], rankstats.rank(row, ties=ties))


@given(
    x=tied_scores("scattered", hnp.array_shapes(min_dims=2, max_dims=2, max_side=6)),
    ties=st.sampled_from(TIES),
    higher=st.booleans(),
)
@example(x=np.array([[0.9, 0.5, 0.7]]), ties="average", higher=True)
def test_labelled_input_ranks_like_numpy(x, ties, higher):
    labelled = xr.DataArray(x, dims=("task", "model"), attrs={"higher_is_better": higher})
    # the cube's attribute decides the direction when higher_is_better is not given
    out = rankstats.rank(labelled, ties=ties)
    np.testing.assert_array_equal(out.values, rankstats.rank(x, ties=ties, higher_is_better=higher))
    # ranking along the other dimension is the transpose
    across = rankstats.rank(labelled, dim="task", ties=ties, higher_is_better=True)
    assert across.dims == ("task", "model")
    np.testing.assert_array_equal(across.values, rankstats.rank(x.T, ties=ties).T)


@pytest.mark.parametrize("ties", TIES)
def test_all_nan_row_gets_no_ranks(ties):
    r = rankstats.rank(np.array([[np.nan, np.nan], [1.0, 2.0]]), ties=ties)
    assert np.isnan(r[0]).all()
    np.testing.assert_array_equal(r[1], [2.0, 1.0])
