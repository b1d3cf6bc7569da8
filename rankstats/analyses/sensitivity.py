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

__all__ = ["posix", "sensitive_samples"]


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
    >>> out.prompt_sensitivity.round(4).values.tolist()
    [0.4444]
    """
    scores = per_sample_scores(cube, "sensitive_samples")
    spread, _ = _k.per_sample(scores.values)  # (..., model, task, sample)
    lead = scores.dims[:-4]
    with np.errstate(invalid="ignore"):
        models = (~np.isnan(spread)).sum(-3)
        summed = np.where(np.isnan(spread), 0.0, spread).sum(-3)
        mean = np.where(models > 0, summed / np.maximum(models, 1), np.nan)
        observed = ~np.isnan(scores.values)
        total = scores.values.sum((-4, -2), where=observed)  # no zero-filled copy
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


def posix(cube) -> xr.DataArray:
    r"""POSIX (Chatterjee et al., 2024): how much each response's likelihood moves with the prompt.

    For one sample, templates :math:`x_1..x_n` and the response :math:`y_j`
    each gave (of :math:`L_j` tokens),

    .. math::

       \psi = \frac{1}{n(n-1)} \sum_{i \ne j} \frac{1}{L_j}
           \lvert \log P(y_j \mid x_i) - \log P(y_j \mid x_j) \rvert ,

    averaged over the samples, per model and task. It needs the
    log-probability of every response under every template, which the
    collectors keep for multiple choice scored by likelihood (``rankstats
    collect hf --mode likelihood``, ``rankstats collect openai --endpoint
    completions --mode likelihood``): the cube's ``option_logprob`` and
    ``option_tokens`` (over ``option``) and ``logprob`` (the response's).

    Parameters
    ----------
    cube : score cube
        With ``option_logprob``, ``option_tokens`` and ``logprob``.

    Returns
    -------
    xarray.DataArray
        One value per model and task (0: every template gives every response
        the same likelihood); NaN where no sample has two answering templates.

    Notes
    -----
    A template's response is the option whose ``option_logprob`` equals the
    stored ``logprob``. For each response the sum over templates of the
    absolute differences is read from the sorted column of that option and
    its prefix sums, so the cost grows as n log n in the templates, not n².

    References
    ----------
    Chatterjee, A., Renduchintala, H. S. V. N. S. K., Bhatia, S., &
    Chakraborty, T. (2024). POSIX: A prompt sensitivity index for large
    language models. Findings of EMNLP 2024.

    Examples
    --------
    >>> import numpy as np, xarray as xr, rankstats
    >>> lp = np.log([[[[[0.9, 0.1], [0.6, 0.4]]]]])  # one sample, two templates, two options
    >>> cube = xr.Dataset({
    ...     "score": (("model", "task", "template", "sample"), np.ones((1, 1, 2, 1))),
    ...     "logprob": (("model", "task", "template", "sample"), lp.max(-1).transpose(0, 1, 3, 2)),
    ...     "option_logprob": (("model", "task", "sample", "template", "option"), lp),
    ...     "option_tokens": (("model", "task", "sample", "template", "option"),
    ...                       np.ones_like(lp))})
    >>> round(float(rankstats.posix(cube).squeeze()), 4)  # |log .6 - log .9|, twice, over 2
    0.4055
    """
    from ..errors import CubeError, InputTypeError

    if not isinstance(cube, xr.Dataset):
        raise InputTypeError(
            f"posix: give a score cube (xarray.Dataset), not {type(cube).__name__}"
        )
    missing = [v for v in ("option_logprob", "option_tokens", "logprob") if v not in cube.data_vars]
    if missing:
        raise CubeError(
            f"posix: the cube lacks {', '.join(map(repr, missing))}: collect with "
            "--mode likelihood (multiple choice) to keep per-sample "
            "log-probabilities"
        )
    lead = [d for d in cube["option_logprob"].dims if d not in ("sample", "template", "option")]
    logprob = cube["option_logprob"].transpose(*lead, "sample", "template", "option")
    tokens = cube["option_tokens"].transpose(*lead, "sample", "template", "option")
    response = cube["logprob"].transpose(*lead, "sample", "template")
    values = logprob.values
    match = np.isclose(values, response.values[..., None], rtol=0.0, atol=1e-9)
    chosen = np.where(match.any(-1) & ~np.isnan(response.values), match.argmax(-1), -1)
    per_sample = _k.posix(values, tokens.values, chosen)
    return xr.DataArray(
        _nanmean(per_sample, -1),
        dims=lead,
        coords={d: cube[d] for d in lead if d in cube.coords},
        attrs={"statistic": "posix", "reference": "Chatterjee et al. (2024), POSIX"},
    )
