"""Importers of published result files: each turns files on disk into a score cube.

An importer is a function ``load(paths, **options) -> cube``: ``paths`` is a
path (or a sequence of paths) to the files as published, the options are the
importer's own, and the result is a validated cube. Importers only read;
writing a cube is separate (:func:`rankstats.save`, atomic).

Importers are found by name in a registry. The built-in ones are imported only
when first used; other packages add theirs through the entry-point group
``rankstats.importers`` (``name = "package.module:load"``), which is also how
the ``rankstats`` command finds importers without importing this package.

A malformed file stops an import with :class:`ImporterError`, a
:class:`rankstats.CubeError` whose message names the file, row and column.

Examples
--------
>>> from collectors import files
>>> "mizrahi2024" in files.available()
True
>>> files.get("mizrahi2024").__name__
'load'
>>> files.get("no-such-release")
Traceback (most recent call last):
...
collectors.files.UnknownImporterError: no importer named 'no-such-release' (available: ...)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from rankstats.errors import CubeError

__all__ = [
    "ENTRY_POINT_GROUP",
    "ImporterError",
    "UnknownImporterError",
    "available",
    "file_error",
    "get",
    "register",
    "unregister",
]

ENTRY_POINT_GROUP = "rankstats.importers"
_BUILTIN = {"mizrahi2024": "collectors.files.mizrahi2024:load"}
_REGISTRY: dict[str, Callable | str | EntryPoint] = dict(_BUILTIN)


class ImporterError(CubeError):
    """A published result file is malformed; the message names the file, row and column."""


class UnknownImporterError(KeyError):
    """No importer is registered under the requested name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def file_error(file, problem: str, *, row=None, column=None) -> ImporterError:
    """An :class:`ImporterError` locating ``problem`` in ``file``.

    Parameters
    ----------
    file : str or os.PathLike
        The file, as it should be shown.
    problem : str
        What is wrong.
    row : int or str, optional
        The row: a record number (1 = the first row after the header), or a
        description such as ``"header"`` (shown as "header row") or a JSON
        key.
    column : str, optional
        The column (or field) at fault.

    Returns
    -------
    ImporterError
        To be raised by the caller.

    Examples
    --------
    >>> from collectors.files import file_error
    >>> str(file_error("acc.csv", "'n/a' is not a number", row=3, column="m_acc"))
    "'acc.csv', row 3, column 'm_acc': 'n/a' is not a number"
    """
    where = [repr(str(file))]
    if row is not None:
        where.append("header row" if row == "header" else f"row {row}")
    if column is not None:
        where.append(f"column {str(column)!r}")
    return ImporterError(f"{', '.join(where)}: {problem}")


def register(name: str, load: Callable | str, *, replace: bool = False) -> None:
    """Register an importer under ``name``.

    Parameters
    ----------
    name : str
        The importer's name, as users pass it to :func:`get`.
    load : callable or str
        ``load(paths, **options) -> cube``, or its import path
        ``"package.module:function"`` (imported when first used).
    replace : bool, default False
        Allow replacing an existing entry.
    """
    if not (callable(load) or (isinstance(load, str) and ":" in load)):
        raise TypeError(f"importer {name!r}: give a callable or 'package.module:function'")
    if name in _REGISTRY and not replace:
        raise ValueError(f"an importer named {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = load


def unregister(name: str) -> None:
    """Remove the importer registered under ``name``."""
    if name not in _REGISTRY:
        raise UnknownImporterError(f"no importer named {name!r} is registered")
    del _REGISTRY[name]


def _load_entry_points() -> None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        _REGISTRY.setdefault(entry.name, entry)


def available() -> list[str]:
    """Names of every registered importer, entry points included, sorted."""
    _load_entry_points()
    return sorted(_REGISTRY)


def get(name: str) -> Callable:
    """The importer registered under ``name``, imported if it was given by its path.

    Raises
    ------
    UnknownImporterError
        Naming the importers that are available.
    """
    _load_entry_points()
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownImporterError(f"no importer named {name!r} (available: {known})")
    load = _REGISTRY[name]
    if isinstance(load, EntryPoint):
        load = load.load()
    elif isinstance(load, str):
        module, _, attribute = load.partition(":")
        load = getattr(importlib.import_module(module), attribute)
    _REGISTRY[name] = load
    return load
