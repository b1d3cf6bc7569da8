"""A testing kit for whoever writes or checks a rank statistic.

- :mod:`rankstats.testing.strategies`: hypothesis strategies for score
  matrices (ties, missing values, kinds, edge shapes) and for whole valid
  cubes;
- :func:`assert_cube_equal`: two cubes (or any datasets) equal in values,
  coordinates and attributes, with a readable list of what differs;
- property checks to apply to any statistic function: invariance to
  permuting objects or judges and to strictly monotone maps, symmetry,
  bounds, a vectorised call equal to a loop over slices, dask equal to eager;
- the reference vectors: the oracle values rankstats' own tests compare with,
  each with its source, and :func:`check_against_references`.

The kit needs hypothesis, installed by the ``testing`` extra
(``pip install "rankstats[testing]"``); ``import rankstats`` never loads it.
See "Testing your own statistics" in the documentation.
"""

try:
    import hypothesis  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError(
        'rankstats.testing needs hypothesis: pip install "rankstats[testing]"'
    ) from error

from . import strategies
from .assertions import assert_cube_equal
from .properties import (
    check_bounds,
    check_dask,
    check_monotone_invariance,
    check_permutation_invariance,
    check_symmetry,
    check_vectorised,
)
from .references import check_against_references, reference_statistics, reference_vectors

__all__ = [
    "assert_cube_equal",
    "check_against_references",
    "check_bounds",
    "check_dask",
    "check_monotone_invariance",
    "check_permutation_invariance",
    "check_symmetry",
    "check_vectorised",
    "reference_statistics",
    "reference_vectors",
    "strategies",
]
