"""What one lm-evaluation-harness results file holds, whichever layout it was read from.

Kept apart from the readers: the file finder (``_lm_eval_files``) and the
reader of printed tables (``_lm_eval_table``) both build it, and neither
imports the other's module for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

LAYOUT_03 = "an lm-evaluation-harness 0.3 results file"
LAYOUT_04 = "an lm-evaluation-harness 0.4 results file (results_<date>.json)"
LAYOUT_049 = "an lm-evaluation-harness 0.4.9+ results file (<output_path>_<date>.json)"
LAYOUT_JSON = "an lm-evaluation-harness 0.4 results file"


@dataclass
class Results:
    """One results file: the run's model, date, reported aggregates and task settings."""

    path: Path
    file: str
    date: str | None
    model: str | None
    results: dict = field(repr=False)
    groups: set = field(repr=False)
    higher_is_better: dict = field(repr=False)
    configs: dict = field(repr=False)
    layout: str = LAYOUT_JSON
    columns: dict = field(default_factory=dict, repr=False)
