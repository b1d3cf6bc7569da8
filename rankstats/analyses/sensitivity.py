"""The samples whose outcome depends most on the template's wording.

Builds on the per-sample spread of :func:`rankstats.prompt_sensitivity`
(ProSA's PromptSensiScore before its mean over samples): for each task, every
sample's mean absolute outcome difference over template pairs, averaged over
the models, the most sensitive first. This is what a report's section
"samples most sensitive to wording" lists.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _options as o
from .._kernels import sensitivity as _k
from ..stability._checks import checked
from .irt import per_sample_scores

__all__ = ["sensitive_samples"]


@checked(top=o.positive_int)
def sensitive_samples(cube, *, top: int = 10) -> xr.Dataset:
    """Each task's samples most sensitive to the template, with their sensitivity.

    Parameters
    ----------
    cube : score cube or xarray.DataArray
        Per-sample scores (0/1 or continuous).
    top : int, default 10
        How many samples to list per task.

    Returns
    -------
    xarray.Dataset
        Over ``task`` and ``position`` (1 = the most sensitive; fewer where
        a task has fewer samples with two templates): ``sample_id`` (or the
        sample's position where the cube has no ids), ``sensitivity`` (the
        sample's mean absolute outcome difference over template pairs,
        averaged over the models that have it), ``score`` (its mean score
        over templates and models) and ``models`` (how many models it was
        averaged over); and per task ``prompt_sensitivity`` (the mean over
        models of ProSA's score, each model's over the samples it has; a
        hole among a model's cells is left out pairwise, as
        ``nan_policy="omit"``).

    Examples
    --------
    >>> import numpy as np, xarray as xr, rankstats
    >>> scores = np.array([[[[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]]])
    >>> cube = xr.DataArray(scores, dims=("model", "task", "template", "sample"),
    ...                     coords={"task": ["t"]})
    >>> out = rankstats.sensitive_samples(cube, top=2)
    >>> out.sample_id.values.tolist(), out.sensitivity.round(4).values.tolist()
    ([['1', '2']], [[0.6667, 0.6667]])
    >>> float(out.prompt_sensitivity.round(4))
    0.4444
    """
    scores = per_sample_scores(cube, "sensitive_samples")
    spread, _ = _k.per_sample(scores.values)  # (..., model, task, sample)
    lead = scores.dims[:-4]
    with np.errstate(invalid="ignore"):
        models = (~np.isnan(spread)).sum(-3)
        summed = np.where(np.isnan(spread), 0.0, spread).sum(-3)
        mean = np.where(models > 0, summed / np.maximum(models, 1), np.nan)
        observed = ~np.isnan(scores.values)
        total = np.where(observed, scores.values, 0.0).sum((-4, -2))
        count = observed.sum((-4, -2))
        level = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    per_model = _nanmean(spread, -1)
    task_score = _nanmean(per_model, -2)
    order = np.argsort(np.where(np.isnan(mean), np.inf, -mean), axis=-1, kind="stable")
    k = min(top, mean.shape[-1])
    order = order[..., :k]
    listed = np.take_along_axis(np.isnan(mean), order, -1)
    ids = (
        scores["sample_id"]
        .broadcast_like(scores.isel(model=0, template=0, drop=True))
        .transpose(*lead, "task", "sample")
        .values.astype(str)
        if "sample_id" in scores.coords
        else np.broadcast_to(np.arange(mean.shape[-1]).astype(str), mean.shape)
    )
    pick = {
        name: np.take_along_axis(value, order, -1)
        for name, value in (
            ("sensitivity", mean),
            ("score", level),
            ("models", models.astype(float)),
        )
    }
    sample_id = np.where(listed, "", np.take_along_axis(ids, order, -1))
    dims = (*lead, "task", "position")
    data = {"sample_id": (dims, sample_id)}
    for name, value in pick.items():
        data[name] = (dims, np.where(listed, np.nan, value))
    data["prompt_sensitivity"] = ((*lead, "task"), task_score)
    coords = {d: scores[d] for d in (*lead, "task") if d in scores.coords}
    return xr.Dataset(
        data,
        coords={**coords, "position": np.arange(1, k + 1)},
        attrs={
            "statistic": "sensitive_samples",
            "top": top,
            "reference": "Zhuo et al. (2024), ProSA",
        },
    )


def _nanmean(values, axis):
    present = ~np.isnan(values)
    count = present.sum(axis)
    total = np.where(present, values, 0.0).sum(axis)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)
