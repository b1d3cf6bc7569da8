"""Errors and warnings raised by rankstats.

Every error derives from :class:`RankstatsError` and from the built-in class a
caller would expect (``ValueError``, ``KeyError``, ``TypeError``), so both
``except rankstats.RankstatsError`` and ``except ValueError`` catch them.
Messages name the variable, dimension, task, template or value at fault.
"""

from __future__ import annotations

__all__ = [
    "CoordinateMismatchError",
    "CubeError",
    "DimensionError",
    "DuplicateKeyError",
    "InputTypeError",
    "MissingPathError",
    "MissingValueError",
    "OptionError",
    "OutputError",
    "PathError",
    "RankstatsError",
    "RankstatsWarning",
    "ScoreValueError",
    "UnknownNameError",
]


class RankstatsError(Exception):
    """Base class of every error rankstats raises on purpose."""


class CubeError(RankstatsError, ValueError):
    """A score cube, or the records it is built from, breaks the cube's conventions."""


class ScoreValueError(CubeError):
    """Scores that are not numbers, or lie outside the range their kind allows."""


class DuplicateKeyError(CubeError):
    """Several records share one (model, task, template, sample) key."""


class DimensionError(RankstatsError, ValueError):
    """A dimension a function needs is missing, or given twice, or in the wrong form."""


class CoordinateMismatchError(RankstatsError, ValueError):
    """Two inputs label a shared dimension differently."""


class MissingValueError(RankstatsError, ValueError):
    """Missing values met under ``nan_policy="raise"``."""


class OptionError(RankstatsError, ValueError):
    """An option's value is not among those allowed; the message names both."""


class PathError(RankstatsError, OSError):
    """A file or folder cannot be read or written: missing, a directory, a broken link, locked."""


class MissingPathError(PathError, FileNotFoundError):
    """A file or folder that must exist does not (a broken symbolic link included)."""


class OutputError(PathError):
    """An output must not be written where asked: an input, a directory, write-protected."""


class InputTypeError(RankstatsError, TypeError):
    """Inputs of the wrong kind, or a combination of arguments that cannot go together."""


class UnknownNameError(RankstatsError, KeyError):
    """No dataset, study, importer or collector goes by the requested name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RankstatsWarning(UserWarning):
    """A result is NaN or degenerate for a reason the caller should know."""
