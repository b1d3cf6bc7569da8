"""Ranks along the last axis, tie groups, and the structure masks every statistic shares."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ..errors import MissingValueError, OptionError, RankstatsWarning

TIES_METHODS = ("average", "min", "max", "dense", "ordinal")
NAN_POLICIES = ("propagate", "omit", "raise")


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise OptionError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}")


class _RankedRows:
    """The ranked rows of an array: what :func:`rank_last` and :func:`column_rank_sums` need.

    ``columns`` (rows ranked × n) gives the column of each element in sorted
    order, ``row_ids`` the original row of each ranked row, ``ranks`` the
    elements' ranks in the same order (``fill`` for NaN), ``sizes`` the size
    of each element's tie group (0 for NaN), and ``tie_sum`` the per-row
    ``sum_g (t_g^3 - t_g)`` shaped like the leading axes of the input.
    """

    __slots__ = ("_groups", "_missing", "columns", "ranks", "row_ids", "tie_sum")

    @property
    def sizes(self):
        sizes = np.ones(self.ranks.size, dtype=np.intp)
        if self._groups is not None:
            tied_at, group_size = self._groups
            sizes[tied_at] = np.repeat(group_size, group_size)
        if self._missing is not None:
            sizes[self._missing.ravel()] = 0
        return sizes


def _rank_rows(x, ties, higher_is_better, fill, rows) -> _RankedRows:
    """Rank the rows of ``x`` (last axis); the shared core of the ranking kernels.

    Every row is sorted at once and each element first takes its ordinal
    rank (its position in the sorted row). Only the elements equal to a
    neighbour in sorted order are revisited: their tie groups are numbered in
    one flat pass over that subset and take the group's rank.
    """
    check_choice("ties", ties, TIES_METHODS)
    shape = x.shape
    n = shape[-1]
    flat = x.reshape(-1, n)
    row_ids = np.arange(flat.shape[0])
    if rows is not None:
        rows = np.broadcast_to(rows, shape[:-1]).ravel()
        if not rows.all():
            row_ids = np.flatnonzero(rows)
    out = _RankedRows()
    out.row_ids, out.tie_sum = row_ids, np.zeros(shape[:-1])
    out._groups = out._missing = None
    count = row_ids.size
    if count == 0 or n == 0:
        out.columns = np.zeros((count, n), dtype=np.intp)
        out.ranks = np.zeros(count * n)
        return out
    key = flat[row_ids] if row_ids.size < flat.shape[0] else flat.copy()
    if higher_is_better:
        np.negative(key, out=key)
    missing = np.isnan(key)
    any_missing = bool(missing.any())
    # NumPy's fast sorting paths skip arrays holding NaN; +inf sorts last just as well,
    # unless the data hold +inf of their own. Either way missing values sort last.
    as_infinity = any_missing and not np.isposinf(key).any()
    if as_infinity:
        np.copyto(key, np.inf, where=missing)
    # only ordinal ranks depend on the order within a tie group
    out.columns = np.argsort(key, axis=-1, kind="stable" if ties == "ordinal" else None)
    sorted_key = key.ravel()[(out.columns + (np.arange(count) * n)[:, None]).ravel()]
    ranks = np.empty((count, n))
    ranks[:] = np.arange(1.0, n + 1.0)  # ordinal ranks
    ranks = ranks.ravel()
    if any_missing:
        out._missing = np.isposinf(sorted_key) if as_infinity else np.isnan(sorted_key)
    # equal_previous[k]: sorted element k ties element k - 1 of its row (missing ties nothing);
    # flat, because whole-array passes beat row-wise ones on short rows
    equal_previous = np.empty(count * n, dtype=bool)
    np.equal(sorted_key[1:], sorted_key[:-1], out=equal_previous[1:])
    equal_previous[::n] = False
    if any_missing:
        equal_previous &= ~out._missing
    if ties != "ordinal" and equal_previous.any():
        if ties == "dense":  # the number of distinct values up to here in the row
            distinct = np.cumsum(~equal_previous.reshape(count, n), axis=-1, dtype=float)
            ranks = distinct.ravel()
        tied = equal_previous.copy()
        tied[:-1] |= equal_previous[1:]  # rows start untied, so nothing leaks across rows
        tied_at = np.flatnonzero(tied)
        starts = np.flatnonzero(~equal_previous[tied_at])  # within tied_at
        group_size = np.diff(starts, append=tied_at.size)
        group_first = tied_at[starts]
        first_rank = group_first % n + 1.0
        if ties == "average":
            ranks[tied_at] = np.repeat(first_rank + (group_size - 1) * 0.5, group_size)
        elif ties == "min":
            ranks[tied_at] = np.repeat(first_rank, group_size)
        elif ties == "max":
            ranks[tied_at] = np.repeat(first_rank + (group_size - 1), group_size)
        out._groups = tied_at, group_size
        cubes = (group_size * group_size - 1) * group_size
        out.tie_sum.reshape(-1)[row_ids] = np.bincount(
            group_first // n, weights=cubes, minlength=count
        )
    if any_missing:
        ranks[out._missing] = fill
    out.ranks = ranks
    return out


def rank_last(x, ties: str = "average", higher_is_better: bool = True, *, fill=np.nan, rows=None):
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
    Every row is sorted at once; ties are then resolved in one flat pass over
    the elements equal to a neighbour, and one scatter puts the ranks in
    place.
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
    if x.ndim >= 2 and (x.shape[-2] > 0 and x.shape[-1] > 0) and observed.all():
        # nothing missing: every judge and object present, every judge complete
        *lead, m, n = x.shape
        return (
            np.ones((*lead, n), dtype=bool),
            np.ones((*lead, m), dtype=bool),
            np.zeros((*lead, m), dtype=bool),
        )
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
    objects_present, judges_present, incomplete = missing_among_present(x, nan_policy, statistic)
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
