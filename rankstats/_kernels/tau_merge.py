r"""Kendall's tau by sorting and merging: O(n log n) per pair of rankings, over all slices at once.

Knight (1966): sort the objects by x, ties in x by y; the discordant pairs
are then the inversions of the y sequence, counted while merge-sorting it.
With :math:`n_0 = n(n-1)/2` pairs, :math:`n_1` pairs tied in x, :math:`n_2`
tied in y and :math:`n_3` tied in both,
:math:`C - D = n_0 - n_1 - n_2 + n_3 - 2 D`. Every count is an integer, so
the result equals the pair-sign product of :mod:`.concordance` exactly.

Every function works on whole arrays: the merge passes loop over the
:math:`\log_2 n` levels of the merge sort, each level one NumPy sort over all
slices and all runs at once.
"""

from __future__ import annotations

import numpy as np

#: Runs shorter than this are counted by direct comparison, which beats sorting tiny rows.
DIRECT = 8


def _int_type(top: int):
    """The smallest signed integer type that holds 0 .. ``top``."""
    for kind in (np.int16, np.int32):
        if top < np.iinfo(kind).max:
            return kind
    return np.int64


def inversions(y):
    """Pairs i < j with ``y[..., i] > y[..., j]`` along the last axis of non-negative integers.

    Bottom-up merge sort: runs of length w are merged two by two at each
    level; the position of each right-run element in the merged run tells how
    many left-run elements exceed it. Returns int64 counts shaped like the
    leading axes.
    """
    y = np.asarray(y)
    *lead, n = y.shape
    y = y.reshape(-1, n)
    rows = y.shape[0]
    size = 1 << max(0, int(n - 1).bit_length())  # padded with the largest value: no inversion
    top = int(y.max(initial=0)) + 1
    # never int16: NumPy sorts 32-bit integers with SIMD, 16-bit ones several times slower
    kind = np.promote_types(_int_type(2 * top + 2), np.int32).type
    acc = np.int32 if size * size < np.iinfo(np.int32).max else np.int64
    z = np.full((rows, size), top, dtype=kind)
    z[:, :n] = y
    count = np.zeros(rows, dtype=acc)
    direct = min(DIRECT, size)
    if direct > 1:  # the pairs within runs of `direct` by direct comparison, one pair at a time:
        # long contiguous rows rather than many inner loops of a few elements
        runs = np.ascontiguousarray(z.reshape(rows, size // direct, direct).transpose(2, 0, 1))
        within = np.zeros((rows, size // direct), dtype=_int_type(direct * direct))
        for i in range(direct):
            for j in range(i + 1, direct):
                within += runs[i] > runs[j]
        count += within.sum(-1, dtype=acc)
        del runs, within
    w = direct
    if direct > 1:  # sort every run of `direct` at once: the run's index above the value
        bits = top.bit_length()
        key_kind = np.promote_types(_int_type((size // direct + 1) << bits), np.int32).type
        key = (np.arange(size, dtype=key_kind) // direct << bits) | z.astype(key_kind)
        key.sort(axis=-1)
        key &= (1 << bits) - 1
        z = key.astype(kind, copy=False)
    position = np.arange(size)
    while w < size:
        # the lowest bit marks the right run; equal values keep left first
        z <<= 1
        z |= ((position // w) & 1).astype(kind)
        merged = np.sort(z.reshape(rows, size // (2 * w), 2 * w), axis=-1)
        positions = np.einsum("sbw,w->s", merged & 1, np.arange(2 * w, dtype=acc))
        # a right element at merged position p with k right elements before it has
        # p - k left elements at most it, so w - (p - k) above it
        count += (size // (2 * w)) * (w * w + w * (w - 1) // 2) - positions
        merged >>= 1
        z = merged.reshape(rows, size)
        w *= 2
    return count.astype(np.int64).reshape(lead)


def dense_codes(x, valid):
    """Dense integer codes (0, 1, ...) of the valid values of each row, in their order.

    Ties share a code. Invalid entries get arbitrary codes; callers mask them.
    """
    x = np.asarray(x, dtype=float)
    order = np.argsort(np.where(valid, x, np.inf), axis=-1)
    ordered = np.take_along_axis(x, order, axis=-1)
    step = np.zeros(x.shape, dtype=np.int64)
    step[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    codes = np.empty(x.shape, dtype=np.int64)
    np.put_along_axis(codes, order, np.cumsum(step, axis=-1), axis=-1)
    return codes


def _run_terms(ordered, used):
    """Tie sums over the runs of equal values in sorted rows, counting ``used`` entries only.

    Returns the sums of t(t-1)/2, t(t-1)(t-2), t(t-1)(2t+5) and of 1 over the
    runs of t used entries, as floats (exact integers).
    """
    rows, n = ordered.shape
    start = np.ones(ordered.shape, dtype=bool)
    start[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    run = np.cumsum(start, axis=-1) - 1 + (np.arange(rows) * n)[:, None]
    t = np.bincount(run[used], minlength=rows * n).reshape(rows, n).astype(float)
    return {
        "tie_pairs": (t * (t - 1) / 2).sum(-1),
        "t0": (t * (t - 1) * (t - 2)).sum(-1),
        "t1": (t * (t - 1) * (2 * t + 5)).sum(-1),
        "classes": (t > 0).sum(-1).astype(float),
    }


#: Longest run of equal values that :func:`tied_pairs` counts lag by lag.
LAGS = 16


def tied_pairs(ordered, used):
    """Pairs of equal values among the ``used`` entries of sorted rows: sum of t(t-1)/2 over runs.

    ``used`` marks a prefix of each row. In sorted rows, entries i and i + L
    are equal exactly when every neighbour between them is, so the pairs at
    lag L are counted from those at lag L - 1 with one boolean pass, while
    the runs are short (:data:`LAGS`); longer runs add each entry's position
    within its run. No float arithmetic, so cheaper than :func:`_run_terms`
    when only this sum is needed.
    """
    same = np.equal(ordered[:, 1:], ordered[:, :-1])
    same &= used[:, 1:]  # a run never continues past the used prefix
    total = np.count_nonzero(same, axis=-1)
    run = same
    for lag in range(2, LAGS + 1):
        run = run[:, :-1] & same[:, lag - 1 :]
        if not run.any():
            return total.astype(float)
        total += np.count_nonzero(run, axis=-1)
    n = ordered.shape[-1]
    kind = np.int32 if n < np.iinfo(np.int32).max else np.int64
    steps = np.zeros(ordered.shape, dtype=kind)
    steps[:, 1:] = same
    within = np.cumsum(steps, axis=-1, dtype=kind)
    starts = np.where(steps == 0, within, 0)
    np.maximum.accumulate(starts, axis=-1, out=starts)
    within -= starts
    return within.sum(-1, dtype=np.int64).astype(float)


def _code_tie_pairs(codes, valid, span):
    """:func:`tied_pairs` of ``(rows, n)`` codes below ``span``, unsorted: from each code's count.

    The size of a tie group is the number of valid entries with its code;
    the sum of t(t-1)/2 is an exact integer, so it equals the sorted runs'.
    Codes far above the number of entries are sorted instead.
    """
    rows, n = valid.shape
    if span > 4 * n + 64:  # counting would waste memory on unused codes
        ordered = np.sort(np.where(valid, codes, span), axis=-1)
        return tied_pairs(ordered, np.arange(n) < valid.sum(-1)[:, None])
    index = codes + (span * np.arange(rows, dtype=np.int64))[:, None]
    t = np.bincount(index[valid], minlength=rows * span).reshape(rows, span)
    return (t * (t - 1) // 2).sum(-1).astype(float)


def pair_counts(x_codes, y_codes, valid, *, terms=True, x_tie_pairs=None, y_tie_pairs=None):
    """Concordant minus discordant pairs of x and y over the valid objects, per slice.

    ``x_codes`` and ``y_codes`` are non-negative integer codes (equal codes
    tie), broadcast with ``valid`` over ``(..., n)``. Returns a dict of
    float arrays over the leading axes: ``size`` (valid objects),
    ``con_minus_dis``, and with ``terms`` the tie sums of x and of y among
    the valid objects (``x_tie_pairs``, ``x_t0``, ``x_t1``, ``x_classes``,
    and the same for y); without ``terms`` only ``x_tie_pairs`` and
    ``y_tie_pairs``, each taken from the argument of that name when given
    (the caller's own count among the valid objects, broadcast over the
    leading axes).
    """
    shape = np.broadcast_shapes(np.shape(x_codes), np.shape(y_codes), np.shape(valid))
    *lead, n = shape
    codes = max(int(np.max(y_codes, initial=0)) + 1, 1)
    # a power of two: the key splits into x and y by a shift and a mask, not a division
    span = 1 << (codes - 1).bit_length()
    shift = span.bit_length() - 1
    top = (int(np.max(x_codes, initial=0)) + 1) * span + span - 1  # invalid: last, largest y
    kind = np.int32 if top < np.iinfo(np.int32).max else np.int64
    x_codes = np.asarray(x_codes).astype(kind, copy=False)
    y_codes = np.asarray(y_codes).astype(kind, copy=False)
    valid = np.broadcast_to(valid, shape)
    key = np.where(valid, x_codes * kind(span) + y_codes, kind(top)).reshape(-1, n)
    key.sort(axis=-1)
    size = valid.sum(-1).reshape(-1)
    used = np.arange(n) < size[:, None]
    ys = key & kind(span - 1)
    discordant = inversions(ys)
    del ys
    if terms:
        y_sorted = np.sort(np.where(valid, y_codes, kind(span)).reshape(-1, n), axis=-1)
        both = _run_terms(key, used)["tie_pairs"]
        x_terms = _run_terms(key >> kind(shift), used)
        y_terms = _run_terms(y_sorted, used)
    else:
        both = tied_pairs(key, used)
        flat_valid = valid.reshape(-1, n)
        if x_tie_pairs is None:
            x_terms = {
                "tie_pairs": _code_tie_pairs(
                    np.broadcast_to(x_codes, shape).reshape(-1, n), flat_valid, (top + 1) // span
                )
            }
        else:
            x_terms = {"tie_pairs": np.broadcast_to(x_tie_pairs, lead).reshape(-1)}
        if y_tie_pairs is None:
            y_terms = {
                "tie_pairs": _code_tie_pairs(
                    np.broadcast_to(y_codes, shape).reshape(-1, n), flat_valid, codes
                )
            }
        else:
            y_terms = {"tie_pairs": np.broadcast_to(y_tie_pairs, lead).reshape(-1)}
    pairs = size * (size - 1) / 2
    out = {
        "size": size.astype(float),
        "con_minus_dis": pairs
        - x_terms["tie_pairs"]
        - y_terms["tie_pairs"]
        + both
        - 2.0 * discordant,
    }
    for name in x_terms:
        out[f"x_{name}"] = x_terms[name]
        out[f"y_{name}"] = y_terms[name]
    return {key: value.reshape(lead) for key, value in out.items()}
