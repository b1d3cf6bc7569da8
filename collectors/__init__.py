"""Collectors: adapters that fill a score cube from result files or model runs.

A collector's only output is a schema-valid cube (or long records that
:func:`rankstats.from_records` turns into one). Collectors import
:mod:`rankstats`, never the reverse.

Collectors are found by name in a registry. Each entry is a factory that
imports its heavy dependency only when called, and, if that dependency is
missing, raises :class:`MissingExtraError` naming the extra to install.
Other packages add collectors through the entry-point group
``rankstats.collectors``.

Examples
--------
>>> import collectors
>>> def build(**options):
...     return options
>>> collectors.register("example", build)
>>> collectors.get("example")(model="m")
{'model': 'm'}
>>> "example" in collectors.available()
True
>>> collectors.unregister("example")
"""

from __future__ import annotations

import importlib

from rankstats.errors import UnknownNameError

from ._registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "MissingExtraError",
    "UnknownCollectorError",
    "available",
    "get",
    "register",
    "require",
    "unregister",
]

ENTRY_POINT_GROUP = "rankstats.collectors"


class MissingExtraError(ImportError):
    """A collector needs an optional dependency that is not installed."""


class UnknownCollectorError(UnknownNameError):
    """No collector is registered under the requested name."""


_COLLECTORS = Registry("collector", ENTRY_POINT_GROUP, error=UnknownCollectorError)
register = _COLLECTORS.register
unregister = _COLLECTORS.unregister
available = _COLLECTORS.available
get = _COLLECTORS.get


def require(module: str, extra: str):
    """Import ``module``, or raise :class:`MissingExtraError` naming the extra that installs it.

    Examples
    --------
    >>> import collectors
    >>> collectors.require("json", "io").__name__
    'json'
    >>> collectors.require("no_such_module_here", "hf")
    Traceback (most recent call last):
    ...
    collectors.MissingExtraError: this collector needs 'no_such_module_here': \
pip install "rankstats[hf]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f'this collector needs {module!r}: pip install "rankstats[{extra}]"'
        ) from error
