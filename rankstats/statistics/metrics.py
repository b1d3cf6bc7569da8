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

from .. import _options as o
from .._kernels import metrics as _k
from .._statistic import Mask, _mask, statistic
from ..results import DivergenceResult, PromptMetricsResult
from .concordance import NAN_POLICY

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
# The roles are named after the cube dims they always are: the metrics are defined over a
# task's templates, per model (a template missing for every model is padding, not a hole).
_ROLES = {"model": ("model", -2), "template": ("template", -1)}
_VALID = Mask("template_valid", "template", "all templates")
_METRIC_OPTIONS = {"higher_is_better": o.optional_boolean, "nan_policy": NAN_POLICY}


def _template_mask(x, given, default_coord: str, scores, template: str, what: str):
    """A boolean template mask (from a coordinate or values), or None for None.

    Kept for :mod:`rankstats.stability.needed`, which masks its labelled
    scores the way the metrics do.
    """
    if given is None:
        return None
    return _mask(
        what,
        "valid",
        Mask(default_coord, "template"),
        given,
        x,
        scores,
        True,
        {"template": template},
    )


def _run(x, kernel, outputs, kwargs, arrays):
    """Run a metrics kernel over ``(..., model, template)`` (or templates alone)."""
    with_model = "model" in x.roles
    if not with_model:  # one model: the kernels want a model axis
        plain = kernel

        def kernel(scores, *masks, **options):
            found = plain(scores[..., None, :], *masks, **options)
            return {key: value[..., 0] for key, value in found.items()}

    core = ["model", "template"] if with_model else ["template"]
    # a mask runs along the template dim; on NumPy input along its last axis, broadcast
    mask_core = ["template"] if x.labelled else [-1]
    result = x.apply(
        kernel,
        outputs,
        arrays=[*x.arrays, *arrays],
        cores=[core, *[mask_core] * len(arrays)],
        output_dims={name: ["model"] for name in outputs} if with_model else None,
        kwargs=kwargs,
    )
    if x.labelled:  # the input's order, the model first as in the cube
        return result.transpose(*[d for d in x.arrays[0].dims if d in result.dims], ...)
    return result


def _complete_numpy(x):
    """The scores of a NumPy call with (model, template) as its last axes and none missing.

    None for anything else (labelled input, other axes, a missing score, no
    model role), which takes the general path.
    """
    if x.labelled:
        return None
    scores = np.asarray(x.arrays[0], dtype=float)
    ndim, model, template = scores.ndim, x.roles.get("model"), x.roles.get("template")
    if ndim < 2 or not (
        (model == -2 and template == -1) or (model == ndim - 2 and template == ndim - 1)
    ):
        return None
    if not scores.size or np.isnan(scores).any():
        return None
    return scores


def _prompt_metrics_kernel(x, valid, **kwargs):
    return _k.prompt_metrics(x, valid=valid, **kwargs)


def _divergence_kernel(x, original, valid, **kwargs):
    return _k.divergence(x, original, valid=valid, **kwargs)


def _metrics(x, higher_is_better, nan_policy):
    return _run(
        x,
        _prompt_metrics_kernel,
        {name: name for name in _METRICS},
        {"higher_is_better": higher_is_better, "nan_policy": nan_policy},
        [x.masks["valid"]],
    )


@statistic(
    roles=_ROLES,
    options=_METRIC_OPTIONS,
    optional_roles=("model",),
    masks={"valid": _VALID},
    result=PromptMetricsResult,
)
def prompt_metrics(
    x,
    template="template",
    model="model",
    *,
    valid=None,
    higher_is_better=None,
    nan_policy="propagate",
):
    r"""MaxP, AvgP, saturation and CPS of every model (and task) in one pass.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., model, template)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    template, model : str or int
        The roles are named after the cube dimensions they always are: the
        metrics reduce a task's templates, per model. Dimension names (axis
        numbers for NumPy input); ``model=None`` when the input has no model
        dimension.
    {valid}
    higher_is_better : bool, optional
        Whether MaxP is the maximum (default, or the cube's attribute) or the
        minimum of the template scores.
    {nan_policy}
        For a model missing some present templates: NaN, skip them, or raise.
        Padded templates, and models with no score at all, are structure.

    Returns
    -------
    xarray.Dataset or PromptMetricsResult
        ``maxp``, ``avgp``, ``saturation``, ``cps`` and ``n_templates``.

    Notes
    -----
    Saturation is :math:`1 - |\mathrm{MaxP} - \mathrm{AvgP}|`, which is the
    paper's :math:`1 - (\mathrm{MaxP} - \mathrm{AvgP})` when higher is better.
    ``omit`` skips a model's missing templates (each model over the
    templates it has; ``n_templates`` says how many).

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949. Section 5.

    See Also
    --------
    maxp, avgp, saturation, cps : one metric each, as an array.
    numpy.nanmax, numpy.nanmean : MaxP and AvgP under ``nan_policy="omit"``.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.74, 0.10, 0.05, 0.10],    # peaks once
    ...                    [0.60, 0.55, 0.58, 0.57]])   # steady
    >>> out = rankstats.prompt_metrics(scores)
    >>> out.maxp, out.avgp.round(4)
    (array([0.74, 0.6 ]), array([0.2475, 0.575 ]))
    >>> out.cps.round(4)
    array([0.3756, 0.585 ])

    Compare with NumPy:

    >>> best, mean = scores.max(axis=1), scores.mean(axis=1)
    >>> bool(np.allclose(out.cps, (1 - (best - mean)) * best))
    True
    """
    return _metrics(x, higher_is_better, nan_policy)


def _one_metric(name: str, summary: str, notes: str, see_also: str, numpy: str, shown: str):
    """A public function returning one metric of :func:`prompt_metrics`, as an array.

    Its docstring is built from the metric's summary, notes, related
    functions, and the NumPy expression its example is compared with.
    """

    def metric(
        x,
        template="template",
        model="model",
        *,
        valid=None,
        higher_is_better=None,
        nan_policy="propagate",
    ):
        scores = None if valid is not None else _complete_numpy(x)
        if scores is not None:
            return _k.one_metric(name, scores, higher_is_better)
        result = _metrics(x, higher_is_better, nan_policy)
        if x.labelled:
            return result[name].assign_attrs(result.attrs, statistic=name)
        return getattr(result, name)

    metric.__name__ = metric.__qualname__ = name
    metric.__module__ = __name__
    metric.__doc__ = f"""{summary}

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., model, template)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    template, model : str or int
        As in :func:`prompt_metrics`.
    {{valid}}
    {{higher_is_better}}
    {{nan_policy}}
        ``omit`` computes each model over the templates it has.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        The metric over the template dimension: one value per model (and
        slice). An array by design, like :func:`rank`: one number per model,
        not a test.

    Notes
    -----
    {notes}

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949. Section 5.

    See Also
    --------
    prompt_metrics : all four metrics at once.
    {see_also}

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.74, 0.10, 0.05, 0.10], [0.60, 0.55, 0.58, 0.57]])
    >>> rankstats.{name}(scores).round(4)
    {shown}

    Compare with NumPy:

    >>> ({numpy}).round(4)
    {shown}
    """
    return statistic(
        roles=_ROLES,
        options=_METRIC_OPTIONS,
        optional_roles=("model",),
        masks={"valid": _VALID},
        result=PromptMetricsResult,
    )(metric)


maxp = _one_metric(
    "maxp",
    "Maximum performance: each model's best template score (MaxP).",
    r"""MaxP(M, T) is :math:`\max_{i \in I_T} \varepsilon(M, T, i)`, the
    measure for a user who tunes the prompt for their own use (section 5.1 of
    Mizrahi et al. 2024). With ``higher_is_better=False`` it is the minimum.""",
    "avgp : the mean instead of the best.",
    "scores.max(axis=-1)",
    "array([0.74, 0.6 ])",
)

avgp = _one_metric(
    "avgp",
    "Average performance: each model's mean template score (AvgP).",
    r"""AvgP(M, T) is :math:`|I_T|^{-1} \sum_{i \in I_T} \varepsilon(M, T, i)`,
    the measure for a benchmark that should not depend on any one wording
    (section 5.2 of Mizrahi et al. 2024).""",
    "maxp : the best instead of the mean.",
    "scores.mean(axis=-1)",
    "array([0.2475, 0.575 ])",
)

saturation = _one_metric(
    "saturation",
    "Saturation: how close a model's average is to its best, 1 - |MaxP - AvgP|.",
    r"""Saturation is 1 when every template scores alike: the measure for
    open-ended use, where users phrase instructions their own way (section
    5.3 of Mizrahi et al. 2024). The paper's 1 - (MaxP - AvgP) when higher is
    better.""",
    "cps : saturation times MaxP.",
    "1 - (scores.max(axis=-1) - scores.mean(axis=-1))",
    "array([0.5075, 0.975 ])",
)

cps = _one_metric(
    "cps",
    "Combined performance score: saturation times MaxP.",
    r"""CPS is :math:`\mathrm{Sat} \cdot \mathrm{MaxP}`: it rewards peak
    capability and consistency at once (section 5.3 of Mizrahi et al. 2024).""",
    "saturation, maxp : its two factors.",
    "(1 - (scores.max(axis=-1) - scores.mean(axis=-1))) * scores.max(axis=-1)",
    "array([0.3756, 0.585 ])",
)


@statistic(
    roles=_ROLES,
    options={"ddof": o.non_negative_int, "nan_policy": NAN_POLICY},
    optional_roles=("model",),
    masks={"original": Mask("template_is_original", "template", "none"), "valid": _VALID},
    result=DivergenceResult,
)
def divergence(
    x,
    template="template",
    model="model",
    *,
    original=True,
    valid=None,
    ddof=1,
    nan_policy="propagate",
):
    r"""How many standard deviations the original template's score lies from the paraphrases'.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., model, template)`` unless axes are
        given.
    template, model : str or int
        As in :func:`prompt_metrics`.
    original : True, str or array_like of bool, default True
        Which templates are the benchmark's own: True uses the cube's
        ``template_is_original`` coordinate, a string names another, an
        array gives the mask (required for NumPy input).
    {valid}
    ddof : int, default 1
        Delta degrees of freedom of the paraphrases' standard deviation.
    {nan_policy}
        As in :func:`prompt_metrics`: ``omit`` skips a model's missing
        templates.

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

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949. Section 4.2.

    See Also
    --------
    prompt_metrics : the metrics over all templates.
    scipy.stats.zscore : the same standardisation, of all scores at once.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> scores = np.array([[0.90, 0.50, 0.60, 0.70],
    ...                    [0.40, 0.50, 0.60, 0.70]])
    >>> is_original = np.array([True, False, False, False])
    >>> rankstats.divergence(scores, original=is_original).statistic
    array([ 3., -2.])

    Compare with NumPy:

    >>> paraphrases = scores[:, 1:]
    >>> (scores[:, 0] - paraphrases.mean(axis=1)) / paraphrases.std(axis=1, ddof=1)
    array([ 3., -2.])
    """
    return _run(
        x,
        _divergence_kernel,
        _DIVERGENCE_OUTPUTS,
        {"ddof": ddof, "nan_policy": nan_policy},
        [x.masks["original"], x.masks["valid"]],
    )
