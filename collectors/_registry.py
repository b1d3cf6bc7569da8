"""A registry of named entries: callables, their import paths, or entry points."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from rankstats.errors import UnknownNameError


class Registry:
    """Name → callable, filled by :meth:`register`, built-ins and an entry-point group.

    Entries given as ``"package.module:function"`` strings or as entry points
    are imported on first use, so heavy dependencies load only when needed.

    Examples
    --------
    >>> from collectors._registry import Registry
    >>> things = Registry("thing", "example.things")
    >>> things.register("json", "json:dumps")
    >>> things.get("json")([1])
    '[1]'
    >>> things.get("yaml")
    Traceback (most recent call last):
    ...
    rankstats.errors.UnknownNameError: no thing named 'yaml' (available: json)
    """

    def __init__(self, kind: str, group: str, builtin: dict[str, str] | None = None,
                 error: type[UnknownNameError] = UnknownNameError):
        self.kind = kind
        self.group = group
        self._error = error
        self._entries: dict[str, Callable | str | EntryPoint] = dict(builtin or {})

    def register(self, name: str, entry: Callable | str, *, replace: bool = False) -> None:
        """Register ``entry`` (a callable or ``"package.module:function"``) under ``name``."""
        if not (callable(entry) or (isinstance(entry, str) and ":" in entry)):
            raise TypeError(f"{self.kind} {name!r}: give a callable or 'package.module:function'")
        if name in self._entries and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered "
                             "(pass replace=True)")
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

    def get(self, name: str) -> Callable:
        """The callable registered under ``name``, imported on first use."""
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
            entry = getattr(importlib.import_module(module), attribute)
        self._entries[name] = entry
        return entry
