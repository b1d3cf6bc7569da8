"""Checks over every value of an array, read a block at a time in memory order.

A check written as one expression over a cube (``x * (x - 1)``, ``x[~mask]``)
makes cube-sized temporaries; fresh memory of that size costs more than the
arithmetic. These read blocks of at most ``block`` values, whatever the
array's axis order, and copy nothing of the array.
"""

from __future__ import annotations

import numpy as np

#: Values per block.
BLOCK = 1 << 20


def blocks(x: np.ndarray, block: int = BLOCK):
    """The values of ``x`` as 1-D blocks, in memory order (views where the layout allows)."""
    return np.nditer(
        x, flags=["external_loop", "buffered", "zerosize_ok"], order="K", buffersize=block
    )


def zeros_and_ones(x: np.ndarray, *, nan: bool, block: int = BLOCK) -> bool:
    """Whether every value of ``x`` is 0 or 1 (or NaN, where ``nan``)."""
    for part in blocks(x, block):
        binary = (part == 0.0) | (part == 1.0)
        if nan:
            binary |= np.isnan(part)
        if not binary.all():
            return False
    return True
