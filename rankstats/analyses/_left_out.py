"""What each section of the report leaves out, and why: the report's log of drops.

Every statistic of the report drops something before it computes: padding and
absent models (structure), incomplete templates or models (``nan_policy``),
tasks with too few models or templates. :class:`Structure` holds the masks
that say which, over ``(task, model, template)``; :class:`Log` collects one
row per section, task (and model) and reason, and becomes the ``drop_*``
variables of the report (over the dimension ``drop``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["EVERY_SECTION", "Log", "Structure"]

#: The section of a row that every per-task section shares (absent models, empty templates).
EVERY_SECTION = "all"
#: The columns of the log, in order: ``drop_<column>`` in the report.
COLUMNS = ("section", "task", "model", "what", "count", "which", "why")


def _labels(array: xr.DataArray, dim: str) -> np.ndarray:
    if dim in array.coords:
        return np.array([str(label) for label in array[dim].values], dtype=object)
    return np.array([str(i) for i in range(array.sizes[dim])], dtype=object)


class Structure:
    """Which models, templates and scores each task has: NumPy masks over (task, model, template).

    ``observed`` are the scores; ``real`` the templates that exist (a non-empty
    ``template_id``, or any score without that coordinate); ``present`` the
    models with a score on some template of the task (the others are
    absent); ``scored`` the templates some model has a score on; ``hole`` a
    score missing where its model is present and its template scored;
    ``incomplete_template`` and ``incomplete_model`` the templates and
    models with a hole.
    """

    def __init__(self, scores: xr.DataArray):
        scores = scores.transpose("task", "model", "template")
        self.tasks = _labels(scores, "task")
        self.models = _labels(scores, "model")
        values = np.asarray(scores.values, dtype=float)
        self.observed = ~np.isnan(values)
        if "template_id" in scores.coords:
            ids = scores["template_id"].transpose("task", "template").values
            self.template_ids = np.asarray(ids, dtype=object).astype(str)
            self.real = self.template_ids != ""
        else:
            positions = _labels(scores, "template")
            self.template_ids = np.broadcast_to(positions, (len(self.tasks), len(positions)))
            self.real = self.observed.any(1)
        self.present = self.observed.any(2)
        self.scored = self.observed.any(1)
        self.hole = ~self.observed & self.present[:, :, None] & self.scored[:, None, :]
        self.incomplete_template = self.hole.any(1)
        self.incomplete_model = self.hole.any(2)
        self.n_models = self.present.sum(1)
        self.n_templates = self.scored.sum(1)
        self.values = values

    def templates(self, task: int, mask) -> list[str]:
        """The template ids of ``task`` where ``mask`` (over its templates) holds."""
        return self.template_ids[task][np.asarray(mask, dtype=bool)].tolist()

    def models_where(self, mask) -> list[str]:
        """The model labels where ``mask`` (over the models) holds."""
        return self.models[np.asarray(mask, dtype=bool)].tolist()


class Log:
    """The rows of the drop log: section, task, model, what, count, which, why."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(
        self, section: str, what: str, which, why: str, *, task: str = "", model: str = ""
    ) -> None:
        """One row: ``which`` (labels) left out of ``section`` on ``task``, for ``why``."""
        which = [str(label) for label in which]
        if not which:
            return
        self.rows.append(
            {
                "section": section,
                "task": str(task),
                "model": str(model),
                "what": what,
                "count": len(which),
                "which": ", ".join(which),
                "why": why,
            }
        )

    def cells(self, section: str, count: int, why: str, *, task: str = "") -> None:
        """``count`` cells of ``task`` left out of ``section``, too many to name one by one."""
        if count:
            self.rows.append(
                {
                    "section": section,
                    "task": str(task),
                    "model": "",
                    "what": "cells",
                    "count": int(count),
                    "which": f"{int(count)} cells",
                    "why": why,
                }
            )

    def task(self, section: str, task: str, why: str) -> None:
        """A task left out of ``section`` (its statistic is NaN there) for ``why``."""
        self.add(section, "task", [task], why, task=task)

    def templates(self, section: str, structure: Structure, mask, why) -> None:
        """The templates of each task where ``mask`` (task, template) holds.

        ``why`` is text, or a function of the task's position giving it.
        """
        mask = np.asarray(mask, dtype=bool)
        for t in np.flatnonzero(mask.any(-1)):
            self.add(
                section,
                "templates",
                structure.templates(t, mask[t]),
                why(t) if callable(why) else why,
                task=structure.tasks[t],
            )

    def models(self, section: str, structure: Structure, mask, why) -> None:
        """The models of each task where ``mask`` (task, model) holds."""
        mask = np.asarray(mask, dtype=bool)
        for t in np.flatnonzero(mask.any(-1)):
            self.add(
                section,
                "models",
                structure.models_where(mask[t]),
                why(t) if callable(why) else why,
                task=structure.tasks[t],
            )

    def dataset(self) -> xr.Dataset:
        """The rows as variables ``drop_<column>`` over the dimension ``drop``."""
        columns = {name: [row[name] for row in self.rows] for name in COLUMNS}
        return xr.Dataset(
            {
                f"drop_{name}": ("drop", np.array(values, dtype=int if name == "count" else object))
                for name, values in columns.items()
            }
        )
