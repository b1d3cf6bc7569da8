r"""Claims about a leaderboard, checked together: "A beats B on T", "A is best on T", ...

:func:`check_claims` reads claims of four kinds,

- ``"A beats B on T"``: model A scores higher than B on task T;
- ``"A is best on T"``: A scores higher than every other model on T;
- ``"A is in the top K on T"``: fewer than K models score higher than A;
- any of them ``on the benchmark mean``: on the mean score over all tasks,

and checks them from a score cube (bootstrap over its samples or templates)
or from published estimates with standard errors, with the family-wise error
over all of them held at ``1 - confidence_level``. Each claim gets one verdict:
``supported`` (the data show it), ``contradicted`` (the data show the
opposite) or ``not supported`` (neither). :func:`read_claims` reads a file of
claims, one per line.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels import winners as _kw
from .._xr import higher_is_better_of
from ..errors import (
    DimensionError,
    InputTypeError,
    MissingPathError,
    MissingValueError,
    OptionError,
    UnknownNameError,
)
from ._engine import generator
from .winners import METHOD as WINNER_METHOD
from .winners import beta_of

__all__ = ["Claim", "check_claims", "read_claims"]

_NAME = "check_claims"
#: The task name of the mean over all tasks, as claims and results spell it.
MEAN = "benchmark mean"
KINDS = ("beats", "best", "top")
VERDICTS = ("supported", "not supported", "contradicted")
#: The two readings of a cube whose templates mark the benchmark's own.
ALL_TEMPLATES = "mean over templates"
ORIGINAL = "original template"
ESTIMATES = "estimates"
METHOD = (
    "every claim reduced to one-sided pairwise comparisons; all of them tested at "
    "once by the stepwise max-t procedure of simultaneous rank sets (Romano & Wolf "
    "2005; Mogstad et al. 2024), Bonferroni over the views"
)
#: Relative size below which a standard error counts as zero.
TOLERANCE = 1e-10

_MEAN_WORDS = re.compile(r"^(the\s+)?(benchmark\s+)?(mean|average)$", re.IGNORECASE)
_PATTERNS = (
    (
        "top",
        re.compile(
            r"^(?P<model>.+?)\s+is\s+in\s+the\s+top[\s-]*(?P<k>\d+)(?:\s+on\s+(?P<task>.+))?$",
            re.IGNORECASE,
        ),
    ),
    (
        "best",
        re.compile(
            r"^(?P<model>.+?)\s+is\s+(?:the\s+)?best(?:\s+on\s+(?P<task>.+))?$", re.IGNORECASE
        ),
    ),
    (
        "beats",
        re.compile(
            r"^(?P<model>.+?)\s+beats\s+(?P<other>.+?)(?:\s+on\s+(?P<task>.+))?$", re.IGNORECASE
        ),
    ),
)


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim: ``kind`` (``"beats"``, ``"best"`` or ``"top"``) about ``model``.

    ``other`` is the model beaten (``"beats"``), ``k`` the size of the top
    (``"top"``), ``task`` the task (``"benchmark mean"`` for the mean over
    tasks; None where the data hold one task).

    Examples
    --------
    >>> from rankstats.stability import Claim
    >>> Claim.parse("gpt-4 beats llama on the benchmark mean")
    Claim(kind='beats', model='gpt-4', other='llama', task='benchmark mean', k=None)
    >>> Claim.parse("mistral is in the top 3 on arc").text
    'mistral is in the top 3 on arc'
    """

    kind: str
    model: str
    other: str | None = None
    task: str | None = None
    k: int | None = None

    @classmethod
    def parse(cls, text: str) -> Claim:
        """The claim a sentence states (see the module's forms)."""
        if not isinstance(text, str):
            raise InputTypeError(f"{_NAME}: a claim is text or a Claim, not {text!r}")
        line = " ".join(text.split())
        for kind, pattern in _PATTERNS:
            found = pattern.match(line)
            if found:
                parts = found.groupdict()
                task = parts.get("task")
                if task is not None and _MEAN_WORDS.match(task):
                    task = MEAN
                elif task is not None and re.match(r"^the\s+.+\s+mean$", task, re.IGNORECASE):
                    task = task[4:]  # "the BBH mean": the mean over the tasks of BBH
                k = int(parts["k"]) if parts.get("k") else None
                if k is not None and k < 1:
                    raise OptionError(f"{_NAME}: claim {text!r}: the top must hold at least 1")
                return cls(kind, parts["model"], parts.get("other"), task, k)
        raise OptionError(
            f"{_NAME}: claim {text!r} is none of the forms 'A beats B on T', "
            "'A is best on T', 'A is in the top K on T' (T may be 'the benchmark mean')"
        )

    @property
    def text(self) -> str:
        """The claim as a sentence."""
        head = {
            "beats": f"{self.model} beats {self.other}",
            "best": f"{self.model} is best",
            "top": f"{self.model} is in the top {self.k}",
        }[self.kind]
        if self.task is None:
            return head
        # "the benchmark mean", "the BBH mean": a mean reads with its article
        mean = self.task == MEAN or self.task.endswith(" mean")
        return f"{head} on {'the ' if mean else ''}{self.task}"


def read_claims(path) -> list[Claim]:
    r"""The claims of a text file: one per line; blank lines and ``#`` comments are skipped.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from rankstats.stability import read_claims
    >>> folder = tempfile.mkdtemp()
    >>> file = pathlib.Path(folder, "claims.txt")
    >>> _ = file.write_text("# from the paper\na beats b on t1\n\na is best on the mean\n")
    >>> [claim.text for claim in read_claims(file)]
    ['a beats b on t1', 'a is best on the benchmark mean']
    """
    file = Path(path)
    if not file.is_file():
        raise MissingPathError(f"{path}: no such file")
    claims = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            try:
                claims.append(Claim.parse(line))
            except OptionError as error:
                raise OptionError(f"{path}, line {number}: {error}") from None
    if not claims:
        raise OptionError(f"{path}: holds no claim")
    return claims


# --------------------------------------------------------------------------- views


@dataclasses.dataclass
class _View:
    """Estimates ``(T, M)``, centred draws ``(T, M, B)`` and covariance ``(T, M, M)`` per task."""

    name: str
    tasks: list
    estimate: np.ndarray
    deviation: np.ndarray
    covariance: np.ndarray
    means: tuple = ()


def _with_mean(view: _View, exact_mean=None, groups=None) -> _View:
    """Add the mean over tasks as one more task, and one per group of tasks (a benchmark).

    A mean holds the models scored on each of its tasks. ``groups`` maps a
    label (``"BBH mean"``) to a boolean mask over the tasks; ``exact_mean``
    is the covariance of the mean over all tasks where it is known.
    """
    means = {MEAN: np.ones(len(view.tasks), dtype=bool), **(groups or {})}
    estimates, deviations, covariances = [], [], []
    for label, mask in means.items():
        part = view.estimate[mask]
        complete = np.isfinite(part).all(0)
        estimates.append(np.where(complete, part.mean(0), np.nan))
        deviations.append(view.deviation[mask].mean(0))
        if label == MEAN and exact_mean is not None:
            covariances.append(exact_mean)
        else:
            covariances.append(_sample_covariance(deviations[-1][None])[0])
    return _View(
        view.name,
        [*view.tasks, *means],
        np.concatenate([view.estimate, np.stack(estimates)]),
        np.concatenate([view.deviation, np.stack(deviations)]),
        np.concatenate([view.covariance, np.stack(covariances)]),
        tuple(means),
    )


def _sample_covariance(deviation):
    spread = deviation - deviation.mean(-1, keepdims=True)
    spread = np.nan_to_num(spread)
    return spread @ np.swapaxes(spread, -1, -2) / max(deviation.shape[-1] - 1, 1)


def _cube_views(cube, n_resamples, over, seed, dims):
    from .resampling import replicates

    model, task, template, sample = dims
    has_samples = sample in cube["score"].dims
    if over is None:
        over = "samples" if has_samples else "templates"
    rng, _ = generator(seed)
    groups = None
    if "benchmark" in cube.coords and cube["benchmark"].dims == (task,):
        labels = cube["benchmark"].to_numpy().astype(str)
        if len(set(labels)) > 1:
            groups = {f"{b} mean": labels == b for b in dict.fromkeys(labels)}

    def view(name, x, how):
        reps = replicates(
            x,
            n_resamples,
            how,
            seed=rng,
            statistics="avgp",
            higher_is_better=True,
            nan_policy="omit",
            model=model,
            task=task,
            template=template,
            sample=sample,
        )
        replicate = next(d for d in reps["avgp"].dims if d not in (model, task))
        draws = reps["avgp"].transpose(task, model, replicate).to_numpy().astype(float)
        estimate = reps["avgp_estimate"].transpose(task, model).to_numpy().astype(float)
        deviation = draws - estimate[..., None]
        return _with_mean(
            _View(
                name,
                list(reps[task].to_numpy()),
                estimate,
                deviation,
                _sample_covariance(deviation),
            ),
            groups=groups,
        )

    views = [view(ALL_TEMPLATES, cube, over)]
    note = ""
    original = f"{template}_is_original"
    if original in cube.coords:
        flags = cube[original].fillna(False).astype(bool)
        if flags.any() and not flags.all():
            if has_samples:
                masked = cube.where(flags)
                masked.attrs = cube.attrs
                views.append(view(ORIGINAL, masked, "samples"))
            else:
                note = (
                    "the original template is not checked on its own: the cube has no "
                    "samples to resample"
                )
    return views, over, note


def _normal_views(estimates, standard_errors, covariance, n_resamples, seed, dims):
    model, task = dims
    est = _table(estimates, "the estimates", model, task)
    rng, _ = generator(seed)
    models, tasks = list(est.columns), list(est.index)
    values = est.to_numpy(dtype=float)
    t_count, m = values.shape
    if standard_errors is not None:
        if isinstance(standard_errors, (pd.Series, pd.DataFrame, xr.DataArray)):
            se = _table(standard_errors, "the standard errors", model, task)
            se = _align(se, est, "the standard errors")
        else:  # plain numbers, in the order of the estimates
            try:
                numbers = np.asarray(standard_errors, dtype=float)
            except (TypeError, ValueError):
                raise InputTypeError(f"{_NAME}: the standard errors must be numbers") from None
            if numbers.size != values.size:
                raise DimensionError(
                    f"{_NAME}: {numbers.size} standard errors for {values.size} estimates"
                )
            se = pd.DataFrame(numbers.reshape(values.shape), index=est.index, columns=est.columns)
        matrix = np.zeros((t_count, m, m))
        idx = np.arange(m)
        matrix[:, idx, idx] = se.to_numpy(dtype=float) ** 2
        bad = np.isfinite(values) & ~(np.isfinite(matrix[:, idx, idx]) & (matrix[:, idx, idx] > 0))
        if bad.any():
            t, j = np.argwhere(bad)[0]
            raise MissingValueError(
                f"{_NAME}: no positive standard error for model {models[j]!r} on task {tasks[t]!r}"
            )
    else:
        if t_count != 1:
            raise OptionError(
                f"{_NAME}: covariance= is for the estimates of one task; give "
                "standard_errors= for several"
            )
        if isinstance(covariance, pd.DataFrame):
            missing = [str(x) for x in models if x not in covariance.index]
            if missing:
                raise UnknownNameError(
                    f"{_NAME}: the covariance has no row for {', '.join(missing[:3])}"
                )
            covariance = covariance.reindex(index=models, columns=models)
        matrix = np.asarray(covariance, dtype=float)
        if matrix.shape != (m, m):
            raise DimensionError(
                f"{_NAME}: the covariance must be {m} x {m} for {m} estimates "
                f"(got shape {matrix.shape})"
            )
        if not np.allclose(matrix, matrix.T, rtol=1e-8, atol=0):
            raise OptionError(f"{_NAME}: the covariance is not symmetric")
        matrix = matrix[None]
    present = np.isfinite(values)
    safe = np.where(present[:, :, None] & present[:, None, :], matrix, 0.0)
    safe = np.nan_to_num(safe)
    # eigh, not Cholesky: a covariance of tied or duplicated estimates is only semi-definite
    eigenvalues, vectors = np.linalg.eigh(safe)
    root = vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))[:, None, :]
    draws = root @ rng.standard_normal((t_count, m, n_resamples))
    view = _View(ESTIMATES, tasks, values, draws, safe)
    if t_count > 1:
        exact = safe.sum(0) / t_count**2  # tasks are independent
        return [_with_mean(view, exact)]
    return [view]


def _table(values, what, model, task):
    """Estimates as a frame of tasks (rows) by models (columns)."""
    if isinstance(values, pd.Series):
        name = values.name if isinstance(values.name, str) else "all"
        return pd.DataFrame(
            [values.to_numpy(dtype=float)], columns=values.index.astype(str), index=[name]
        )
    if isinstance(values, pd.DataFrame):
        frame = values.astype(float)
        frame.columns = frame.columns.astype(str)
        frame.index = frame.index.astype(str)
        return frame
    if isinstance(values, xr.DataArray):
        if model not in values.dims:
            raise DimensionError(
                f"{_NAME}: {what} have no dimension {model!r} (dimensions: "
                f"{', '.join(map(str, values.dims))})"
            )
        if values.ndim == 1:
            return _table(values.to_series(), what, model, task)
        if set(values.dims) != {model, task}:
            raise DimensionError(
                f"{_NAME}: {what} must have the dimensions {model!r} and {task!r} "
                f"(got {', '.join(map(str, values.dims))})"
            )
        return _table(values.transpose(task, model).to_pandas(), what, model, task)
    raise InputTypeError(
        f"{_NAME}: give {what} as a pandas Series (one task), a DataFrame of tasks by "
        "models, or an xarray.DataArray over model (and task)"
    )


def _align(frame, like, what):
    """``frame`` in the rows and columns of ``like``, every model and task covered."""
    if len(frame.index) == len(like.index) == 1:  # one task each, however named
        frame = frame.set_axis(like.index, axis=0)
    absent = [str(c) for c in like.columns if c not in frame.columns]
    if absent:
        raise DimensionError(f"{_NAME}: {what}: no standard error for {', '.join(absent[:3])}")
    absent = [str(t) for t in like.index if t not in frame.index]
    if absent:
        raise DimensionError(f"{_NAME}: {what}: no row for task {', '.join(absent[:3])}")
    return frame.reindex(index=like.index, columns=like.columns)


# --------------------------------------------------------------------------- the test


def _close(name, names):
    close = difflib.get_close_matches(str(name), [str(n) for n in names], n=3, cutoff=0.5)
    return f" (did you mean {', '.join(map(repr, close))}?)" if close else ""


def _resolve(claims, models, tasks, means):
    """Each claim as ``(claim, task index, model index, other index)``, names checked."""
    model_index = {str(m): i for i, m in enumerate(models)}
    real_tasks = [t for t in tasks if t not in means]
    task_index = {str(t): i for i, t in enumerate(tasks)}
    out = []
    for claim in claims:
        task = claim.task
        if task is None:
            if len(real_tasks) != 1:
                raise OptionError(
                    f"{_NAME}: claim {claim.text!r}: say on which task (the data hold "
                    f"{len(real_tasks)}: {', '.join(map(str, real_tasks[:6]))}"
                    f"{', ...' if len(real_tasks) > 6 else ''})"
                )
            task = real_tasks[0]
        if str(task) not in task_index:
            raise UnknownNameError(
                f"{_NAME}: claim {claim.text!r}: no task {task!r}{_close(task, real_tasks)}"
                + (
                    "; the benchmark mean needs several tasks"
                    if task == MEAN
                    else f"; the tasks are {', '.join(map(str, real_tasks[:6]))}"
                    f"{', ...' if len(real_tasks) > 6 else ''}"
                )
            )
        named = [claim.model] + ([claim.other] if claim.kind == "beats" else [])
        for name in named:
            if name not in model_index:
                raise UnknownNameError(
                    f"{_NAME}: claim {claim.text!r}: no model {name!r}{_close(name, models)}"
                )
        if claim.kind == "beats" and claim.model == claim.other:
            raise OptionError(f"{_NAME}: claim {claim.text!r} compares a model with itself")
        other = model_index[claim.other] if claim.kind == "beats" else -1
        out.append((claim, task_index[str(task)], model_index[claim.model], other))
    return out


def _test(view, resolved, level):
    """Stepwise max-t over the pairs the claims involve; the rejections ``(T, M, M)``."""
    est, dev, cov = view.estimate, view.deviation, view.covariance
    t_count, m = est.shape
    variance = np.diagonal(cov, axis1=-2, axis2=-1)
    se = np.sqrt(np.clip(variance[:, :, None] + variance[:, None, :] - 2 * cov, 0.0, None))
    scale = np.nanmax(np.abs(est), initial=0.0) or 1.0
    degenerate = se <= TOLERANCE * scale
    difference = est[:, :, None] - est[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(degenerate, np.sign(difference) * np.inf, difference / se)
    t = np.where(np.isnan(t), 0.0, t)
    present = np.isfinite(est)
    family = np.zeros((t_count, m, m), dtype=bool)
    for _, task, model, other in resolved:
        if other >= 0:
            family[task, model, other] = family[task, other, model] = True
        else:
            family[task, model, :] = family[task, :, model] = True
    family &= present[:, :, None] & present[:, None, :] & ~np.eye(m, dtype=bool)
    where = np.argwhere(family)
    ti, ji, ki = where.T
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = (dev[ti, ji] - dev[ti, ki]) / np.where(
            degenerate[ti, ji, ki], 1.0, se[ti, ji, ki]
        )[:, None]
    scaled[degenerate[ti, ji, ki]] = 0.0
    statistic = t[ti, ji, ki]
    rejected = np.zeros(len(where), dtype=bool)
    critical = np.inf
    while True:  # stepwise: drop the settled comparisons and recompute c
        in_play = ~rejected
        if not in_play.any():
            break
        maxima = np.where(in_play[:, None], scaled, -np.inf).max(0)
        critical = float(np.quantile(maxima, 1.0 - level, method="higher"))
        now = in_play & (statistic > critical)
        if not now.any():
            break
        rejected |= now
    better = np.zeros((t_count, m, m), dtype=bool)
    better[ti[rejected], ji[rejected], ki[rejected]] = True
    return better, t, critical


def _verdict(claim, better, t, present):
    """The verdict of one resolved claim, and the t statistic that decides it."""
    if claim[0].kind == "beats":
        _, task, a, b = claim
        return (
            "supported"
            if better[task, a, b]
            else "contradicted"
            if better[task, b, a]
            else "not supported",
            t[task, a, b],
        )
    kind, k = claim[0].kind, claim[0].k or 1
    _, task, a, _ = claim
    others = present[task].copy()
    others[a] = False
    m = int(present[task].sum())
    wins = int(better[task, a, others].sum())
    losses = int(better[task, others, a].sum())
    needed = m - (1 if kind == "best" else k)
    ordered = np.sort(t[task, a, others])[::-1]
    statistic = ordered[needed - 1] if needed >= 1 else np.inf
    if wins >= needed:
        return "supported", statistic
    if losses >= (1 if kind == "best" else k):
        return "contradicted", statistic
    return "not supported", statistic


def check_claims(
    data,
    claims,
    standard_errors=None,
    *,
    covariance=None,
    confidence_level=0.95,
    n_resamples=1000,
    over=None,
    seed=None,
    higher_is_better=None,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Check claims about which models are better, with the family-wise error controlled.

    Parameters
    ----------
    data : score cube, or pandas Series / DataFrame / xarray.DataArray of estimates
        A cube (an ``xarray.Dataset`` with ``score``), whose per-task mean
        scores are compared with a paired bootstrap; or published estimates:
        a Series over models (one task), a DataFrame of tasks (rows) by
        models (columns), or a DataArray over ``model`` (and ``task``).
    claims : str, Claim, or a sequence of them
        ``"A beats B on T"``, ``"A is best on T"``, ``"A is in the top K on
        T"``; ``T`` may be ``"the benchmark mean"`` (the mean over all tasks,
        of the models scored on every task) and may be left out where the
        data hold one task.
    standard_errors : like ``data``, optional
        The estimates' standard errors (independent estimates). Required for
        estimates unless ``covariance`` is given.
    covariance : (M, M) array_like or pandas.DataFrame, optional
        The covariance of one task's estimates instead.
    confidence_level : float, default 0.95
        One minus the family-wise error: the chance that any verdict is
        wrong (a false ``supported`` or ``contradicted``) is at most
        ``1 - confidence_level``, over all claims and views at once.
    n_resamples : int, default 1000
        Bootstrap replicates (a cube) or normal draws (estimates) for the
        critical value.
    over : {"samples", "templates", "both"}, optional
        What the cube's bootstrap resamples for the mean over templates;
        default samples where the cube has them, else templates.
    seed : None, int or numpy.random.Generator
        Seed of the resampling.
    higher_is_better : bool, optional
        Default: the cube's attribute, else True.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset
        Over ``claim`` (the claims' text) and ``view``: ``verdict``
        (``"supported"``, ``"not supported"`` or ``"contradicted"``),
        ``statistic`` (the t statistic that decides it: A over B; the
        smallest of A over the others for "best"; the (M-K)-th largest for
        "top K") and ``score`` (A's score); the claims' ``kind``,
        ``model``, ``other``, ``task``, ``k``; ``critical_value`` per view;
        for "best" claims the observed leader of the task and its
        selection-adjusted score (:func:`winner_interval` at
        ``confidence_level``): ``leader``, ``leader_score``,
        ``leader_adjusted``, ``leader_low``, ``leader_high``. Views: the
        ``"mean over templates"`` of a cube, and the ``"original template"``
        alone where the cube marks its templates with
        ``template_is_original`` and has samples; ``"estimates"`` for
        published estimates.

    Notes
    -----
    Each claim is a set of one-sided comparisons :math:`H_{jk}: \theta_j
    \le \theta_k` (j is no better than k) on its task: "A beats B" is
    supported when :math:`H_{AB}` is rejected and contradicted when
    :math:`H_{BA}` is; "A is best" is supported when :math:`H_{Ak}` is
    rejected for every other model k present, contradicted when some
    :math:`H_{kA}` is; "A is in the top K" among M models is supported when
    at least M - K of the :math:`H_{Ak}` are rejected, contradicted when at
    least K of the :math:`H_{kA}` are.

    All comparisons of all claims (both directions) are tested at once, as
    the simultaneous rank sets of :func:`rank_sets` and
    :func:`leaderboard` test theirs: :math:`t_{jk} = (\hat\theta_j -
    \hat\theta_k) / \hat\sigma_{jk}` against the ``confidence_level``
    quantile of the largest standardised deviation over the comparisons
    still in play, stepwise (Romano & Wolf 2005). Why this and not Holm over
    per-claim tests: the claims share comparisons and are strongly
    dependent (two "best" claims on one task share all their models), and
    the max-t critical value uses that dependence where Holm's Bonferroni
    steps would not, while keeping the guarantee: with probability at least
    ``confidence_level`` (asymptotically, for the bootstrap; up to the
    Monte Carlo error of the draws, for normal estimates) no true
    :math:`H_{jk}` is rejected, and then no verdict is wrong, since a
    wrong "supported" or "contradicted" needs a true hypothesis rejected
    (a model truly among the best K cannot have K models surely better).
    A cube with marked original templates is read twice, on the mean over
    templates and on the original template(s) alone (over samples), each
    at level :math:`1 - (1 - \text{confidence\_level}) / 2` (Bonferroni), so
    that a claim that holds on the original template but not across
    paraphrases shows both verdicts under one guarantee.

    The leader's adjusted score of a "best" claim treats the task's
    estimates as normal with their covariance: the given one for published
    estimates, the bootstrap replicates' for a cube.

    The measured family-wise error and power are in docs/claims.md
    (tests/test_claims.py re-measures them).

    References
    ----------
    Mogstad, M., Romano, J. P., Shaikh, A. M. and Wilhelm, D. (2024).
    Inference for ranks with applications to mobility across neighbourhoods
    and academic achievement across countries. *Review of Economic Studies*
    91(1), 476-518.

    Romano, J. P. and Wolf, M. (2005). Exact and approximate stepdown methods
    for multiple hypothesis testing. *JASA* 100(469), 94-108.

    See Also
    --------
    rankstats.stability.rank_sets, rankstats.stability.leaderboard,
    rankstats.stability.winner_interval

    Examples
    --------
    >>> import pandas as pd
    >>> from rankstats.stability import check_claims
    >>> scores = pd.Series({"a": 0.80, "b": 0.70, "c": 0.69})
    >>> errors = pd.Series({"a": 0.01, "b": 0.01, "c": 0.01})
    >>> result = check_claims(scores, ["a is best", "b beats c", "c beats a"],
    ...                       errors, seed=0)
    >>> result.verdict.sel(view="estimates").to_series().to_dict()
    {'a is best': 'supported', 'b beats c': 'not supported', 'c beats a': 'contradicted'}
    >>> round(result.leader_adjusted.sel(claim="a is best").item(), 4)
    0.8
    """
    checked = o.check_options(
        _NAME,
        {
            "confidence_level": o.probability,
            "n_resamples": o.positive_int,
            "over": o.optional(o.one_of("samples", "templates", "both")),
            "seed": o.seed,
            "higher_is_better": o.optional_boolean,
        },
        {
            "confidence_level": confidence_level,
            "n_resamples": n_resamples,
            "over": over,
            "seed": seed,
            "higher_is_better": higher_is_better,
        },
    )
    if isinstance(claims, (str, Claim)):
        claims = [claims]
    claims = [c if isinstance(c, Claim) else Claim.parse(c) for c in claims]
    texts = [c.text for c in claims]
    repeated = sorted({t for t in texts if texts.count(t) > 1})
    if repeated:
        raise OptionError(f"{_NAME}: claim {repeated[0]!r} is given twice")
    if not claims:
        raise OptionError(f"{_NAME}: no claim to check")
    if checked["n_resamples"] < 20:
        raise OptionError(
            f"{_NAME}: n_resamples={n_resamples} is too few for a critical value; give at least 20"
        )
    note = ""
    if isinstance(data, xr.Dataset):
        if "score" not in data:
            raise InputTypeError(f"{_NAME}: a cube needs the variable 'score'")
        if standard_errors is not None or covariance is not None:
            raise OptionError(
                f"{_NAME}: standard_errors= and covariance= are for estimates, not a cube"
            )
        hib = higher_is_better_of(data, checked["higher_is_better"])
        views, used_over, note = _cube_views(
            data,
            checked["n_resamples"],
            checked["over"],
            checked["seed"],
            (model, task, template, sample),
        )
        models = [str(m) for m in data[model].to_numpy()]
        source = f"score cube, bootstrap over {used_over}"
    else:
        if standard_errors is None and covariance is None:
            raise OptionError(f"{_NAME}: estimates need standard_errors= or covariance=")
        if standard_errors is not None and covariance is not None:
            raise OptionError(f"{_NAME}: give standard_errors= or covariance=, not both")
        hib = True if checked["higher_is_better"] is None else checked["higher_is_better"]
        views = _normal_views(
            data,
            standard_errors,
            covariance,
            checked["n_resamples"],
            checked["seed"],
            (model, task),
        )
        models = list(_table(data, "the estimates", model, task).columns)
        source = "published estimates, normal draws"
    sign = 1.0 if hib else -1.0
    alpha = (1.0 - checked["confidence_level"]) / len(views)
    resolved_views = [_resolve(claims, models, v.tasks, v.means) for v in views]
    for view, resolved in zip(views, resolved_views, strict=True):
        for claim, t_i, a, b in resolved:
            for j in (a, b):
                if j >= 0 and not np.isfinite(view.estimate[t_i, j]):
                    raise MissingValueError(
                        f"{_NAME}: claim {claim.text!r}: model {models[j]!r} has no score on "
                        f"{view.tasks[t_i]!r}"
                        + (
                            " (a mean needs a score on each of its tasks)"
                            if view.tasks[t_i] in view.means
                            else ""
                        )
                    )
    n, v = len(claims), len(views)
    verdict = np.full((n, v), "", dtype=object)
    statistic = np.full((n, v), np.nan)
    score = np.full((n, v), np.nan)
    leader = np.full((n, v), "", dtype=object)
    leader_values = np.full((4, n, v), np.nan)
    critical = np.full(v, np.nan)
    for column, (view, resolved) in enumerate(zip(views, resolved_views, strict=True)):
        view.estimate = sign * view.estimate
        view.deviation = sign * view.deviation
        better, t, critical[column] = _test(view, resolved, alpha)
        present = np.isfinite(view.estimate)
        for row, item in enumerate(resolved):
            verdict[row, column], statistic[row, column] = _verdict(item, better, t, present)
            score[row, column] = sign * view.estimate[item[1], item[2]]
            if item[0].kind == "best":
                use = np.flatnonzero(present[item[1]])
                adjusted = _kw.winner_intervals(
                    view.estimate[item[1], use],
                    view.covariance[item[1]][np.ix_(use, use)],
                    confidence_level=checked["confidence_level"],
                    hybrid=beta_of("hybrid", checked["confidence_level"]),
                )
                leader[row, column] = models[use[adjusted["selected"][0]]]
                low, high = adjusted["low"][0], adjusted["high"][0]
                if sign < 0:
                    low, high = -high, -low
                leader_values[:, row, column] = (
                    sign * adjusted["estimate"][0],
                    sign * adjusted["adjusted"][0],
                    low,
                    high,
                )
    dims = ("claim", "view")
    return xr.Dataset(
        {
            "verdict": (dims, verdict.astype(str)),
            "statistic": (dims, statistic),
            "score": (dims, score),
            "kind": ("claim", [c.kind for c in claims]),
            "model": ("claim", [c.model for c in claims]),
            "other": ("claim", [c.other or "" for c in claims]),
            "task": ("claim", [str(views[0].tasks[r[1]]) for r in resolved_views[0]]),
            "k": ("claim", [c.k or (1 if c.kind == "best" else 0) for c in claims]),
            "critical_value": ("view", critical),
            "leader": (dims, leader.astype(str)),
            "leader_score": (dims, leader_values[0]),
            "leader_adjusted": (dims, leader_values[1]),
            "leader_low": (dims, leader_values[2]),
            "leader_high": (dims, leader_values[3]),
        },
        coords={"claim": [c.text for c in claims], "view": [v.name for v in views]},
        attrs={
            "method": METHOD,
            "confidence_level": checked["confidence_level"],
            "level_per_view": 1.0 - alpha,
            "n_resamples": checked["n_resamples"],
            "seed": (
                "Generator"
                if isinstance(seed, np.random.Generator)
                else "None"
                if seed is None
                else int(seed)
            ),
            "source": source,
            "higher_is_better": hib,
            "winner_method": WINNER_METHOD,
            "note": note,
        },
    )
