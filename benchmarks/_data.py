"""Shared loading code for the benchmarks: the released accuracies of Mizrahi et al. (2024).

The cube comes from ``tests/mizrahi.py`` (imported from the repository root, so the
``rankstats`` checked out next to it is the one measured). :func:`task_blocks` gives the
same scores per task with the structure removed -- padded template positions and models
absent from the task -- which is what a per-task loop over scipy or pingouin sees.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class TaskBlock:
    """One task's scores with the structure removed.

    ``scores`` is ``(templates, models)``: the real templates of the task (rows, at
    cube positions ``template_positions``) scored on the models present in the task.
    """

    task: str
    benchmark: str
    template_positions: np.ndarray
    models: np.ndarray
    scores: np.ndarray

    @property
    def n_templates(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_models(self) -> int:
        return int(self.scores.shape[1])

    @property
    def n_pairs(self) -> int:
        return self.n_templates * (self.n_templates - 1) // 2


def load_cube():
    """The model × task × template accuracy cube of the Mizrahi et al. (2024) release."""
    from tests.mizrahi import accuracy_cube

    return accuracy_cube()


def task_blocks(cube) -> list[TaskBlock]:
    """Per-task ``(templates, models)`` score matrices in the cube's task order.

    A template position is real where some model has a score; a model is present in a
    task where some template has a score. Missing scores inside a block would be holes,
    not structure; the release has none, and this raises if one appears.
    """
    scores = cube["score"].transpose("task", "template", "model")
    values = scores.values
    models = np.asarray(cube["model"].values)
    benchmarks = (
        np.asarray(cube["benchmark"].values)
        if "benchmark" in cube.coords
        else np.full(values.shape[0], "")
    )
    blocks = []
    for t, task in enumerate(np.asarray(cube["task"].values)):
        matrix = values[t]
        real = ~np.all(np.isnan(matrix), axis=1)
        present = ~np.all(np.isnan(matrix), axis=0)
        block = matrix[real][:, present]
        if np.isnan(block).any():
            raise ValueError(f"task {task!r}: missing scores among real templates and models")
        blocks.append(
            TaskBlock(
                task=str(task),
                benchmark=str(benchmarks[t]),
                template_positions=np.flatnonzero(real),
                models=models[present],
                scores=np.ascontiguousarray(block),
            )
        )
    return blocks
