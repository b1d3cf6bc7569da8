"""A registry of named entries, filled from one entry-point group.

The entry-point groups of installed distributions (``[project.entry-points]``
in pyproject.toml) are the only declaration of what exists; there is no
built-in list beside them. :meth:`Registry.register` adds an entry for the
running process only (a test, a notebook).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

from rankstats.errors import InputTypeError, OptionError, UnknownNameError


class Registry:
    """Name → object, filled from an entry-point group (and, in-process, by :meth:`register`).

    Entries given as ``"package.module:function"`` strings or as entry points
    are imported on first use, so heavy dependencies load only when needed.

    Examples
    --------
    >>> from rankstats_collectors._registry import Registry
    >>> things = Registry("thing", "example.things")
    >>> things.register("json", "json:dumps")
    >>> things.get("json")([1])
    '[1]'
    >>> things.get("yaml")
    Traceback (most recent call last):
    ...
    rankstats.errors.UnknownNameError: no thing named 'yaml' (available: json)
    """

    def __init__(self, kind: str, group: str, error: type[UnknownNameError] = UnknownNameError):
        self.kind = kind
        self.group = group
        self._error = error
        self._entries: dict[str, Callable | str | EntryPoint] = {}

    def register(self, name: str, entry, *, replace: bool = False) -> None:
        """Register ``entry`` under ``name``: a callable, a module, or its import path.

        An import path is ``"package.module"`` or ``"package.module:attribute"``, as in
        an entry point. For this process only; a package declares its entries in the
        entry-point group.
        """
        if not (callable(entry) or isinstance(entry, (str, ModuleType))):
            raise InputTypeError(
                f"{self.kind} {name!r}: give a callable, a module, or 'package.module[:attribute]'"
            )
        if name in self._entries and not replace:
            raise OptionError(
                f"a {self.kind} named {name!r} is already registered (pass replace=True)"
            )
        self._entries[name] = entry

    def unregister(self, name: str) -> None:
        """Remove the entry registered under ``name``."""
        if name not in self._entries:
            raise self._error(f"no {self.kind} named {name!r} is registered")
        del self._entries[name]

    def _discover(self) -> None:
        for entry in entry_points(group=self.group):
            self._entries.setdefault(entry.name, entry)

    def available(self) -> list[str]:
        """Every registered name, entry points included, sorted."""
        self._discover()
        return sorted(self._entries)

    def get(self, name: str):
        """The object registered under ``name``, imported on first use."""
        self._discover()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            raise self._error(f"no {self.kind} named {name!r} (available: {known})")
        entry = self._entries[name]
        # entry points by their interface: after some imports entry_points() returns the
        # backport's EntryPoint class, which is not importlib.metadata's
        if not callable(entry) and hasattr(entry, "load"):
            entry = entry.load()
        elif isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = importlib.import_module(module)
            entry = getattr(entry, attribute) if attribute else entry
        self._entries[name] = entry
        return entry
