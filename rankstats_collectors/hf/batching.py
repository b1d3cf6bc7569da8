"""Batches of similar length, padded on the side the model needs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankstats.errors import OptionError

__all__ = ["length_batches", "pad"]


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of at most ``batch_size``, longest first.

    Sorting by length keeps padding small; the longest batch goes first, so a
    run that does not fit in memory fails at once rather than at the end.

    Examples
    --------
    >>> from rankstats_collectors.hf.batching import length_batches
    >>> length_batches([3, 9, 1, 7, 5], 2)
    [[1, 3], [4, 0], [2]]
    """
    if batch_size < 1:
        raise OptionError(f"batch_size must be at least 1, not {batch_size}")
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable").tolist()
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def pad(sequences: Sequence[Sequence[int]], pad_id: int, side: str):
    """Token id lists → ``(input_ids, attention_mask)`` tensors, padded on ``side``.

    Decoder-only models generate after the last position, so their prompts
    are padded on the left; encoder inputs and continuations on the right.

    Examples
    --------
    >>> from rankstats_collectors.hf.batching import pad
    >>> ids, mask = pad([[5, 6, 7], [8]], 0, "left")
    >>> ids.tolist(), mask.tolist()
    ([[5, 6, 7], [0, 0, 8]], [[1, 1, 1], [0, 0, 1]])
    """
    import torch

    if side not in ("left", "right"):
        raise OptionError(f"side must be 'left' or 'right', not {side!r}")
    width = max((len(s) for s in sequences), default=0)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if not sequence:
            continue
        values = torch.as_tensor(list(sequence), dtype=torch.long)
        span = slice(width - len(sequence), width) if side == "left" else slice(0, len(sequence))
        ids[row, span] = values
        mask[row, span] = 1
    return ids, mask
