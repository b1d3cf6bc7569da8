"""Write honestboard's answers on fixed data to ``oracle.json`` (run with honestboard's Python).

Run in a throwaway environment that has honestboard, never in rankstats' own:

    python -m venv /tmp/hb && /tmp/hb/bin/pip install honestboard==0.6.1
    /tmp/hb/bin/python tests/data/honestboard/make_oracle.py

The data are drawn here from a fixed seed and written into the file beside
the answers, so the test reads the very outcomes honestboard saw.
"""

from __future__ import annotations

import json
from pathlib import Path

import honestboard
import numpy as np
from honestboard import Board

SEED = 20260101
N_TASKS = 400
#: (name, date, true accuracy): a dated history with two submissions on one date
SYSTEMS = [
    ("base", "20250105", 0.35),
    ("tweak", "20250212", 0.45),
    ("bigger", "20250301", 0.60),
    ("bigger-chat", "20250301", 0.57),
    ("noise", "20250420", 0.61),
    ("distilled", "20250511", 0.62),
    ("next", "20250702", 0.75),
    ("next-lite", "20250815", 0.70),
]


def main() -> None:
    rng = np.random.default_rng(SEED)
    difficulty = rng.normal(0, 1, N_TASKS)
    rows = []
    for _, _, accuracy in SYSTEMS:
        logit = np.log(accuracy / (1 - accuracy)) + difficulty
        rows.append((rng.random(N_TASKS) < 1 / (1 + np.exp(-logit))).astype(int))
    outcomes = np.array(rows)
    names = [name for name, _, _ in SYSTEMS]
    dates = [date for _, date, _ in SYSTEMS]
    board = Board(names, outcomes.astype(np.uint8), dates)

    audit = board.record_audit(alpha=0.05)
    order = np.argsort(-board.scores(), kind="stable")
    pairs = [(names[a], names[b]) for a, b in zip(order[1:], order[:-1], strict=True)]
    pairs += [(audit_step["previous"], audit_step["new"]) for audit_step in audit["steps"]]
    compared = [board.compare(a, b, B=10, seed=0) for a, b in pairs]
    oracle = {
        "honestboard_version": honestboard.__version__,
        "seed": SEED,
        "systems": names,
        "dates": dates,
        "outcomes": outcomes.tolist(),
        "record_audit": audit,
        "compare": [
            {
                key: c[key]
                for key in ("a", "b", "diff", "p_two_sided", "p_selective", "b_only", "a_only")
            }
            for c in compared
        ],
        "resolution_top2": board.resolution(top=2),
        "resolution_top10": board.resolution(top=10),
        "confidence_set_best": board.confidence_set_best(alpha=0.05, B=4000, seed=0),
        "rank_summary": board.rank_summary(B=4000, seed=0),
    }
    path = Path(__file__).with_name("oracle.json")
    path.write_text(json.dumps(oracle, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
