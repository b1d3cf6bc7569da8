"""Near-duplicate template pairs: tokens, blocking, banded edit distance, edit hunks.

The search runs on integer-coded sequences: every task's templates at once,
with no loop over template pairs. Strings are touched only to tokenise the
templates and to render the few pairs found.
"""

from __future__ import annotations

import functools
import re

import numpy as np

UNITS = ("tokens", "characters")

_PLACEHOLDER = r"\{[^{}\s]*\}"
# A placeholder together with the quotes around it is one token, so that
# re-quoting a field ({word} -> "{word}") is one substitution, not two edits.
_TOKEN = re.compile(
    rf'"{_PLACEHOLDER}"|\'{_PLACEHOLDER}\'|“{_PLACEHOLDER}”|‘{_PLACEHOLDER}’'
    rf"|«{_PLACEHOLDER}»|{_PLACEHOLDER}|\n|\w+(?:['’]\w+)*|[^\w\s]"
)
_WORDLIKE = re.compile(rf"\w+(?:['’]\w+)*|[\"'“‘«]?{_PLACEHOLDER}[\"'”’»]?")


def tokenize(text: str, unit: str = "tokens") -> list[tuple[str, int, int]]:
    """``(token, start, end)`` triples of ``text``.

    Tokens are words (``doesn't`` is one), single punctuation marks, line
    breaks, and placeholders with their quotes (``"{word}"``); other
    whitespace separates tokens. With ``unit="characters"`` every character
    is a token.
    """
    if unit == "characters":
        return [(character, k, k + 1) for k, character in enumerate(text)]
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


@functools.lru_cache(maxsize=4096)
def wordlike(text: str) -> bool:
    """Whether ``text`` is words and placeholders only (shown unquoted in a rule)."""
    return bool(text) and all(_WORDLIKE.fullmatch(t) for t, _, _ in tokenize(text))


def encode(texts, unit: str = "tokens"):
    """Integer codes of the tokens of every text.

    Returns ``(codes, lengths, tokens)``: ``codes`` is ``(n, L)`` int64
    padded with -1, ``lengths`` ``(n,)``, and ``tokens`` the list of each
    text's ``(token, start, end)`` triples.
    """
    tokens = [tokenize(text, unit) for text in texts]
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    flat = [token for sequence in tokens for token, _, _ in sequence]
    vocabulary: dict[str, int] = {}
    inverse = np.fromiter(
        (vocabulary.setdefault(t, len(vocabulary)) for t in flat), dtype=np.int64, count=len(flat)
    )
    width = int(lengths.max()) if len(lengths) else 0
    codes = np.full((len(tokens), width), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(tokens)), lengths)
    columns = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    codes[rows, columns] = inverse
    return codes, lengths, tokens


def _within_group_index(keys):
    """Position of each element among the equal keys before it (keys sorted)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.r_[True, keys[1:] != keys[:-1]]
    start_at = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    return np.arange(n) - start_at


def candidate_pairs(codes, lengths, groups, max_distance):
    """Pairs ``(i, j)``, ``i < j``, of the same group that may lie within ``max_distance``.

    Blocking by shared tokens (prefix filtering, Chaudhuri et al. 2006):
    every token is keyed by its occurrence number (the second "the" of a
    template is its own key), so a sequence is a set and two sequences
    within Levenshtein distance d share at least max(|A|, |B|) - d keys.
    Ordering every group's keys from rarest to commonest, two such sets
    then share a key among their first d + 1; only those prefix keys are
    indexed, and only sequences meeting in one of them become candidates.
    Sequences of at most d tokens may share nothing: they also meet under
    one extra key per group. Candidates then pass the length filter
    ``|len_i - len_j| <= d``.
    """
    n, width = codes.shape
    d = int(max_distance)
    present = codes >= 0
    rows = np.nonzero(present)[0]
    tokens = codes[present]
    # occurrence number of each token within its sequence: sort by (row, token, position)
    order = np.lexsort((np.nonzero(present)[1], tokens, rows))
    pair_key = rows[order] * (tokens.max(initial=0) + 1) + tokens[order]
    occurrence = np.empty_like(order)
    occurrence[order] = _within_group_index(pair_key)
    groups = np.asarray(groups, dtype=np.int64)
    # one integer per (group, token, occurrence); token -1 is the key of short sequences
    n_tokens = int(tokens.max(initial=0)) + 2
    n_occurrences = int(width) + 1
    keys = (groups[rows] * n_tokens + tokens + 1) * n_occurrences + occurrence
    # sequences of at most d tokens share the key (group, -1, 0) as well
    short = np.nonzero(lengths <= d)[0]
    rows = np.r_[rows, short]
    keys = np.r_[keys, groups[short] * n_tokens * n_occurrences]
    _, key_id, frequency = np.unique(keys, return_inverse=True, return_counts=True)
    key_id = key_id.reshape(-1)
    rarity = frequency[key_id]
    # the first d + 1 keys of every sequence, rarest first (ties by key)
    order = np.lexsort((key_id, rarity, rows))
    rank_in_row = _within_group_index(rows[order])
    chosen = order[rank_in_row <= d]
    prefix_rows, prefix_keys = rows[chosen], key_id[chosen]
    # every pair of sequences meeting under one prefix key
    order = np.lexsort((prefix_rows, prefix_keys))
    prefix_rows, prefix_keys = prefix_rows[order], prefix_keys[order]
    position = _within_group_index(prefix_keys)
    sizes = np.bincount(prefix_keys, minlength=len(frequency))[prefix_keys]
    partners = sizes - position - 1
    first = np.repeat(np.arange(len(prefix_rows)), partners)
    offset = np.arange(len(first)) - np.repeat(np.cumsum(partners) - partners, partners)
    i, j = prefix_rows[first], prefix_rows[first + 1 + offset]
    i, j = np.minimum(i, j), np.maximum(i, j)
    keep = (i != j) & (np.abs(lengths[i] - lengths[j]) <= d)
    unique = np.unique(i[keep] * max(n, 1) + j[keep])
    return unique // max(n, 1), unique % max(n, 1)


def banded_levenshtein(a, b, length_a, length_b, max_distance):
    """Levenshtein distances of the rows of ``a`` and ``b``, capped at ``max_distance + 1``.

    Only the diagonal band ``|i - j| <= d`` of the dynamic programme is
    computed, one row at a time for all pairs at once: O(pairs × L × d).
    The left-to-right insertion recurrence within a row,
    ``D[j] = min(E[j], D[j - 1] + 1)``, is the running minimum
    ``j + cummin(E[j] - j)``. A pair leaves the computation once its row is
    finished or every cell of its band exceeds d (the distance can only
    grow; Ukkonen 1985). Pairs must satisfy the length filter
    ``|length_a - length_b| <= d``.
    """
    d = int(max_distance)
    cap = d + 1
    band = 2 * d + 1
    length_a = np.asarray(length_a, dtype=np.int64)
    length_b = np.asarray(length_b, dtype=np.int64)
    result = np.full(len(length_a), cap, dtype=np.int64)
    offsets = np.arange(band) - d  # j - i for each band cell
    steps = np.arange(band, dtype=np.int32)
    # row i = 0: D[0, j] = j for 0 <= j <= d
    first_row = np.where(offsets >= 0, np.minimum(offsets, cap), cap).astype(np.int32)
    at = length_b - length_a + d  # the band cell of (length_a, length_b)
    empty = length_a == 0
    result[empty] = first_row[at[empty]]
    live = np.nonzero(~empty)[0]
    a, length_a, at = a[live], length_a[live], at[live]
    pad = np.full((len(live), d + 1), -2, dtype=np.int64)
    right = np.full((len(live), max(d + 1, a.shape[1] - b.shape[1] + d + 1)), -2, dtype=np.int64)
    padded_b = np.concatenate([pad, b[live], right], axis=1)
    row = np.broadcast_to(first_row, (len(live), band)).copy()
    width_b = b.shape[1]
    i = 0
    while len(live):
        i += 1
        j = i + offsets  # column of every band cell in this row
        mismatch = a[:, i - 1][:, None] != padded_b[:, j + d]
        best = row + mismatch  # from D[i-1, j-1]: the same band cell
        np.minimum(best[:, :-1], row[:, 1:] + 1, out=best[:, :-1])  # from D[i-1, j]
        best[:, (j < 0) | (j > width_b)] = cap
        # insertions from the left: a running minimum over the band
        row = np.minimum(np.minimum.accumulate(best - steps, axis=1) + steps, cap)
        ending = length_a == i
        result[live[ending]] = row[ending, at[ending]]
        going = (length_a > i) & (row.min(axis=1) < cap)
        if going.sum() < 0.8 * len(going):  # compact once a fifth has left
            live, a, padded_b, row = live[going], a[going], padded_b[going], row[going]
            length_a, at = length_a[going], at[going]
    return result


def hunks(a: list, b: list) -> list[tuple[int, int, int, int]]:
    """The edits turning sequence ``a`` into ``b``: ``(i1, i2, j1, j2)`` spans replaced.

    A minimal Levenshtein alignment (substitution preferred over an
    insertion and deletion) of what remains after the common prefix and
    suffix; consecutive edits merge into one span.
    """
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    x, y = a[start:end_a], b[start:end_b]
    table = np.zeros((len(x) + 1, len(y) + 1), dtype=np.int64)
    table[:, 0] = np.arange(len(x) + 1)
    table[0, :] = np.arange(len(y) + 1)
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            table[i, j] = min(
                table[i - 1, j - 1] + (x[i - 1] != y[j - 1]),
                table[i - 1, j] + 1,
                table[i, j - 1] + 1,
            )
    steps = []  # (i, j, edited) walking back from the end
    i, j = len(x), len(y)
    while i or j:
        if i and j and table[i, j] == table[i - 1, j - 1] + (x[i - 1] != y[j - 1]):
            steps.append((i - 1, j - 1, 1, 1, x[i - 1] != y[j - 1]))
            i, j = i - 1, j - 1
        elif i and table[i, j] == table[i - 1, j] + 1:
            steps.append((i - 1, j, 1, 0, True))
            i -= 1
        else:
            steps.append((i, j - 1, 0, 1, True))
            j -= 1
    spans: list[list[int]] = []
    previous_edited = False
    for i, j, di, dj, edited in reversed(steps):
        if edited:
            if previous_edited:
                spans[-1][1] = i + di
                spans[-1][3] = j + dj
            else:
                spans.append([i, i + di, j, j + dj])
        previous_edited = edited
    return [(s[0] + start, s[1] + start, s[2] + start, s[3] + start) for s in spans]
