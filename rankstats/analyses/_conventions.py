"""The conventions of the report's statistics: which templates, how ties rank, tie correction.

:func:`rankstats.report` computes Kendall's W, Friedman's tests and the
metric ranks under conventions that can be set per statistic (a published
study may have used others than rankstats' standard ones);
:func:`resolve` checks a ``conventions`` argument and fills in the
standard values; :func:`table` states, per statistic of the report, the
conventions it was computed with, as variables over the dimension
``convention`` (``convention_<column>``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from .. import _options as o
from ..errors import OptionError

__all__ = ["COLUMNS", "STANDARD", "TEMPLATE_SETS", "resolve", "table", "uniform"]

#: The template sets a statistic may use: every template, or those marked valid.
TEMPLATE_SETS = ("all", "valid")
#: The statistics whose conventions can be set, with their standard values.
STANDARD = {
    "kendall_w": {"templates": "all", "ties": "average", "tie_correction": True},
    "friedman": {"templates": "all", "ties": "average", "tie_correction": True},
    "metric_ranks": {"templates": "all", "ties": "average"},
}
#: Keys that say where a statistic's conventions come from, not how it is computed.
_NOTES = {"reproduces": None, "orientation": ("blocks=models", "blocks=templates")}
_CHECKS = {"templates": o.one_of(*TEMPLATE_SETS), "ties": o.one_of(*o.TIES),
           "tie_correction": o.boolean}
#: The columns of :func:`table`: ``convention_<column>`` in the report.
COLUMNS = ("statistic", "sections", "templates", "ties", "tie_correction", "note")
_LABELS = {
    "kendall_w": ("Kendall's W", "agreement"),
    "friedman": ("Friedman's tests (templates; models)", "agreement"),
    "metric_ranks": ("MaxP, AvgP, saturation, CPS and their ranks",
                     "metrics, average_rank, leaders"),
}
#: The statistics of the report computed one way only, as rows of :func:`table`.
_FIXED = (
    ("kendall_tau", "Kendall's tau-b between templates", "pairs", "all", "average",
     "", "tau-b: ties corrected in both rankings"),
    ("divergence", "divergence of the original templates", "divergence", "all", "",
     "", "sample standard deviation of the paraphrases"),
    ("leaderboard", "bootstrap leaderboard", "stability", "all", "average", "", ""),
    ("templates_needed", "templates needed", "templates_needed", "all", "average", "",
     "tau-b ≥ 0.9 in 95% of draws"),
)


def _refuse(function: str, what: str, allowed) -> None:
    raise OptionError(f"{function}: conventions: {what}; allowed: "
                      f"{', '.join(map(repr, allowed))}")


def resolve(function: str, name: str, value) -> dict:
    """Check ``conventions`` and fill in the standard values.

    ``None`` and ``"standard"`` give :data:`STANDARD`; a mapping gives, per
    statistic it names (``kendall_w``, ``friedman``, ``metric_ranks``), its
    options (``templates``, ``ties``, ``tie_correction``), the standard
    values for the rest, and may say where they come from (``reproduces``,
    and for ``friedman`` an ``orientation``) and name itself (``name``;
    without one, ``standard`` where every value is the standard one, else
    ``custom``).

    Examples
    --------
    >>> from rankstats.analyses._conventions import resolve
    >>> resolve("report", "conventions", {"kendall_w": {"ties": "min"}})["kendall_w"]
    {'templates': 'all', 'ties': 'min', 'tie_correction': True}
    >>> resolve("report", "conventions", "paper")
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: report: conventions='paper' is not a set of conventions...
    """
    if value is None or (isinstance(value, str) and value == "standard"):
        return {"name": "standard", **{key: dict(options) for key, options in STANDARD.items()}}
    if not isinstance(value, Mapping):
        raise OptionError(
            f"{function}: {name}={value!r} is not a set of conventions: pass None or "
            "'standard', or a mapping {statistic: {option: value}} (a study's conventions, "
            "such as rankstats.reproduce.mizrahi2024.paper_conventions(); the command line "
            "resolves 'paper' to it for the mizrahi2024 data)")
    label = value.get("name", "custom")
    if not isinstance(label, str) or not label:
        raise OptionError(f"{function}: conventions: name must be a non-empty text, not "
                          f"{label!r}")
    out = {"name": label}
    for key, standard in STANDARD.items():
        given = value.get(key, {})
        if not isinstance(given, Mapping):
            raise OptionError(f"{function}: conventions[{key!r}] must be a mapping of "
                              f"options, not {given!r}")
        options = dict(standard)
        for option, setting in given.items():
            where = f"{key}.{option}"
            if option in _CHECKS and option in standard:
                options[option] = _CHECKS[option](function, f"conventions {where}", setting)
            elif option in _NOTES and (option != "orientation" or key == "friedman"):
                allowed = _NOTES[option]
                if allowed is not None and setting not in allowed:
                    _refuse(function, f"{where}={setting!r} is not allowed", allowed)
                options[option] = str(setting)
            else:
                _refuse(function, f"{key!r} takes no option {option!r}",
                        [*standard, *(n for n in _NOTES if n != "orientation"
                                      or key == "friedman")])
        out[key] = options
    unknown = sorted(set(value) - set(STANDARD) - {"name"}, key=str)
    if unknown:
        _refuse(function, f"no statistic {unknown[0]!r}", [*STANDARD, "name"])
    if "name" not in value and all(out[key][option] == standard for key in STANDARD
                                   for option, standard in STANDARD[key].items()):
        out["name"] = "standard"
    return out


def uniform(conventions: dict, option: str):
    """The value of ``option`` shared by every statistic that has it, else ``"per statistic"``."""
    values = {conventions[key][option] for key in STANDARD if option in conventions[key]}
    return values.pop() if len(values) == 1 else "per statistic"


def _note(key: str, options: dict) -> str:
    parts = []
    if "orientation" in options:
        which = ("Friedman (templates)" if options["orientation"] == "blocks=models"
                 else "Friedman (models)")
        parts.append(f"the study's test is {which}: {options['orientation']}")
    if "reproduces" in options:
        parts.append(f"reproduces {options['reproduces']} published values")
    return "; ".join(parts)


def table(conventions: dict) -> xr.Dataset:
    """Each statistic of the report and its conventions, over the dimension ``convention``."""
    rows = []
    for key, (label, sections) in _LABELS.items():
        options = conventions[key]
        correction = options.get("tie_correction")
        rows.append((key, label, sections, options["templates"], options["ties"],
                     "" if correction is None else "on" if correction else "off",
                     _note(key, options)))
    rows += _FIXED
    columns = list(zip(*rows, strict=True))
    return xr.Dataset(
        {f"convention_{name}": ("convention", np.array(values, dtype=object))
         for name, values in zip(COLUMNS, columns[1:], strict=True)},
        coords={"convention": np.array(columns[0], dtype=object)})
