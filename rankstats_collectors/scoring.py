"""Scorers: turn a model's response and a sample's gold answer into a score.

A scorer is a callable ``(prediction, sample) -> float``. The built-in ones
(``"exact_match"``, ``"contains"``) compare the prediction with the gold
answer after normalisation; ``sample`` may be a
:class:`rankstats_collectors.tasks.Sample`, a mapping with a ``"gold"`` key, or the gold
answer itself (a string, or a sequence of acceptable strings).

Examples
--------
>>> from rankstats_collectors.scoring import get_scorer
>>> scorer = get_scorer("exact_match")
>>> scorer("  The answer: Yes. ", {"gold": "yes"})
0.0
>>> get_scorer("contains")("The answer: Yes.", {"gold": "yes"})
1.0
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from rankstats.errors import InputTypeError, UnknownNameError

__all__ = ["contains", "exact_match", "get_scorer", "gold_of", "normalise"]

_ARTICLES = re.compile(r"\b(a|an|the)\b", flags=re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _is_punctuation(character: str) -> bool:
    return character in _ASCII_PUNCTUATION or unicodedata.category(character).startswith("P")


def normalise(
    text: str,
    *,
    lowercase: bool = True,
    strip_punctuation: bool = True,
    strip_articles: bool = False,
    collapse_whitespace: bool = True,
) -> str:
    """Normalise a response or a gold answer before comparing them.

    Parameters
    ----------
    text : str
        The text.
    lowercase : bool, default True
        Lower-case it (``str.casefold``).
    strip_punctuation : bool, default True
        Remove ASCII punctuation (:data:`string.punctuation`, which includes
        symbols such as ``$`` and ``^``) and every Unicode punctuation
        character (categories ``P*``).
    strip_articles : bool, default False
        Remove the English articles "a", "an" and "the" as whole words.
    collapse_whitespace : bool, default True
        Turn runs of whitespace into one space and strip both ends.

    Returns
    -------
    str

    Notes
    -----
    The steps run in the order of the parameters, as in the SQuAD evaluation
    script (which also strips articles).

    Examples
    --------
    >>> from rankstats_collectors.scoring import normalise
    >>> normalise("  (A)  The   Answer! ")
    'a the answer'
    >>> normalise("The Answer!", strip_articles=True)
    'answer'
    >>> normalise("Yes.", lowercase=False, strip_punctuation=False)
    'Yes.'
    """
    if not isinstance(text, str):
        raise InputTypeError(f"can only normalise text, not {type(text).__name__}: {text!r}")
    if lowercase:
        text = text.casefold()
    if strip_punctuation:
        text = "".join(c for c in text if not _is_punctuation(c))
    if strip_articles:
        text = _ARTICLES.sub(" ", text)
    if collapse_whitespace:
        text = _SPACE.sub(" ", text).strip()
    return text


def _golds(gold) -> list[str]:
    if isinstance(gold, str):
        return [gold]
    if isinstance(gold, Sequence) and gold and all(isinstance(g, str) for g in gold):
        return list(gold)
    raise InputTypeError(
        f"the gold answer must be a string or a non-empty sequence of strings, not {gold!r}"
    )


def exact_match(prediction: str, gold: str | Sequence[str], **normalisation) -> float:
    """1.0 when the normalised prediction equals a normalised gold answer, else 0.0.

    Parameters
    ----------
    prediction : str
        The model's response.
    gold : str or sequence of str
        The gold answer, or every acceptable answer.
    **normalisation
        Options of :func:`normalise`.

    Returns
    -------
    float

    Examples
    --------
    >>> from rankstats_collectors.scoring import exact_match
    >>> exact_match("Yes.", "yes")
    1.0
    >>> exact_match("(B)", ["B", "(B) the second"])
    1.0
    >>> exact_match("Yes.", "yes", strip_punctuation=False)
    0.0
    """
    candidate = normalise(prediction, **normalisation)
    return float(any(candidate == normalise(g, **normalisation) for g in _golds(gold)))


def contains(prediction: str, gold: str | Sequence[str], **normalisation) -> float:
    """1.0 when a normalised gold answer occurs in the normalised prediction as whole words.

    Parameters
    ----------
    prediction : str
        The model's response.
    gold : str or sequence of str
        The gold answer, or every acceptable answer.
    **normalisation
        Options of :func:`normalise`.

    Returns
    -------
    float

    Notes
    -----
    The gold answer must start and end at word boundaries, so "no" is not
    found in "not"; an empty gold answer is never found.

    Examples
    --------
    >>> from rankstats_collectors.scoring import contains
    >>> contains("I think the answer is Yes.", "yes")
    1.0
    >>> contains("That is not right", "no")
    0.0
    """
    candidate = normalise(prediction, **normalisation)
    for g in _golds(gold):
        wanted = normalise(g, **normalisation)
        if wanted and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", candidate):
            return 1.0
    return 0.0


def gold_of(sample):
    """The gold answer of a sample, a mapping with a ``"gold"`` key, or a gold answer itself.

    Examples
    --------
    >>> from rankstats_collectors.scoring import gold_of
    >>> gold_of({"gold": "No", "question": "..."})
    'No'
    >>> gold_of(["yes", "y"])
    ['yes', 'y']
    """
    if hasattr(sample, "gold"):
        return sample.gold
    if isinstance(sample, Mapping):
        if "gold" not in sample:
            raise UnknownNameError(f"the sample has no 'gold' field (it has: {', '.join(sample)})")
        return sample["gold"]
    return sample


def _against_gold(compare, prediction: str, sample, **normalisation) -> float:
    return compare(prediction, gold_of(sample), **normalisation)


_SCORERS = {"exact_match": exact_match, "contains": contains}


def get_scorer(name_or_callable: str | Callable, **normalisation) -> Callable[[str, object], float]:
    """A scorer ``(prediction, sample) -> float`` by name, or a callable as it is.

    Parameters
    ----------
    name_or_callable : {"exact_match", "contains"} or callable
        A built-in scorer's name, or a callable ``(prediction, sample) ->
        float`` (e.g. one of LMentry's task-specific scorers), returned
        unchanged.
    **normalisation
        Options of :func:`normalise` for the built-in scorers.

    Returns
    -------
    callable

    Raises
    ------
    rankstats.errors.UnknownNameError
        No built-in scorer has that name.

    Examples
    --------
    >>> from rankstats_collectors.scoring import get_scorer
    >>> get_scorer("exact_match", strip_articles=True)("the cat", {"gold": "cat"})
    1.0
    >>> get_scorer("bleu")
    Traceback (most recent call last):
    ...
    rankstats.errors.UnknownNameError: no scorer named 'bleu' (available: contains, exact_match; \
or pass a callable (prediction, sample) -> float)
    """
    if callable(name_or_callable):
        if normalisation:
            raise InputTypeError("normalisation options apply only to the built-in scorers")
        return name_or_callable
    if name_or_callable not in _SCORERS:
        raise UnknownNameError(
            f"no scorer named {name_or_callable!r} (available: {', '.join(sorted(_SCORERS))}; "
            "or pass a callable (prediction, sample) -> float)"
        )
    normalise("", **normalisation)  # reject unknown options now, not at the first score
    return partial(_against_gold, _SCORERS[name_or_callable], **normalisation)
