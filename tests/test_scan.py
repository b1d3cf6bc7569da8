"""Checks over every value of an array, a block at a time (rankstats._kernels.scan)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rankstats._kernels import scan

VALUES = st.sampled_from([0.0, 1.0, np.nan, 0.5, -1.0, np.inf, 2.0])


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    x=hnp.arrays(
        float, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5), elements=VALUES
    ),
    nan=st.booleans(),
    block=st.sampled_from([1, 3, 64, scan.BLOCK]),
    transpose=st.booleans(),
)
def test_zeros_and_ones_is_its_definition(x, nan, block, transpose):
    if transpose:
        x = x.T  # another memory order: the blocks follow it
    values = x.ravel()
    allowed = (values == 0) | (values == 1) | (np.isnan(values) if nan else False)
    assert scan.zeros_and_ones(x, nan=nan, block=block) == bool(allowed.all())


@pytest.mark.parametrize("block", [1, 5, 1 << 20])
def test_blocks_cover_every_value_once(block):
    x = np.arange(120.0).reshape(2, 3, 4, 5).transpose(3, 1, 0, 2)
    seen = np.concatenate([part.copy() for part in scan.blocks(x, block)])
    assert sorted(seen) == sorted(x.ravel())
