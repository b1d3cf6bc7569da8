"""The one parser of option values that come from a user, as text or as Python values.

Every option a user can set (``rankstats import ... -O NAME=VALUE``, an
importer's keywords, :func:`rankstats.from_records`' keywords) goes through
a parser of this module, so the same text means the same thing everywhere:

- booleans are exactly ``true``/``false``, ``yes``/``no`` or ``1``/``0`` (in
  any case; Python ``True``/``False`` and the integers 1 and 0 too), and
  anything else (``off``, ``maybe``, ``2``, ``0.0``) is refused with the
  allowed values;
- NumPy scalars and ``str`` subclasses (``numpy.str_``, ``numpy.bool_``,
  ``numpy.int64``) count as the Python values they stand for, and come back
  as plain ``str``, ``bool`` and ``int``;
- choices are one of a fixed list (in any case), numbers are checked
  against their range, regular expressions are compiled and their groups
  checked, lists and mappings are read from JSON or from ``a,b`` and
  ``k=v,k=v`` text;
- an unknown option name is refused with the list of known ones.

A parser is a callable ``parser(function, name, value) -> value``, the
signature of :mod:`rankstats._options`' checks: ``function`` and ``name``
only go into the message of the :class:`~rankstats.errors.OptionError` it
raises. Parsers accept the value already parsed, so parsing twice (the
command line, then the importer) gives the same result.

Examples
--------
>>> from rankstats import _text
>>> _text.boolean("f", "higher_is_better", "No"), _text.boolean("f", "higher_is_better", 1)
(False, True)
>>> _text.boolean("f", "higher_is_better", "off")
Traceback (most recent call last):
...
rankstats.errors.OptionError: f: higher_is_better='off' is not allowed; higher_is_better must \
be true or false (also yes/no or 1/0, in any case)
>>> parsers = {"layout": _text.choice("long", "wide"), "block_rows": _text.integer(low=1)}
>>> _text.parse_options(["layout=wide", "block-rows=100"], parsers, function="table")
{'layout': 'wide', 'block_rows': 100}
>>> _text.parse_options(["lay=wide"], parsers, function="table")
Traceback (most recent call last):
...
rankstats.errors.OptionError: table: unknown option 'lay' (did you mean 'layout'?); the \
options are: block_rows, layout
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .errors import OptionError

__all__ = [
    "FALSE",
    "TRUE",
    "Parser",
    "any_value",
    "boolean",
    "check_keywords",
    "choice",
    "integer",
    "mapping",
    "number",
    "optional",
    "parse_options",
    "regex",
    "takes_options",
    "text",
    "text_list",
]

Parser = Callable[[str, str, object], object]

TRUE = ("true", "yes", "1")
FALSE = ("false", "no", "0")
_NULL = "null"


def refuse(function: str, name: str, value, allowed: str):
    """Raise the :class:`OptionError` of an option value that is not allowed."""
    raise OptionError(
        f"{function}: {name}={_shown(value)} is not allowed; {name} must be {allowed}"
    )


def _shown(value) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _integral(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    )


def _real(value) -> bool:
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    )


def boolean(function: str, name: str, value) -> bool:
    """True or False, from a bool, 1 or 0, or the text true/false, yes/no, 1/0 (any case)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if _integral(value) and int(value) in (0, 1):
        return bool(int(value))
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE:
            return True
        if word in FALSE:
            return False
    refuse(function, name, value, "true or false (also yes/no or 1/0, in any case)")


def choice(*allowed: str) -> Parser:
    """One of ``allowed`` (text, matched in any case, returned as written in ``allowed``)."""
    lower = {a.lower(): a for a in allowed}
    shown = ", ".join(repr(a) for a in allowed)

    def parse(function, name, value):
        if isinstance(value, str) and value.strip().lower() in lower:
            return lower[value.strip().lower()]
        refuse(function, name, value, f"one of {shown}")

    parse.allowed = allowed
    return parse


def optional(parser: Parser) -> Parser:
    """``parser``, or None (given as None, or as the text ``null``)."""

    def parse(function, name, value):
        if value is None or (isinstance(value, str) and value.strip().lower() == _NULL):
            return None
        return parser(function, name, value)

    parse.allowed = getattr(parser, "allowed", None)
    return parse


def integer(*, low: int | None = None, high: int | None = None) -> Parser:
    """A whole number within ``[low, high]``, from an integer or its decimal text."""
    bounds = _bounds(low, high)

    def parse(function, name, value):
        number_ = None
        if _integral(value):
            number_ = int(value)
        elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            number_ = int(value)
        if (
            number_ is not None
            and (low is None or number_ >= low)
            and (high is None or number_ <= high)
        ):
            return number_
        refuse(function, name, value, f"a whole number{bounds}")

    return parse


def number(*, low: float | None = None, high: float | None = None) -> Parser:
    """A finite number within ``[low, high]``, from a number or its text."""
    bounds = _bounds(low, high)

    def parse(function, name, value):
        result = None
        if _real(value):
            result = float(value)
        elif isinstance(value, str):
            try:
                result = float(value.strip())
            except ValueError:
                result = None
        if (
            result is not None
            and math.isfinite(result)
            and (low is None or result >= low)
            and (high is None or result <= high)
        ):
            return result
        refuse(function, name, value, f"a finite number{bounds}")

    return parse


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" of at least {low}"
    if high is not None:
        return f" of at most {high}"
    return ""


def text(function: str, name: str, value) -> str:
    """Non-empty text without control characters (a whole number is taken as its digits)."""
    if _integral(value):
        return str(int(value))
    if isinstance(value, str) and value.strip() and not _CONTROL.search(value):
        return str(value)  # a str subclass (numpy.str_) stored as plain text
    refuse(function, name, value, "non-empty text without control characters")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def text_list(function: str, name: str, value) -> list[str]:
    """A list of text: a list or tuple, a JSON list, or comma-separated text (``a,b``)."""
    items = value
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                items = json.loads(stripped)
            except ValueError:
                refuse(function, name, value, "a JSON list of text, or text like a,b")
        else:
            items = [part.strip() for part in stripped.split(",")]
    if isinstance(items, (list, tuple)):
        try:
            return [text(function, f"{name}[{i}]", item) for i, item in enumerate(items)]
        except OptionError:
            pass
    refuse(function, name, value, "a list of text (a JSON list, or text like a,b)")


def mapping(*, keys: Iterable[str] | None = None, values: Parser | None = None) -> Parser:
    """A dict of text keys (among ``keys``), from a dict, a JSON object or ``k=v,k=v`` text.

    ``values`` parses each value (named ``NAME.KEY`` in messages); without
    it values are kept as given (JSON values stay numbers, text stays text).
    """
    allowed = tuple(keys) if keys is not None else None

    def parse(function, name, value):
        items = value
        if isinstance(value, str):
            stripped = value.strip()
            if stripped.startswith("{"):
                try:
                    items = json.loads(stripped)
                except ValueError:
                    refuse(function, name, value, "a JSON object, or text like key=value,key=value")
            else:
                items = {}
                for part in filter(None, (p.strip() for p in stripped.split(","))):
                    key, equals, item = part.partition("=")
                    if not equals or not key.strip():
                        refuse(
                            function, name, value, "a JSON object, or text like key=value,key=value"
                        )
                    items[key.strip()] = item.strip()
        if not isinstance(items, Mapping):
            refuse(function, name, value, "a mapping: a JSON object, or text like key=value")
        result = {}
        for key, item in items.items():
            if not isinstance(key, str) or (allowed is not None and key not in allowed):
                known = f"one of {', '.join(map(repr, allowed))}" if allowed else "text"
                raise OptionError(
                    f"{function}: {name} has the key {key!r}; its keys must be {known}"
                )
            result[str(key)] = values(function, f"{name}.{key}", item) if values else item
        return result

    return parse


def regex(*, groups: Iterable[str] = ()) -> Parser:
    """A regular expression (kept as text) that compiles and has the named ``groups``."""
    needed = tuple(groups)

    def parse(function, name, value):
        if isinstance(value, re.Pattern):
            value = value.pattern
        if not isinstance(value, str) or not value:
            refuse(function, name, value, "a regular expression")
        try:
            pattern = re.compile(value)
        except re.error as error:
            refuse(function, name, value, f"a regular expression ({error})")
        missing = [g for g in needed if g not in pattern.groupindex]
        if missing:
            refuse(
                function,
                name,
                value,
                "a regular expression with the named groups "
                + " and ".join(f"(?P<{g}>...)" for g in needed),
            )
        return str(value)

    return parse


def any_value(function: str, name: str, value):
    """Any value, unchanged (for options an importer checks against its files)."""
    return value


def check_keywords(function: str, given: Mapping[str, object], known: Mapping[str, Parser]) -> dict:
    """Parse the keyword arguments ``given`` with ``known``; refuse unknown names.

    Returns the parsed values. The error of an unknown name lists the known
    ones and suggests the closest.
    """
    unknown = [name for name in given if name not in known]
    if unknown:
        raise _unknown(function, unknown[0], known)
    return {name: known[name](function, name, value) for name, value in given.items()}


def _unknown(function: str, name: str, known: Iterable[str]) -> OptionError:
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return OptionError(
        f"{function}: unknown option {name!r}{hint}; the options are: {', '.join(names) or 'none'}"
    )


def parse_options(
    pairs: Iterable[str] | Mapping[str, object],
    known: Mapping[str, Parser] | None = None,
    *,
    function: str = "options",
) -> dict:
    """Options given as ``NAME=VALUE`` text (the command line's ``-O``), parsed and checked.

    Parameters
    ----------
    pairs : iterable of str, or mapping
        ``"NAME=VALUE"`` strings (a ``-`` in NAME counts as ``_``), or a
        mapping of names to values.
    known : mapping of name to parser, optional
        The options and their parsers (an importer's ``load.options``).
        Without it (a third-party importer that declares none), a value is
        read as JSON where it parses, else kept as text, and the importer
        checks its own names.
    function : str
        Who takes the options, for messages (e.g. ``"importer 'table'"``).

    Returns
    -------
    dict
        Name -> parsed value.

    Raises
    ------
    rankstats.errors.OptionError
        A pair is not ``NAME=VALUE``, a name is given twice or is unknown,
        or a value is not allowed.
    """
    if isinstance(pairs, Mapping):
        named = dict(pairs)
    else:
        named = {}
        for spec in pairs:
            name, equals, value = str(spec).partition("=")
            name = name.strip().replace("-", "_")
            if not equals or not name.isidentifier():
                raise OptionError(
                    f"{function}: option {spec!r} is not NAME=VALUE (e.g. metric=acc)"
                )
            if name in named:
                raise OptionError(f"{function}: option {name!r} is given twice")
            named[name] = value
    if known is None:
        return {name: _json_or_text(value) for name, value in named.items()}
    return check_keywords(function, named, known)


def _json_or_text(value):
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def takes_options(function: str, known: Mapping[str, Parser]):
    """Decorate ``load(paths, **options)``: refuse unknown options, parse the others first.

    The decorated function keeps its signature and docstring; its
    ``options`` attribute maps each option to its parser, so a command line
    can parse ``NAME=VALUE`` text with :func:`parse_options` before calling
    it. Values are checked before the function runs, so a bad number or
    regular expression is refused before any file is read.
    """

    def decorate(load):
        @functools.wraps(load)
        def checked(paths, **options):
            return load(paths, **check_keywords(function, options, known))

        checked.options = dict(known)
        return checked

    return decorate
