"""rankstats: rigorous multi-prompt evaluation of language models.

One object sits at the centre, the score cube: an :class:`xarray.Dataset` of
model × task × template × sample scores. Statistics read it; collectors write it.

Examples
--------
>>> import rankstats
>>> cube = rankstats.from_records([
...     {"model": m, "task": "t", "template": p, "score": s}
...     for m, scores in {"a": [0.9, 0.8, 0.7], "b": [0.5, 0.6, 0.4],
...                       "c": [0.1, 0.3, 0.2]}.items()
...     for p, s in zip(["p1", "p2", "p3"], scores)
... ])
>>> float(rankstats.kendall_w(cube).statistic.sel(task="t"))
1.0
"""

from . import datasets
from ._version import __version__
from .concordance import kendall_tau, kendall_tau_matrix, kendall_w, rank
from .cube import from_records, template_scores
from .errors import (
    CoordinateMismatchError,
    CubeError,
    DimensionError,
    DuplicateKeyError,
    MissingValueError,
    RankstatsError,
    RankstatsWarning,
    ScoreValueError,
)
from .io import open_cube, save
from .metrics import avgp, cps, divergence, maxp, prompt_metrics, saturation
from .report import report
from .significance import cochran_q, friedman, mcnemar
from .validation import validate

__all__ = [
    "CoordinateMismatchError",
    "CubeError",
    "DimensionError",
    "DuplicateKeyError",
    "MissingValueError",
    "RankstatsError",
    "RankstatsWarning",
    "ScoreValueError",
    "__version__",
    "avgp",
    "cochran_q",
    "cps",
    "datasets",
    "divergence",
    "friedman",
    "from_records",
    "kendall_tau",
    "kendall_tau_matrix",
    "kendall_w",
    "maxp",
    "mcnemar",
    "open_cube",
    "prompt_metrics",
    "rank",
    "report",
    "saturation",
    "save",
    "template_scores",
    "validate",
]
