"""The arguments of the testing kit, parsed as the rest of rankstats parses options.

Flags take what :func:`rankstats._text.boolean` takes (``True``, ``"no"``,
``numpy.bool_``), choices what :func:`rankstats._text.choice` takes, sizes
whole numbers (a NumPy integer too, never a float), and every value is
checked when the strategy or check is made, before hypothesis draws anything:
an absurd size is an :class:`~rankstats.errors.OptionError` naming the
argument, not a ``MemoryError`` or an ``Unsatisfiable`` search minutes later.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from .. import _text
from ..errors import InputTypeError, OptionError

#: The most values one drawn array may hold. Hypothesis builds every value from its own
#: bytes; far past this it gives up on the inputs as too large, or memory runs out.
MAX_VALUES = 100_000
#: The most values drawn one by one as distinct values (``ties="none"``), each from its own
#: draw; past this hypothesis cannot finish generating the inputs.
MAX_DISTINCT = 1_000

_POSITIVE = _text.integer(low=1)
_TOLERANCE = _text.number(low=0)


def flag(function: str, name: str, value) -> bool:
    """A bool, parsed as everywhere in rankstats (``"no"`` is False, ``"maybe"`` refused)."""
    return _text.boolean(function, name, value)


def optional_flag(function: str, name: str, value) -> bool | None:
    """:func:`flag`, or None (drawn)."""
    return None if value is None else flag(function, name, value)


def choice(function: str, name: str, value, allowed) -> str:
    """One of ``allowed`` (text, in any case), as written in ``allowed``."""
    return _text.choice(*allowed)(function, name, value)


def count(function: str, name: str, value, *, low: int = 0, high: int | None = None) -> int:
    """A whole number within ``[low, high]`` (a NumPy integer too; a float or a bool refused)."""
    return _text.integer(low=low, high=high)(function, name, value)


def sizes(function: str, name: str, value, *, high: int = MAX_VALUES) -> tuple[int, int] | None:
    """An int or an inclusive ``(low, high)`` pair, as ``(low, high)``; None for a strategy.

    A strategy of ints is taken as it is (its draws are checked when drawn,
    by :func:`drawn_size`).
    """
    if isinstance(value, st.SearchStrategy):
        return None
    allowed = (
        f"a whole number from 0 to {high}, an inclusive (low, high) pair of them, or "
        "a strategy of ints"
    )
    if isinstance(value, (tuple, list)) and len(value) == 2:
        try:
            low_, high_ = (
                count(function, f"{name}[{i}]", v, high=high) for i, v in enumerate(value)
            )
        except OptionError:
            _text.refuse(function, name, value, allowed)
        if low_ > high_:
            raise OptionError(f"{function}: {name}={tuple(value)!r}: need 0 <= low <= high")
        return low_, high_
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    ):
        if 0 <= value <= high:
            return int(value), int(value)
    _text.refuse(function, name, value, allowed)


def size_strategy(function: str, name: str, value, *, high: int = MAX_VALUES):
    """:func:`sizes` as a strategy of ints (a given strategy has its draws checked)."""
    bounds = sizes(function, name, value, high=high)
    if bounds is None:
        return value.map(lambda drawn: drawn_size(function, name, drawn, high))
    return st.integers(*bounds)


def drawn_size(function: str, name: str, drawn, high: int = MAX_VALUES) -> int:
    """A size a user's strategy drew, checked as :func:`sizes` checks a given one."""
    return count(function, f"{name} (drawn)", drawn, high=high)


def largest(bounds) -> int | None:
    """The upper end of :func:`sizes`' answer; None where a strategy gives the sizes."""
    return None if bounds is None else bounds[1]


def check_total(function: str, what: str, *counts) -> None:
    """Refuse arrays of more than :data:`MAX_VALUES` values (counts given up front)."""
    known = [c for c in counts if c is not None]
    if len(known) == len(counts) and math.prod(known) > MAX_VALUES:
        raise OptionError(
            f"{function}: {what} can hold {math.prod(known):,} values; a drawn array may hold "
            f"at most {MAX_VALUES:,} (hypothesis cannot build larger ones): ask for fewer"
        )


def shape(function: str, name: str, value) -> tuple[int, ...]:
    """A tuple of whole sizes holding at most :data:`MAX_VALUES` values."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    ):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not value:
        _text.refuse(function, name, value, "a non-empty tuple of whole numbers")
    result = tuple(count(function, f"{name}[{i}]", v) for i, v in enumerate(value))
    check_total(function, f"{name}={result!r}", *result)
    return result


def tolerance(function: str, name: str, value) -> float:
    """A finite number of at least 0."""
    return _TOLERANCE(function, name, value)


def optional_tolerance(function: str, name: str, value) -> float | None:
    return None if value is None else tolerance(function, name, value)


def bound(function: str, name: str, value) -> float:
    """A number, infinite allowed (an open end), NaN refused."""
    if (
        isinstance(value, (numbers.Real, np.floating, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and not math.isnan(float(value))
    ):
        return float(value)
    _text.refuse(function, name, value, "a number (inf for no bound), not NaN")


def max_examples(function: str, value) -> int | None:
    """None (the profile's), or a whole number of at least 1."""
    return None if value is None else _POSITIVE(function, "max_examples", value)


def strategy(function: str, name: str, value):
    """None, or a hypothesis strategy."""
    if value is None or isinstance(value, st.SearchStrategy):
        return value
    raise InputTypeError(f"{function}: {name}={value!r} is not a hypothesis strategy")


def search_settings(function: str, value):
    """None, or a ``hypothesis.settings``."""
    if value is None or isinstance(value, hypothesis_settings):
        return value
    raise InputTypeError(f"{function}: settings={value!r} is not a hypothesis.settings")


def field(function: str, value):
    """None, a name (text) or a callable."""
    if value is None or callable(value):
        return value
    if isinstance(value, str) and value:
        return str(value)
    raise InputTypeError(f"{function}: field={value!r} is not a name (str) or a callable")
