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


class _RankedRows:
    """The ranked rows of an array: what :func:`rank_last` and :func:`column_rank_sums` need.

    ``columns`` (rows ranked × n) gives the column of each element in sorted
    order, ``row_ids`` the original row of each ranked row, ``ranks`` the
    elements' ranks in the same order (``fill`` for NaN), ``sizes`` the size
    of each element's tie group (0 for NaN), and ``tie_sum`` the per-row
    ``sum_g (t_g^3 - t_g)`` shaped like the leading axes of the input.
    """

    __slots__ = ("columns", "group_size", "ranks", "row_ids", "tie_sum", "width")

    @property
    def sizes(self):
        return np.repeat(self.group_size, self.width)


def _rank_rows(x, ties, higher_is_better, fill, rows) -> _RankedRows:
    """Rank the rows of ``x`` (last axis); the shared core of the ranking kernels."""
    check_choice("ties", ties, TIES_METHODS)
    shape = x.shape
    n = shape[-1]
    flat = x.reshape(-1, n)
    row_ids = np.arange(flat.shape[0])
    if rows is not None:
        rows = np.broadcast_to(rows, shape[:-1]).ravel()
        if not rows.all():
            row_ids = np.flatnonzero(rows)
            flat = flat[row_ids]
    out = _RankedRows()
    out.row_ids, out.tie_sum = row_ids, np.zeros(shape[:-1])
    if flat.size == 0:
        out.columns = np.zeros((0, n), dtype=np.intp)
        out.ranks = np.zeros(0)
        out.group_size = out.width = np.zeros(0, np.intp)
        return out
    key = -flat if higher_is_better else flat
    # NumPy's fast sorting paths skip arrays holding NaN; +inf sorts last just as well,
    # unless the data hold +inf of their own
    missing_values = np.isnan(key)
    sort_key = key
    if missing_values.any() and not np.isposinf(key).any():
        sort_key = np.where(missing_values, np.inf, key)
    # only ordinal ranks depend on the order within a tie group
    out.columns = np.argsort(sort_key, axis=-1, kind="stable" if ties == "ordinal" else None)
    flat_order = (out.columns + (np.arange(flat.shape[0]) * n)[:, None]).ravel()
    s = key.ravel()[flat_order]  # each row sorted, NaN last
    starts = np.empty(s.shape, dtype=bool)
    starts[0] = True
    np.not_equal(s[1:], s[:-1], out=starts[1:])  # NaN != NaN: each NaN is its own group
    starts[::n] = True  # every row starts a group
    first = np.flatnonzero(starts)  # sorted position where each group starts
    size = np.diff(first, append=s.size)
    first_in_row = first % n
    row_first_group = np.flatnonzero(first_in_row == 0)  # one per row: rows start groups
    if ties == "average":
        group_rank = (size + 1) * 0.5
        group_rank += first_in_row
    elif ties == "min":
        group_rank = first_in_row + 1.0
    elif ties == "max":
        group_rank = (first_in_row + size).astype(float)
    elif ties == "dense":  # the group's number within its row
        group_rank = np.arange(1.0, first.size + 1) - np.repeat(
            row_first_group, np.diff(row_first_group, append=first.size))
    missing = np.isnan(s[first])
    if ties == "ordinal":
        ranks = np.tile(np.arange(1.0, n + 1.0), flat.shape[0])
        ranks[np.isnan(s)] = fill
    else:
        group_rank[missing] = fill
        ranks = np.repeat(group_rank, size)  # every element of a group takes its rank
    out.ranks, out.width = ranks, size
    out.group_size = np.where(missing, 0, size)
    cubes = out.group_size.astype(float) ** 3 - out.group_size
    out.tie_sum.reshape(-1)[row_ids] = np.add.reduceat(cubes, row_first_group)
    return out


def rank_last(x, ties: str = "average", higher_is_better: bool = True, *, fill=np.nan,
              rows=None):
    """Rank along the last axis; NaN takes no rank and gets ``fill``.

    Parameters
    ----------
    rows : bool array over the leading axes, optional
        Rank only these rows (the others get ``fill``): skips padding.

    Returns
    -------
    ranks : float ndarray, same shape as ``x``; rank 1 is the best value.
    group_size : int ndarray, same shape; the size of each element's tie
        group (0 where ``x`` is NaN). Any sum over tie groups
        ``sum_g f(t_g)`` equals ``(f(group_size) / group_size).sum(-1)`` over
        non-NaN elements.

    Notes
    -----
    Every row is sorted at once; the tie groups of the whole array are then
    numbered in one flat pass (a cumulative sum over "differs from the
    previous value"), each group's rank is computed once, and one gather and
    one scatter put the ranks in place.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        x = x[None]
    ranked = _rank_rows(x, ties, higher_is_better, fill, rows)
    n = x.shape[-1]
    position = (ranked.columns + (ranked.row_ids * n)[:, None]).ravel()
    ranks = np.full(x.size, fill, dtype=float)
    sizes = np.zeros(x.size, dtype=np.int64)
    ranks[position] = ranked.ranks
    sizes[position] = ranked.sizes
    return ranks.reshape(x.shape), sizes.reshape(x.shape)


def column_rank_sums(x, ties="average", higher_is_better=True, *, rows=None):
    """Rank each row of ``(..., m, n)`` and sum the ranks down the columns.

    Returns ``(rank_sums, tie_sum)``: ``(..., n)`` sums over the rows of each
    column's ranks (NaN adds nothing), and the ``(..., m)`` per-row
    ``sum_g (t_g^3 - t_g)``. Equal to ``rank_last(x).sum(-2)`` with NaN as 0,
    without building the ranks array.
    """
    x = np.asarray(x, dtype=float)
    *lead, m, n = x.shape
    ranked = _rank_rows(x, ties, higher_is_better, 0.0, rows)
    # (slice, column) of each ranked element: rows m at a time make up a slice
    column = ranked.columns + ((ranked.row_ids // m) * n)[:, None]
    slices = int(np.prod(lead, dtype=np.int64))
    sums = np.bincount(column.ravel(), weights=ranked.ranks, minlength=slices * n)
    return sums.reshape(*lead, n), ranked.tie_sum


def sum_over_tie_groups(group_size, f):
    """``sum_g f(t_g)`` over the tie groups of the last axis, from per-element group sizes."""
    t = np.asarray(group_size, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_element = np.where(t > 0, f(t) / np.where(t > 0, t, 1.0), 0.0)
    return per_element.sum(axis=-1)


def missing_among_present(x, nan_policy: str, statistic: str):
    """Structure masks of a (..., judges, objects) block, and its missing values.

    Returns ``(objects_present, judges_present, incomplete)``, ``incomplete``
    marking present judges that miss a present object. Raises
    :class:`~rankstats.errors.MissingValueError` under ``nan_policy="raise"``
    when any judge is incomplete.
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    observed = ~np.isnan(x)
    objects_present = observed.any(axis=-2)
    judges_present = observed.any(axis=-1)
    n_present = objects_present.sum(axis=-1)
    incomplete = judges_present & (observed.sum(axis=-1) < n_present[..., None])
    if nan_policy == "raise" and incomplete.any():
        holes = ~observed & objects_present[..., None, :] & judges_present[..., :, None]
        where = np.argwhere(holes)[0]
        raise MissingValueError(
            f"{statistic}: {int(holes.sum())} missing value(s) among present judges and "
            f"objects (first at index {tuple(int(i) for i in where)}); "
            "pass nan_policy='omit' to drop them or 'propagate' to return NaN"
        )
    return objects_present, judges_present, incomplete


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
