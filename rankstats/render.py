"""Render a report Dataset as markdown, self-contained HTML, JSON or CSV tables."""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .errors import RankstatsError

__all__ = [
    "CaptionError",
    "Section",
    "check_captions",
    "sections",
    "summary_markdown",
    "to_csv",
    "to_html",
    "to_json",
    "to_markdown",
]

#: The section of the drop log's rows that apply to every per-task section.
EVERY_SECTION = "all"

_METRIC_NAMES = {"maxp": "MaxP", "avgp": "AvgP", "saturation": "Sat", "cps": "CPS"}


@dataclass
class Section:
    """One titled table of a report, with a sentence on how to read it.

    ``table`` is what the CSV files and the command's JSON tables hold in
    full; ``shown``, when given, is what markdown and HTML show instead (the
    drop log grouped by reason). ``formats`` names how a column's numbers print (``"p"``,
    ``"rank"``, ``"mean"``; ``"*"`` for every column), ``links`` the section
    a column or a line points to, ``lines`` the findings (text, section) a
    summary leads with, and ``bookkeeping`` the sections that come last and
    fold away in HTML.
    """

    key: str
    title: str
    note: str
    table: pd.DataFrame
    figures: list[str] = field(default_factory=list)
    shown: pd.DataFrame | None = None
    formats: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    lines: list = field(default_factory=list)
    bookkeeping: bool = False

    @property
    def display(self) -> pd.DataFrame:
        """The table markdown and HTML show."""
        return self.table if self.shown is None else self.shown


class CaptionError(RankstatsError, ValueError):
    """A caption says something its statistic's attributes contradict."""


#: Below the smallest positive float (about 5e-324) a p-value underflows to 0.
UNDERFLOW = "< 1e-300"


def _kind(label, formats: dict) -> str | None:
    """How the numbers of column ``label`` print: by the section's word, else by its name."""
    if label in formats:
        return formats[label]
    if "*" in formats:
        return formats["*"]
    text = str(label)
    if text == "p" or text.startswith(("p ", "p(")):
        return "p"
    if text.startswith("rank") or text in ("tie group", "arena rank"):
        return "rank"
    return None


def _fmt(value, kind: str | None = None) -> str:
    """One cell as text: "–" where undefined, p-values never "0", ranks whole.

    Examples
    --------
    >>> from rankstats.render import _fmt
    >>> _fmt(0.0, "p"), _fmt(3e-12, "p"), _fmt(0.0), _fmt(2.0, "rank"), _fmt(2.5, "rank")
    ('< 1e-300', '3.00e-12', '0', '2', '2.5')
    """
    if value is pd.NA or value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)) and kind not in ("p", "mean"):
        return str(value)
    if isinstance(value, (float, np.floating, int, np.integer)):
        value = float(value)
        if math.isnan(value):
            return "–"
        if kind == "p" and value == 0:
            return UNDERFLOW
        if kind == "rank":
            return f"{value:.0f}" if value % 1 == 0 else f"{value:.1f}"
        if kind == "mean":
            return f"{value:.1f}"
        if value == 0:
            return "0"
        if abs(value) < 1e-3 or abs(value) >= 1e5:
            return f"{value:.2e}"
        return f"{value:.3f}"
    return str(value)


def _task_frame(analysis: xr.Dataset) -> pd.DataFrame:
    columns = {
        "W": analysis["w"],
        "p(W)": analysis["w_pvalue"],
        "Friedman χ² (templates)": analysis["friedman_template_statistic"],
        "p (templates)": analysis["friedman_template_pvalue"],
        "Friedman χ² (models)": analysis["friedman_model_statistic"],
        "p (models)": analysis["friedman_model_pvalue"],
        "min τ": analysis["tau_min"],
        "negative τ pairs": analysis["negative_tau_pairs"],
        "template pairs": analysis["template_pairs"],
    }
    frame = pd.DataFrame({name: value.to_series() for name, value in columns.items()})
    frame.insert(0, "benchmark", analysis["task_benchmark"].to_series())
    for name in ("negative τ pairs", "template pairs"):
        frame[name] = frame[name].astype(int)
    return frame.rename_axis("task")


def _ranking(ranks: pd.Series) -> str:
    ordered = ranks.dropna().sort_values(kind="stable")
    return " > ".join(f"{model}" for model in ordered.index)


def _pairs_frame(analysis: xr.Dataset) -> pd.DataFrame:
    rows = {
        "template": analysis["tau_min_template"].to_series(),
        "template b": analysis["tau_min_template_b"].to_series(),
        "τ": analysis["tau_min"].to_series(),
    }
    frame = pd.DataFrame(rows)
    rank_a = analysis["tau_min_rank"].transpose("task", "model").to_pandas()
    rank_b = analysis["tau_min_rank_b"].transpose("task", "model").to_pandas()
    frame["ranking under template"] = [_ranking(rank_a.loc[t]) for t in frame.index]
    frame["ranking under template b"] = [_ranking(rank_b.loc[t]) for t in frame.index]
    return frame.rename_axis("task")


def _task_order(analysis: xr.Dataset) -> dict:
    return {task: position for position, task in enumerate(analysis["task"].values)}


def _by_task_and_model(array: xr.DataArray) -> pd.DataFrame:
    """Rows (task, model) in the cube's order, one column per metric."""
    return (
        array.transpose("task", "model", "metric")
        .to_series()
        .unstack("metric")[list(array["metric"].values)]
    )


def _model_task(array: xr.DataArray) -> pd.DataFrame:
    return array.transpose("model", "task").to_pandas()


_NAN_POLICY = {
    "omit": "nan_policy='omit': W, Friedman (models) and the templates-needed curves leave out "
    "templates lacking a score for some present model, Friedman (templates) models "
    "lacking a score on some template (listwise deletion); τ and McNemar use what both "
    "sides have (pairwise deletion); MaxP, AvgP, saturation, CPS and divergence use "
    "each model's own scored templates; Cochran's Q leaves out samples a model lacks "
    "under some template",
    "propagate": "nan_policy='propagate': a missing score makes every statistic it enters NaN",
    "raise": "nan_policy='raise': a missing score is an error",
}


def _conventions_frame(analysis: xr.Dataset) -> pd.DataFrame:
    attrs = analysis.attrs
    policy = str(attrs.get("nan_policy", "omit"))
    n = attrs.get("n_resamples", 0)
    resampling = (
        f"{n} bootstrap replicates over {attrs.get('over') or 'templates'}, seed "
        f"{attrs.get('seed')}"
        if n
        else "none (n_resamples=0: no stability section)"
    )
    kind = attrs.get("score_kind") or "score kind not recorded"
    templates, ties = attrs.get("templates", "all"), attrs.get("ties", "average")
    correction = attrs.get("tie_correction", 1)
    rows = {
        "metric": f"{attrs.get('metric', 'score')} ({kind})",
        "conventions": _CONVENTIONS.get(
            str(attrs.get("conventions", "standard")),
            f"{attrs.get('conventions')}: {_PER_STATISTIC}",
        ),
        "templates": f"{templates} templates of each task (the filtering section compares "
        "with those marked valid)"
        if templates != _MIXED
        else _PER_STATISTIC,
        "ties": f"{ties} (tied models share the mean of their ranks)"
        if ties == "average"
        else _PER_STATISTIC
        if ties == _MIXED
        else str(ties),
        "tie correction": _PER_STATISTIC
        if correction == _MIXED
        else ("on" if int(correction) else "off") + " (W, both Friedman tests)",
        "missing values": _NAN_POLICY.get(policy, f"nan_policy={policy!r}"),
        "structure": "templates without any score (padding) and models without any score on a "
        "task (absent) drop out of that task before nan_policy applies",
        "direction": "higher scores are better"
        if int(attrs.get("higher_is_better", 1))
        else "lower scores are better",
        "threshold": f"a model works on a template when its score exceeds "
        f"{attrs.get('threshold', 0.05)}",
        "resampling": resampling,
    }
    return pd.DataFrame({"value": rows}).rename_axis("setting")


_MIXED = "per statistic"
_PER_STATISTIC = "per statistic: see 'Conventions of each statistic'"
_CONVENTIONS = {
    "standard": "standard: every template, average ranks, tie correction on; "
    "each statistic's in 'Conventions of each statistic'"
}
_CONVENTION_COLUMNS = {
    "statistic": "statistic",
    "sections": "sections",
    "templates": "templates",
    "ties": "ties",
    "tie_correction": "tie correction",
    "note": "note",
}


def _statistic_conventions_frame(analysis: xr.Dataset) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            label: np.asarray(analysis[f"convention_{name}"].values)
            for name, label in _CONVENTION_COLUMNS.items()
        }
    )
    return frame.set_index("statistic")


_DROP_COLUMNS = {
    "section": "section",
    "task": "task",
    "model": "model",
    "what": "left out",
    "count": "count",
    "which": "which",
    "why": "why",
}


def _dropped_frame(analysis: xr.Dataset) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            label: np.asarray(analysis[f"drop_{name}"].values)
            for name, label in _DROP_COLUMNS.items()
        }
    )
    frame["count"] = frame["count"].astype(int)
    return frame.set_index("section")


def _short_list(labels: list, most: int = 8) -> str:
    shown = ", ".join(map(str, labels[:most]))
    return shown if len(labels) <= most else f"{shown}, … ({len(labels) - most} more)"


def _left_out(analysis: xr.Dataset, keys, most: int = 6, lead: str = "Left out") -> str:
    """What the drop log says about the sections ``keys``, as sentences ("" when nothing).

    Rows that differ only in their task make one sentence; after ``most``
    sentences the rest is counted, and left to the ``dropped`` section.
    """
    if "drop_section" not in analysis:
        return ""
    rows = _dropped_frame(analysis).reset_index()
    rows = rows[rows["section"].isin(list(keys)) & (rows["left out"] != "section")]
    sentences = []
    for (what, why), group in rows.groupby(["left out", "why"], sort=False):
        if what == "task":
            tasks = group["task"].tolist()
            sentences.append(
                f"{'Task' if len(tasks) == 1 else 'Tasks'} {_short_list(tasks)}: {why}."
            )
            continue
        places: dict = {}  # (tasks, count, which) -> the models it holds for
        for (model, count, which), tasks in group.groupby(["model", "count", "which"], sort=False)[
            "task"
        ]:
            key = (tuple(t for t in tasks if t), count, which)
            places.setdefault(key, []).append(model)
        items = []
        for (tasks, count, which), models in places.items():
            models = [m for m in models if m]
            where = (
                []
                if not tasks
                else [f"task {tasks[0]}"]
                if len(tasks) == 1
                else [f"each of {len(tasks)} tasks ({_short_list(list(tasks))})"]
            )
            where += (
                []
                if not models
                else [f"model {models[0]}"]
                if len(models) == 1
                else [f"each of {len(models)} models ({_short_list(models)})"]
            )
            labels = _short_list(which.split(", "))
            thing = f"{count} {what if count != 1 else what[:-1]} ({labels})"
            items.append(f"{', '.join(where)}: {thing}" if where else thing)
        shown = "; ".join(items[:most])
        if len(items) > most:
            shown += f"; and {len(items) - most} more"
        sentences.append(f"{lead}: {shown} — {why}.")
    if not sentences:
        return ""
    text = " " + " ".join(sentences[:most])
    if len(sentences) > most:
        text += f" And {len(sentences) - most} more: see 'What the analyses left out, and why'."
    return text


def _noted(section: Section, analysis: xr.Dataset) -> Section:
    if section.key == "conventions":
        section.note += _left_out(analysis, [EVERY_SECTION], lead="Left out of every section")
    elif section.key != "dropped":
        section.note += _left_out(analysis, [section.key])
    return section


def _attr(analysis: xr.Dataset, name: str, key: str, default=None):
    """An attribute the statistic behind variable ``name`` recorded, else ``default``."""
    if name in analysis and key in analysis[name].attrs:
        return analysis[name].attrs[key]
    return default


def _threshold(analysis: xr.Dataset) -> float:
    return float(analysis.attrs.get("threshold", 0.05))


_P_ADJUST = {"holm": "Holm", "bh": "Benjamini–Hochberg", "by": "Benjamini–Yekutieli"}


def _adjusted(analysis: xr.Dataset, name: str) -> str:
    method = str(_attr(analysis, name, "p_adjust", "holm"))
    return _P_ADJUST.get(method, method.capitalize())


def _convention(analysis: xr.Dataset, statistic: str) -> dict:
    """The template set, ties and tie correction the report recorded for ``statistic``."""
    if "convention_statistic" not in analysis:
        return {"templates": "all", "ties": "average", "tie_correction": "on"}
    position = list(np.asarray(analysis["convention"].values).astype(str)).index(statistic)
    return {
        key: str(analysis[f"convention_{key}"].values[position])
        for key in ("templates", "ties", "tie_correction")
    }


def _convention_phrase(analysis: xr.Dataset, statistic: str, label: str) -> str:
    found = _convention(analysis, statistic)
    phrase = f"{label} over {found['templates']} templates, {found['ties']} ranks"
    if found["tie_correction"]:
        phrase += f", tie correction {found['tie_correction']}"
    return phrase


def _agreement_conventions(analysis: xr.Dataset) -> str:
    return (
        f"Computed with {_convention_phrase(analysis, 'kendall_w', 'W')}; "
        f"{_convention_phrase(analysis, 'friedman', 'Friedman')}; "
        f"nan_policy={analysis.attrs.get('nan_policy', 'omit')!r}."
    )


def _ranks_phrase(analysis: xr.Dataset) -> str:
    return _convention_phrase(analysis, "metric_ranks", "ranks")


def _needed(analysis: xr.Dataset, key: str) -> float:
    """The target or probability :func:`rankstats.templates_needed` recorded."""
    return float(
        _attr(analysis, "templates_needed", key, {"target": 0.9, "probability": 0.95}[key])
    )


def _variance_target(analysis: xr.Dataset) -> float:
    return float(_attr(analysis, "templates_for_tau", "target_tau", _needed(analysis, "target")))


def _benchmark_of(analysis: xr.Dataset) -> pd.Series:
    if "task_benchmark" in analysis:
        return analysis["task_benchmark"].to_series().astype(str)
    return pd.Series("all", index=pd.Index(analysis["task"].values.astype(str), name="task"))


def _ranked_on(analysis: xr.Dataset) -> pd.DataFrame:
    """Whether each model has an AvgP rank on each task: (task, model) booleans."""
    return (
        analysis["metric_rank"].sel(metric="avgp").transpose("task", "model").notnull().to_pandas()
    )


def _tasks_per_model(analysis: xr.Dataset) -> pd.Series:
    """How many tasks of its benchmark each model's average rank is over, by (benchmark, model)."""
    ranked = _ranked_on(analysis)
    counts = ranked.groupby(_benchmark_of(analysis).reindex(ranked.index).values).sum()
    counts.index.name = "benchmark"
    return counts.stack().rename("tasks")


def _average_over(analysis: xr.Dataset) -> str:
    """Per benchmark: how many tasks, and how many models the average of each is over."""
    ranked = _ranked_on(analysis)
    benchmark = _benchmark_of(analysis).reindex(ranked.index)
    parts = []
    for name in dict.fromkeys(benchmark.tolist()):
        mine = ranked[(benchmark == name).to_numpy()]
        scored = mine.any(axis=0)
        full = int((mine.all(axis=0) & scored).sum())
        text = (
            f"{name}, {len(mine)} task{'s' if len(mine) != 1 else ''}, {full} models ranked on each"
        )
        partial = int((scored & ~mine.all(axis=0)).sum())
        if partial:
            text += f" and {partial} on fewer"
        parts.append(text)
    return "; ".join(parts)


#: The words that name each choice of rank sets, and those that would contradict it.
RANK_SET_WORDS = {
    "simultaneous": (
        "simultaneous confidence sets",
        ("marginal", "percentile intervals of the bootstrap ranks"),
    ),
    "marginal": (
        "marginal confidence sets",
        ("simultaneous confidence sets", "percentile intervals of the bootstrap ranks"),
    ),
    "bootstrap": (
        "percentile intervals of the bootstrap ranks",
        ("simultaneous confidence sets", "marginal confidence sets"),
    ),
}


def _stability_caption(analysis: xr.Dataset) -> str:
    """How the stability table was computed, read from the leaderboard's attributes."""
    board = analysis["rank_low"].attrs
    level = float(board.get("confidence_level", 0.95))
    n = board.get("n_resamples", analysis.attrs.get("n_resamples"))
    over = board.get("over", analysis.attrs.get("over", "templates"))
    method = board.get("method", "percentile")
    rule = board.get("rank_method", "rank sets (rule not recorded)")
    return (
        f"Each model's AvgP with its {level:.0%} {method} interval and its rank with its "
        f"{level:.0%} rank set, from {n} bootstrap replicates over {over} (seed "
        f"{board.get('seed', analysis.attrs.get('seed'))}). Rank sets: {rule}. Tie groups: "
        f"{board.get('tie_groups', 'not recorded')}. Arena rank: "
        f"{board.get('arena_rank', 'not recorded')}."
        + (
            " Adjusted AvgP (leader's row): its score given that it was picked for being "
            f"the highest, median-unbiased, with its {level:.0%} conditional interval "
            f"({analysis['leader_adjusted'].attrs.get('method', 'method not recorded')})."
            if "leader_adjusted" in analysis
            else ""
        )
    )


@dataclass(frozen=True)
class Claim:
    """What a caption must say of one attribute of its statistic, and what it must not."""

    section: str
    attribute: str
    value: object
    says: str
    never: tuple = ()


def caption_claims(analysis: xr.Dataset) -> list[Claim]:
    """The claims each caption makes, read from the attributes its statistic recorded.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import caption_claims
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ])
    >>> for claim in caption_claims(rankstats.report(cube, n_resamples=0)):
    ...     print(f"{claim.section}: {claim.says}")
    agreement: W over all templates, average ranks, tie correction on
    agreement: Friedman over all templates, average ranks, tie correction on
    agreement: nan_policy='omit'
    metrics: ranks over all templates, average ranks
    metrics: above 0.05
    """
    claims = [
        Claim(
            "agreement",
            statistic,
            _convention(analysis, statistic),
            _convention_phrase(analysis, statistic, label),
        )
        for statistic, label in (("kendall_w", "W"), ("friedman", "Friedman"))
    ]
    policy = analysis.attrs.get("nan_policy", "omit")
    claims.append(
        Claim(
            "agreement",
            "nan_policy",
            policy,
            f"nan_policy={policy!r}",
            tuple(
                f"nan_policy={other!r}"
                for other in ("omit", "propagate", "raise")
                if other != policy
            ),
        )
    )
    claims += [
        Claim(
            "metrics",
            "metric_ranks",
            _convention(analysis, "metric_ranks"),
            _ranks_phrase(analysis),
        ),
        Claim("metrics", "threshold", _threshold(analysis), f"above {_threshold(analysis):g}"),
    ]
    if "rank_low" in analysis:
        board = analysis["rank_low"].attrs
        rank_sets = str(board.get("rank_sets", ""))
        says, never = RANK_SET_WORDS.get(rank_sets, (str(board.get("rank_method", "")), ()))
        level = float(board.get("confidence_level", 0.95))
        n = board.get("n_resamples")
        claims += [
            Claim("stability", "rank_sets", rank_sets, says, never),
            Claim(
                "stability", "rank_method", board.get("rank_method"), str(board.get("rank_method"))
            ),
            Claim("stability", "tie_groups", board.get("tie_groups"), str(board.get("tie_groups"))),
            Claim("stability", "n_resamples", n, f"from {n} bootstrap replicates"),
            Claim("stability", "confidence_level", level, f"its {level:.0%} rank set"),
            Claim("stability", "arena_rank", board.get("arena_rank"), str(board.get("arena_rank"))),
        ]
    if "templates_needed" in analysis:
        target, probability = _needed(analysis, "target"), _needed(analysis, "probability")
        claims += [
            Claim("templates_needed", "target", target, f"tau-b ≥ {target:g} "),
            Claim(
                "templates_needed",
                "probability",
                probability,
                f"in at least {probability:.0%} of reruns",
            ),
        ]
    if "templates_for_tau" in analysis:
        target = _variance_target(analysis)
        claims.append(Claim("variance", "target_tau", target, f"tau-b ≥ {target:g} "))
    if "leader_better_templates" in analysis:
        alpha = _attr(analysis, "leader_better_templates", "alpha", 0.05)
        claims += [
            Claim("leaders", "alpha", alpha, f"alpha {alpha:g}"),
            Claim(
                "leaders",
                "p_adjust",
                _attr(analysis, "leader_better_templates", "p_adjust"),
                f"({_adjusted(analysis, 'leader_better_templates')} over",
            ),
            Claim(
                "template_effect",
                "p_adjust",
                _attr(analysis, "template_effect_pvalue_adjusted", "p_adjust"),
                f"{_adjusted(analysis, 'template_effect_pvalue_adjusted')}-adjusted",
            ),
        ]
    return claims


def check_captions(analysis: xr.Dataset, found: list[Section] | None = None) -> None:
    """Refuse captions that contradict the attributes their statistics recorded.

    Each caption must say what :func:`caption_claims` reads from the
    Dataset (the rank-set and tie-group rules, the number of draws, the
    level, the conventions) and none of what would contradict it.

    Raises
    ------
    CaptionError
        Naming the section, the attribute, its value and the words missing
        or contradicting it.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import check_captions, sections
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ])
    >>> analysis = rankstats.report(cube, n_resamples=0)
    >>> check_captions(analysis)
    >>> stale = sections(analysis)
    >>> stale[1].note = stale[1].note.replace("tie correction on", "tie correction off")
    >>> check_captions(analysis, stale)
    Traceback (most recent call last):
    ...
    rankstats.render.CaptionError: the caption of section 'agreement' does not say 'W over ...
    """
    notes = {section.key: section.note for section in (found or sections(analysis))}
    problems = []
    for claim in caption_claims(analysis):
        if claim.section not in notes:
            continue
        note = notes[claim.section]
        if claim.says not in note:
            problems.append(
                f"the caption of section {claim.section!r} does not say {claim.says!r} "
                f"({claim.attribute} = {claim.value!r})"
            )
        problems += [
            f"the caption of section {claim.section!r} says {word!r}, which contradicts "
            f"{claim.attribute} = {claim.value!r}"
            for word in claim.never
            if word in note
        ]
    if problems:
        raise CaptionError("; ".join(problems))


def _summary_section(analysis: xr.Dataset) -> Section:
    """What the report found: lines per benchmark, one row per task."""
    from .analyses._summary import benchmark_lines, task_summary

    table = task_summary(analysis)
    links = {
        "W": "agreement",
        "least agreeing pair": "pairs",
        "can be first [rank set]": "stability",
        "separated": "stability",
        "original vs paraphrases": "divergence",
        "templates next round": "templates_needed",
    }
    return Section(
        "summary",
        "Summary",
        "What the analysis found, per benchmark and per task; each line and column links to "
        "the section it comes from. A rank set of one place separates a model from all "
        "others; 'original vs paraphrases' is the median over the models of |divergence|, "
        "in standard deviations of the paraphrases' scores.",
        table,
        links={k: v for k, v in links.items() if k in table},
        lines=benchmark_lines(analysis),
    )


def sections(analysis: xr.Dataset) -> list[Section]:
    """The report's tables, in reading order: the summary, the results, the bookkeeping.

    ``summary`` comes first (what was found, per benchmark and per task).
    Each section's note is built from the attributes its statistics record
    (:func:`check_captions` holds them to it) and ends with what the report
    left out of it (templates, models, tasks or samples), how many, which and
    why. Last come ``conventions`` (the settings every number was computed
    with), ``statistic_conventions`` and ``dropped`` (everything left out,
    shown one row per reason).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import sections
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ])
    >>> [s.key for s in sections(rankstats.report(cube, n_resamples=0))]
    ['summary', 'agreement', 'pairs', 'metrics', 'average_rank', 'conventions',
     'statistic_conventions', 'dropped']
    >>> [s.key for s in sections(rankstats.report(cube, n_resamples=50))][-6:-3]
    ['stability', 'templates_needed', 'variance']
    """
    out = [
        _summary_section(analysis),
        Section(
            "agreement",
            "Agreement across templates",
            "Kendall's W: do the templates rank the models alike (1 = always; its p-value "
            "tests W = 0). Friedman (templates): does the template change the scores, "
            "within each model? Friedman (models): do the models differ, within each "
            "template? min τ: Kendall's tau-b of the least agreeing pair of templates. "
            + _agreement_conventions(analysis),
            _task_frame(analysis),
        ),
        Section(
            "pairs",
            "The least agreeing pair of templates",
            "Per task, the two templates whose model rankings disagree most (smallest "
            "tau-b), and the rankings each induces (best first).",
            _pairs_frame(analysis),
        ),
    ]
    if "divergence" in analysis:
        out.append(
            Section(
                "divergence",
                "Divergence of the original templates",
                "How many standard deviations each model's score on the benchmark's own "
                "template(s) lies from its mean over the paraphrases; |d| > 1 is substantial.",
                _model_task(analysis["divergence"]),
            )
        )
    metrics = pd.concat(
        [
            _by_task_and_model(analysis["metric_value"]).rename(columns=_METRIC_NAMES),
            _by_task_and_model(analysis["metric_rank"]).rename(
                columns=lambda m: f"rank {_METRIC_NAMES[m]}"
            ),
        ],
        axis=1,
    )
    share = analysis["share_above_threshold"].transpose("task", "model").to_series()
    metrics[f"share > {analysis.attrs.get('threshold', 0.05)}"] = share
    metrics = metrics.dropna(how="all", subset=list(_METRIC_NAMES.values()))
    out.append(
        Section(
            "metrics",
            "MaxP, AvgP, saturation and CPS",
            "Per task and model: the best template's score (MaxP), the mean over templates "
            "(AvgP), saturation 1 − (MaxP − AvgP), CPS = saturation × MaxP, the model's rank "
            f"under each (1 = best; {_ranks_phrase(analysis)}), and the share of templates on "
            f"which it scores above {_threshold(analysis):g}.",
            metrics,
        )
    )
    average = (
        analysis["average_rank"]
        .to_dataframe()["average_rank"]
        .unstack("metric")
        .rename(columns=_METRIC_NAMES)
        .reorder_levels(["benchmark", "model"])
        .sort_index(level="benchmark", sort_remaining=False)
    )
    average["tasks"] = _tasks_per_model(analysis).reindex(average.index).astype("Int64")
    out.append(
        Section(
            "average_rank",
            "Average rank per benchmark",
            "Each model's rank under each metric, averaged over the tasks of a benchmark "
            "on which it is ranked (Mizrahi et al. 2024, tables 15–16): "
            f"{_average_over(analysis)}; 'tasks' counts each model's.",
            average,
            formats={name: "mean" for name in _METRIC_NAMES.values()},
        )
    )
    if "best_template_method_share" in analysis:
        share = (
            analysis["best_template_method_share"]
            .to_dataframe()["best_template_method_share"]
            .unstack("generation_method")
            * 100
        )
        totals = analysis["best_template_method_share_all"].to_pandas() * 100
        everything = analysis["template_method_share"].to_pandas() * 100
        rows = [share.reorder_levels(["benchmark", "model"])]
        for label, frame in (("all models", totals), ("all templates", everything)):
            frame = frame.copy()
            frame.index = pd.MultiIndex.from_product(
                [frame.index, [label]], names=["benchmark", "model"]
            )
            rows.append(frame)
        out.append(
            Section(
                "best_methods",
                "Where the best templates come from (%)",
                "For each model, the generation method of its best template(s) on each task "
                "(ties count every best template), as a share; then over all models, and the "
                "share of each method among all templates (tables 17–18).",
                pd.concat(rows).sort_index(level="benchmark", sort_remaining=False),
            )
        )
    if "tie_group" in analysis:
        board = analysis[
            ["avgp_low", "avgp_high", "rank_low", "rank_high", "tie_group", "arena_rank"]
        ].to_dataframe(dim_order=["task", "model"])
        if "stability_avgp" in analysis:  # the metrics follow other conventions
            avgp = analysis["stability_avgp"].transpose("task", "model").to_series()
            rank = analysis["stability_rank"].transpose("task", "model").to_series()
        else:
            avgp = _by_task_and_model(analysis["metric_value"])["avgp"]
            rank = _by_task_and_model(analysis["metric_rank"])["avgp"]
        table = pd.DataFrame(
            {
                "AvgP": avgp,
                "AvgP low": board["avgp_low"],
                "AvgP high": board["avgp_high"],
                "rank": rank,
                "rank low": board["rank_low"],
                "rank high": board["rank_high"],
                "tie group": board["tie_group"],
                "arena rank": board["arena_rank"],
            }
        ).dropna(subset=["AvgP"])
        if "leader_adjusted" in analysis:  # the winner's curse, on the leader's row only
            adjusted = analysis[
                ["leader", "leader_adjusted", "leader_adjusted_low", "leader_adjusted_high"]
            ].to_dataframe()
            at = pd.MultiIndex.from_arrays(
                [adjusted.index.to_numpy(), adjusted["leader"].to_numpy()]
            )
            for column, name in (
                ("adjusted AvgP", "leader_adjusted"),
                ("adjusted low", "leader_adjusted_low"),
                ("adjusted high", "leader_adjusted_high"),
            ):
                table[column] = pd.Series(adjusted[name].to_numpy(), index=at).reindex(table.index)
        for column in ("rank", "rank low", "rank high", "tie group", "arena rank"):
            if (table[column].dropna() % 1 == 0).all():  # whole ranks print as integers
                table[column] = table[column].astype("Int64")
        table.index = table.index.set_names(["task", "model"])
        order = table.index.get_level_values("task").map(_task_order(analysis))
        table = table.assign(_order=order).sort_values(["_order", "rank"], kind="stable")
        table = table.drop(columns="_order")
        out.append(Section("stability", "Rank stability", _stability_caption(analysis), table))
        out.append(_templates_needed_section(analysis))
    if "variance_share" in analysis:
        out.append(_variance_section(analysis))
    if "sensitive_sensitivity" in analysis:
        out.append(_sensitivity_section(analysis))
    if "filtering_tau" in analysis:
        out.append(
            Section(
                "filtering",
                "Sensitivity to dropping invalid templates",
                "Kendall's tau-b between the model ranking under each metric with all "
                "templates and with only those marked valid (1 = unchanged; table 14).",
                analysis["filtering_tau"]
                .transpose("task", "metric")
                .to_pandas()
                .rename(columns=_METRIC_NAMES),
            )
        )
    if "template_effect_q" in analysis:
        out += _item_sections(analysis)
    if "edit_rule" in analysis:
        out.append(_edits_section(analysis))
    if "group_accuracy" in analysis:
        from .analyses.verbalizer import report_tables

        out += [Section(*table) for table in report_tables(analysis)]
    out += _preamble(analysis)
    return [_noted(section, analysis) for section in out]


def _templates_needed_section(analysis: xr.Dataset) -> Section:
    """One recommended number of templates per task, and the planner's beside it."""
    from .stability.needed import needed_table

    return Section(
        "templates_needed",
        "How many templates are enough",
        "The question: the smallest number k of fresh templates such that two reruns of the "
        "benchmark, each ranking the models by their mean over k templates drawn at random, "
        f"agree with Kendall's tau-b ≥ {_needed(analysis, 'target'):g} in at least "
        f"{_needed(analysis, 'probability'):.0%} of reruns. "
        '"subsets" answers it '
        "from two random sets of templates drawn from a resample of the task's own "
        '(possible up to half of them; "> N": not reached there, N the bound the subsets '
        "and the planner show), "
        'with its Monte Carlo interval; "planner" extrapolates from the variance '
        "components, models taken as normal. They differ because the planner assumes "
        "normally spread models and pools the error, while the subsets use these models as "
        "they are; the recommendation is the subsets' number where they reach the target, "
        "the planner's otherwise. The benchmark mean row is the planner's number for the "
        "mean score over the tasks.",
        needed_table(analysis, benchmark=analysis.get("overall_templates_for_tau")),
    )


def _variance_section(analysis: xr.Dataset) -> Section:
    """Each task's variance split into components, and the templates a tau of 0.9 needs."""
    share = analysis["variance_share"].transpose("task", "component").to_pandas() * 100
    share["G"] = analysis["g_coefficient"].to_series()
    share["replication τ"] = analysis["replication_tau"].to_series()
    share["planner's templates"] = analysis["templates_for_tau"].to_series().astype("Int64")
    return Section(
        "variance",
        "Where the variance comes from (%)",
        "Each task's score variance split into model, template, sample and their "
        "interactions (method-of-moments estimates, negative ones as 0; the three-way "
        "interaction and the error cannot be told apart with one score per cell), as a "
        "share; G is the generalizability coefficient of the model means at the task's own "
        "design, replication τ the expected Kendall tau between the leaderboard and a "
        "replication with new templates and samples, and the last column the planner's "
        "number of fresh templates for two reruns to reach tau-b ≥ "
        f"{_variance_target(analysis):g} with probability {_needed(analysis, 'probability'):g}, "
        "the task's samples held fixed (the question of \"How many templates are "
        'enough"; rankstats.plan gives the whole design study).',
        share,
    )


def _sensitivity_section(analysis: xr.Dataset) -> Section:
    """ProSA's prompt sensitivity per task, and the samples most sensitive to wording."""
    columns = {
        "sample": "sensitive_sample_id",
        "sensitivity": "sensitive_sensitivity",
        "mean score": "sensitive_score",
    }
    frame = pd.DataFrame(
        {
            label: analysis[name].transpose("task", "sensitive_position").to_series()
            for label, name in columns.items()
        }
    ).dropna(subset=["sensitivity"])
    frame["task sensitivity"] = (
        analysis["prompt_sensitivity"]
        .to_series()
        .reindex(frame.index.get_level_values("task"))
        .to_numpy()
    )
    frame.index = frame.index.set_names(["task", "position"])
    return Section(
        "sensitivity",
        "Samples most sensitive to wording",
        "ProSA's prompt sensitivity (Zhuo et al. 2024): per sample, the mean absolute "
        "difference of its outcome between two templates, over all template pairs and "
        "averaged over models; task sensitivity is the mean over models of each model's mean "
        "over samples. The samples listed first change outcome most with the wording.",
        frame,
    )


def _preamble(analysis: xr.Dataset) -> list[Section]:
    """The conventions and the drop log, when the report records them."""
    out = [
        Section(
            "conventions",
            "Conventions",
            "The settings every number of this report was computed with.",
            _conventions_frame(analysis),
            bookkeeping=True,
        )
    ]
    if "convention_templates" in analysis:
        out.append(
            Section(
                "statistic_conventions",
                "Conventions of each statistic",
                f"Under the conventions '{analysis.attrs.get('conventions', 'standard')}': the "
                "templates each statistic uses (all, or those marked valid by template_valid), how "
                "tied scores are ranked (average: tied models share the mean of their ranks; min: "
                "they share the lowest), and whether its variance is corrected for ties; the "
                "report sections that show it.",
                _statistic_conventions_frame(analysis),
                bookkeeping=True,
            )
        )
    if "drop_section" not in analysis:
        return out
    table = _dropped_frame(analysis)
    if table.empty:
        note = (
            "Nothing was left out: every model has a score on every template of every "
            "task it was run on, and every statistic was defined."
        )
    else:
        note = (
            "Every template, model, task or sample a section left out, one row per reason: "
            "the sections, tasks and models it covers, how many were left out and which. "
            "Section 'all' applies to every per-task section; 'section' names a section the "
            "cube cannot have. The tables written as CSV and JSON hold one row per section, "
            "task, model and reason."
        )
    out.append(
        Section(
            "dropped",
            "What the analyses left out, and why",
            note,
            table,
            shown=_grouped_drops(table, _benchmark_of(analysis)),
            bookkeeping=True,
        )
    )
    return out


def _grouped_drops(table: pd.DataFrame, benchmark: pd.Series | None = None) -> pd.DataFrame:
    """The drop log with one row per reason, naming the sections, tasks and models it covers.

    Tasks that make up whole benchmarks (``benchmark``: each task's) are named by them.

    Examples
    --------
    >>> import pandas as pd
    >>> from rankstats.render import _grouped_drops
    >>> log = pd.DataFrame({
    ...     "section": ["all", "all"], "task": ["t1", "t2"], "model": ["", ""],
    ...     "left out": ["models", "models"], "count": [2, 2], "which": ["a, b", "a, b"],
    ...     "why": ["absent", "absent"]}).set_index("section")
    >>> _grouped_drops(log).iloc[0].astype(str).tolist()
    ['models', 'all', 't1, t2', '–', '4', 'a, b']
    """
    columns = ["left out", "sections", "tasks", "models", "count", "which"]
    if table.empty:
        return pd.DataFrame(columns=columns).rename_axis("why")
    rows = table.reset_index()
    whole = {} if benchmark is None else benchmark.groupby(benchmark.values).groups

    def tasks(values) -> str:
        names = {str(v) for v in values if str(v)}
        covered = [b for b, members in whole.items() if set(members) <= names]
        if not covered or set().union(*(set(whole[b]) for b in covered)) != names:
            return listed(values)
        return " and ".join(f"the {len(whole[b])} tasks of {b}" for b in covered)

    def listed(values) -> str:
        names = [str(v) for v in dict.fromkeys(values) if str(v)]
        return _short_list(names) if names else "–"

    def labels(values) -> str:
        return listed(label for value in values for label in str(value).split(", "))

    grouped = rows.groupby(["why", "left out"], sort=False).agg(
        sections=("section", listed),
        tasks=("task", tasks),
        models=("model", listed),
        count=("count", "sum"),
        which=("which", labels),
    )
    grouped = grouped.reset_index(level="left out")
    return grouped[columns]


def _item_sections(analysis: xr.Dataset) -> list[Section]:
    """Cochran's Q across templates, and McNemar between the two leaders, per task."""
    effect = analysis["template_effect_pvalue_adjusted"].transpose("task", "model").to_pandas()
    leaders = pd.DataFrame(
        {
            "leader": analysis["leader"].to_series(),
            "runner-up": analysis["runner_up"].to_series(),
            "templates tested": analysis["leaders_templates_tested"].to_series(),
            "leader better": analysis["leader_better_templates"].to_series(),
            "runner-up better": analysis["runner_up_better_templates"].to_series(),
        }
    )
    if "leaders_samples_dropped" in analysis:
        leaders["samples left out"] = analysis["leaders_samples_dropped"].to_series()
    return [
        Section(
            "template_effect",
            "Does the template change which items a model gets right?",
            "Cochran's Q across templates on the same samples, per model and task: "
            f"{_adjusted(analysis, 'template_effect_pvalue_adjusted')}-adjusted p-values over "
            f"{_attr(analysis, 'template_effect_pvalue_adjusted', 'family', 'the whole table')} "
            "(small: the template matters).",
            effect,
            formats={"*": "p"},
        ),
        Section(
            "leaders",
            "Can the two leaders be told apart item by item?",
            "Per task, the two models with the best AvgP compared on each template's "
            "samples by exact McNemar tests "
            f"({_adjusted(analysis, 'leader_better_templates')} over "
            f"{_attr(analysis, 'leader_better_templates', 'family', 'each task')}, "
            f"alpha {_attr(analysis, 'leader_better_templates', 'alpha', 0.05):g}): "
            "on how many templates each is significantly better. Samples scored for one "
            "of the two only are left out of that template's test (pairwise deletion); "
            "'samples left out' counts them over the tested templates.",
            leaders,
        ),
    ]


_EDIT_COLUMNS = {
    "edit": "edit",
    "model": "model",
    "task": "task",
    "template": "template",
    "score": "score",
    "template_b": "template b",
    "score_b": "score b",
    "difference": "difference",
    "pvalue_adjusted": "p (adjusted)",
    "n_dropped": "samples left out",
}


def _edits_note(test: str, what: str, family: str = "all") -> str:
    tested = not test.startswith("none")
    scope = "all pairs and models" if family == "all" else f"the pairs of each {family}"
    return (
        f"{what + ' ' if what else ''}Pairs of templates of one task that differ by a "
        "minimal edit (a word, a punctuation mark, a placeholder's quoting); difference = "
        "score under template b − score under template. "
        + (
            f"p: {test} over {scope}; a sample scored under one template of a pair only "
            "is left out of its test (pairwise deletion), and counted in 'samples left "
            "out'."
            if tested
            else f"No significance test: {test.removeprefix('none: ')}."
        )
    )


def _edits_section(analysis: xr.Dataset) -> Section:
    names = {f"edit_{key}": label for key, label in _EDIT_COLUMNS.items() if key != "edit"}
    names["edit_rule"] = "edit"
    table = pd.DataFrame(
        {label: analysis[name].values for name, label in names.items() if name in analysis}
    )
    table = table[[label for label in _EDIT_COLUMNS.values() if label in table]]
    test = str(analysis["edits_test"].values)
    if test.startswith("none"):
        table = table.drop(columns="p (adjusted)")
    elif "samples left out" in table:
        table["samples left out"] = table["samples left out"].astype("Int64")
    return Section(
        "edits",
        "Minimal template edits: the largest effects",
        _edits_note(
            test,
            "The largest score differences between two templates "
            "that differ by a minimal edit (Mizrahi et al. 2024, "
            "tables 5 and 12).",
        ),
        table.set_index("edit"),
    )


def _one_line(text: str) -> str:
    return str(text).replace("\n", "\\n").replace("|", "\\|")


def edits_markdown(edits: xr.Dataset, rules: xr.Dataset, top: int = 20) -> str:
    r"""The result of :func:`rankstats.minimal_edits` and its edit rules, as markdown.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.edits import edit_rules, minimal_edits
    >>> from rankstats.render import edits_markdown
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": p, "template_text": text, "score": s}
    ...      for m, row in {"m1": [0.5, 0.25], "m2": [0.25, 0.75]}.items()
    ...      for p, text, s in zip(["a", "b"], ["Use {x}.", "Use {x}:"], row)])
    >>> edits = minimal_edits(cube)
    >>> print("\n".join(edits_markdown(edits, edit_rules(edits)).splitlines()[-3:]))
    | edit | tasks | pairs | m1 | m2 |
    |---|---|---|---|---|
    | '.' → ':' | 1 | 1 | -0.250 | 0.500 |
    """
    from .analyses.edits import largest_edits

    table = largest_edits(edits, top=top)
    for side in ("", "_b"):  # the template's id and wording, on one line of the table
        table[f"template{side}"] = [
            f"{key}: {_one_line(text)}"
            for key, text in zip(table[f"template{side}"], table[f"text{side}"], strict=True)
        ]
    table = table.rename(columns=_EDIT_COLUMNS)
    table = table[[c for c in _EDIT_COLUMNS.values() if c in table]]
    if "samples left out" in table:
        table["samples left out"] = table["samples left out"].astype("Int64")
    test = str(edits.attrs.get("test", "none"))
    distance = edits.attrs.get("max_distance")
    unit = str(edits.attrs.get("unit", "tokens")).removesuffix("s")
    found = (
        f"{edits.sizes['pair']} pairs of templates at most {distance} "
        f"{unit}{'' if distance == 1 else 's'} apart ({edits.attrs.get('candidates')} "
        f"candidates compared of {edits.attrs.get('possible_pairs')} pairs within tasks)"
    )
    means = rules["mean_difference"].transpose("rule", "model").to_pandas().head(top)
    counts = pd.DataFrame(
        {"tasks": rules["n_tasks"].values, "pairs": rules["n_pairs"].values},
        index=rules["rule"].values,
    ).head(top)
    by_rule = pd.concat([counts, means], axis=1).rename_axis("edit")
    parts = [
        f"# Minimal template edits: {found}",
        _edits_note(test, "", str(edits.attrs.get("family", "all"))),
        "## The largest effects",
        _markdown_table(table.set_index("edit")),
        "## Mean difference per edit and model (most tasks first)",
        _markdown_table(by_rule),
    ]
    return "\n\n".join(parts) + "\n"


def _markdown_table(frame: pd.DataFrame, formats: dict | None = None) -> str:
    frame = frame.reset_index() if _has_index(frame) else frame.reset_index(drop=True)
    kinds = [_kind(c, formats or {}) for c in frame.columns]
    # a literal "|" (e.g. the verbalizer "1|0") would end the cell
    header = [str(c).replace("|", "\\|") for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in frame.itertuples(index=False):
        cells = (_fmt(v, k).replace("|", "\\|") for v, k in zip(row, kinds, strict=True))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _has_index(frame: pd.DataFrame) -> bool:
    """Whether the index says something (not an unnamed range of positions)."""
    return not (isinstance(frame.index, pd.RangeIndex) and frame.index.name is None)


def _heading(analysis: xr.Dataset) -> str:
    size = f"{analysis.sizes.get('model', 0)} models × {analysis.sizes.get('task', 0)} tasks"
    return f"{analysis.attrs.get('metric', 'score')} of {size}"


def _summary_markdown(section: Section, titles: dict) -> list[str]:
    parts = [f'<a id="{section.key}"></a>', f"## {section.title}"]
    for name, lines in section.lines:
        if not lines:
            continue
        parts.append(f"### {name}")
        parts.append(
            "\n".join(
                f"- {line.text} ([{titles.get(line.section, line.section)}](#{line.section}))"
                for line in lines
            )
        )
    parts += [section.note, _markdown_table(section.display, section.formats)]
    return parts


def summary_markdown(analysis: xr.Dataset, found: list[Section] | None = None) -> str:
    """The report's title and summary as markdown: what a terminal shows beside a file.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import summary_markdown
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ], metric="accuracy")
    >>> text = summary_markdown(rankstats.report(cube, n_resamples=0))
    >>> [line for line in text.splitlines() if line.startswith("#")]
    ['# Multi-prompt report: accuracy of 3 models × 1 tasks', '## Summary', '### all']
    """
    found = found or sections(analysis)
    titles = {section.key: section.title for section in found}
    parts = [f"# Multi-prompt report: {_heading(analysis)}"]
    if analysis.attrs.get("source"):
        parts.append(f"Source: {analysis.attrs['source']}")
    parts += _summary_markdown(found[0], titles)
    return "\n\n".join(parts) + "\n"


def to_markdown(analysis: xr.Dataset) -> str:
    """The report as markdown: the summary, one section per table, then the bookkeeping.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import to_markdown
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ], metric="accuracy")
    >>> print(to_markdown(rankstats.report(cube)).splitlines()[0])
    # Multi-prompt report: accuracy of 3 models × 1 tasks
    """
    found = sections(analysis)
    parts = [summary_markdown(analysis, found).rstrip("\n")]
    for section in found[1:]:
        parts += [
            f'<a id="{section.key}"></a>',
            f"## {section.title}",
            section.note,
            _markdown_table(section.display, section.formats),
        ]
    return "\n\n".join(parts) + "\n"


_STYLE = """
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 0.5em 1em 2em;
  max-width: 80em; color: #222; line-height: 1.4; overflow-wrap: anywhere; }
h1 { font-size: 1.5em; margin: 0.4em 0; }
h2 { font-size: 1.25em; margin: 1.2em 0 0.4em; }
h3 { font-size: 1.05em; margin: 0.6em 0 0.2em; }
#summary h2 { margin-top: 0.4em; }
#summary ul { margin: 0.2em 0 0.6em; padding-left: 1.2em; }
#summary li { margin: 0.15em 0; }
.table { overflow-x: auto; max-width: 100%; margin: 0.6em 0 1em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; text-align: left;
  overflow-wrap: normal; }
thead th { background: #f3f3f3; }
tbody th { font-weight: normal; background: #fafafa; }
td.number { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
p.note { color: #555; max-width: 60em; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
details { margin: 1em 0; border-top: 1px solid #ddd; }
details > summary { cursor: pointer; }
details > summary h2 { display: inline; }
"""


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _html_table(frame: pd.DataFrame, formats: dict, links: dict | None = None) -> str:
    """A table in its own scroll container: header cells, one cell per index level and row.

    A label repeated from the row above (the task of each model's row) is left empty,
    so that every row has the same cells and the same style.
    """
    links = links or {}
    indexed = _has_index(frame)
    names = [str(n) if n is not None else "" for n in frame.index.names] if indexed else []
    header = [f'<th scope="col">{html.escape(n)}</th>' for n in names]
    for column in frame.columns:
        label = html.escape(str(column))
        if column in links:
            label = f'<a href="#{links[column]}">{label}</a>'
        header.append(f'<th scope="col">{label}</th>')
    kinds = [_kind(c, formats) for c in frame.columns]
    rows, previous = [], None
    for key, values in zip(frame.index, frame.itertuples(index=False), strict=True):
        key = key if isinstance(key, tuple) else (key,)
        cells = []
        for level, label in enumerate(key if indexed else ()):
            repeated = (
                previous is not None
                and level < len(key) - 1
                and key[: level + 1] == previous[: level + 1]
            )
            text = "" if repeated else html.escape(_fmt(label))
            cells.append(f'<th scope="row">{text}</th>')
        previous = key
        for value, kind in zip(values, kinds, strict=True):
            number = ' class="number"' if _is_number(value) else ""
            cells.append(f"<td{number}>{html.escape(_fmt(value, kind))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<div class="table"><table>\n<thead><tr>'
        + "".join(header)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )


def _img(name: str, data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return (
        f'<img alt="{html.escape(alt)}" title="{html.escape(name)}" '
        f'src="data:image/png;base64,{encoded}">'
    )


def _figure_alt(name: str, titles: dict) -> str:
    """Alternative text of a figure: what it shows, from its section and task."""
    key, _, task = name.partition(":")
    what = titles.get(key, key)
    return f"{what}: {task}" if task else f"Figure: {what}"


def to_html(analysis: xr.Dataset, figures: dict[str, bytes] | None = None) -> str:
    """The report as one self-contained HTML page; ``figures`` are PNG bytes by section key.

    The page opens with the summary (a few lines per benchmark, each linking
    to its section, its figure and one row per task); the sections follow,
    and the bookkeeping (conventions, what was left out) comes last, folded
    in ``<details>``. Every table scrolls in its own box, never the page. The
    page has no script.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.render import to_html
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ])
    >>> page = to_html(rankstats.report(cube))
    >>> page.startswith("<!DOCTYPE html>"), "<table" in page, "<script" in page
    (True, True, False)
    """
    figures = figures or {}
    found = sections(analysis)
    titles = {section.key: section.title for section in found}
    title = html.escape(f"Multi-prompt report: {_heading(analysis)}")
    body = [f"<h1>{title}</h1>"]
    if analysis.attrs.get("source"):
        body.append(f'<p class="note">Source: {html.escape(str(analysis.attrs["source"]))}</p>')
    for section in found:
        part = []
        heading = f'<h2 id="{section.key}">{html.escape(section.title)}</h2>'
        for name, lines in section.lines:
            if not lines:
                continue
            part.append(f"<h3>{html.escape(str(name))}</h3>\n<ul>")
            part += [
                f"<li>{html.escape(line.text)} "
                f'<a href="#{line.section}">{html.escape(titles.get(line.section, line.section))}'
                "</a></li>"
                for line in lines
            ]
            part.append("</ul>")
        part.append(f'<p class="note">{html.escape(section.note)}</p>')
        for name in (section.key, *(k for k in figures if k.startswith(section.key + ":"))):
            if name in figures:
                part.append(_img(name, figures[name], _figure_alt(name, titles)))
        part.append(_html_table(section.display, section.formats, section.links))
        if section.bookkeeping:
            body.append(
                f"<details><summary>{heading}</summary>\n" + "\n".join(part) + "\n</details>"
            )
        else:
            body.append(
                f'<section id="section-{section.key}">{heading}\n'
                + "\n".join(part)
                + "\n</section>"
            )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    return value


def to_json(analysis: xr.Dataset) -> str:
    """Every variable of the report as JSON (xarray's dict layout; NaN becomes null)."""
    return json.dumps(_jsonable(analysis.to_dict(data="list")), indent=1, default=str)


def to_csv(analysis: xr.Dataset, folder) -> list[Path]:
    """Write each table of the report as ``<folder>/<section>.csv``; return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for section in sections(analysis):
        path = folder / f"{section.key}.csv"
        section.table.to_csv(path)
        written.append(path)
    return written


def task_leaderboard(board: xr.Dataset, task) -> pd.DataFrame:
    """One task of a leaderboard as a table of its ranked models, best first."""
    one = board.sel(task=task).to_dataframe().dropna(subset=["rank"])
    return one.sort_values(["rank", "rank_low"], kind="stable")


def unranked(board: xr.Dataset, reasons=None, *, ranked: bool = False) -> pd.DataFrame:
    """The models a leaderboard could not rank, per task, and why.

    ``reasons`` maps ``(task, model)`` to a reason (as ``rankstats
    stability`` finds them from the cube); without one the reason is read
    from the leaderboard's ``nan_policy``. With ``ranked=True``, the ranked
    models ``reasons`` names instead (what was left out of their scores,
    under ``nan_policy='omit'``).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats import stability
    >>> from rankstats.render import unranked
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, row in {"a": [0.9, 0.8], "b": [0.5, 0.6], "c": [0.1, None]}.items()
    ...     for p, s in zip(["p1", "p2"], row) if s is not None])
    >>> board = stability.leaderboard(cube, n_resamples=20, over="templates", seed=0)
    >>> unranked(board)["why"].tolist()
    ["no score: absent from the task, or a missing score on some template (nan_policy='propagate')"]
    """
    policy = str(board.attrs.get("nan_policy", "propagate"))
    default = "no score: absent from the task" + (
        f", or a missing score on some template (nan_policy={policy!r})"
        if policy == "propagate"
        else ""
    )
    rank = board["rank"].transpose("task", "model")
    rows = []
    missing = np.isnan(np.asarray(rank.values, dtype=float))
    if ranked:
        default = ""
    for t, m in np.argwhere(~missing if ranked else missing):
        task, model = rank["task"].values[t], rank["model"].values[m]
        why = (reasons or {}).get((task, model), default)
        if why:
            rows.append({"task": task, "model": model, "why": why})
    return pd.DataFrame(rows, columns=["task", "model", "why"])


def _shown(value, spec: str = "g") -> str:
    """A number of a leaderboard cell, or "-" where it is undefined (NaN)."""
    return "-" if value is None or value != value else format(value, spec)


def leaderboard_markdown(board: xr.Dataset, reasons=None, omitted=None) -> str:
    r"""A :func:`rankstats.stability.leaderboard` as markdown: one table per task, best first.

    Below each table, the models it could not rank and why (see
    :func:`unranked`), and the ranked models whose score leaves templates
    out (``omitted``, ``{(task, model): reason}``, under
    ``nan_policy='omit'``); a task where no model is ranked says so in place
    of its table.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> from rankstats import stability
    >>> from rankstats.render import leaderboard_markdown
    >>> rng = np.random.default_rng(1)
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "sample": s,
    ...      "score": float(rng.random() < acc)}
    ...     for m, acc in {"a": 0.8, "b": 0.6, "c": 0.3}.items()
    ...     for p in range(4) for s in range(40)])
    >>> board = stability.leaderboard(cube, n_resamples=200, over="both", seed=0)
    >>> print("\n".join(leaderboard_markdown(board).splitlines()[6:10]))
    | model | score [interval] | rank [interval] | tie group | arena rank |
    |---|---|---|---|---|
    | a | 0.800 [0.681, 0.912] | 1 [1, 2] | 1 | 1 |
    | b | 0.619 [0.500, 0.731] | 2 [1, 3] | 1 | 1 |
    """
    level = board.attrs.get("confidence_level", 0.95)
    rank_sets = board.attrs.get("rank_sets", "bootstrap")
    ranks = {
        "simultaneous": "rank: simultaneous confidence sets (all ranks at once)",
        "marginal": "rank: marginal confidence sets (each model's own)",
        "bootstrap": "rank: percentile intervals of the bootstrap ranks",
    }[rank_sets]
    groups = (
        "models whose rank intervals overlap, chained"
        if rank_sets == "bootstrap"
        else "split only where the simultaneous test separates every model above from "
        "every model below"
    )
    parts = [
        f"# Leaderboards with {level:.0%} intervals ({board.attrs.get('by', 'avgp')}, "
        f"{board.attrs.get('n_resamples')} resamples over {board.attrs.get('over')})",
        f"{ranks[0].upper()}{ranks[1:]}; tie groups: {groups}; arena rank: 1 + the "
        "models whose score interval lies entirely above.",
    ]
    if board.attrs.get("nan_policy"):
        parts[-1] += f" Missing scores: nan_policy={board.attrs['nan_policy']!r}."
    missing = unranked(board, reasons)
    partial = unranked(board, omitted or {}, ranked=True)

    def grouped(frame, task) -> str:
        by_reason: dict = {}
        for model, reason in frame.loc[frame["task"] == task, ["model", "why"]].itertuples(
            index=False
        ):
            by_reason.setdefault(reason, []).append(str(model))
        return "; ".join(f"{', '.join(models)}: {reason}" for reason, models in by_reason.items())

    for task in board["task"].values:
        one = task_leaderboard(board, task)
        why, scored_without = grouped(missing, task), grouped(partial, task)
        if one.empty:
            parts.append(f"## {task}\n\nNo model is ranked on this task. {why}.")
            continue
        lines = [
            f"## {task}",
            "",
            "| model | score [interval] | rank [interval] | tie group | arena rank |",
            "|---|---|---|---|---|",
        ]
        for model, row in one.iterrows():
            lines.append(
                f"| {model} | {_shown(row['score'], '.3f')} [{_shown(row['score_low'], '.3f')}, "
                f"{_shown(row['score_high'], '.3f')}] | {_shown(row['rank'])} "
                f"[{_shown(row['rank_low'])}, {_shown(row['rank_high'])}] | "
                f"{_shown(row['tie_group'])} | {_shown(row['arena_rank'])} |"
            )
        if one[["score_low", "score_high", "rank_low", "rank_high"]].isna().to_numpy().any():
            lines += [
                "",
                "A '-' is a bound the replicates leave undefined (see the notes on "
                "standard error).",
            ]
        if why:
            lines += ["", f"Not ranked: {why}."]
        if scored_without:
            lines += ["", f"Scored without some templates: {scored_without}."]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
