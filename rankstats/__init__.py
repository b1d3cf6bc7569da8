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

from . import datasets, stability
from ._version import __version__
from .analyses.budget import estimate_avgp, estimate_maxp, simulate_avgp, simulate_maxp
from .analyses.compare import compare
from .analyses.edits import describe_edit, edit_pairs, edit_rules, largest_edits, minimal_edits
from .analyses.estimators import simulate_estimators
from .analyses.irt import estimate_distribution, planted_cube, random_design
from .analyses.report import report
from .analyses.sensitivity import posix, sensitive_samples
from .analyses.verbalizer import verbalizer_analysis
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
from .stability.claims import check_claims
from .stability.needed import samples_needed, smallest_k, templates_needed
from .stability.planning import plan
from .stability.variance import variance_components
from .statistics.binomial import binomial_test
from .statistics.clustered import clustered_difference, clustered_se
from .statistics.concordance import kendall_tau, kendall_tau_matrix, kendall_w, rank
from .statistics.incomplete import durbin, skillings_mack
from .statistics.metrics import avgp, cps, divergence, maxp, prompt_metrics, saturation
from .statistics.multitest import adjust_pvalues, pairwise_mcnemar
from .statistics.posthoc import bonferroni_dunn, critical_difference, nemenyi, nonsignificant_groups
from .statistics.sensitivity import prompt_sensitivity
from .statistics.significance import cochran_q, friedman, mcnemar
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
    "adjust_pvalues",
    "avgp",
    "binomial_test",
    "bonferroni_dunn",
    "check_claims",
    "clustered_difference",
    "clustered_se",
    "cochran_q",
    "compare",
    "cps",
    "critical_difference",
    "datasets",
    "describe_edit",
    "divergence",
    "durbin",
    "edit_pairs",
    "edit_rules",
    "estimate_avgp",
    "estimate_distribution",
    "estimate_maxp",
    "friedman",
    "from_records",
    "kendall_tau",
    "kendall_tau_matrix",
    "kendall_w",
    "largest_edits",
    "maxp",
    "mcnemar",
    "minimal_edits",
    "nemenyi",
    "nonsignificant_groups",
    "open_cube",
    "pairwise_mcnemar",
    "plan",
    "planted_cube",
    "posix",
    "prompt_metrics",
    "prompt_sensitivity",
    "random_design",
    "rank",
    "report",
    "samples_needed",
    "saturation",
    "save",
    "sensitive_samples",
    "simulate_avgp",
    "simulate_estimators",
    "simulate_maxp",
    "skillings_mack",
    "smallest_k",
    "stability",
    "template_scores",
    "templates_needed",
    "validate",
    "variance_components",
    "verbalizer_analysis",
]
