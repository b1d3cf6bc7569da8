"""Reproduce published multi-prompt studies from their released data.

Examples
--------
>>> from rankstats import reproduce
>>> reproduce.available()
['mizrahi2024']
"""

from __future__ import annotations

from importlib import import_module

from ..errors import UnknownNameError

__all__ = ["audit", "available", "legend", "run"]

_STUDIES = {"mizrahi2024": "rankstats.reproduce.mizrahi2024"}


def available() -> list[str]:
    """Names of the studies that can be reproduced."""
    return sorted(_STUDIES)


def legend(name: str) -> str:
    """What the convention labels of study ``name`` mean."""
    _check(name)
    return import_module(_STUDIES[name]).LEGEND


def _check(name: str) -> None:
    if name not in _STUDIES:
        raise UnknownNameError(f"no study named {name!r} (available: {', '.join(available())})")


def run(name: str):
    """Recompute every table of study ``name``; a list of :class:`Comparison`."""
    _check(name)
    return import_module(_STUDIES[name]).reproduce()


def audit(name: str):
    """Where the release of study ``name`` contradicts itself; one row per contradiction."""
    _check(name)
    return import_module(_STUDIES[name]).audit()
