"""Scorers: normalisation, exact match, containment, lookup by name."""

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankstats.errors import UnknownNameError
from rankstats_collectors.scoring import contains, exact_match, get_scorer, normalise
from rankstats_collectors.tasks import Sample


def squad_normalize_answer(s):
    """The SQuAD v1.1 evaluation script's normalize_answer, verbatim in logic."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


ASCII = st.text(alphabet=string.ascii_letters + string.punctuation + " \t", max_size=30)


@given(ASCII)
def test_normalise_matches_squad_on_ascii(text):
    assert normalise(text, strip_articles=True) == squad_normalize_answer(text)


@given(st.text(max_size=30))
def test_normalise_is_idempotent(text):
    once = normalise(text, strip_articles=True)
    assert normalise(once, strip_articles=True) == once


@given(st.text(max_size=20), st.text(max_size=20))
def test_exact_match_implies_contains(prediction, gold):
    if exact_match(prediction, gold) and normalise(gold):
        assert contains(prediction, gold) == 1.0


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("Yes", "yes", 1.0),
        (" yes. ", "Yes", 1.0),
        ("yes no", "yes", 0.0),
        ("(A)", "A", 1.0),
        ("B", ["A", "b"], 1.0),
        ("", "", 1.0),
    ],
)
def test_exact_match(prediction, gold, expected):
    assert exact_match(prediction, gold) == expected


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("I think yes, because", "yes", 1.0),
        ("not sure", "no", 0.0),
        ("The answer is (B).", "B", 1.0),
        ("anything", "", 0.0),
        ("new york city", "york city", 1.0),
    ],
)
def test_contains(prediction, gold, expected):
    assert contains(prediction, gold) == expected


def test_normalisation_options_pass_through():
    assert exact_match("Yes.", "yes", strip_punctuation=False) == 0.0
    assert exact_match("YES", "yes", lowercase=False) == 0.0
    assert exact_match("the cat", "cat", strip_articles=True) == 1.0
    assert normalise("a  b", collapse_whitespace=False) == "a  b"


def test_get_scorer_reads_gold_from_samples_mappings_and_values():
    scorer = get_scorer("exact_match")
    assert scorer("No", Sample("1", {}, "no")) == 1.0
    assert scorer("No", {"gold": "no", "question": "?"}) == 1.0
    assert scorer("No", ["no", "n"]) == 1.0
    assert get_scorer("contains", strip_articles=True)("it is the cat", {"gold": "a cat"}) == 1.0


def test_get_scorer_callables_and_errors():
    def first_letter(prediction, sample):
        return float(prediction[:1] == sample.gold[:1])

    assert get_scorer(first_letter) is first_letter
    with pytest.raises(UnknownNameError, match="no scorer named 'f1'"):
        get_scorer("f1")
    with pytest.raises(TypeError):
        get_scorer("exact_match", lowercas=True)
    with pytest.raises(TypeError):
        get_scorer(first_letter, lowercase=True)
    with pytest.raises(KeyError, match="no 'gold'"):
        get_scorer("exact_match")("x", {"question": "?"})
    with pytest.raises(TypeError, match="gold answer"):
        exact_match("x", None)
