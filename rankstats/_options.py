"""Option checks, run before any work, naming the function, the option and what is allowed.

A check is a callable ``check(function, name, value) -> value`` that returns
the value (normalised where that is safe, e.g. a NumPy integer to ``int``) or
raises :class:`~rankstats.errors.OptionError`. Statistics declare their checks
in :func:`rankstats._statistic.statistic`; other public functions call
:func:`check_options` at their top.

Values are taken as the rest of the scientific Python stack hands them: a
``str`` subclass (``numpy.str_``, a pandas cell) where text is asked, a NumPy
bool where a bool is, a NumPy integer where an int is, each returned as the
plain Python value so that attributes and messages stay plain. The kind of
value stays strict: a float is never an int, a string never a bool.

Each check carries a ``kind`` (``"text"``, ``"bool"``, ``"int"``, ``"float"``,
``"seed"``) saying which Python type its values have, so tests can feed every
option the NumPy form of a value.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping

import numpy as np

from .errors import OptionError

Check = Callable[[str, str, object], object]

NAN_POLICIES = ("propagate", "omit", "raise")
TIES = ("average", "min", "max", "dense", "ordinal")
P_ADJUST = ("holm", "bh", "by", "bonferroni", "none")
OVER = ("samples", "templates", "both")


def plain(value):
    """``value`` as a plain Python object where it is a NumPy scalar or a ``str`` subclass.

    Text becomes ``str``, a NumPy bool ``bool``, a NumPy integer ``int``, a
    NumPy float ``float``; anything else is returned as it is. The kind is
    kept: a float stays a float, so an integer check still refuses it.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats._options import plain
    >>> [type(plain(v)).__name__ for v in (np.str_("b"), np.bool_(True), np.int64(3), 2.5)]
    ['str', 'bool', 'int', 'float']
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


_PLAIN = frozenset({str, bool, int, float, type(None)})


def _refuse(function: str, name: str, value, allowed: str):
    raise OptionError(f"{function}: {name}={value!r} is not allowed; {name} must be {allowed}")


def one_of(*allowed) -> Check:
    """A check that the value is one of ``allowed`` (compared with ``==``, strings exactly)."""
    shown = ", ".join(repr(a) for a in allowed)
    # (type, value) pairs: a set lookup that, like the test below, tells 1 from True and 1.0
    exact = frozenset((type(a), a) for a in allowed)

    def check(function, name, value):
        if type(value) is str and (str, value) in exact:
            return value
        value = plain(value)
        if isinstance(value, (str, bool, type(None), numbers.Number)) and any(
            value == a and type(value) is type(a) for a in allowed
        ):
            return value
        _refuse(function, name, value, f"one of {shown}")

    check.allowed = allowed
    check.kind = "text" if all(type(a) is str for a in allowed) else None
    return check


def boolean(function: str, name: str, value) -> bool:
    """A check that the value is True or False (a NumPy bool too; not 0, 1 or a string)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    _refuse(function, name, value, "True or False")


def optional_boolean(function: str, name: str, value) -> bool | None:
    """:func:`boolean`, or None for "take it from the cube"."""
    return None if value is None else boolean(function, name, value)


boolean.kind = optional_boolean.kind = "bool"


def probability(function: str, name: str, value) -> float:
    """A check that the value is a number strictly between 0 and 1 (a level or a target)."""
    if _real(value) and 0 < float(value) < 1:
        return float(value)
    _refuse(function, name, value, "a number strictly between 0 and 1")


def unit_interval(function: str, name: str, value) -> float:
    """A check that the value is a number in [0, 1]."""
    if _real(value) and 0 <= float(value) <= 1:
        return float(value)
    _refuse(function, name, value, "a number between 0 and 1")


def positive_int(function: str, name: str, value) -> int:
    """A check that the value is an integer of at least 1."""
    if (
        isinstance(value, (numbers.Integral, np.integer))
        and not isinstance(value, bool)
        and value >= 1
    ):
        return int(value)
    _refuse(function, name, value, "an integer of at least 1")


def non_negative_int(function: str, name: str, value) -> int:
    """A check that the value is an integer of at least 0."""
    if (
        isinstance(value, (numbers.Integral, np.integer))
        and not isinstance(value, bool)
        and value >= 0
    ):
        return int(value)
    _refuse(function, name, value, "an integer of at least 0")


def finite(function: str, name: str, value) -> float:
    """A check that the value is a finite real number."""
    if _real(value) and np.isfinite(float(value)):
        return float(value)
    _refuse(function, name, value, "a finite number")


def seed(function: str, name: str, value):
    """A check that the value is None, an integer of at least 0 or a numpy Generator."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if (
        isinstance(value, (numbers.Integral, np.integer))
        and not isinstance(value, bool)
        and value >= 0
    ):
        return int(value)
    _refuse(function, name, value, "None, a non-negative integer or a numpy.random.Generator")


probability.kind = unit_interval.kind = finite.kind = "float"
positive_int.kind = non_negative_int.kind = "int"
seed.kind = "seed"


def optional(check: Check) -> Check:
    """``check``, or None."""

    def optional_check(function, name, value):
        return None if value is None else check(function, name, value)

    optional_check.allowed = getattr(check, "allowed", None)
    optional_check.kind = getattr(check, "kind", None)
    return optional_check


def _real(value) -> bool:
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    )


def check_options(function: str, checks: Mapping[str, Check], values: Mapping[str, object]) -> dict:
    """Check ``values[name]`` with ``checks[name]`` for every name; return the checked values.

    Examples
    --------
    >>> from rankstats._options import check_options, one_of, probability
    >>> check_options("f", {"ties": one_of("average", "min"), "confidence_level": probability},
    ...               {"ties": "min", "confidence_level": 0.9})
    {'ties': 'min', 'confidence_level': 0.9}
    >>> check_options("f", {"confidence_level": probability}, {"confidence_level": 1.5})
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: f: confidence_level=1.5 is not allowed; confidence_level must be a number strictly between 0 and 1
    """  # noqa: E501
    return {name: checks[name](function, name, value) for name, value in values.items()}
