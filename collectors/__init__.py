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
from collections.abc import Callable
from importlib.metadata import entry_points

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
_REGISTRY: dict[str, Callable] = {}


class MissingExtraError(ImportError):
    """A collector needs an optional dependency that is not installed."""


class UnknownCollectorError(KeyError):
    """No collector is registered under the requested name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def register(name: str, factory: Callable, *, replace: bool = False) -> None:
    """Register ``factory`` under ``name``.

    Parameters
    ----------
    name : str
        The collector's name, as users will pass it to :func:`get`.
    factory : callable
        Called with the collector's options; it should import heavy
        dependencies inside (see :func:`require`).
    replace : bool, default False
        Allow replacing an existing entry.
    """
    if not callable(factory):
        raise TypeError(f"collector {name!r}: the factory must be callable")
    if name in _REGISTRY and not replace:
        raise ValueError(f"a collector named {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = factory


def unregister(name: str) -> None:
    """Remove the collector registered under ``name``."""
    if name not in _REGISTRY:
        raise UnknownCollectorError(f"no collector named {name!r} is registered")
    del _REGISTRY[name]


def _load_entry_points() -> None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in _REGISTRY:
            _REGISTRY[entry.name] = _deferred(entry)


def _deferred(entry) -> Callable:
    def factory(*args, **kwargs):
        return entry.load()(*args, **kwargs)

    factory.__doc__ = f"Collector {entry.name!r} from {entry.value}"
    return factory


def available() -> list[str]:
    """Names of every registered collector, entry points included, sorted."""
    _load_entry_points()
    return sorted(_REGISTRY)


def get(name: str) -> Callable:
    """The factory registered under ``name``.

    Raises
    ------
    UnknownCollectorError
        Naming the collectors that are available.
    """
    _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownCollectorError(
            f"no collector named {name!r} (available: {known})"
        ) from None


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
