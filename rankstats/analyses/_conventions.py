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

import functools
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from .. import _options as o
from ..errors import OptionError

__all__ = ["COLUMNS", "STANDARD", "TEMPLATE_SETS", "read_file", "resolve", "table", "uniform"]

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
_CHECKS = {
    "templates": o.one_of(*TEMPLATE_SETS),
    "ties": o.one_of(*o.TIES),
    "tie_correction": o.boolean,
}
#: The columns of :func:`table`: ``convention_<column>`` in the report.
COLUMNS = ("statistic", "sections", "templates", "ties", "tie_correction", "note")
_LABELS = {
    "kendall_w": ("Kendall's W", "agreement"),
    "friedman": ("Friedman's tests (templates; models)", "agreement"),
    "metric_ranks": (
        "MaxP, AvgP, saturation, CPS and their ranks",
        "metrics, average_rank, leaders",
    ),
}
#: The statistics of the report computed one way only, as rows of :func:`table`.
_FIXED = (
    (
        "kendall_tau",
        "Kendall's tau-b between templates",
        "pairs",
        "all",
        "average",
        "",
        "tau-b: ties corrected in both rankings",
    ),
    (
        "divergence",
        "divergence of the original templates",
        "divergence",
        "all",
        "",
        "",
        "sample standard deviation of the paraphrases",
    ),
    ("leaderboard", "bootstrap leaderboard", "stability", "all", "average", "", ""),
    (
        "templates_needed",
        "templates needed",
        "templates_needed",
        "all",
        "average",
        "",
        "tau-b ≥ 0.9 in 95% of draws",
    ),
)


def _refuse(function: str, what: str, allowed) -> None:
    raise OptionError(f"{function}: conventions: {what}; allowed: {', '.join(map(repr, allowed))}")


def resolve(function: str, name: str, value) -> dict:
    """Check ``conventions`` and fill in the standard values.

    ``None`` and ``"standard"`` give :data:`STANDARD`; a mapping gives, per
    statistic it names (``kendall_w``, ``friedman``, ``metric_ranks``), its
    options (``templates``, ``ties``, ``tie_correction``), the standard
    values for the rest, and may say where they come from (``reproduces``,
    and for ``friedman`` an ``orientation``) and name itself (``name``;
    without one, ``standard`` where every value is the standard one, else
    ``custom``). The name ``standard`` is reserved for the standard values:
    conventions that differ from them and call themselves so are refused.

    Examples
    --------
    >>> from rankstats.analyses._conventions import resolve
    >>> resolve("report", "conventions", {"kendall_w": {"ties": "min"}})["kendall_w"]
    {'templates': 'all', 'ties': 'min', 'tie_correction': True}
    >>> resolve("report", "conventions", "paper")
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: report: conventions='paper' is not a set of conventions...
    >>> resolve("report", "conventions", {"name": "standard", "kendall_w": {"ties": "min"}})
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: report: conventions: name='standard' is reserved for the \
standard conventions, and these differ from them in kendall_w.ties='min' (standard: 'average'); \
give them another name, or none
    """
    if value is None or (isinstance(value, str) and value == "standard"):
        return {"name": "standard", **{key: dict(options) for key, options in STANDARD.items()}}
    if not isinstance(value, Mapping):
        raise OptionError(
            f"{function}: {name}={value!r} is not a set of conventions: pass None or "
            "'standard', or a mapping {statistic: {option: value}} (a study's conventions, "
            "such as rankstats.reproduce.mizrahi2024.paper_conventions(); the command line "
            "resolves 'paper' to it for the mizrahi2024 data)"
        )
    label = value.get("name", "custom")
    if not isinstance(label, str) or not label:
        raise OptionError(f"{function}: conventions: name must be a non-empty text, not {label!r}")
    out = {"name": str(label)}
    for key, standard in STANDARD.items():
        given = value.get(key, {})
        if not isinstance(given, Mapping):
            raise OptionError(
                f"{function}: conventions[{key!r}] must be a mapping of options, not {given!r}"
            )
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
                _refuse(
                    function,
                    f"{key!r} takes no option {option!r}",
                    [*standard, *(n for n in _NOTES if n != "orientation" or key == "friedman")],
                )
        out[key] = options
    unknown = sorted(set(value) - set(STANDARD) - {"name"}, key=str)
    if unknown:
        _refuse(function, f"no statistic {unknown[0]!r}", [*STANDARD, "name"])
    differences = [
        f"{key}.{option}={out[key][option]!r} (standard: {standard!r})"
        for key in STANDARD
        for option, standard in STANDARD[key].items()
        if out[key][option] != standard
    ]
    if "name" not in value and not differences:
        out["name"] = "standard"
    elif out["name"] == "standard" and differences:
        raise OptionError(
            f"{function}: conventions: name='standard' is reserved for the standard "
            f"conventions, and these differ from them in {', '.join(differences)}; give them "
            "another name, or none"
        )
    return out


def read_file(path, function: str = "report") -> dict:
    """Conventions from a JSON file, as :func:`resolve` takes them, named after the file.

    The file holds one object ``{statistic: {option: value}}`` (and
    optionally ``name``). Without a ``name``, the conventions are named after
    the file (``mine.json``: ``mine``), except that a file named
    ``standard.json`` whose values differ from the standard ones is named
    ``custom (standard.json)``: only the standard conventions are called
    ``standard``.

    Raises
    ------
    rankstats.errors.OptionError
        The file is not readable JSON, not an object, gives one key twice in
        an object (JSON readers would keep the last one silently), or its
        conventions are not allowed (see :func:`resolve`); the message names
        the file.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from rankstats.analyses._conventions import read_file
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "standard.json").write_text(json.dumps({"kendall_w": {"ties": "min"}}))
    >>> read_file(folder / "standard.json")["name"]
    'custom (standard.json)'
    >>> _ = (folder / "twice.json").write_text('{"kendall_w": {"ties": "min", "ties": "max"}}')
    >>> read_file(folder / "twice.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankstats.errors.OptionError: report: conventions file '...twice.json': the key 'ties' is \
given twice in one object; give each key once
    """
    path = Path(path)
    where = f"{function}: conventions file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
        found = json.loads(text, object_pairs_hook=functools.partial(_unique_keys, where))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise OptionError(f"{where} is not a readable JSON file ({error})") from None
    if not isinstance(found, dict):
        raise OptionError(
            f"{where}: the JSON must be an object {{statistic: {{option: "
            f"value}}}}, not {type(found).__name__}"
        )
    resolved = resolve(where, "conventions", found)
    if "name" not in found:
        standard = resolved["name"] == "standard"
        resolved["name"] = (
            path.stem if path.stem != "standard" or standard else f"custom ({path.name})"
        )
    return resolved


def _unique_keys(where: str, pairs: list) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice."""
    found = {}
    for key, value in pairs:
        if key in found:
            raise OptionError(
                f"{where}: the key {key!r} is given twice in one object; give each key once"
            )
        found[key] = value
    return found


def uniform(conventions: dict, option: str):
    """The value of ``option`` shared by every statistic that has it, else ``"per statistic"``."""
    values = {conventions[key][option] for key in STANDARD if option in conventions[key]}
    return values.pop() if len(values) == 1 else "per statistic"


def _note(key: str, options: dict) -> str:
    parts = []
    if "orientation" in options:
        which = (
            "Friedman (templates)"
            if options["orientation"] == "blocks=models"
            else "Friedman (models)"
        )
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
        rows.append(
            (
                key,
                label,
                sections,
                options["templates"],
                options["ties"],
                "" if correction is None else "on" if correction else "off",
                _note(key, options),
            )
        )
    rows += _FIXED
    columns = list(zip(*rows, strict=True))
    return xr.Dataset(
        {
            f"convention_{name}": ("convention", np.array(values, dtype=object))
            for name, values in zip(COLUMNS, columns[1:], strict=True)
        },
        coords={"convention": np.array(columns[0], dtype=object)},
    )
