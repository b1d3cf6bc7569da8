"""The full multi-prompt analysis of a cube, as one xarray Dataset.

Every number comes from the public statistics of rankstats, computed for all
tasks in one call each; this module only arranges them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .. import _xr
from ..cube import template_scores
from ..errors import CubeError, DimensionError, InputTypeError, OptionError
from ..stability._checks import checked
from ..statistics.concordance import kendall_tau, kendall_tau_matrix, kendall_w, rank
from ..statistics.metrics import divergence, prompt_metrics
from ..statistics.multitest import adjust_pvalues
from ..statistics.significance import cochran_q, friedman, mcnemar
from ..validation import score_kind_of
from . import _conventions
from ._left_out import EVERY_SECTION, Log, Structure

__all__ = ["METRICS", "report"]

METRICS = ("maxp", "avgp", "saturation", "cps")
_METRIC_INDEX = pd.Index(np.array(METRICS, dtype=object), name="metric")


def _cube(function: str, name: str, value):
    """A check that the input is a score cube or a DataArray of scores."""
    if isinstance(value, (xr.Dataset, xr.DataArray)):
        return value
    raise InputTypeError(
        f"{function}: {name} must be a score cube (xarray.Dataset) or a "
        f"DataArray of scores (got {type(value).__name__})"
    )


def _resamples_or_none(function: str, name: str, value) -> int:
    """A check that the value is 0 (no stability section) or a bootstrap's count, at least 2."""
    value = o.non_negative_int(function, name, value)
    if value == 1:
        raise OptionError(
            f"{function}: {name}=1 is not allowed; {name} must be 0 (leave the "
            "stability section out) or an integer of at least 2"
        )
    return value


@checked(
    cube=_cube, threshold=o.finite, n_resamples=_resamples_or_none, conventions=_conventions.resolve
)
def report(
    cube,
    *,
    threshold: float = 0.05,
    nan_policy: str = "omit",
    higher_is_better: bool | None = None,
    n_resamples: int = 200,
    seed=None,
    conventions=None,
) -> xr.Dataset:
    """Analyse a cube: agreement, significance, divergence, metrics, rankings.

    Parameters
    ----------
    cube : xarray.Dataset or xarray.DataArray
        A score cube; with a ``sample`` dimension its per-template scores are
        used. ``template_is_original``, ``template_valid``,
        ``template_method`` and the task coordinate ``benchmark`` enable the
        parts that need them.
    threshold : float, default 0.05
        A model "works" on a template when its score exceeds this.
    {nan_policy}
        Passed to every statistic (see their docs); ``omit`` drops what is
        missing beyond structure.
    {higher_is_better}
    n_resamples : int, default 200
        Bootstrap replicates of the stability section (over samples and
        templates when the cube has samples, else over templates); 0 leaves
        the section out. Its templates-needed curves draw 100 subsets per k.
    {seed}
        Seeds the bootstrap and the template subsets; an int seeds each the
        same way, so a run is reproducible.
    conventions : None, "standard" or mapping, default None
        The template set, tie method and tie correction of Kendall's W
        (``kendall_w``), Friedman's tests (``friedman``) and the metrics and
        their ranks (``metric_ranks``). None and ``"standard"`` use every
        template, average ranks and the tie correction. A mapping such as
        ``{{"kendall_w": {{"templates": "valid", "ties": "min",
        "tie_correction": False}}}}`` sets some of them (the rest stay
        standard): ``templates`` is ``"all"`` or ``"valid"`` (the templates
        whose ``template_valid`` is true), ``ties`` one of ``"average"``,
        ``"min"``, ``"max"``, ``"dense"``, ``"ordinal"``, ``tie_correction``
        a bool; ``reproduces``, a Friedman ``orientation`` and a top-level
        ``name`` only label them. A published study's conventions come as
        such a mapping, e.g.
        :func:`rankstats.reproduce.mizrahi2024.paper_conventions`.

    Returns
    -------
    xarray.Dataset
        Per task: ``w``, ``w_chi2``, ``w_pvalue`` (templates as judges of the
        models); ``friedman_template_*`` (blocks = models, treatments =
        templates: does the template matter?) and ``friedman_model_*``
        (blocks = templates, treatments = models: do the models differ?);
        the least agreeing template pair ``tau_min`` with ``tau_min_template``,
        ``tau_min_template_b`` and each model's rank and score under both
        (``tau_min_rank``, ``tau_min_rank_b``, ``tau_min_score``,
        ``tau_min_score_b``), ``negative_tau_pairs`` of ``template_pairs``.
        Per model and task: ``divergence`` (with ``original_score``),
        ``metric_value`` and ``metric_rank`` over ``metric`` (MaxP, AvgP,
        saturation, CPS), ``share_above_threshold``. Per model and benchmark:
        ``average_rank`` per metric; ``best_template_method_share`` (over
        ``generation_method``), the methods that produced each model's best
        templates (ties count each
        best template), with ``all_models`` and ``all_templates`` rows in
        ``best_template_method_share_all`` and ``template_method_share``. Per
        task and metric: ``filtering_tau``, Kendall's tau-b between the model
        rankings with all templates and with the valid ones only.
        Stability (with ``n_resamples``): per model and task ``avgp_low``,
        ``avgp_high``, ``rank_low``, ``rank_high``, ``tie_group`` and
        ``arena_rank`` (:func:`rankstats.stability.leaderboard`); per task
        ``templates_needed``, the smallest number k of fresh templates at which
        two reruns of k templates each rank the models with tau-b >= 0.9 with
        probability 0.95 (:func:`rankstats.templates_needed`: random subsets
        of a resample of the task's templates), with ``templates_needed_censored``
        (true: "more than" ``templates_needed``), its Monte Carlo interval
        ``templates_needed_low`` and ``templates_needed_high``, the draws made
        (``templates_needed_resamples``), the planner's answer to the same
        question ``templates_planned`` and ``templates_recommended``, and on a
        cube with samples ``samples_planned``, the items the same question
        needs with the templates held fixed (:func:`rankstats.stability.plan`'s
        ``n_samples_needed_fixed_templates``); the variance components
        (:func:`rankstats.stability.variance_summary`): ``variance_share``,
        ``variance_estimate``, ``variance_low`` and ``variance_high`` over
        ``component`` and ``task``, and per task ``g_coefficient``,
        ``replication_tau`` (expected Kendall tau with a replication),
        ``templates_for_tau`` (the planner's templates for the same
        question, equal to ``templates_planned`` on a complete cube) and
        ``variance_cells_missing``.
        Prompt sensitivity (cubes with samples): per task
        ``prompt_sensitivity`` (ProSA's score, :func:`rankstats.prompt_sensitivity`)
        and over ``sensitive_position`` the five most sensitive samples
        (``sensitive_sample_id``, ``sensitive_sensitivity``,
        ``sensitive_score``, ``sensitive_models``;
        :func:`rankstats.sensitive_samples`).
        ``task_benchmark`` maps each task to its benchmark (the cube's
        ``benchmark`` coordinate; "all" without one), since ``benchmark`` is
        the dimension of the per-benchmark results.
        Item-level tests (binary cubes with samples):
        ``template_effect_q`` and ``template_effect_pvalue_adjusted``
        (Cochran's Q per model and task across templates, Holm over the
        table); per task the ``leader`` and ``runner_up`` by AvgP and, from
        exact McNemar tests between them on each template's samples (Holm per
        task), ``leaders_templates_tested``, ``leader_better_templates``,
        ``runner_up_better_templates`` and ``leaders_samples_dropped`` (the
        samples scored for only one of the two under a tested template,
        summed over the templates: left out by pairwise deletion).
        Minimal edits (with a ``template_text`` coordinate): over ``edit``,
        the 20 largest score differences between two templates one token
        apart (:func:`rankstats.edits.largest_edits`): ``edit_rule``,
        ``edit_model``, ``edit_task``, ``edit_template``,
        ``edit_template_b``, ``edit_score``, ``edit_score_b``,
        ``edit_difference``, ``edit_pvalue_adjusted`` (NaN without samples),
        with tests ``edit_n_dropped`` (the samples scored under one
        template of the pair only, left out of its test), and
        ``edits_test``, the test used or why none was possible.
        Verbalizers (with ``verbalizer_group`` and ``verbalizer`` template
        coordinates): the variables of
        :func:`rankstats.verbalizer.verbalizer_analysis` (accuracy per group,
        verbalizer and task, tests against random guessing, direct vs
        chain-of-thought, curve shapes per model family).
        What each statistic used and left out: ``w_n_templates`` and
        ``w_n_models`` per task (the templates and models W ranked),
        ``friedman_template_n_models`` (the complete models of Friedman's
        test across templates); over ``drop``, one row per section, task
        (and model) and reason: ``drop_section`` (a section key of
        :func:`rankstats.render.sections`, or ``all`` for absent models and
        templates without scores), ``drop_task``, ``drop_model``,
        ``drop_what`` (``templates``, ``models``, ``tasks``, ``samples``,
        ``task`` when a task's statistic is NaN, ``section`` when the cube
        cannot have the section), ``drop_count``, ``drop_which`` (the labels)
        and ``drop_why``. The conventions of each statistic, over
        ``convention`` (``kendall_w``, ``friedman``, ``metric_ranks``,
        ``kendall_tau``, ``divergence``, ``leaderboard``,
        ``templates_needed``): ``convention_statistic``,
        ``convention_sections``, ``convention_templates``,
        ``convention_ties``, ``convention_tie_correction`` (``on``, ``off``,
        or empty where the statistic has none) and ``convention_note``.
        With metric ranks under other than the standard conventions, the
        stability section keeps its own ``stability_avgp`` and
        ``stability_rank`` (every template, average ranks). The attributes
        record ``conventions`` (its name: ``standard``, a mapping's
        ``name``, else ``custom``), ``templates``, ``ties`` and
        ``tie_correction`` (the value every statistic shares, else ``per
        statistic``), ``nan_policy``, ``higher_is_better``, ``over``. The
        variables of the stability section keep the attributes of
        :func:`~rankstats.stability.leaderboard` (``rank_sets``,
        ``rank_method``, ``tie_groups``, ``n_resamples``,
        ``confidence_level``, ...), the ``templates_*`` ones those of
        :func:`rankstats.templates_needed` (``target``, ``probability``),
        the variance components those of
        :func:`~rankstats.stability.variance_summary` (``target_tau``) and
        the item-level tests their ``test``, ``p_adjust`` and ``alpha``: the
        captions of :mod:`rankstats.render` are written from them.

    Raises
    ------
    DimensionError
        When the scores lack ``model``, ``task`` or ``template``, or have
        another dimension (the report analyses one model × task × template
        cube; select or fold the extra dimension first).
    CubeError
        When ``score_kind`` or ``higher_is_better`` is not one of the
        allowed values (an array, a misspelt kind, the text ``"maybe"``).
    OptionError
        When ``conventions`` names an unknown statistic, option or value, or
        asks for valid templates of a cube without ``template_valid``.

    Notes
    -----
    Every option is checked before any statistic runs (an
    :class:`~rankstats.errors.OptionError` names it). Each number is one
    public statistic computed for all tasks in one call: Kendall's W
    (:func:`rankstats.kendall_w`), Friedman's test both ways
    (:func:`rankstats.friedman`), Kendall's tau-b between every pair of
    templates (:func:`rankstats.kendall_tau_matrix`), the prompt metrics
    (:func:`rankstats.prompt_metrics`), divergence
    (:func:`rankstats.divergence`), Cochran's Q and McNemar's test
    (:func:`rankstats.cochran_q`, :func:`rankstats.mcnemar`, Holm-adjusted),
    the bootstrap leaderboard (:func:`rankstats.stability.leaderboard`) and
    how many fresh templates reproduce the ranking
    (:func:`rankstats.templates_needed`, tau-b ≥ 0.9 with probability
    0.95). With ``seed=None`` the stability section
    differs from run to run. Whatever a section drops to compute its
    statistic (listwise deletion of incomplete templates for W and Friedman,
    absent models, tasks with fewer than two models or templates, ...) is
    in the ``drop_*`` variables, and in every rendering of the report.

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    rankstats.render.to_markdown, rankstats.render.to_html : the report as text.
    rankstats.stability.leaderboard : the stability section alone.

    Examples
    --------
    >>> import rankstats
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8, 0.2], "b": [0.5, 0.6, 0.7],
    ...                       "c": [0.1, 0.3, 0.4]}.items()
    ...     for p, s in zip(["p1", "p2", "p3"], scores)
    ... ])
    >>> analysis = rankstats.report(cube, seed=0)
    >>> round(float(analysis.w.sel(task="t")), 3)
    0.333
    >>> analysis.tau_min_template.values.tolist(), analysis.tau_min_template_b.values.tolist()
    (['p1'], ['p3'])
    >>> analysis.metric_rank.sel(task="t", metric="maxp").values.tolist()
    [1.0, 2.0, 3.0]

    Another convention for W: ranks of tied scores take the lowest rank, and
    no tie correction:

    >>> other = rankstats.report(cube, n_resamples=0, conventions={
    ...     "kendall_w": {"ties": "min", "tie_correction": False}})
    >>> other.convention_ties.sel(convention="kendall_w").item(), other.attrs["ties"]
    ('min', 'per statistic')
    """
    _check_dims(cube)
    kind = _score_kind(cube)
    scores = template_scores(cube)
    _check_valid(scores, conventions)
    best_first = _xr.higher_is_better_of(cube, higher_is_better)
    structure, log = Structure(scores), Log()
    _structure_drops(log, structure)
    parts = [
        _agreement(scores, nan_policy, structure, log, conventions),
        _least_agreeing_pair(scores, best_first, nan_policy, structure, log),
        _metrics(
            scores, best_first, nan_policy, threshold, structure, log, conventions["metric_ranks"]
        ),
    ]
    if "template_is_original" in scores.coords:
        parts.append(_divergence(scores, nan_policy, structure, log))
    else:
        log.add(
            "divergence",
            "section",
            ["divergence"],
            "left out: the cube has no "
            "template_is_original coordinate (which templates are the benchmark's own)",
        )
    if "template_valid" in scores.coords:
        parts.append(_filtering(scores, best_first, nan_policy, structure, log))
    else:
        log.add(
            "filtering",
            "section",
            ["filtering"],
            "left out: the cube has no template_valid coordinate (which templates passed a check)",
        )
    over = None
    if n_resamples:
        over = "both" if "sample" in _score_dims(cube) else "templates"
        parts.append(
            _stability(
                cube,
                scores,
                n_resamples,
                over,
                seed,
                nan_policy,
                structure,
                log,
                best_first,
                conventions["metric_ranks"],
            )
        )
    if n_resamples:
        parts.append(_variance(cube, n_resamples, seed, structure, log))
    if "sample" in _score_dims(cube) and isinstance(cube, xr.Dataset):
        parts.append(_sensitivity(cube))
    item_level = _item_level_refusal(cube, kind)
    if item_level is None:
        parts.append(
            _per_sample_tests(cube["score"], parts[2]["metric_value"], best_first, structure, log)
        )
    else:
        log.add(
            "template_effect",
            "section",
            ["template_effect", "leaders"],
            f"left out: Cochran's Q and McNemar's test need binary scores per sample; {item_level}",
        )
    if isinstance(cube, xr.Dataset) and "template_text" in cube.coords:
        parts.append(_minimal_edits(cube, structure, log))
    else:
        log.add(
            "edits",
            "section",
            ["edits"],
            "left out: the cube has no template_text coordinate (the templates' wording)",
        )
    if isinstance(cube, xr.Dataset) and "verbalizer_group" in cube.coords:
        from .verbalizer import log_drops, verbalizer_analysis

        parts.append(verbalizer_analysis(cube))
        log_drops(cube, structure, log)
    analysis = xr.merge(parts, compat="override", join="exact", combine_attrs="drop")
    # what each statistic records of its method (rank-set rule, draws, level, ...) stays
    # on its variables, so that what the renderings say of them is read, not restated
    for part in parts:
        for name, variable in part.data_vars.items():
            if variable.attrs:
                analysis[name].attrs = dict(variable.attrs)
    # the best templates are found among all of them, whatever the metric ranks use
    maxp = (
        parts[2]["metric_value"].sel(metric="maxp", drop=True)
        if conventions["metric_ranks"]["templates"] == "all"
        else prompt_metrics(scores, higher_is_better=best_first, nan_policy=nan_policy).maxp
    )
    by_benchmark = _by_benchmark(analysis, scores, best_first, structure, log, maxp)
    analysis = analysis.drop_vars("benchmark", errors="ignore").merge(by_benchmark)
    analysis = analysis.merge(log.dataset()).merge(_conventions.table(conventions))
    analysis.attrs = {
        "statistic": "report",
        "threshold": threshold,
        "n_resamples": n_resamples,
        "seed": seed if isinstance(seed, int) else "Generator" if seed is not None else "None",
        "over": over or "",
        "nan_policy": nan_policy,
        "conventions": conventions["name"],
        "templates": _conventions.uniform(conventions, "templates"),
        "ties": _conventions.uniform(conventions, "ties"),
        "tie_correction": _as_attr(_conventions.uniform(conventions, "tie_correction")),
        "higher_is_better": int(best_first),
        "score_kind": kind or "",
        "metric": str(cube.attrs.get("metric", "score")),
        "source": str(cube.attrs.get("source", "")),
    }
    return analysis


_REPORT_DIMS = ("model", "task", "template", "sample")


def _as_attr(value):
    """A boolean as 0 or 1 (netCDF attributes have no booleans); anything else as it is."""
    return int(value) if isinstance(value, bool) else value


def _check_valid(scores, conventions) -> None:
    """Refuse conventions that ask for valid templates of a cube that does not mark them."""
    if "template_valid" in scores.coords:
        return
    for key in _conventions.STANDARD:
        if conventions[key]["templates"] == "valid":
            raise OptionError(
                f"report: conventions {key}.templates='valid' needs the cube's "
                "template_valid coordinate (which templates passed a check), "
                "and the cube has none"
            )


def _over(scores, templates: str):
    """The scores of a convention's template set: all, or those marked valid."""
    if templates == "all":
        return scores
    return scores.where(
        xr.DataArray(_task_template_mask(scores["template_valid"]), dims=("task", "template"))
    )


def _structure_of(scores, st: Structure, templates: str) -> Structure:
    return st if templates == "all" else Structure(_over(scores, templates))


def _invalid_drops(log: Log, section: str, st: Structure, scores, what: str) -> None:
    """The scored templates a convention of valid templates leaves out of ``what``."""
    valid = _task_template_mask(scores["template_valid"])
    log.templates(
        section,
        st,
        st.scored & ~valid,
        f"marked invalid (template_valid is false): left out of {what} (conventions: "
        "valid templates only)",
    )


def _score_dims(cube) -> tuple:
    if isinstance(cube, xr.Dataset):
        if "score" not in cube.data_vars:
            raise CubeError(
                "report: the cube has no 'score' variable (variables: "
                f"{', '.join(map(str, cube.data_vars)) or 'none'})"
            )
        return cube["score"].dims
    return cube.dims


def _check_dims(cube) -> None:
    """Refuse scores without the cube's dimensions, or with one the report cannot handle."""
    dims = _score_dims(cube)
    missing = [d for d in _REPORT_DIMS[:3] if d not in dims]
    if missing:
        raise DimensionError(
            f"report: the scores lack the dimension(s) "
            f"{', '.join(map(repr, missing))} (they have "
            f"{', '.join(map(repr, dims)) or 'none'})"
        )
    extra = [d for d in dims if d not in _REPORT_DIMS]
    if extra:
        sizes = dict(
            zip(dims, (cube["score"] if isinstance(cube, xr.Dataset) else cube).shape, strict=True)
        )
        shown = ", ".join(f"{d!r} (size {sizes[d]})" for d in extra)
        first = extra[0]
        raise DimensionError(
            f"report: the cube's scores have the extra dimension(s) {shown}; the report "
            f"analyses one model × task × template cube at a time: select one position "
            f"(cube.isel({first}=0)) or fold {first!r} into the task dimension, and report "
            "each"
        )


def _score_kind(cube) -> str | None:
    """The checked ``score_kind`` attribute, or None when the input has none."""
    attrs = getattr(cube, "attrs", None) or {}
    return score_kind_of(cube) if "score_kind" in attrs else None


def _item_level_refusal(cube, kind) -> str | None:
    """Why the item-level tests cannot run on ``cube``, or None when they can."""
    if not isinstance(cube, xr.Dataset):
        return "the input is a DataArray of scores, not a cube with a score_kind attribute"
    if kind is None:
        return "the cube has no score_kind attribute"
    if kind != "binary":
        return f"the cube's score_kind is {kind!r}, not 'binary'"
    if "sample" not in cube["score"].dims:
        return "the cube has no sample dimension (its scores are already aggregated)"
    return None


def _structure_drops(log: Log, st: Structure) -> None:
    """Absent models, templates without any score, tasks without any score: every section."""
    for t in np.flatnonzero(st.n_models == 0):
        log.task(EVERY_SECTION, st.tasks[t], "no score at all: left out of every section")
    scored_task = (st.n_models > 0)[:, None]
    log.models(
        EVERY_SECTION,
        st,
        ~st.present & scored_task,
        "absent: no score on any template of the task; left out of every per-task "
        "statistic (structure, not a missing value)",
    )
    log.templates(
        EVERY_SECTION,
        st,
        st.real & ~st.scored & scored_task,
        "no score for any model: left out of every per-task statistic",
    )


def _too_few(log: Log, section: str, st: Structure, what: str) -> np.ndarray:
    """Log the tasks with fewer than two models or two scored templates; return the others."""
    for t in np.flatnonzero(st.n_models == 1):
        log.task(section, st.tasks[t], f"fewer than two models on the task: {what}")
    for t in np.flatnonzero((st.n_models >= 2) & (st.n_templates < 2)):
        log.task(section, st.tasks[t], f"fewer than two templates with a score: {what}")
    return (st.n_models >= 2) & (st.n_templates >= 2)


def _agreement(scores, nan_policy, st: Structure, log: Log, conventions: dict):
    w_options, f_options = conventions["kendall_w"], conventions["friedman"]
    w = kendall_w(
        _over(scores, w_options["templates"]),
        ties=w_options["ties"],
        tie_correction=w_options["tie_correction"],
        nan_policy=nan_policy,
    )
    f_scores = _over(scores, f_options["templates"])
    f_kwargs = {
        "ties": f_options["ties"],
        "tie_correction": f_options["tie_correction"],
        "nan_policy": nan_policy,
    }
    by_template = friedman(f_scores, **f_kwargs)
    by_model = friedman(f_scores, blocks="template", treatments="model", **f_kwargs)
    same = w_options["templates"] == f_options["templates"]
    if "valid" in (w_options["templates"], f_options["templates"]):
        what = (
            "W and both Friedman tests"
            if same
            else "W"
            if w_options["templates"] == "valid"
            else "both Friedman tests"
        )
        _invalid_drops(log, "agreement", st, scores, what)
    w_st = _structure_of(scores, st, w_options["templates"])
    _agreement_drops(
        log,
        w_st,
        w_st if same else _structure_of(scores, st, f_options["templates"]),
        nan_policy,
        w,
        by_template,
    )
    return xr.Dataset(
        {
            "w": w.statistic,
            "w_chi2": w.chi2,
            "w_pvalue": w.pvalue,
            "w_n_templates": w.n_judges,
            "w_n_models": w.n_objects,
            "friedman_template_statistic": by_template.statistic,
            "friedman_template_pvalue": by_template.pvalue,
            "friedman_template_n_models": by_template.n_blocks,
            "friedman_model_statistic": by_model.statistic,
            "friedman_model_pvalue": by_model.pvalue,
        }
    )


def _per_task(array: xr.DataArray) -> np.ndarray:
    return np.asarray(array.transpose("task").values, dtype=float)


def _agreement_drops(
    log: Log, st: Structure, st_f: Structure, nan_policy: str, w, by_template
) -> None:
    """What W (over ``st``'s templates) and Friedman (over ``st_f``'s) leave out."""
    section = "agreement"
    if nan_policy == "omit":
        by_w = "W and Friedman (models)" if st is st_f else "W"
        log.templates(
            section,
            st,
            st.incomplete_template,
            f"lacking a score for some model present on the task: left out of {by_w} "
            "by listwise deletion (nan_policy='omit')",
        )
        if st is not st_f:
            log.templates(
                section,
                st_f,
                st_f.incomplete_template,
                "lacking a score for some model present on the task: left out of "
                "Friedman (models) by listwise deletion (nan_policy='omit')",
            )
        log.models(
            section,
            st_f,
            st_f.incomplete_model,
            "lacking a score on some template of the task: left out of Friedman "
            "(templates) by listwise deletion (nan_policy='omit')",
        )
    else:
        log.templates(
            section,
            st,
            st.incomplete_template | st_f.incomplete_template,
            "lacking a score for some model present on the task: W and both "
            "Friedman tests are NaN (nan_policy='propagate'; 'omit' would leave "
            "these templates out)",
        )
    enough = _too_few(log, section, st, "W, both Friedman tests and min τ are NaN")
    poisoned = (st.incomplete_template.any(1) | st_f.incomplete_template.any(1)) & (
        nan_policy != "omit"
    )
    w_nan = np.isnan(_per_task(w.statistic))
    judges = _per_task(w.n_judges)
    f_nan = np.isnan(_per_task(by_template.statistic))
    blocks = _per_task(by_template.n_blocks)
    for t in np.flatnonzero(enough & ~poisoned & (w_nan | f_nan)):
        reasons = []
        if w_nan[t]:
            reasons.append(
                "W and Friedman (models): "
                + (
                    "fewer than two complete templates remain after listwise deletion"
                    if judges[t] < 2
                    else "every template ties every model"
                )
            )
        if f_nan[t]:
            reasons.append(
                "Friedman (templates): "
                + (
                    "fewer than two complete models remain after listwise deletion"
                    if blocks[t] < 2
                    else "every model scores its templates alike"
                )
            )
        log.task(section, st.tasks[t], "; ".join(reasons) + " (NaN)")


def _least_agreeing_pair(scores, best_first, nan_policy, st: Structure, log: Log):
    """The pair of templates with the smallest tau-b, per task, and the count of negative ones."""
    tau = kendall_tau_matrix(scores, nan_policy=nan_policy).statistic
    m = scores.sizes["template"]
    upper = xr.DataArray(np.triu(np.ones((m, m), dtype=bool), k=1), dims=tau.dims[-2:])
    pairs = tau.where(upper).transpose(..., "template", "template_b")
    flat = pairs.values.reshape(*pairs.shape[:-2], m * m)
    compared = ~np.isnan(flat)
    best = np.argmin(np.where(compared, flat, np.inf), axis=-1)
    found = compared.any(axis=-1)
    lead = pairs.dims[:-2]
    first = xr.DataArray(best // m, dims=lead, coords={d: pairs[d] for d in lead})
    second = xr.DataArray(best % m, dims=lead, coords={d: pairs[d] for d in lead})
    # the picked templates' own coordinates would clash across variables; the ids say it all
    scores = _without_template_coords(scores)
    ranks = rank(scores, "model", higher_is_better=best_first)
    # without a template_id coordinate the templates go by their labels or positions
    ids = xr.DataArray(np.asarray(st.template_ids, dtype=object), dims=("task", "template"))
    found = xr.DataArray(found, dims=lead)
    minimum = xr.DataArray(np.take_along_axis(flat, best[..., None], -1)[..., 0], dims=lead)
    return xr.Dataset(
        {
            "tau_min": minimum.where(found),
            "tau_min_template": ids.isel(template=first, drop=True).where(found, ""),
            "tau_min_template_b": ids.isel(template=second, drop=True).where(found, ""),
            "tau_min_rank": ranks.isel(template=first, drop=True),
            "tau_min_rank_b": ranks.isel(template=second, drop=True),
            "tau_min_score": scores.isel(template=first, drop=True),
            "tau_min_score_b": scores.isel(template=second, drop=True),
            "negative_tau_pairs": (pairs < 0).sum(("template", "template_b")),
            "template_pairs": pairs.notnull().sum(("template", "template_b")),
        }
    ).pipe(_with_pair_drops, st, log, nan_policy)


def _with_pair_drops(pairs: xr.Dataset, st: Structure, log: Log, nan_policy: str):
    """Log the templates whose tau with every other is undefined, and the tasks without a pair."""
    section = "pairs"
    counts = st.observed.sum(1)
    low = np.where(st.observed, st.values, np.inf).min(1)
    high = np.where(st.observed, st.values, -np.inf).max(1)
    several = (st.n_models >= 2)[:, None]
    undefined = (
        "τ with any other template is undefined, so they are left out of min τ and the pair counts"
    )
    log.templates(
        section, st, st.scored & several & (counts == 1), f"scored for one model only: {undefined}"
    )
    log.templates(
        section,
        st,
        st.scored & (counts >= 2) & (low == high),
        f"every model scores the same on them: {undefined}",
    )
    if nan_policy == "omit":
        log.templates(
            section,
            st,
            st.incomplete_template,
            "lacking a score for some model: each τ with them ranks only the models "
            "both templates score (pairwise deletion, nan_policy='omit')",
        )
    else:
        log.templates(
            section,
            st,
            st.incomplete_template,
            f"lacking a score for some model (nan_policy='propagate'): {undefined}",
        )
    enough = _too_few(log, section, st, "no pair of templates to compare")
    none = enough & (_per_task(pairs["template_pairs"]) == 0)
    for t in np.flatnonzero(none):
        log.task(section, st.tasks[t], "no pair of templates has a defined τ")
    return pairs


def _without_template_coords(array):
    return array.drop_vars(
        [name for name, coord in array.coords.items() if "template" in coord.dims]
    )


def _metric_values(scores, best_first, nan_policy, valid=None, ties="average"):
    values = prompt_metrics(scores, valid=valid, higher_is_better=best_first, nan_policy=nan_policy)
    stacked = xr.concat(
        [values[name] for name in METRICS], dim=_METRIC_INDEX, coords="minimal", compat="override"
    )
    # saturation is better when higher whichever way the scores point
    direction = xr.DataArray(
        [best_first, best_first, True, best_first], dims="metric", coords={"metric": _METRIC_INDEX}
    )
    ranks = xr.concat(
        [
            rank(
                stacked.sel(metric=name),
                "model",
                ties=ties,
                higher_is_better=bool(direction.sel(metric=name)),
            )
            for name in METRICS
        ],
        dim=_METRIC_INDEX,
    )
    return stacked, ranks


def _metrics(scores, best_first, nan_policy, threshold, st: Structure, log: Log, options: dict):
    valid = options["templates"] == "valid"
    values, ranks = _metric_values(
        scores, best_first, nan_policy, valid=True if valid else None, ties=options["ties"]
    )
    if valid:
        _invalid_drops(
            log,
            "metrics",
            st,
            scores,
            "MaxP, AvgP, saturation, CPS, their ranks and the share above the threshold",
        )
        st = _structure_of(scores, st, "valid")
        scores = _over(scores, "valid")
    observed = scores.notnull()
    above = ((scores > threshold) & observed).sum("template")
    present = observed.sum("template")
    for t, m in np.argwhere(st.incomplete_model):
        missing = st.templates(t, st.hole[t, m])
        n = int(st.n_templates[t])
        why = (
            "no score from this model on them: its MaxP, AvgP, saturation and CPS are over "
            f"its other {n - len(missing)} of the task's {n} templates"
            if nan_policy == "omit"
            else "no score from this model on them: its MaxP, AvgP, saturation and CPS are NaN "
            "(nan_policy='propagate')"
        )
        log.add("metrics", "templates", missing, why, task=st.tasks[t], model=st.models[m])
    return xr.Dataset(
        {
            "metric_value": values,
            "metric_rank": ranks,
            "share_above_threshold": (above / present.where(present > 0)),
        }
    )


def _divergence(scores, nan_policy, st: Structure, log: Log):
    result = divergence(scores, nan_policy=nan_policy)
    _divergence_drops(log, st, result, _task_template_mask(scores["template_is_original"]))
    return xr.Dataset(
        {
            "divergence": result.statistic,
            "original_score": result.original,
            "paraphrase_mean": result.paraphrase_mean,
            "paraphrase_std": result.paraphrase_std,
        }
    )


def _task_template_mask(coord: xr.DataArray) -> np.ndarray:
    """A (task, template) boolean coordinate as a NumPy mask; missing values are False."""
    values = np.asarray(coord.transpose("task", "template").values, dtype=object)
    return np.where(pd.isna(values), False, values).astype(bool)


def _divergence_drops(log: Log, st: Structure, result, original: np.ndarray) -> None:
    section = "divergence"
    original = original & st.scored
    paraphrases = st.scored & ~original
    has_scores = st.n_models > 0
    for t in np.flatnonzero(has_scores & ~original.any(1)):
        log.task(
            section,
            st.tasks[t],
            "no template with a score is marked original (template_is_original): no divergence",
        )
    few = has_scores & original.any(1) & (paraphrases.sum(1) < 2)
    for t in np.flatnonzero(few):
        log.task(
            section,
            st.tasks[t],
            "fewer than two paraphrases with a score: no standard "
            "deviation to measure the original against",
        )
    usable = has_scores & original.any(1) & ~few
    values = {
        name: np.asarray(result[name].transpose("task", "model").values, dtype=float)
        for name in ("statistic", "n_original", "n_paraphrases", "paraphrase_std")
    }
    undefined = usable[:, None] & st.present & np.isnan(values["statistic"])
    reasons = np.select(
        [values["n_original"] < 1, values["n_paraphrases"] < 2, values["paraphrase_std"] == 0],
        [
            "no score on the original template(s): no divergence",
            "fewer than two paraphrase scores: no standard deviation",
            "the same score on every paraphrase (standard deviation 0): no divergence",
        ],
        "a missing score (nan_policy='propagate'): no divergence",
    )
    for t in np.flatnonzero(undefined.any(1)):
        for why in dict.fromkeys(reasons[t][undefined[t]]):
            log.add(
                section,
                "models",
                st.models_where(undefined[t] & (reasons[t] == why)),
                str(why),
                task=st.tasks[t],
            )


def _per_sample_tests(x, metric_value, best_first, st: Structure, log: Log, alpha=0.05):
    """Item-level tests of a binary cube: Cochran's Q and McNemar, Holm-adjusted.

    Cochran's Q per model and task asks whether the templates change which
    samples a model gets right (one Holm family over all models and tasks).
    McNemar (exact) per task and template compares the two models with the
    best AvgP on the same samples (one Holm family per task, over its
    templates): how many templates tell them apart, and in whose favour.
    A task with fewer than two models with an AvgP has no leaders to compare.
    """
    q = cochran_q(x, blocks="sample", treatments="template", nan_policy="omit")
    _cochran_drops(log, st, x)
    avgp = metric_value.sel(metric="avgp", drop=True).transpose("task", "model")
    key = np.where(np.isnan(avgp.values), np.inf, -avgp.values if best_first else avgp.values)
    ranked = (~np.isnan(avgp.values)).sum(-1)
    pair = ranked >= 2  # (task,): a leader and a runner-up exist
    order = np.argsort(key, axis=-1, kind="stable")[:, :2]  # (task, 2): leader, runner-up
    if order.shape[-1] < 2:  # one model in the cube: nobody to compare it with
        order = np.zeros((avgp.sizes["task"], 2), dtype=int)
    pick = {position: xr.DataArray(order[:, position], dims="task") for position in (0, 1)}
    # model attributes (revisions, sizes) differ between the two: keep only the values
    leader, runner_up = (x.isel(model=pick[p]).reset_coords(drop=True) for p in (0, 1))
    test = mcnemar(leader, runner_up, dim="sample", method="exact", nan_policy="omit")
    # padding templates, and templates one of the two lacks, test nothing
    tested = test["pvalue"].where((test["n_samples"] > 0) & xr.DataArray(pair, dims="task"))
    adjusted = adjust_pvalues(tested, "holm", family="template")
    apart = adjusted < alpha
    models = np.asarray(x["model"].values).astype(str)
    for t in np.flatnonzero((st.n_models > 0) & ~pair):
        log.task(
            "leaders",
            st.tasks[t],
            "fewer than two models with an AvgP: no leader and runner-up to compare",
        )
    untested = (
        st.scored
        & pair[:, None]
        & ~np.asarray((test["n_samples"] > 0).transpose("task", "template").values, dtype=bool)
    )
    log.templates(
        "leaders",
        st,
        untested,
        lambda t: (
            f"{models[order[t, 0]]} or {models[order[t, 1]]} (the leader and "
            "the runner-up) has no score on them: not tested"
        ),
    )
    dropped = test["n_dropped"].where(tested.notnull(), 0).sum("template")
    _pairwise_drops(log, st, leader, runner_up, tested.notnull(), _sample_ids(x), models, order)
    effect = adjust_pvalues(q["pvalue"], "holm").assign_attrs(
        test="Cochran's Q", p_adjust="holm", family="every model and task"
    )
    compared = {
        "test": "McNemar (exact)",
        "p_adjust": "holm",
        "family": "the templates of each task",
        "alpha": alpha,
    }
    return xr.Dataset(
        {
            "template_effect_q": q["statistic"],
            "template_effect_pvalue_adjusted": effect,
            "leader": ("task", np.where(ranked >= 1, models[order[:, 0]], "")),
            "runner_up": ("task", np.where(pair, models[order[:, 1]], "")),
            "leaders_templates_tested": adjusted.notnull().sum("template"),
            "leader_better_templates": (apart & (test["b"] > test["c"]))
            .sum("template")
            .assign_attrs(compared),
            "runner_up_better_templates": (apart & (test["c"] > test["b"]))
            .sum("template")
            .assign_attrs(compared),
            "leaders_samples_dropped": dropped.astype(int),
        }
    ).reset_coords(drop=True)


def _pairwise_drops(log: Log, st: Structure, leader, runner_up, tested, ids, models, order) -> None:
    """Samples one of the two leaders lacks under a tested template: McNemar's pairwise deletion."""
    one_side = (leader.notnull() ^ runner_up.notnull()) & tested
    one_side = np.asarray(one_side.transpose("task", "template", "sample").values, dtype=bool)
    if not one_side.any():
        return
    for t in np.flatnonzero(one_side.any((1, 2))):
        log.add(
            "leaders",
            "samples",
            ids[t][one_side[t].any(0)].tolist(),
            f"scored for only one of {models[order[t, 0]]} and {models[order[t, 1]]} (the "
            "leader and the runner-up) under some template: left out of that template's "
            "McNemar test by pairwise deletion ('samples left out' counts them per "
            "template)",
            task=st.tasks[t],
        )


def _sample_ids(x: xr.DataArray) -> np.ndarray:
    """The sample labels of each task, ``(task, sample)``: ``sample_id``, else positions."""
    if "sample_id" in x.coords:
        return np.asarray(x["sample_id"].transpose("task", "sample").values, dtype=object).astype(
            str
        )
    return np.broadcast_to(
        np.arange(x.sizes["sample"]).astype(str), (x.sizes["task"], x.sizes["sample"])
    )


def _cochran_drops(log: Log, st: Structure, x: xr.DataArray) -> None:
    """Samples left out of Cochran's Q by listwise deletion, per model and task."""
    observed = np.asarray(x.notnull().transpose("task", "model", "template", "sample").values)
    templates = observed.any(-1)  # (task, model, template): the model's scored templates
    samples = observed.any(-2)  # (task, model, sample)
    incomplete = samples & (observed.sum(-2) < templates.sum(-1)[..., None])
    if not incomplete.any():
        return
    ids = _sample_ids(x)
    for t, m in np.argwhere(incomplete.any(-1)):
        log.add(
            "template_effect",
            "samples",
            ids[t][incomplete[t, m]].tolist(),
            "no score from this model under some of its templates: left out of Cochran's "
            "Q by listwise deletion",
            task=st.tasks[t],
            model=st.models[m],
        )


def _filtering(scores, best_first, nan_policy, st: Structure, log: Log):
    all_values, _ = _metric_values(scores, best_first, nan_policy)
    valid_values, _ = _metric_values(scores, best_first, nan_policy, valid=True)
    tau = kendall_tau(all_values, valid_values, "model", nan_policy="omit")
    valid = _task_template_mask(scores["template_valid"])
    log.templates(
        "filtering",
        st,
        st.scored & ~valid,
        "marked invalid (template_valid is false): left out of the ranking over "
        "valid templates that each metric's ranking over all templates is compared "
        "with",
    )
    for t in np.flatnonzero((st.n_models > 0) & ~(st.scored & valid).any(1)):
        log.task(
            "filtering",
            st.tasks[t],
            "no template with a score is marked valid: no "
            "ranking over valid templates to compare with (NaN)",
        )
    return xr.Dataset({"filtering_tau": tau.statistic})


def _stability(
    cube,
    scores,
    n_resamples,
    over,
    seed,
    nan_policy,
    st: Structure,
    log: Log,
    best_first,
    metric_options,
):
    """Rank intervals and tie groups, and how many templates are enough.

    The leaderboard ranks the AvgP over every template with average ranks;
    when the metrics section follows other conventions, the section keeps
    its own point AvgP and rank (``stability_avgp``, ``stability_rank``).
    """
    from ..stability.resampling import leaderboard, replicates
    from ..stability.winners import replicate_leaders

    # the draws once: the leaderboard and the winner's-curse adjustment share them
    reps = replicates(
        cube,
        n_resamples,
        over,
        seed=seed,
        statistics=("avgp", "rank"),
        nan_policy=nan_policy,
    )
    board = leaderboard(reps)
    leaders = replicate_leaders(reps)
    # the defaults of templates_needed (a smaller n_resamples starts with fewer draws)
    needed = _templates_needed(scores, min(n_resamples, 200), seed, nan_policy)
    _stability_drops(log, st, board, needed, nan_policy)
    own = {}
    if any(metric_options[k] != v for k, v in _conventions.STANDARD["metric_ranks"].items()):
        values, ranks = _metric_values(scores, best_first, nan_policy)
        own = {
            "stability_avgp": values.sel(metric="avgp", drop=True),
            "stability_rank": ranks.sel(metric="avgp", drop=True),
        }
    data = xr.Dataset(
        {
            **own,
            "n_templates": needed["n_templates"],
            "avgp_low": board["score_low"],
            "avgp_high": board["score_high"],
            "rank_low": board["rank_low"],
            "rank_high": board["rank_high"],
            "tie_group": board["tie_group"],
            "arena_rank": board["arena_rank"],
            "templates_needed": needed["k_needed"],
            "templates_needed_censored": needed["censored"],
            "templates_needed_low": needed["k_needed_low"],
            "templates_needed_high": needed["k_needed_high"],
            "templates_planned": needed["k_planned"],
            "templates_recommended": needed["k_recommended"],
            "templates_needed_resamples": needed["n_resamples"],
            # the leader's score given that it was picked for being the highest
            "leader": leaders["model"],
            "leader_adjusted": leaders["adjusted_estimate"],
            "leader_adjusted_low": leaders["low"],
            "leader_adjusted_high": leaders["high"],
        }
    ).reset_coords(drop=True)
    for name in ("leader", "leader_adjusted", "leader_adjusted_low", "leader_adjusted_high"):
        data[name].attrs = _recorded(leaders.attrs)
    for name in ("avgp_low", "avgp_high", "rank_low", "rank_high", "tie_group", "arena_rank"):
        data[name].attrs = _recorded(board.attrs)
    for name in data.data_vars:
        if name.startswith("templates_"):
            data[name].attrs = _recorded(needed.attrs)
    if "sample" in cube.dims:  # the items of the same question, the templates held fixed
        planned = _samples_planned(cube, needed.attrs["probability"])
        data["samples_planned"] = planned["n_samples_needed_fixed_templates"].reset_coords(
            drop=True
        )
        data["samples_planned"].attrs = _recorded(planned.attrs)
    return data


def _samples_planned(cube, probability) -> xr.Dataset:
    """:func:`~rankstats.stability.plan`'s items for the question of templates_needed."""
    from ..stability.planning import plan

    return plan(cube, probability=probability)


def _recorded(attrs: dict) -> dict:
    """A statistic's attributes as netCDF can keep them: text and numbers, None as text."""
    return {
        str(key): value if isinstance(value, (str, int, float)) else str(value)
        for key, value in attrs.items()
    }


def _templates_needed(scores, n_resamples, seed, nan_policy) -> xr.Dataset:
    """:func:`templates_needed` of the per-template scores, with its default target and draws."""
    from ..stability.needed import templates_needed

    return templates_needed(scores, n_resamples=n_resamples, seed=seed, nan_policy=nan_policy)


def _stability_drops(log: Log, st: Structure, board, needed, nan_policy: str) -> None:
    ranked = ~np.isnan(np.asarray(board["rank"].transpose("task", "model").values, dtype=float))
    propagated = nan_policy != "omit"
    unranked = st.present & ~ranked
    for t in np.flatnonzero((st.n_models > 0) & ~ranked.any(1)):
        log.task(
            "stability",
            st.tasks[t],
            "no model is ranked: "
            + (
                "every model lacks some score (nan_policy='propagate')"
                if propagated and st.incomplete_model[t].all()
                else "no score to rank"
            ),
        )
    some = ranked.any(1)[:, None]
    log.models(
        "stability",
        st,
        unranked & some & st.incomplete_model & propagated,
        "lacking a score on some template: no score interval or rank (nan_policy='propagate')",
    )
    log.models(
        "stability",
        st,
        unranked & some & ~(st.incomplete_model & propagated),
        "no score interval or rank",
    )
    section = "templates_needed"
    if nan_policy == "omit":
        log.templates(
            section,
            st,
            st.incomplete_template,
            "lacking a score for some model present on the task: left out of the "
            "pool of templates drawn from (listwise deletion, nan_policy='omit')",
        )
    else:
        log.templates(
            section,
            st,
            st.incomplete_template,
            "lacking a score for some model present on the task: every draw that "
            "includes them gives NaN (nan_policy='propagate')",
        )
    enough = _too_few(log, section, st, "no ranking to agree with (NaN)")
    pool = _per_task(needed["n_templates"])
    k = _per_task(needed["k_needed"])
    for t in np.flatnonzero(enough & np.isnan(k)):
        log.task(
            section,
            st.tasks[t],
            "fewer than two templates in the pool (NaN)"
            if pool[t] < 2
            else "no two sets of templates give a ranking to compare (NaN)",
        )


def _variance(cube, n_resamples, seed, st: Structure, log: Log) -> xr.Dataset:
    """Variance components per task, and the templates a replication tau of 0.9 needs."""
    from ..stability.variance import variance_summary

    summary = variance_summary(cube, n_resamples=n_resamples, seed=seed)
    missing = summary["variance_cells_missing"].to_series()
    for task, count in missing[missing > 0].items():
        log.cells(
            "variance",
            int(count),
            "missing model × template (× sample) cells, "
            "left out of the variance components (method of moments on the cells "
            "present)",
            task=str(task),
        )
    summary = summary.reset_coords(drop=True)
    for name in summary.data_vars:
        summary[name].attrs = _recorded(summary.attrs)
    return summary


def _sensitivity(cube, top: int = 5) -> xr.Dataset:
    """ProSA's prompt sensitivity per task and its most sensitive samples."""
    from .sensitivity import sensitive_samples

    listed = sensitive_samples(cube, top=top)
    return (
        listed.rename(
            {name: f"sensitive_{name}" for name in ("sample_id", "sensitivity", "score", "models")}
        )
        .rename({"position": "sensitive_position"})
        .reset_coords(drop=True)
    )


def _minimal_edits(cube, st: Structure, log: Log, top=20):
    """The largest effects of one-token template edits (:func:`rankstats.edits.minimal_edits`)."""
    from .edits import largest_edits, log_drops, minimal_edits

    edits = minimal_edits(cube)
    log_drops(edits, cube, st, log)
    table = largest_edits(edits, top=top)
    pvalue = (
        table["pvalue_adjusted"].to_numpy()
        if "pvalue_adjusted" in table
        else np.full(len(table), np.nan)
    )
    dropped = {}
    if "n_dropped" in table:  # the samples each shown pair's test left out
        dropped["edit_n_dropped"] = ("edit", table["n_dropped"].to_numpy(dtype=float))
    text = {
        name: ("edit", table[column].to_numpy(dtype=object))
        for name, column in (
            ("edit_rule", "edit"),
            ("edit_model", "model"),
            ("edit_task", "task"),
            ("edit_template", "template"),
            ("edit_template_b", "template_b"),
        )
    }
    return xr.Dataset(
        {
            **text,
            "edit_score": ("edit", table["score"].to_numpy(dtype=float)),
            "edit_score_b": ("edit", table["score_b"].to_numpy(dtype=float)),
            "edit_difference": ("edit", table["difference"].to_numpy(dtype=float)),
            "edit_pvalue_adjusted": ("edit", pvalue),
            **dropped,
            "edits_test": ((), str(edits.attrs["test"])),
        }
    )


def _by_benchmark(analysis, scores, best_first, st: Structure, log: Log, maxp):
    """Average ranks and the methods of the best templates (``maxp``: all templates)."""
    benchmark = (
        scores["benchmark"]
        if "benchmark" in scores.coords
        else xr.DataArray(np.full(scores.sizes["task"], "all"), dims="task")
    )
    benchmark = (
        benchmark.astype(str)
        .rename("benchmark")
        .drop_vars([c for c in benchmark.coords if c != "task"])
    )
    _average_rank_drops(log, st, analysis["metric_rank"], benchmark.values)
    ranks = analysis["metric_rank"].drop_vars("benchmark", errors="ignore")
    ranks = ranks.assign_coords(benchmark=benchmark)
    # the per-task benchmark label moves to a variable: "benchmark" becomes a dimension
    out = {
        "average_rank": ranks.groupby("benchmark").mean("task"),
        "task_benchmark": benchmark.rename(None),
    }
    if "template_method" not in scores.coords:
        return xr.Dataset(out)
    methods = scores["template_method"].astype(str)
    names = np.array(sorted(set(np.unique(methods.values)) - {""}), dtype=object)
    unnamed = st.scored & (np.asarray(methods.transpose("task", "template").values) == "")
    log.templates(
        "best_methods",
        st,
        unnamed,
        "no generation method (template_method is empty): left out of the shares",
    )
    # "generation_method", not "method": that name would shadow .sel(method=...)
    one_hot = methods == xr.DataArray(
        names, dims="generation_method", coords={"generation_method": names}
    )
    best = (scores == maxp) & scores.notnull()
    counts = (best & one_hot).sum("template").assign_coords(benchmark=benchmark)
    per_model = counts.groupby("benchmark").sum("task")
    all_models = per_model.sum("model")
    templates = (one_hot & xr.DataArray(st.real, dims=("task", "template"))).sum("template")
    templates = templates.assign_coords(benchmark=benchmark).groupby("benchmark").sum("task")
    out.update(
        {
            "best_template_method_share": per_model / per_model.sum("generation_method"),
            "best_template_method_share_all": all_models / all_models.sum("generation_method"),
            "template_method_share": templates / templates.sum("generation_method"),
        }
    )
    return xr.Dataset(out)


def _average_rank_drops(log: Log, st: Structure, ranks: xr.DataArray, benchmark) -> None:
    """Models without a rank on some tasks of a benchmark: their average is over fewer tasks."""
    ranked = ~np.isnan(
        np.asarray(ranks.sel(metric="avgp").transpose("task", "model").values, dtype=float)
    )
    for name in dict.fromkeys(benchmark.tolist()):
        tasks = np.flatnonzero((benchmark == name) & ranked.any(1))
        for m in np.flatnonzero(~ranked[tasks].all(0)):
            has = ranked[tasks, m]
            why = (
                f"no rank on any task of benchmark {name!r}: no average rank there"
                if not has.any()
                else f"no rank on them: the model's average rank over benchmark {name!r} is "
                f"over its other {int(has.sum())} of {len(tasks)} tasks, not comparable "
                "with that of a model ranked on all"
            )
            log.add(
                "average_rank", "tasks", st.tasks[tasks[~has]].tolist(), why, model=st.models[m]
            )
