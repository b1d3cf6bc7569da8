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
from ..errors import InputTypeError, OptionError
from ..stability._checks import checked
from ..statistics.concordance import kendall_tau, kendall_tau_matrix, kendall_w, rank
from ..statistics.metrics import divergence, prompt_metrics
from ..statistics.multitest import adjust_pvalues
from ..statistics.significance import cochran_q, friedman, mcnemar

__all__ = ["METRICS", "report"]

METRICS = ("maxp", "avgp", "saturation", "cps")
_METRIC_INDEX = pd.Index(np.array(METRICS, dtype=object), name="metric")


def _cube(function: str, name: str, value):
    """A check that the input is a score cube or a DataArray of scores."""
    if isinstance(value, (xr.Dataset, xr.DataArray)):
        return value
    raise InputTypeError(f"{function}: {name} must be a score cube (xarray.Dataset) or a "
                         f"DataArray of scores (got {type(value).__name__})")


def _resamples_or_none(function: str, name: str, value) -> int:
    """A check that the value is 0 (no stability section) or a bootstrap's count, at least 2."""
    value = o.non_negative_int(function, name, value)
    if value == 1:
        raise OptionError(f"{function}: {name}=1 is not allowed; {name} must be 0 (leave the "
                          "stability section out) or an integer of at least 2")
    return value


@checked(cube=_cube, threshold=o.finite, n_resamples=_resamples_or_none)
def report(cube, *, threshold: float = 0.05, nan_policy: str = "omit",
           higher_is_better: bool | None = None, n_resamples: int = 200,
           seed=None) -> xr.Dataset:
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
        ``templates_needed``, the smallest number of templates whose ranking
        agrees with all of them (tau-b >= 0.9 with probability 0.95;
        :func:`rankstats.templates_needed`).
        ``task_benchmark`` maps each task to its benchmark (the cube's
        ``benchmark`` coordinate; "all" without one), since ``benchmark`` is
        the dimension of the per-benchmark results.
        Item-level tests (binary cubes with samples):
        ``template_effect_q`` and ``template_effect_pvalue_adjusted``
        (Cochran's Q per model and task across templates, Holm over the
        table); per task the ``leader`` and ``runner_up`` by AvgP and, from
        exact McNemar tests between them on each template's samples (Holm per
        task), ``leaders_templates_tested``, ``leader_better_templates`` and
        ``runner_up_better_templates``.
        Minimal edits (with a ``template_text`` coordinate): over ``edit``,
        the 20 largest score differences between two templates one token
        apart (:func:`rankstats.edits.largest_edits`): ``edit_rule``,
        ``edit_model``, ``edit_task``, ``edit_template``,
        ``edit_template_b``, ``edit_score``, ``edit_score_b``,
        ``edit_difference``, ``edit_pvalue_adjusted`` (NaN without samples),
        and ``edits_test``, the test used or why none was possible.
        Verbalizers (with ``verbalizer_group`` and ``verbalizer`` template
        coordinates): the variables of
        :func:`rankstats.verbalizer.verbalizer_analysis` (accuracy per group,
        verbalizer and task, tests against random guessing, direct vs
        chain-of-thought, curve shapes per model family).

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
    the templates-needed curves (:func:`rankstats.templates_needed`, tau-b
    ≥ 0.9 with probability 0.95). With ``seed=None`` the stability section
    differs from run to run.

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
    """
    scores = template_scores(cube)
    best_first = _xr.higher_is_better_of(cube, higher_is_better)
    parts = [
        _agreement(scores, nan_policy),
        _least_agreeing_pair(scores, best_first, nan_policy),
        _metrics(scores, best_first, nan_policy, threshold),
    ]
    if "template_is_original" in scores.coords:
        parts.append(_divergence(scores, nan_policy))
    if "template_valid" in scores.coords:
        parts.append(_filtering(scores, best_first, nan_policy))
    if n_resamples:
        parts.append(_stability(cube, scores, n_resamples, seed, nan_policy))
    if (isinstance(cube, xr.Dataset) and cube.attrs.get("score_kind") == "binary"
            and "sample" in cube["score"].dims):
        parts.append(_per_sample_tests(cube["score"], parts[2]["metric_value"], best_first))
    if (isinstance(cube, xr.Dataset) and "template_text" in cube.coords
            and set(cube["score"].dims) <= {"model", "task", "template", "sample"}):
        parts.append(_minimal_edits(cube))
    if isinstance(cube, xr.Dataset) and "verbalizer_group" in cube.coords:
        from .verbalizer import verbalizer_analysis

        parts.append(verbalizer_analysis(cube))
    analysis = xr.merge(parts, compat="override", join="exact", combine_attrs="drop")
    by_benchmark = _by_benchmark(analysis, scores, best_first)
    analysis = analysis.drop_vars("benchmark", errors="ignore").merge(by_benchmark)
    analysis.attrs = {
        "statistic": "report",
        "threshold": threshold,
        "n_resamples": n_resamples,
        "seed": seed if isinstance(seed, int) else "Generator" if seed is not None else "None",
        "nan_policy": nan_policy,
        "higher_is_better": int(best_first),
        "metric": str(cube.attrs.get("metric", "score")),
        "source": str(cube.attrs.get("source", "")),
    }
    return analysis


def _agreement(scores, nan_policy):
    w = kendall_w(scores, nan_policy=nan_policy)
    by_template = friedman(scores, nan_policy=nan_policy)
    by_model = friedman(scores, blocks="template", treatments="model", nan_policy=nan_policy)
    return xr.Dataset({
        "w": w.statistic,
        "w_chi2": w.chi2,
        "w_pvalue": w.pvalue,
        "friedman_template_statistic": by_template.statistic,
        "friedman_template_pvalue": by_template.pvalue,
        "friedman_model_statistic": by_model.statistic,
        "friedman_model_pvalue": by_model.pvalue,
    })


def _least_agreeing_pair(scores, best_first, nan_policy):
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
    ids = _without_template_coords(tau["template_id"])
    found = xr.DataArray(found, dims=lead)
    minimum = xr.DataArray(np.take_along_axis(flat, best[..., None], -1)[..., 0], dims=lead)
    return xr.Dataset({
        "tau_min": minimum.where(found),
        "tau_min_template": ids.isel(template=first, drop=True).where(found, ""),
        "tau_min_template_b": ids.isel(template=second, drop=True).where(found, ""),
        "tau_min_rank": ranks.isel(template=first, drop=True),
        "tau_min_rank_b": ranks.isel(template=second, drop=True),
        "tau_min_score": scores.isel(template=first, drop=True),
        "tau_min_score_b": scores.isel(template=second, drop=True),
        "negative_tau_pairs": (pairs < 0).sum(("template", "template_b")),
        "template_pairs": pairs.notnull().sum(("template", "template_b")),
    })


def _without_template_coords(array):
    return array.drop_vars([name for name, coord in array.coords.items()
                            if "template" in coord.dims])


def _metric_values(scores, best_first, nan_policy, valid=None):
    values = prompt_metrics(scores, valid=valid, higher_is_better=best_first,
                            nan_policy=nan_policy)
    stacked = xr.concat([values[name] for name in METRICS],
                        dim=_METRIC_INDEX, coords="minimal",
                        compat="override")
    # saturation is better when higher whichever way the scores point
    direction = xr.DataArray([best_first, best_first, True, best_first], dims="metric",
                             coords={"metric": _METRIC_INDEX})
    ranks = xr.concat(
        [rank(stacked.sel(metric=name), "model", higher_is_better=bool(direction.sel(metric=name)))
         for name in METRICS],
        dim=_METRIC_INDEX,
    )
    return stacked, ranks


def _metrics(scores, best_first, nan_policy, threshold):
    values, ranks = _metric_values(scores, best_first, nan_policy)
    observed = scores.notnull()
    above = ((scores > threshold) & observed).sum("template")
    present = observed.sum("template")
    return xr.Dataset({
        "metric_value": values,
        "metric_rank": ranks,
        "share_above_threshold": (above / present.where(present > 0)),
    })


def _divergence(scores, nan_policy):
    result = divergence(scores, nan_policy=nan_policy)
    return xr.Dataset({
        "divergence": result.statistic,
        "original_score": result.original,
        "paraphrase_mean": result.paraphrase_mean,
        "paraphrase_std": result.paraphrase_std,
    })


def _per_sample_tests(x, metric_value, best_first, alpha=0.05):
    """Item-level tests of a binary cube: Cochran's Q and McNemar, Holm-adjusted.

    Cochran's Q per model and task asks whether the templates change which
    samples a model gets right (one Holm family over all models and tasks).
    McNemar (exact) per task and template compares the two models with the
    best AvgP on the same samples (one Holm family per task, over its
    templates): how many templates tell them apart, and in whose favour.
    """
    q = cochran_q(x, blocks="sample", treatments="template", nan_policy="omit")
    avgp = metric_value.sel(metric="avgp", drop=True).transpose("task", "model")
    key = np.where(np.isnan(avgp.values), np.inf, -avgp.values if best_first else avgp.values)
    order = np.argsort(key, axis=-1, kind="stable")[:, :2]  # (task, 2): leader, runner-up
    if order.shape[-1] < 2:
        order = np.zeros((avgp.sizes["task"], 2), dtype=int)
    pick = {position: xr.DataArray(order[:, position], dims="task") for position in (0, 1)}
    # model attributes (revisions, sizes) differ between the two: keep only the values
    leader, runner_up = (x.isel(model=pick[p]).reset_coords(drop=True)
                         for p in (0, 1))
    test = mcnemar(leader, runner_up, dim="sample", method="exact", nan_policy="omit")
    tested = test["pvalue"].where(test["n_samples"] > 0)  # padding templates test nothing
    adjusted = adjust_pvalues(tested, "holm", family="template")
    apart = adjusted < alpha
    models = np.asarray(x["model"].values).astype(str)
    return xr.Dataset({
        "template_effect_q": q["statistic"],
        "template_effect_pvalue_adjusted": adjust_pvalues(q["pvalue"], "holm"),
        "leader": ("task", models[order[:, 0]]),
        "runner_up": ("task", models[order[:, 1]]),
        "leaders_templates_tested": adjusted.notnull().sum("template"),
        "leader_better_templates": (apart & (test["b"] > test["c"])).sum("template"),
        "runner_up_better_templates": (apart & (test["c"] > test["b"])).sum("template"),
    }).reset_coords(drop=True)


def _filtering(scores, best_first, nan_policy):
    all_values, _ = _metric_values(scores, best_first, nan_policy)
    valid_values, _ = _metric_values(scores, best_first, nan_policy, valid=True)
    tau = kendall_tau(all_values, valid_values, "model", nan_policy="omit")
    return xr.Dataset({"filtering_tau": tau.statistic})


def _stability(cube, scores, n_resamples, seed, nan_policy):
    """Rank intervals and tie groups, and how many templates are enough."""
    from ..stability.bootstrap import leaderboard
    from ..stability.needed import templates_needed

    has_samples = "sample" in (cube["score"].dims if isinstance(cube, xr.Dataset) else cube.dims)
    board = leaderboard(cube, n_resamples=n_resamples,
                        over="both" if has_samples else "templates", seed=seed,
                        nan_policy=nan_policy)
    # at most 100 subsets per size: a smaller n_resamples makes this cheaper too
    needed = templates_needed(scores, n_resamples=min(n_resamples, 100), seed=seed,
                              nan_policy=nan_policy)
    return xr.Dataset({
        "n_templates": needed["n_templates"],
        "avgp_low": board["score_low"],
        "avgp_high": board["score_high"],
        "rank_low": board["rank_low"],
        "rank_high": board["rank_high"],
        "tie_group": board["tie_group"],
        "arena_rank": board["arena_rank"],
        "templates_needed": needed["k_needed"],
    }).reset_coords(drop=True)


def _minimal_edits(cube, top=20):
    """The largest effects of one-token template edits (:func:`rankstats.edits.minimal_edits`)."""
    from .edits import largest_edits, minimal_edits

    edits = minimal_edits(cube)
    table = largest_edits(edits, top=top)
    pvalue = (table["pvalue_adjusted"].to_numpy() if "pvalue_adjusted" in table
              else np.full(len(table), np.nan))
    text = {name: ("edit", table[column].to_numpy(dtype=object)) for name, column in
            (("edit_rule", "edit"), ("edit_model", "model"), ("edit_task", "task"),
             ("edit_template", "template"), ("edit_template_b", "template_b"))}
    return xr.Dataset({
        **text,
        "edit_score": ("edit", table["score"].to_numpy(dtype=float)),
        "edit_score_b": ("edit", table["score_b"].to_numpy(dtype=float)),
        "edit_difference": ("edit", table["difference"].to_numpy(dtype=float)),
        "edit_pvalue_adjusted": ("edit", pvalue),
        "edits_test": ((), str(edits.attrs["test"])),
    })


def _by_benchmark(analysis, scores, best_first):
    """Average ranks and the methods of the best templates, per benchmark."""
    benchmark = (scores["benchmark"] if "benchmark" in scores.coords
                 else xr.DataArray(np.full(scores.sizes["task"], "all"), dims="task"))
    benchmark = benchmark.astype(str).rename("benchmark").drop_vars(
        [c for c in benchmark.coords if c != "task"])
    ranks = analysis["metric_rank"].drop_vars("benchmark", errors="ignore")
    ranks = ranks.assign_coords(benchmark=benchmark)
    # the per-task benchmark label moves to a variable: "benchmark" becomes a dimension
    out = {"average_rank": ranks.groupby("benchmark").mean("task"),
           "task_benchmark": benchmark.rename(None)}
    if "template_method" not in scores.coords:
        return xr.Dataset(out)
    methods = scores["template_method"].astype(str)
    names = np.array(sorted(set(np.unique(methods.values)) - {""}), dtype=object)
    # "generation_method", not "method": that name would shadow .sel(method=...)
    one_hot = methods == xr.DataArray(names, dims="generation_method",
                                      coords={"generation_method": names})
    maxp = analysis["metric_value"].sel(metric="maxp", drop=True)
    best = (scores == maxp) & scores.notnull()
    counts = (best & one_hot).sum("template").assign_coords(benchmark=benchmark)
    per_model = counts.groupby("benchmark").sum("task")
    all_models = per_model.sum("model")
    templates = (one_hot & (scores["template_id"] != "")).sum("template")
    templates = templates.assign_coords(benchmark=benchmark).groupby("benchmark").sum("task")
    out.update({
        "best_template_method_share": per_model / per_model.sum("generation_method"),
        "best_template_method_share_all": all_models / all_models.sum("generation_method"),
        "template_method_share": templates / templates.sum("generation_method"),
    })
    return xr.Dataset(out)
