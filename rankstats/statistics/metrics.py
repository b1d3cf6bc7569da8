r"""Which model is best for which need: MaxP, AvgP, saturation, CPS, and divergence.

The metrics of Mizrahi et al. (2024), computed over the template dimension for
every model and task at once. For model M on task T with templates
:math:`I_T` and per-template score :math:`\varepsilon(M, T, i)`:

.. math::

   \mathrm{MaxP} = \max_{i \in I_T} \varepsilon(M, T, i), \quad
   \mathrm{AvgP} = \frac{1}{|I_T|} \sum_{i \in I_T} \varepsilon(M, T, i),

   \mathrm{Sat} = 1 - (\mathrm{MaxP} - \mathrm{AvgP}), \quad
   \mathrm{CPS} = \mathrm{Sat} \cdot \mathrm{MaxP}.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _xr
from .._kernels import metrics as _k
from ..errors import CubeError
from ..results import DivergenceResult

__all__ = ["avgp", "cps", "divergence", "maxp", "prompt_metrics", "saturation"]

_METRICS = ("maxp", "avgp", "saturation", "cps", "n_templates")
_DIVERGENCE_OUTPUTS = {
    "statistic": "divergence",
    "original": "original",
    "paraphrase_mean": "paraphrase_mean",
    "paraphrase_std": "paraphrase_std",
    "n_original": "n_original",
    "n_paraphrases": "n_paraphrases",
}


def _template_mask(x, given, default_coord: str, scores, template: str, what: str):
    """A boolean mask over templates: from a coordinate (True or its name) or given values."""
    if given is None:
        return None
    if given is True or isinstance(given, str):
        name = default_coord if given is True else given
        if not _xr.is_labelled(x):
            raise TypeError(f"{what}: a coordinate name needs labelled (xarray) input")
        coords = x.coords if name in x.coords else scores.coords
        if name not in coords:
            raise CubeError(
                f"{what}: the cube has no {name!r} coordinate to mark templates with "
                f"(coordinates: {', '.join(map(str, coords)) or 'none'})"
            )
        mask = coords[name]
    else:
        mask = given
    if _xr.is_labelled(scores):
        if not isinstance(mask, xr.DataArray):
            mask = xr.DataArray(np.asarray(mask, dtype=bool), dims=[template])
        if template not in mask.dims:
            raise CubeError(f"{what}: the template mask has no {template!r} dimension")
        return mask.fillna(False).astype(bool)
    return np.asarray(mask, dtype=bool)


def prompt_metrics(
    x, template="template", model="model", *, valid=None, higher_is_better=None,
    nan_policy="propagate",
):
    r"""MaxP, AvgP, saturation and CPS of every model (and task) in one pass.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., model, template)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    template, model : str or int
        Dimension names (axis numbers for NumPy input). ``model=None`` when
        the input has no model dimension.
    valid : None, True, str or array_like of bool
        Templates to keep: True uses the cube's ``template_valid``
        coordinate, a string names another coordinate, an array gives the
        mask (over templates, broadcast over the rest). Default: all.
    higher_is_better : bool, optional
        Whether MaxP is the maximum (default, or the cube's attribute) or the
        minimum of the template scores.
    nan_policy : {"propagate", "omit", "raise"}
        For a model missing some present templates: NaN, skip them, or raise.
        Padded templates, and models with no score at all, are structure.

    Returns
    -------
    xarray.Dataset or dict of numpy.ndarray
        ``maxp``, ``avgp``, ``saturation``, ``cps`` and ``n_templates``.

    Notes
    -----
    Saturation is :math:`1 - |\mathrm{MaxP} - \mathrm{AvgP}|`, which is the
    paper's :math:`1 - (\mathrm{MaxP} - \mathrm{AvgP})` when higher is better.

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949. Section 5.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.74, 0.10, 0.05, 0.10],    # peaks once
    ...                    [0.60, 0.55, 0.58, 0.57]])   # steady
    >>> out = rankstats.prompt_metrics(scores)
    >>> out["maxp"], out["avgp"].round(4)
    (array([0.74, 0.6 ]), array([0.2475, 0.575 ]))
    >>> out["cps"].round(4)
    array([0.3756, 0.585 ])
    """
    best_first = _xr.higher_is_better_of(x, higher_is_better)
    kwargs = {"higher_is_better": best_first, "nan_policy": nan_policy}
    if _xr.is_labelled(x):
        scores, squeeze = _labelled_scores(x, template, model, "prompt metrics")
        mask = _template_mask(x, valid, "template_valid", scores, template, "prompt metrics")
        data = _apply_labelled(
            "prompt_metrics", _prompt_metrics_kernel, scores, mask, template, model,
            {name: (name, []) for name in _METRICS}, kwargs,
            attrs={"valid": _describe(valid), **kwargs},
        )
        return data.squeeze(squeeze, drop=True) if squeeze else data
    scores, axes = _numpy_scores(x, template, model)
    mask = _template_mask(x, valid, "template_valid", scores, template, "prompt metrics")
    values = _xr.apply_numpy(
        _prompt_metrics_kernel,
        [scores, _mask_or_all(mask, scores.shape[axes[-1]])],
        [axes, [-1]],
        {name: name for name in _METRICS}, dict, kwargs=kwargs,
    )
    if model is None:
        values = {key: np.asarray(value)[..., 0][()] for key, value in values.items()}
    return values


def _prompt_metrics_kernel(x, valid, **kwargs):
    return _k.prompt_metrics(x, valid=valid, **kwargs)


def _divergence_kernel(x, original, valid, **kwargs):
    return _k.divergence(x, original, valid=valid, **kwargs)


def _labelled_scores(x, template, model, what):
    scores = _xr.scores_of(x, what, keep=(template,) if model is None else (template, model))
    squeeze = None
    if model is None:
        model, squeeze = "model", "model"
        if model in scores.dims:
            raise ValueError(f"{what}: the input has a 'model' dimension; pass model='model'")
        scores = scores.expand_dims(model)
    _xr.check_dims(what, scores, {"template": template, "model": model})
    return scores, squeeze


def _numpy_scores(x, template, model):
    scores = np.asarray(x, dtype=float)
    template_axis = _xr.numpy_axis("prompt metrics", "template", template, "template", -1)
    if model is None:
        return np.moveaxis(scores, template_axis, -1)[..., None, :], [-2, -1]
    model_axis = _xr.numpy_axis("prompt metrics", "model", model, "model", -2)
    return scores, [model_axis, template_axis]


def _mask_or_all(mask, n_templates: int):
    if mask is None:
        return np.ones(n_templates, dtype=bool)
    return mask


def _apply_labelled(statistic, kernel, scores, mask, template, model, outputs, kwargs,
                    attrs, extra=()):
    model_name = model or "model"
    if mask is None:
        mask = xr.DataArray(np.ones(scores.sizes[template], dtype=bool), dims=[template])
    inputs = [scores, *extra, mask]
    core = [[model_name, template], *([[template]] * len(extra)), [template]]
    # the kernels reduce the template axis and keep one value per model
    outputs = {name: (key, [model_name]) for name, (key, _) in outputs.items()}
    data = _xr.apply_labelled(statistic, kernel, inputs, core, outputs, kwargs=kwargs,
                              attrs={"template": template, "model": model_name, **attrs})
    return data.transpose(*[d for d in scores.dims if d in data.dims], ...)


def _describe(mask, default_coord: str = "template_valid") -> str:
    if mask is None:
        return "all templates"
    if mask is True:
        return default_coord
    return mask if isinstance(mask, str) else "given mask"


def _one_metric(name: str):
    def metric(x, template="template", model="model", *, valid=None, higher_is_better=None,
               nan_policy="propagate"):
        result = prompt_metrics(x, template, model, valid=valid,
                                higher_is_better=higher_is_better, nan_policy=nan_policy)
        if isinstance(result, xr.Dataset):
            return result[name].assign_attrs(result.attrs, statistic=name)
        return result[name]

    metric.__name__ = metric.__qualname__ = name
    return metric


maxp = _one_metric("maxp")
maxp.__doc__ = """Maximum performance: each model's best template score (MaxP).

Parameters and missing-value rules are those of :func:`prompt_metrics`.

Returns
-------
xarray.DataArray or numpy.ndarray
    MaxP over the template dimension.

Notes
-----
:math:`\\mathrm{MaxP}(M, T) = \\max_{i \\in I_T} \\varepsilon(M, T, i)`, the
measure for a user who tunes the prompt for their own use (section 5.1 of
Mizrahi et al. 2024). With ``higher_is_better=False`` it is the minimum.

See Also
--------
prompt_metrics, avgp

Examples
--------
>>> import rankstats
>>> rankstats.maxp([[0.74, 0.10, 0.05, 0.10], [0.60, 0.55, 0.58, 0.57]])
array([0.74, 0.6 ])
"""

avgp = _one_metric("avgp")
avgp.__doc__ = """Average performance: each model's mean template score (AvgP).

Parameters and missing-value rules are those of :func:`prompt_metrics`.

Returns
-------
xarray.DataArray or numpy.ndarray
    AvgP over the template dimension.

Notes
-----
:math:`\\mathrm{AvgP}(M, T) = |I_T|^{-1} \\sum_{i \\in I_T} \\varepsilon(M, T, i)`,
the measure for a benchmark that should not depend on any one wording
(section 5.2 of Mizrahi et al. 2024).

See Also
--------
prompt_metrics, maxp

Examples
--------
>>> import rankstats
>>> rankstats.avgp([[0.74, 0.10, 0.05, 0.10], [0.60, 0.55, 0.58, 0.57]])
array([0.2475, 0.575 ])
"""

saturation = _one_metric("saturation")
saturation.__doc__ = """Saturation: how close a model's average is to its best, 1 - (MaxP - AvgP).

Parameters and missing-value rules are those of :func:`prompt_metrics`.

Returns
-------
xarray.DataArray or numpy.ndarray
    Saturation over the template dimension; 1 when every template scores alike.

Notes
-----
The measure for open-ended use, where users phrase instructions their own way
(section 5.3 of Mizrahi et al. 2024, with the combined score).

See Also
--------
prompt_metrics, cps

Examples
--------
>>> import rankstats
>>> rankstats.saturation([[0.74, 0.10, 0.05, 0.10], [0.60, 0.55, 0.58, 0.57]])
array([0.5075, 0.975 ])
"""

cps = _one_metric("cps")
cps.__doc__ = """Combined performance score: saturation times MaxP.

Parameters and missing-value rules are those of :func:`prompt_metrics`.

Returns
-------
xarray.DataArray or numpy.ndarray
    CPS over the template dimension.

Notes
-----
:math:`\\mathrm{CPS} = \\mathrm{Sat} \\cdot \\mathrm{MaxP}` rewards peak
capability and consistency at once (section 5.3 of Mizrahi et al. 2024).

See Also
--------
prompt_metrics, saturation, maxp

Examples
--------
>>> import rankstats
>>> rankstats.cps([[0.74, 0.10, 0.05, 0.10], [0.60, 0.55, 0.58, 0.57]]).round(4)
array([0.3756, 0.585 ])
"""


def divergence(
    x, template="template", model="model", *, original=True, valid=None, ddof=1,
    nan_policy="propagate",
):
    r"""How many standard deviations the original template's score lies from the paraphrases'.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., model, template)`` unless axes are
        given.
    template, model : str or int
        Dimension names (axis numbers for NumPy input).
    original : True, str or array_like of bool
        Which templates are the benchmark's own: True uses the cube's
        ``template_is_original`` coordinate, a string names another, an
        array gives the mask (required for NumPy input).
    valid : None, True, str or array_like of bool
        Templates to keep, as in :func:`prompt_metrics`.
    ddof : int, default 1
        Delta degrees of freedom of the paraphrases' standard deviation.
    nan_policy : {"propagate", "omit", "raise"}
        As in :func:`prompt_metrics`.

    Returns
    -------
    xarray.Dataset or DivergenceResult
        ``statistic`` (the divergence), ``original`` (the original score),
        ``paraphrase_mean``, ``paraphrase_std``, ``n_original`` and
        ``n_paraphrases``.

    Notes
    -----
    .. math:: d = \frac{\bar\varepsilon_{\mathrm{orig}} - \bar\varepsilon_{\mathrm{para}}}
                       {s_{\mathrm{para}}}

    where :math:`\bar\varepsilon_{\mathrm{orig}}` is the mean score over the
    task's original templates (some benchmarks ship several), and
    :math:`\bar\varepsilon_{\mathrm{para}}`, :math:`s_{\mathrm{para}}` the mean
    and standard deviation over the other templates. The standard deviation
    is the sample one (``ddof=1``): the paraphrases are a sample from the
    population of wordings a user might write, and it is that population's
    spread the original is measured against. Mizrahi et al. (2024, section
    4.2) call :math:`|d| > 1` a substantial divergence. NaN, with a warning,
    when a task has no original template, too few paraphrases, or constant
    paraphrase scores.

    See Also
    --------
    prompt_metrics

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.90, 0.50, 0.60, 0.70],
    ...                    [0.40, 0.50, 0.60, 0.70]])
    >>> is_original = np.array([True, False, False, False])
    >>> rankstats.divergence(scores, original=is_original).statistic
    array([ 3., -2.])
    """
    kwargs = {"ddof": ddof, "nan_policy": nan_policy}
    attrs = {
        "valid": _describe(valid),
        "original": _describe(original, "template_is_original"),
        **kwargs,
    }
    if _xr.is_labelled(x):
        scores, squeeze = _labelled_scores(x, template, model, "divergence")
        mask = _template_mask(x, valid, "template_valid", scores, template, "divergence")
        is_original = _template_mask(x, original, "template_is_original", scores, template,
                                     "divergence")
        data = _apply_labelled(
            "divergence", _divergence_kernel, scores, mask, template, model,
            {name: (key, []) for name, key in _DIVERGENCE_OUTPUTS.items()}, kwargs,
            attrs=attrs, extra=(is_original,),
        )
        return data.squeeze(squeeze, drop=True) if squeeze else data
    if original is True or isinstance(original, str):
        raise TypeError("divergence: NumPy input needs original= as a boolean mask over templates")
    scores, axes = _numpy_scores(x, template, model)
    mask = _template_mask(x, valid, "template_valid", scores, template, "divergence")
    return _xr.apply_numpy(
        _divergence_kernel,
        [scores, np.asarray(original, dtype=bool), _mask_or_all(mask, scores.shape[axes[-1]])],
        [axes, [-1], [-1]],
        _DIVERGENCE_OUTPUTS,
        DivergenceResult,
        kwargs=kwargs,
    )
