"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IMPORTERS = "rankstats.importers"


@pytest.fixture
def declared_importers(monkeypatch):
    """``rankstats import`` sees the importers pyproject.toml declares, installed or not."""
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as handle:
        declared = tomllib.load(handle)["project"]["entry-points"][IMPORTERS]
    real = importlib.metadata.entry_points

    def entry_points(**selection):
        found = real(**selection)
        if selection.get("group") != IMPORTERS:
            return found
        names = {entry.name for entry in found}
        extra = [
            importlib.metadata.EntryPoint(name, target, IMPORTERS)
            for name, target in declared.items()
            if name not in names
        ]
        return importlib.metadata.EntryPoints([*found, *extra])

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return declared
