"""What an import read, kept and skipped, kept with the cube and printed by the command."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ImportSummary:
    """Counts of what an importer read, kept and skipped, with the reason for each skip.

    Every row (record, entry, cell of a wide table) an importer reads is
    either kept, as one score of the cube, or skipped for a reason: the rows
    read are the rows kept plus the rows skipped, and the summary prints all
    three. The text goes into the cube's ``import_summary`` attribute (which
    ``rankstats import`` prints) and is appended to its ``source`` attribute,
    so a cube always says where it came from and what was left out.

    Parameters
    ----------
    importer : str
        The importer's registered name.
    files : list of str
        The files read, as the user named them.
    unit : str, default "row"
        What one count is (``"row"``; ``"cell"`` for the score cells of a
        wide table).
    standard_errors : str, optional
        For a cube of per-template scores: where its ``standard_error``
        variable came from (``"from acc_stderr,none"``), or ``"none
        written"``; printed as the line ``standard errors: ...``.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats_collectors.files._summary import ImportSummary
    >>> summary = ImportSummary("example", ["run.jsonl"])
    >>> summary.keep(3)
    >>> summary.skip("the score is the corpus-level pair [gold, pred]", 2)
    >>> cube = rankstats.from_records([
    ...     {"model": "m", "task": "t", "template": "a", "sample": s, "score": 1.0}
    ...     for s in range(3)])
    >>> cube = summary.apply(cube)
    >>> print(cube.attrs["import_summary"])
    example: read 5 rows from 1 file (run.jsonl): kept 3, skipped 2
      1 model, 1 task, 1 template (max per task), 3 samples (max per task)
      skipped 2 rows: 2 × the score is the corpus-level pair [gold, pred]
    """

    importer: str
    files: list[str]
    unit: str = "row"
    rows_kept: int = 0
    rows_folded: int = 0
    skipped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    standard_errors: str | None = None

    @property
    def rows_skipped(self) -> int:
        """The rows left out, all reasons together."""
        return sum(self.skipped.values())

    @property
    def rows_read(self) -> int:
        """The rows read: those kept and those skipped."""
        return self.rows_kept + self.rows_skipped

    def keep(self, count: int = 1) -> None:
        """Count ``count`` rows kept: each is one score of the cube."""
        self.rows_kept += count

    def fold(self, rows: int, scores: int, how: str) -> None:
        """Count ``rows`` kept rows combined into ``scores`` scores, and say ``how``.

        The rows are counted as kept (each went into a score); the cube holds
        the ``scores``.
        """
        if rows > scores:
            self.rows_kept += rows - scores
            self.rows_folded += rows - scores
            self.note(f"{rows} rows were {how} into {scores} scores")

    def skip(self, reason: str, count: int = 1) -> None:
        """Count ``count`` rows left out for ``reason`` (a short sentence, no final stop)."""
        if count:
            self.skipped[reason] += count

    def note(self, text: str) -> None:
        """Say something the import decided that changes the meaning (a kind it inferred)."""
        if text not in self.notes:
            self.notes.append(text)

    def text(self, cube) -> str:
        """The summary as lines of text, with the cube's sizes."""
        names = ", ".join(self.files[:3]) + (", ..." if len(self.files) > 3 else "")
        lines = [
            f"{self.importer}: read {_count(self.rows_read, self.unit)} from "
            f"{_count(len(self.files), 'file')} ({names}): kept {self.rows_kept}, "
            f"skipped {self.rows_skipped}"
        ]
        sizes = [
            _count(cube.sizes.get("model", 0), "model"),
            _count(cube.sizes.get("task", 0), "task"),
            _count(cube.sizes.get("template", 0), "template") + " (max per task)",
        ]
        if "sample" in cube.dims:
            sizes.append(_count(cube.sizes["sample"], "sample") + " (max per task)")
        lines.append("  " + ", ".join(sizes))
        if self.skipped:
            reasons = "; ".join(f"{n} × {reason}" for reason, n in self.skipped.most_common())
            lines.append(f"  skipped {_count(self.rows_skipped, self.unit)}: {reasons}")
        else:
            lines.append("  skipped nothing")
        if self.standard_errors is not None:
            lines.append(f"  standard errors: {self.standard_errors}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def apply(self, cube):
        """``cube`` with the summary in ``import_summary`` and appended to ``source``."""
        text = self.text(cube)
        source = cube.attrs.get("source", "")
        cube = cube.copy()
        cube.attrs["import_summary"] = text
        cube.attrs["source"] = f"{source}\n{text}" if source else text
        return cube


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
