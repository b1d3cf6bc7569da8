r"""How much a sample's outcome depends on the template: ProSA's PromptSensiScore.

For a model and task with templates :math:`P` and samples :math:`S`, Zhuo et
al. (2024) define the sensitivity of sample s as the mean absolute
difference of its outcomes over the pairs of templates, and the task's
score as its mean over the samples:

.. math::

   \mathrm{PSS} = \frac{1}{|S|} \sum_{s \in S} \binom{|P|}{2}^{-1}
       \sum_{a < b} \lvert y_{as} - y_{bs} \rvert .

0 when every template gives each sample the same outcome; for 0/1
outcomes at most :math:`|P| / (2(|P| - 1))` (half the templates right on
every sample).
"""

from __future__ import annotations

from .._kernels import sensitivity as _k
from .._statistic import Role, statistic
from .concordance import NAN_POLICY

__all__ = ["prompt_sensitivity"]

_SAMPLE = Role("sample", -1, hint="the sensitivity of each sample needs per-sample scores")


@statistic(
    roles={"template": ("template", -2), "sample": _SAMPLE}, options={"nan_policy": NAN_POLICY}
)
def prompt_sensitivity(x, template="template", sample="sample", *, nan_policy="propagate"):
    r"""ProSA's PromptSensiScore: the mean over samples of the outcome's spread across templates.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Per-sample scores (0/1 correctness or continuous). NumPy input is
        ``(..., templates, samples)`` unless axes are given; a cube needs a
        ``sample`` dimension.
    template, sample : str or int
        The templates (whose pairs are compared) and the samples (averaged
        over). Dimension names, or axis numbers for NumPy input.
    {nan_policy}
        A cell missing among a model's present templates and samples: NaN
        for that model and task, compare the templates the sample has
        (pairwise), or raise.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        One score per model and task (the remaining dims): 0 when the
        template never changes an outcome. An array by design, like
        :func:`avgp`.

    Notes
    -----
    The mean absolute difference over the :math:`n(n-1)/2` pairs of n
    values is computed without the pairs: for 0/1 outcomes with k correct
    it is :math:`2k(n-k)/(n(n-1))`; otherwise, sorted ascending,
    :math:`\frac{2}{n(n-1)}\sum_i (2i - n - 1) x_{(i)}`. A sample observed
    under fewer than two templates has no pair and is left out of the mean.
    Padded templates and samples, and absent models, drop out (an absent
    model gives NaN). :func:`rankstats.sensitive_samples` lists the samples
    most sensitive to wording.

    References
    ----------
    .. [1] Zhuo, J., Zhang, S., Fang, X., Duan, H., Lin, D., & Chen, K.
       (2024). ProSA: Assessing and understanding the prompt sensitivity of
       LLMs. Findings of EMNLP 2024.

    See Also
    --------
    rankstats.sensitive_samples : each sample's sensitivity, the most
        sensitive first.

    Examples
    --------
    Three templates, two samples: the first sample is right under two of
    them (k = 2 of n = 3: 2·2·1/(3·2) = 2/3), the second under all.

    >>> import numpy as np
    >>> from rankstats import prompt_sensitivity
    >>> scores = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    >>> round(float(prompt_sensitivity(scores)), 4)
    0.3333

    The same by the pairs:

    >>> from itertools import combinations
    >>> per = [np.mean([abs(a - b) for a, b in combinations(col, 2)]) for col in scores.T]
    >>> round(float(np.mean(per)), 4)
    0.3333
    """
    out = x.apply(
        _k.prosa,
        {"prompt_sensitivity": "value"},
        kwargs={"nan_policy": nan_policy, "statistic": "prompt_sensitivity"},
        attrs={"reference": "Zhuo et al. (2024), ProSA"},
    )
    if x.labelled:
        return out["prompt_sensitivity"].assign_attrs(out.attrs)
    return out
