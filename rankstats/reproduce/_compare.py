"""Compare recomputed values with published ones, at the precision they were printed."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

_SCIENTIFIC = re.compile(r"^\s*([-+]?\d*\.?\d+)[eE]([-+]?\d+)\s*$")
BELOW_PRINTABLE = 1e-50  # the paper prints "0.0*" for p-values below 1E-50


def agrees(printed: str, value: float) -> bool:
    """Whether ``value`` rounds to the ``printed`` string.

    Decimal strings are compared at their number of decimals (".271" covers
    [0.2705, 0.2715]); scientific ones at their number of significant digits
    ("4.9E-7" covers [4.85e-7, 4.95e-7]); "0.0*" means below 1E-50.

    Examples
    --------
    >>> agrees(".271", 0.27128), agrees(".271", 0.2716)
    (True, False)
    >>> agrees("4.9E-7", 4.947e-7), agrees("1.0E-4", 1.456e-4)
    (True, False)
    >>> agrees("0.0*", 3e-60)
    True
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    text = printed.strip().rstrip("%")
    if text.endswith("*"):
        return abs(value) < BELOW_PRINTABLE
    match = _SCIENTIFIC.match(text)
    if match:
        mantissa, exponent = match.groups()
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        half_unit = 0.5 * 10.0 ** (int(exponent) - decimals)
        return abs(value - float(text)) <= half_unit * (1 + 1e-9)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value - float(text)) <= 0.5 * 10.0 ** (-decimals) * (1 + 1e-9) + 1e-12


@dataclass
class Comparison:
    """One published table set beside its recomputation.

    ``cells`` has one row per published cell: ``printed``, ``reproduced``
    (under the convention that matches most cells), ``verdict`` (``match`` or
    ``mismatch``), ``explained_by`` (other conventions under which a
    mismatching cell matches, if any) and ``standard`` (the value under
    rankstats' default, tie-corrected statistics).
    """

    table: str
    title: str
    convention: dict
    standard_convention: dict
    cells: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return int((self.cells["verdict"] == "match").sum())

    @property
    def total(self) -> int:
        return len(self.cells)


def _label(convention: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in convention.items())


def search(table: str, title: str, published: pd.Series, candidates: dict,
           standard: dict, notes=()) -> Comparison:
    """Find the convention under which the most published cells are reproduced.

    Parameters
    ----------
    published : pandas.Series
        Printed strings, indexed by cell (any index).
    candidates : dict
        ``{convention (a tuple of (key, value) pairs): pandas.Series of
        recomputed values on the same index}``.
    standard : dict
        The convention of rankstats' default statistics; must be a candidate.

    Returns
    -------
    Comparison
        Ties between conventions go to the one listed first, so list the
        standard convention first: it is then kept unless another does better.
    """
    agreement = {
        key: np.array([agrees(p, v) for p, v in zip(published, values.reindex(published.index),
                                                      strict=True)])
        for key, values in candidates.items()
    }
    best = max(agreement, key=lambda key: agreement[key].sum())
    standard_key = tuple(standard.items())
    reproduced = candidates[best].reindex(published.index)
    verdict = np.where(agreement[best], "match", "mismatch")
    explained = []
    for position, ok in enumerate(agreement[best]):
        if ok:
            explained.append("")
            continue
        others = [_label(dict(key)) for key, hits in agreement.items()
                  if key != best and hits[position]]
        explained.append("; ".join(others[:3]) + (f" (+{len(others) - 3} more)"
                                                   if len(others) > 3 else ""))
    cells = pd.DataFrame({
        "printed": published.values,
        "reproduced": reproduced.values,
        "verdict": verdict,
        "explained_by": explained,
        "standard": candidates[standard_key].reindex(published.index).values,
    }, index=published.index)
    return Comparison(table, title, dict(best), dict(standard), cells, list(notes))


def _cell_table(cells: pd.DataFrame) -> str:
    frame = cells.reset_index()
    header = ["row", "column", "published", "reproduced", "verdict", "standard", "explained by"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        label = row.row if not isinstance(row.row, tuple) else " / ".join(map(str, row.row))
        lines.append("| " + " | ".join([
            str(label), str(row.column), str(row.printed), _number(row.reproduced),
            row.verdict, _number(row.standard), row.explained_by or "",
        ]) + " |")
    return "\n".join(lines)


def _number(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if value != 0 and abs(value) < 1e-3:
        return f"{value:.2e}"
    return f"{value:.4f}"


def cells_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """Every compared cell of every table, one row each, with the table's name."""
    frames = []
    for comparison in comparisons:
        frame = comparison.cells.reset_index()
        frame["row"] = [" / ".join(map(str, r)) if isinstance(r, tuple) else str(r)
                        for r in frame["row"]]
        frame.insert(0, "table", comparison.table)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def standard_matches(comparison: Comparison) -> int:
    """How many cells rankstats' standard statistics reproduce."""
    return sum(agrees(p, v) for p, v in zip(comparison.cells["printed"],
                                           comparison.cells["standard"], strict=True))


def render(comparisons: list[Comparison], *, all_cells: bool = False, limit: int = 40,
           legend: str = "") -> str:
    """The comparisons as markdown: per table, the convention, the verdicts, a summary.

    Tables of up to ``limit`` cells are shown whole; larger ones show their
    mismatches only, unless ``all_cells``.
    """
    parts = []
    total = matched = 0
    for comparison in comparisons:
        total += comparison.total
        matched += comparison.matched
        parts.append(f"## {comparison.title}")
        convention = _label(comparison.convention)
        standard = _label(comparison.standard_convention)
        parts.append(
            f"{comparison.matched} of {comparison.total} cells reproduced under: {convention}."
            + ("" if comparison.convention == comparison.standard_convention else
               f" rankstats' standard statistics ({standard}) reproduce "
               f"{standard_matches(comparison)}."))
        parts += comparison.notes
        cells = comparison.cells
        shown = cells if all_cells or len(cells) <= limit else cells[cells["verdict"] != "match"]
        if len(shown) < len(cells):
            parts.append(f"Mismatches only ({len(shown)}); pass --all to see every cell.")
        if len(shown):
            parts.append(_cell_table(shown))
    summary = [f"# Reproduction: {matched} of {total} published cells reproduced", "",
               "| table | reproduced | convention |", "|---|---|---|"]
    summary += [f"| {c.title} | {c.matched}/{c.total} | {_label(c.convention)} |"
                for c in comparisons]
    if legend:
        summary += ["", legend]
    return "\n".join(summary) + "\n\n" + "\n\n".join(parts) + "\n"
