"""Importers of published result files: each turns files on disk into a score cube.

An importer is a function ``load(paths, **options) -> cube``: ``paths`` is a
path (or a sequence of paths) to the files as published, the options are the
importer's own, and the result is a validated cube. Importers only read;
writing a cube is separate (:func:`rankstats.save`, atomic).

Importers are found by name in the entry-point group ``rankstats.importers``
(``name = "package.module:load"``), the only list of them: this distribution
declares its own there in pyproject.toml, other packages add theirs the same
way, and the ``rankstats import`` command reads the same group without
importing this package. Each is imported only when first used.

A malformed file stops an import with :class:`ImporterError`, a
:class:`rankstats.CubeError` whose message names the file, row and column.

Examples
--------
>>> from rankstats_collectors import files
>>> "mizrahi2024" in files.available()
True
>>> files.get("mizrahi2024").__name__
'load'
>>> files.get("no-such-release")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankstats_collectors.files.UnknownImporterError: no importer named 'no-such-release' ...
"""

from __future__ import annotations

from rankstats.errors import CubeError, UnknownNameError

from .._registry import Registry

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


class ImporterError(CubeError):
    """A published result file is malformed; the message names the file, row and column."""


class UnknownImporterError(UnknownNameError):
    """No importer is registered under the requested name."""


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
    >>> from rankstats_collectors.files import file_error
    >>> str(file_error("acc.csv", "'n/a' is not a number", row=3, column="m_acc"))
    "'acc.csv', row 3, column 'm_acc': 'n/a' is not a number"
    """
    where = [repr(str(file))]
    if row is not None:
        where.append("header row" if row == "header" else f"row {row}")
    if column is not None:
        where.append(f"column {str(column)!r}")
    return ImporterError(f"{', '.join(where)}: {problem}")


_IMPORTERS = Registry("importer", ENTRY_POINT_GROUP, error=UnknownImporterError)
register = _IMPORTERS.register
unregister = _IMPORTERS.unregister
available = _IMPORTERS.available
get = _IMPORTERS.get
