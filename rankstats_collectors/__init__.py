"""Collectors: adapters that fill a score cube from result files or model runs.

A collector's only output is a schema-valid cube (or long records that
:func:`rankstats.from_records` turns into one). Collectors import
:mod:`rankstats`, never the reverse.

Collectors that run models are found by name in the entry-point group
``rankstats.collectors``, the only list of them: this distribution declares
``hf`` and ``openai`` there in pyproject.toml, and any other package adds one
the same way. An entry names a module (or any object) with
``add_arguments(parser)`` and ``run(arguments) -> int``, which is what
``rankstats collect NAME`` runs (:mod:`rankstats_collectors.cli`). It is imported only
when first used; one whose heavy dependency is missing raises
:class:`MissingExtraError` naming the extra to install (:func:`require`).
:func:`register` adds one for the running process only.

Examples
--------
>>> import rankstats_collectors
>>> rankstats_collectors.available()
['hf', 'openai'...]
>>> rankstats_collectors.register("example", "rankstats_collectors.cli")
>>> rankstats_collectors.get("example").__name__
'rankstats_collectors.cli'
>>> rankstats_collectors.unregister("example")
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
    >>> import rankstats_collectors
    >>> rankstats_collectors.require("json", "io").__name__
    'json'
    >>> rankstats_collectors.require("no_such_module_here", "hf")
    Traceback (most recent call last):
    ...
    rankstats_collectors.MissingExtraError: this collector needs 'no_such_module_here': \
pip install "rankstats[hf]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f'this collector needs {module!r}: pip install "rankstats[{extra}]"'
        ) from error
