"""The error the Hugging Face collector raises before any model work."""

from __future__ import annotations

from rankstats.errors import RankstatsError

__all__ = ["CollectorError"]


class CollectorError(RankstatsError, ValueError):
    """The models, tasks, templates or settings of a collection cannot be run as given.

    Raised while planning, before any model is loaded; the message names the
    model, task, template, sample or setting at fault.
    """
