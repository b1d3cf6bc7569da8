"""Small example datasets shipped with rankstats, each with its licence beside it.

=========================  ==============================================================
name                       contents
=========================  ==============================================================
``mizrahi2024``            cube: accuracy of 16 models on 25 tasks (LMentry, BIG-bench
                           Hard) under 136-265 templates each, with the templates' text
                           and metadata; from the release's per-template accuracy CSVs
``mizrahi2024-aggregated`` the same cube from the release's aggregated JSON copy
``mizrahi2024-metrics``    the published MaxP, AvgP and CPS (not a cube)
=========================  ==============================================================

All three are the released data of Mizrahi et al. (2024), "State of What Art?
A Call for Multi-Prompt LLM Evaluation", under the CDLA-Permissive-2.0
licence; see ``LICENSE-mizrahi2024.md`` in this folder (:func:`license_text`).
They are rebuilt from a copy of the release with ``python -m
rankstats_collectors.files.mizrahi2024 build-datasets SRC rankstats/datasets``.

Examples
--------
>>> import rankstats.datasets
>>> rankstats.datasets.available()
['mizrahi2024', 'mizrahi2024-aggregated', 'mizrahi2024-metrics']
>>> cube = rankstats.datasets.load("mizrahi2024")
>>> dict(cube.score.sizes)
{'model': 16, 'task': 25, 'template': 265}
>>> rankstats.datasets.load("mizrahi")
Traceback (most recent call last):
...
rankstats.datasets.UnknownDatasetError: no dataset named 'mizrahi' (available: \
mizrahi2024, mizrahi2024-aggregated, mizrahi2024-metrics)
"""

from __future__ import annotations

from importlib import resources

import xarray as xr

from ..errors import UnknownNameError
from ..io import open_cube

__all__ = ["UnknownDatasetError", "available", "license_text", "load"]

# name -> (file, is a cube, licence file)
_DATASETS = {
    "mizrahi2024": ("mizrahi2024.nc", True, "LICENSE-mizrahi2024.md"),
    "mizrahi2024-aggregated": ("mizrahi2024-aggregated.nc", True, "LICENSE-mizrahi2024.md"),
    "mizrahi2024-metrics": ("mizrahi2024-metrics.nc", False, "LICENSE-mizrahi2024.md"),
}


class UnknownDatasetError(UnknownNameError):
    """No example dataset has the requested name."""


def available() -> list[str]:
    """Names of the example datasets, sorted."""
    return sorted(_DATASETS)


def _entry(name: str) -> tuple[str, bool, str]:
    if name not in _DATASETS:
        raise UnknownDatasetError(
            f"no dataset named {name!r} (available: {', '.join(available())})"
        )
    return _DATASETS[name]


def load(name: str) -> xr.Dataset:
    """Load an example dataset into memory.

    Parameters
    ----------
    name : str
        One of :func:`available`.

    Returns
    -------
    xarray.Dataset
        A validated cube (``mizrahi2024``, ``mizrahi2024-aggregated``) or the
        published metrics (``mizrahi2024-metrics``: ``value(model, task,
        metric, filtering)`` and ``openai_estimate(openai_model, task, metric,
        prompts)``).

    Raises
    ------
    UnknownDatasetError
        ``name`` is not one of :func:`available` (the message lists them).

    Notes
    -----
    The two cubes differ where the release's two copies of the accuracies
    differ: flan-t5-small and flan-t5-base are swapped in the accuracy CSVs
    of all_words_from_category and any_words_from_category (the aggregated
    copy agrees with the published metrics), the generation methods
    ``meta_cot`` and ``meta_desc`` are called ``cot`` and ``gradual`` in the
    aggregated copy, and template 65 of logical_deduction_seven_objects is
    valid only there. See :func:`rankstats_collectors.files.mizrahi2024.cross_check`.

    Examples
    --------
    >>> import rankstats, rankstats.datasets
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> cube.benchmark.to_series().value_counts().to_dict()
    {'BBH': 15, 'LMentry': 10}
    >>> round(float(rankstats.maxp(cube).sel(model="flan-t5-xxl", task="snarks")), 2)
    0.8
    >>> metrics = rankstats.datasets.load("mizrahi2024-metrics")
    >>> float(metrics.value.sel(model="flan-t5-xxl", task="snarks", metric="maxp",
    ...                         filtering="none"))
    0.8
    """
    file, is_cube, _ = _entry(name)
    with resources.as_file(resources.files(__name__) / file) as path:
        if is_cube:
            return open_cube(path)
        with xr.open_dataset(path, engine="netcdf4") as dataset:
            loaded = dataset.load()
    for name in list(loaded.coords):
        if loaded[name].dtype.kind in "SUT":
            loaded[name] = loaded[name].astype(object)
    return loaded


def license_text(name: str) -> str:
    """The licence and attribution of an example dataset, as shipped beside it.

    Examples
    --------
    >>> import rankstats.datasets
    >>> "CDLA-Permissive-2.0" in rankstats.datasets.license_text("mizrahi2024")
    True
    """
    return (resources.files(__name__) / _entry(name)[2]).read_text(encoding="utf-8")
