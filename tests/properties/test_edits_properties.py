"""Properties of the minimal-edit search: it finds what comparing every pair finds."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import rankstats
from rankstats._kernels.edits import banded_levenshtein, encode, tokenize
from rankstats.analyses.edits import describe_edit, edit_pairs, minimal_edits

WORDS = ["a", "word", "the", "letter", "{x}", '"{x}"', ".", ":", "not", "\n", "lacks"]

texts_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=7).map(" ".join), min_size=1, max_size=14
)


def levenshtein(a, b) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


@given(
    texts_strategy,
    st.integers(0, 3),
    st.sampled_from(["tokens", "characters"]),
    st.integers(0, 2),
    st.integers(0, 9),
)
def test_search_equals_all_pairs(texts, max_distance, unit, groups, seed):
    min_distance = min(groups, max_distance)
    labels = np.random.default_rng(seed).integers(0, groups + 1, size=len(texts)).tolist()
    found = edit_pairs(
        texts, labels, max_distance=max_distance, unit=unit, min_distance=min_distance
    )
    sequences = [[t for t, _, _ in tokenize(text, unit)] for text in texts]
    expected = [
        (i, j, d)
        for i, j in itertools.combinations(range(len(texts)), 2)
        if labels[i] == labels[j] and texts[i] and texts[j]
        for d in [levenshtein(sequences[i], sequences[j])]
        if min_distance <= d <= max_distance
    ]
    assert list(found.itertuples(index=False, name=None)) == expected


@given(
    st.lists(st.sampled_from(WORDS), max_size=8),
    st.lists(st.sampled_from(WORDS), max_size=8),
    st.integers(0, 4),
)
def test_banded_distance_is_the_capped_distance(a, b, max_distance):
    codes, lengths, _ = encode([" ".join(a), " ".join(b)])
    tokens_a = [t for t, _, _ in tokenize(" ".join(a))]
    tokens_b = [t for t, _, _ in tokenize(" ".join(b))]
    if abs(len(tokens_a) - len(tokens_b)) > max_distance:
        return  # outside the length filter the band does not hold the answer
    got = banded_levenshtein(codes[[0]], codes[[1]], lengths[[0]], lengths[[1]], max_distance)
    assert int(got[0]) == min(levenshtein(tokens_a, tokens_b), max_distance + 1)


@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
)
def test_a_rule_has_at_most_as_many_parts_as_edits(a, b):
    first, second = " ".join(a), " ".join(b)
    rule = describe_edit(first, second)
    distance = levenshtein([t for t, _, _ in tokenize(first)], [t for t, _, _ in tokenize(second)])
    if distance == 0:
        assert rule in ("(identical)", "(whitespace)")
    else:
        assert 1 <= len(rule.split("; ")) <= distance


@settings(max_examples=20)  # 24 orders; each example builds and searches two cubes
@given(st.permutations(range(4)), st.integers(0, 20))
def test_models_permute_with_their_differences(order, seed):
    rng = np.random.default_rng(seed)
    texts = ["Use {x}.", "Use {x}:", "Use the {x}.", "Pick {x}."]
    models = ["m0", "m1", "m2", "m3"]
    scores = rng.random((4, len(texts)))
    records = pd.DataFrame(
        [
            {"model": m, "task": "t", "template": k, "template_text": text, "score": scores[i, k]}
            for i, m in enumerate(models)
            for k, text in enumerate(texts)
        ]
    )
    cube = rankstats.from_records(records)
    edits = minimal_edits(cube)
    shuffled = minimal_edits(cube.isel(model=list(order)))
    np.testing.assert_allclose(
        shuffled["difference"].sel(model=models).values, edits["difference"].values
    )
    # every pair of an edit reads the same way: its rule and the reverse never both appear
    rules = set(edits["rule"].values)
    assert "':' → '.'" not in rules or "'.' → ':'" not in rules
