"""Figures of the verbalizer analyses (the ``plot`` extra: matplotlib, imported on first use).

In the style of Li et al. (2023): accuracy per verbalizer group across the
sizes of each model family (figure 2), per verbalizer (figure 3), direct
against chain-of-thought prompting (figure 4) and per dataset (figure 5).
Each function draws on a :class:`matplotlib.axes.Axes` (a new figure when none
is given) and returns it; :func:`figures` renders them all to PNG bytes keyed
by the report's verbalizer sections.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._figure import new_axes as _axes
from ._figure import to_png as _png

__all__ = ["figures", "plot_cot", "plot_groups", "plot_tasks", "plot_verbalizers"]

_MARKERS = "osD^v<>pX*"


def _family_curves(analysis: xr.Dataset, variable: str, family: str | None, dim: str):
    """``(model names, {label: values})`` along a family's sizes, or along all models."""
    if family is not None:
        curve = analysis[f"{variable}_curve"].sel(model_family=family)
        names = analysis["curve_model"].sel(model_family=family).values.astype(str)
        keep = names != ""
        curve = curve.isel(position=np.flatnonzero(keep))
        lines = {str(label): curve.sel({dim: label}).values for label in analysis[dim].values}
        return list(names[keep]), lines
    values = analysis[f"{variable}_accuracy"]
    names = [str(m) for m in values["model"].values]
    return names, {str(label): values.sel({dim: label}).values for label in values[dim].values}


def _lines(ax, names, lines, chance=None):
    positions = np.arange(len(names))
    for k, (label, values) in enumerate(lines.items()):
        ax.plot(positions, values, marker=_MARKERS[k % len(_MARKERS)], label=label)
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle="--", linewidth=0.8, label="random guessing")
    ax.set_xticks(positions, names, rotation=45, ha="right", fontsize=8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=7)
    return ax


def _chance(analysis: xr.Dataset):
    if "chance_level" not in analysis:
        return None
    levels = analysis["chance_level"].values
    levels = levels[np.isfinite(levels)]
    return float(levels[0]) if len(levels) and np.allclose(levels, levels[0]) else None


def _title(what: str, family: str | None) -> str:
    return f"{what}: {family}" if family is not None else what


def plot_groups(analysis: xr.Dataset, family: str | None = None, ax=None):
    """Accuracy of the natural, neutral and unnatural groups across a family's sizes (figure 2).

    Without ``family``, every model of the analysis, in its order.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> from rankstats.plot.verbalizer import plot_groups
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": g, "verbalizer_group": g,
    ...       "verbalizer": g, "family": "F", "parameters": size, "score": s}
    ...      for m, size, scores in [("small", 1, (0.8, 0.4)), ("large", 2, (0.9, 0.6))]
    ...      for g, s in zip(["natural", "unnatural"], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer"),
    ...     model_attrs=("family", "parameters"))
    >>> ax = plot_groups(verbalizer_analysis(cube), "F")
    >>> ax.get_title(), [line.get_label() for line in ax.get_lines()]
    ('Verbalizer groups: F', ['natural', 'unnatural'])
    """
    names, lines = _family_curves(analysis, "group", family, "group")
    ax = _axes(ax, (max(4.0, 0.6 * len(names) + 2.5), 3.4))
    _lines(ax, names, lines, _chance(analysis))
    ax.set_title(_title("Verbalizer groups", family))
    return ax


def plot_verbalizers(
    analysis: xr.Dataset, family: str | None = None, groups=("natural", "unnatural"), ax=None
):
    """Accuracy per verbalizer of the given groups across a family's sizes (figure 3).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> from rankstats.plot.verbalizer import plot_verbalizers
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": f"{v}:{p}", "verbalizer_group": g,
    ...       "verbalizer": v, "prompting": p, "score": s}
    ...      for m, scores in [("a", (0.8, 0.4, 0.5)), ("b", (0.9, 0.6, 0.8))]
    ...      for (g, v, p), s in zip([("natural", "golden", "direct"),
    ...                              ("unnatural", "flipped golden", "direct"),
    ...                              ("unnatural", "flipped golden", "cot")], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer", "prompting"))
    >>> ax = plot_verbalizers(verbalizer_analysis(cube))
    >>> [line.get_label() for line in ax.get_lines()]
    ['natural: golden', 'unnatural: flipped golden']
    """
    names, lines = _family_curves(analysis, "verbalizer", family, "verbalizer")
    group_of = dict(
        zip(
            analysis["verbalizer"].values.astype(str),
            analysis["verbalizer_group"].values.astype(str),
            strict=True,
        )
    )
    lines = {
        f"{group_of[label]}: {label}": values
        for label, values in lines.items()
        if group_of[label] in groups
    }
    ax = _axes(ax, (max(4.0, 0.6 * len(names) + 2.5), 3.4))
    _lines(ax, names, lines, _chance(analysis))
    ax.set_title(_title("Verbalizers", family))
    return ax


def plot_cot(analysis: xr.Dataset, family: str | None = None, ax=None):
    """Natural golden direct, flipped golden direct and flipped golden CoT (figure 4).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> from rankstats.plot.verbalizer import plot_cot
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": f"{v}:{p}", "verbalizer_group": g,
    ...       "verbalizer": v, "prompting": p, "score": s}
    ...      for m, scores in [("a", (0.8, 0.4, 0.5)), ("b", (0.9, 0.6, 0.8))]
    ...      for (g, v, p), s in zip([("natural", "golden", "direct"),
    ...                              ("unnatural", "flipped golden", "direct"),
    ...                              ("unnatural", "flipped golden", "cot")], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer", "prompting"))
    >>> ax = plot_cot(verbalizer_analysis(cube))
    >>> [line.get_label() for line in ax.get_lines()]
    ['natural golden, direct', 'flipped golden, direct', 'flipped golden, CoT']
    """
    names, lines = _family_curves(analysis, "cot", family, "condition")
    ax = _axes(ax, (max(4.0, 0.6 * len(names) + 2.5), 3.4))
    _lines(ax, names, lines, _chance(analysis))
    ax.set_title(_title("Direct against chain-of-thought prompting", family))
    return ax


def plot_tasks(analysis: xr.Dataset, model: str, ax=None):
    """Per dataset: one model's accuracy under the CoT conditions, else per group (figure 5).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> from rankstats.plot.verbalizer import plot_tasks
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": f"{v}:{p}", "verbalizer_group": g,
    ...       "verbalizer": v, "prompting": p, "score": s}
    ...      for m, scores in [("a", (0.8, 0.4, 0.5)), ("b", (0.9, 0.6, 0.8))]
    ...      for (g, v, p), s in zip([("natural", "golden", "direct"),
    ...                              ("unnatural", "flipped golden", "direct"),
    ...                              ("unnatural", "flipped golden", "cot")], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer", "prompting"))
    >>> ax = plot_tasks(verbalizer_analysis(cube), "b")
    >>> [round(float(bar.get_height()), 2) for bar in ax.patches]
    [0.9, 0.6, 0.8]
    """
    if "cot_accuracy_by_task" in analysis:
        values, dim = analysis["cot_accuracy_by_task"], "condition"
    else:
        values, dim = analysis["group_accuracy_by_task"], "group"
    frame = values.sel(model=model).transpose("task", dim).to_pandas().dropna(how="all")
    ax = _axes(ax, (max(4.5, 0.7 * len(frame) + 2.5), 3.4))
    positions = np.arange(len(frame))
    width = 0.8 / max(1, frame.shape[1])
    for k, column in enumerate(frame.columns):
        ax.bar(
            positions + (k - (frame.shape[1] - 1) / 2) * width,
            frame[column],
            width=width,
            label=str(column),
        )
    chance = _chance(analysis)
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xticks(positions, frame.index, rotation=45, ha="right", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("accuracy")
    ax.set_title(f"Per dataset: {model}")
    ax.legend(fontsize=7)
    return ax


def figures(analysis: xr.Dataset) -> dict[str, bytes]:
    """Every verbalizer figure as PNG bytes, keyed for :func:`rankstats.render.to_html`.

    Keys ``verbalizer_groups[:family]``, ``verbalizer_verbalizers[:family]``,
    ``verbalizer_cot[:family]`` (per family when the models carry a family
    and a size, else one over all models) and ``verbalizer_tasks:<model>``.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> from rankstats.plot.verbalizer import figures
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": g, "verbalizer_group": g,
    ...       "verbalizer": g, "score": s}
    ...      for m, scores in [("a", (0.8, 0.4)), ("b", (0.9, 0.6))]
    ...      for g, s in zip(["natural", "unnatural"], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> sorted(figures(verbalizer_analysis(cube)))
    ['verbalizer_groups', 'verbalizer_tasks:a', 'verbalizer_tasks:b', 'verbalizer_verbalizers']
    """
    families = (
        list(analysis["model_family"].values.astype(str)) if "group_curve" in analysis else [None]
    )
    out = {}
    for family in families:
        suffix = f":{family}" if family is not None else ""
        out[f"verbalizer_groups{suffix}"] = _png(plot_groups(analysis, family))
        out[f"verbalizer_verbalizers{suffix}"] = _png(plot_verbalizers(analysis, family))
        if "cot_accuracy" in analysis:
            out[f"verbalizer_cot{suffix}"] = _png(plot_cot(analysis, family))
    for model in analysis["model"].values:
        out[f"verbalizer_tasks:{model}"] = _png(plot_tasks(analysis, str(model)))
    return out
