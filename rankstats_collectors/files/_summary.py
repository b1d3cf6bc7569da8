"""What an import read and what it skipped, kept with the cube and printed by the command."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ImportSummary:
    """Counts of what an importer read, and of the rows it skipped, with the reason for each.

    The text goes into the cube's ``import_summary`` attribute (which
    ``rankstats import`` prints) and is appended to its ``source`` attribute,
    so a cube always says where it came from and what was left out.

    Parameters
    ----------
    importer : str
        The importer's registered name.
    files : list of str
        The files read, as the user named them.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats_collectors.files._summary import ImportSummary
    >>> summary = ImportSummary("example", ["run.jsonl"])
    >>> summary.read(3)
    >>> summary.skip("the score is the corpus-level pair [gold, pred]", 2)
    >>> cube = rankstats.from_records([
    ...     {"model": "m", "task": "t", "template": "a", "sample": s, "score": 1.0}
    ...     for s in range(3)])
    >>> cube = summary.apply(cube)
    >>> print(cube.attrs["import_summary"])
    example: read 3 rows from 1 file (run.jsonl)
      1 model, 1 task, 1 template (max per task), 3 samples (max per task)
      skipped 2 rows: 2 × the score is the corpus-level pair [gold, pred]
    """

    importer: str
    files: list[str]
    rows_read: int = 0
    skipped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def read(self, count: int = 1) -> None:
        """Count ``count`` rows read into the cube."""
        self.rows_read += count

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
        plural = "" if len(self.files) == 1 else "s"
        lines = [f"{self.importer}: read {self.rows_read} rows from {len(self.files)} "
                 f"file{plural} ({names})"]
        sizes = [_count(cube.sizes.get("model", 0), "model"),
                 _count(cube.sizes.get("task", 0), "task"),
                 _count(cube.sizes.get("template", 0), "template") + " (max per task)"]
        if "sample" in cube.dims:
            sizes.append(_count(cube.sizes["sample"], "sample") + " (max per task)")
        lines.append("  " + ", ".join(sizes))
        if self.skipped:
            total = sum(self.skipped.values())
            reasons = "; ".join(f"{n} × {reason}" for reason, n in self.skipped.most_common())
            lines.append(f"  skipped {total} rows: {reasons}")
        else:
            lines.append("  skipped nothing")
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
