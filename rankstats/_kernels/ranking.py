"""Ranks along the last axis, tie groups, and the structure masks every statistic shares."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ..errors import MissingValueError, RankstatsWarning

TIES_METHODS = ("average", "min", "max", "dense", "ordinal")
NAN_POLICIES = ("propagate", "omit", "raise")


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}")


def rank_last(x, ties: str = "average", higher_is_better: bool = True):
    """Rank along the last axis; NaN stays NaN and takes no rank.

    Returns
    -------
    ranks : float ndarray, same shape as ``x``; rank 1 is the best value.
    group_size : int ndarray, same shape; the size of each element's tie group
        (0 where ``x`` is NaN). Any sum over tie groups ``sum_g f(t_g)`` equals
        ``(f(group_size) / group_size).sum(-1)`` over non-NaN elements.
    """
    check_choice("ties", ties, TIES_METHODS)
    x = np.asarray(x, dtype=float)
    key = -x if higher_is_better else x
    order = np.argsort(key, axis=-1, kind="stable")  # NaN sorts last
    s = np.take_along_axis(key, order, axis=-1)
    n = x.shape[-1]
    if n == 0:
        return np.empty(x.shape), np.zeros(x.shape, dtype=np.int64)
    position = np.broadcast_to(np.arange(n), s.shape)
    starts = np.ones(s.shape, dtype=bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]  # NaN != NaN: each NaN is its own group
    ends = np.ones(s.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.flip(
        np.minimum.accumulate(np.flip(np.where(ends, position, n - 1), -1), axis=-1), -1
    )
    if ties == "average":
        sorted_ranks = (first + last) / 2.0 + 1.0
    elif ties == "min":
        sorted_ranks = first + 1.0
    elif ties == "max":
        sorted_ranks = last + 1.0
    elif ties == "ordinal":
        sorted_ranks = position + 1.0
    else:  # dense
        sorted_ranks = np.cumsum(starts, axis=-1).astype(float)
    is_nan = np.isnan(s)
    sorted_ranks = np.where(is_nan, np.nan, sorted_ranks)
    sorted_sizes = np.where(is_nan, 0, last - first + 1)
    ranks = np.empty(s.shape)
    sizes = np.empty(s.shape, dtype=np.int64)
    np.put_along_axis(ranks, order, sorted_ranks, axis=-1)
    np.put_along_axis(sizes, order, sorted_sizes, axis=-1)
    return ranks, sizes


def sum_over_tie_groups(group_size, f):
    """``sum_g f(t_g)`` over the tie groups of the last axis, from per-element group sizes."""
    t = np.asarray(group_size, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_element = np.where(t > 0, f(t) / np.where(t > 0, t, 1.0), 0.0)
    return per_element.sum(axis=-1)


def present_masks(x):
    """Masks of the structure of a (..., judges, objects) block.

    Returns ``(objects_present, judges_present)``: an object missing for every
    judge is absent, a judge missing for every object is padding. Neither is
    missing data: both drop out before any ``nan_policy`` applies.
    """
    observed = ~np.isnan(x)
    return observed.any(axis=-2), observed.any(axis=-1)


def missing_among_present(x, nan_policy: str, statistic: str):
    """Structure masks of a (..., judges, objects) block, and its missing values.

    Returns ``(objects_present, judges_present, incomplete)``, ``incomplete``
    marking present judges that miss a present object. Raises
    :class:`~rankstats.errors.MissingValueError` under ``nan_policy="raise"``
    when any judge is incomplete.
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    objects_present, judges_present = present_masks(x)
    holes = np.isnan(x) & objects_present[..., None, :] & judges_present[..., :, None]
    if nan_policy == "raise" and holes.any():
        where = np.argwhere(holes)[0]
        raise MissingValueError(
            f"{statistic}: {int(holes.sum())} missing value(s) among present judges and "
            f"objects (first at index {tuple(int(i) for i in where)}); "
            "pass nan_policy='omit' to drop them or 'propagate' to return NaN"
        )
    return objects_present, judges_present, holes.any(axis=-1)


def usable_judges(x, nan_policy: str, statistic: str):
    """Apply ``nan_policy`` to the judges (rows) of a (..., judges, objects) block.

    Returns
    -------
    used : bool (..., judges); judges kept: present and complete under
        ``omit`` (listwise deletion), every present one otherwise.
    objects_present : bool (..., objects)
    poisoned : bool (...); slices whose result is NaN under ``propagate``.
    """
    objects_present, judges_present, incomplete = missing_among_present(
        x, nan_policy, statistic
    )
    if nan_policy == "omit":
        return judges_present & ~incomplete, objects_present, np.zeros(x.shape[:-2], bool)
    return judges_present, objects_present, incomplete.any(axis=-1)


def warn_nan(statistic: str, mask, reason: str, among=None) -> None:
    """Warn once, with a count, when some slices give NaN for ``reason``.

    ``among`` marks the slices that count in the total (default: all).
    """
    mask = np.asarray(mask)
    count = int(mask.sum())
    if count:
        total = mask.size if among is None else int(np.asarray(among).sum())
        warnings.warn(
            f"{statistic}: {count} of {total} slice(s) give NaN: {reason}",
            RankstatsWarning,
            stacklevel=_caller_stacklevel(),
        )


_LIBRARY_DIRS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    *(f"{os.sep}{name}{os.sep}" for name in ("xarray", "dask", "numpy")),
)


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside rankstats and the array libraries.

    Warnings then point at the user's line, whichever path (NumPy, xarray,
    dask) led to the kernel.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if not any(part in filename for part in _LIBRARY_DIRS):
            return level
        frame, level = frame.f_back, level + 1
    return level


def ranks(x, *, ties="average", higher_is_better=True):
    """Kernel form of :func:`rank_last`: ``{"rank": ranks}``."""
    return {"rank": rank_last(x, ties, higher_is_better)[0]}
