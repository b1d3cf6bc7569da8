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
    ``mismatch``), ``explained_by`` (for a mismatch: the other conventions
    under which it matches and what else the data show about it, or
    ``unexplained``; for a match: how a row that defines its own population
    was computed, if it was), and ``standard`` (the value under rankstats'
    default, tie-corrected statistics). ``source`` is ``paper`` for cells
    printed in the paper and ``release`` for values of the release's own
    files, ``stated`` for printed cells the release only states; ``tried`` is
    the number of conventions searched.
    """

    table: str
    title: str
    convention: dict
    standard_convention: dict
    cells: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    source: str = "paper"
    tried: int = 1

    @property
    def matched(self) -> int:
        return int((self.cells["verdict"] == "match").sum())

    @property
    def total(self) -> int:
        return len(self.cells)


def _label(convention: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in convention.items())


def search(
    table: str,
    title: str,
    published: pd.Series,
    candidates: dict,
    standard: dict,
    notes=(),
    *,
    how=None,
    why=None,
    source: str = "paper",
    tried: int | None = None,
) -> Comparison:
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
    how : dict, optional
        ``{cell: text}``: how a reproduced cell was computed where the row
        defines its own population or template (shown for matches).
    why : dict, optional
        ``{cell: text}``: what the data show about a cell that does not
        match (shown for mismatches, after the conventions that explain it).
    source : {"paper", "stated", "release"}
        ``paper``: printed in the paper and recomputed; ``stated``: printed
        in the paper and compared with values the release states without
        the data to recompute them; ``release``: values of the release's
        own files, recomputed.
    tried : int, optional
        Conventions searched, when more than ``len(candidates)`` (row-level
        searches add their own).

    Returns
    -------
    Comparison
        Ties between conventions go to the one listed first, so list the
        standard convention first: it is then kept unless another does better.
    """
    agreement = {
        key: np.array(
            [agrees(p, v) for p, v in zip(published, values.reindex(published.index), strict=True)]
        )
        for key, values in candidates.items()
    }
    best = max(agreement, key=lambda key: agreement[key].sum())
    standard_key = tuple(standard.items())
    reproduced = candidates[best].reindex(published.index)
    verdict = np.where(agreement[best], "match", "mismatch")
    how, why = how or {}, why or {}
    explained = []
    for position, (cell, ok) in enumerate(zip(published.index, agreement[best], strict=True)):
        if ok:
            explained.append(how.get(cell, ""))
            continue
        others = [
            _label(dict(key)) for key, hits in agreement.items() if key != best and hits[position]
        ]
        reasons = []
        if others:
            reasons.append(
                "matches under "
                + "; ".join(others[:3])
                + (f" (+{len(others) - 3} more)" if len(others) > 3 else "")
            )
        if cell in why:
            reasons.append(why[cell])
        if not reasons:
            hint = _dropped_digit(published.iloc[position], reproduced.iloc[position])
            reasons.append("unexplained" + (f" ({hint})" if hint else ""))
        if cell in how:
            reasons.append(how[cell])
        explained.append(". ".join(reasons))
    cells = pd.DataFrame(
        {
            "printed": published.values,
            "reproduced": reproduced.values,
            "verdict": verdict,
            "explained_by": explained,
            "standard": candidates[standard_key].reindex(published.index).values,
        },
        index=published.index,
    )
    return Comparison(
        table,
        title,
        dict(best),
        dict(standard),
        cells,
        list(notes),
        source,
        max(tried or 0, len(candidates)),
    )


def _dropped_digit(printed: str, value) -> str:
    """A hint when ``printed`` is ``value`` with one of a doubled digit left out.

    ".522" for 0.5522: the commonest slip of copying a number. Only a hint: the
    cell stays unexplained.
    """
    text = printed.strip()
    if (
        value is None
        or not isinstance(value, float)
        or math.isnan(value)
        or "." not in text
        or not re.fullmatch(r"-?\d*\.\d+", text)
    ):
        return ""
    decimals = len(text.split(".")[1])
    full = f"{value:.{decimals + 1}f}"
    full = full[1:] if full.startswith("0.") and text.startswith(".") else full
    for position in range(len(full)):
        doubled = full[position] in (
            full[position - 1 : position] + full[position + 1 : position + 2]
        )
        if full[position].isdigit() and doubled and full[:position] + full[position + 1 :] == text:
            return f"possibly a dropped digit: the data give {full}"
    return ""


def _cell_table(cells: pd.DataFrame) -> str:
    frame = cells.reset_index()
    header = [
        "row",
        "column",
        "published",
        "reproduced",
        "verdict",
        "standard",
        "explained by / how",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        label = row.row if not isinstance(row.row, tuple) else " / ".join(map(str, row.row))
        lines.append(
            "| "
            + " | ".join(
                text.replace("|", "\\|")
                for text in [
                    str(label),
                    str(row.column),
                    str(row.printed),
                    _number(row.reproduced),
                    row.verdict,
                    _number(row.standard),
                    row.explained_by or "",
                ]
            )
            + " |"
        )
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
        frame["row"] = [
            " / ".join(map(str, r)) if isinstance(r, tuple) else str(r) for r in frame["row"]
        ]
        frame.insert(0, "table", comparison.table)
        frame.insert(1, "source", comparison.source)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def standard_matches(comparison: Comparison) -> int:
    """How many cells rankstats' standard statistics reproduce."""
    return sum(
        agrees(p, v)
        for p, v in zip(comparison.cells["printed"], comparison.cells["standard"], strict=True)
    )


def render(
    comparisons: list[Comparison],
    *,
    all_cells: bool = False,
    limit: int = 40,
    legend: str = "",
    extra=(),
) -> str:
    """The comparisons as markdown: per table, the convention, the verdicts, a summary.

    Tables of up to ``limit`` cells are shown whole; larger ones show their
    mismatches only, unless ``all_cells``.
    """
    parts = []
    for comparison in comparisons:
        parts.append(f"## {comparison.title}")
        convention = _label(comparison.convention)
        standard = _label(comparison.standard_convention)
        parts.append(
            f"{comparison.matched} of {comparison.total} cells reproduced under: {convention} "
            f"(the best of {comparison.tried} conventions tried)."
            + (
                ""
                if comparison.convention == comparison.standard_convention
                else f" rankstats' standard statistics ({standard}) reproduce "
                f"{standard_matches(comparison)}."
            )
        )
        parts += comparison.notes
        cells = comparison.cells
        noted = (cells["verdict"] != "match") | (cells["explained_by"] != "")
        shown = cells if all_cells or len(cells) <= limit else cells[noted]
        if len(shown) < len(cells):
            parts.append(f"Mismatches only ({len(shown)}); pass --all to see every cell.")
        if len(shown):
            parts.append(_cell_table(shown))
    summary = [*headline(comparisons), ""]
    for source, label in (
        ("paper", "printed in the paper"),
        ("stated", "printed in the paper, stated in the release"),
        ("release", "of the release's files"),
    ):
        mine = [c for c in comparisons if c.source == source]
        if not mine:
            continue
        summary += [
            f"Cells {label}:",
            "",
            "| table | cells | reproduced | under the paper's convention "
            "| under rankstats' standard | conventions tried | unexplained |",
            "|---|---|---|---|---|---|---|",
        ]
        summary += [
            f"| {c.title} | {c.total} | {c.matched} | {_label(c.convention)} "
            f"| {standard_matches(c)} | {c.tried} | {unexplained(c)} |"
            for c in mine
        ]
        summary.append("")
    if legend:
        summary += [legend]
    if extra:
        parts += list(extra)
    return "\n".join(summary) + "\n\n" + "\n\n".join(parts) + "\n"


def unexplained(comparison: Comparison) -> int:
    """Mismatching cells that no convention or other finding explains."""
    cells = comparison.cells
    return int(
        ((cells["verdict"] != "match") & cells["explained_by"].str.startswith("unexplained")).sum()
    )


def headline(comparisons: list[Comparison]) -> list[str]:
    """The counts, the paper's first.

    Cells printed in the paper and recomputed from the release's data;
    printed cells the release only states (nothing to recompute them from);
    then values of the release's own files, recomputed from the same release.
    """
    lines = []
    groups = {
        source: [c for c in comparisons if c.source == source]
        for source in ("paper", "stated", "release")
    }
    if groups["paper"]:
        paper = groups["paper"]
        total = sum(c.total for c in paper)
        matched = sum(c.matched for c in paper)
        left = sum(unexplained(c) for c in paper)
        share = f" ({100 * matched / total:.0f}%)" if total else ""
        lines.append(
            f"# Reproduction: {matched} of {total} cells printed in the paper "
            f"reproduced from the release's data{share}; of the other "
            f"{total - matched}, {total - matched - left} explained, {left} "
            f"unexplained"
        )
    if groups["stated"]:
        total = sum(c.total for c in groups["stated"])
        matched = sum(c.matched for c in groups["stated"])
        lines.append(
            f"Printed in the paper and only stated in the release (nothing to "
            f"recompute them from): {matched} of {total} equal."
        )
    if groups["release"]:
        total = sum(c.total for c in groups["release"])
        matched = sum(c.matched for c in groups["release"])
        lines.append(
            f"Release files (values the release states beside its accuracies, "
            f"recomputed from the same release): {matched} of {total} reproduced."
        )
    if lines and not lines[0].startswith("#"):
        lines[0] = "# " + lines[0]
    return lines
