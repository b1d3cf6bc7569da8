"""The statistics: tests and coefficients of the score cube, NumPy kernels behind one wrapper.

Every public function here that takes data is defined through
:func:`rankstats._statistic.statistic`: it accepts a NumPy array (roles given
as axis numbers) or an xarray object (roles given as dimension names,
dask-chunked cubes included), checks its options before any work, returns an
:class:`xarray.Dataset` or a frozen result of :mod:`rankstats.results`, and is
also exported from :mod:`rankstats`. The exceptions return arrays by design:
:func:`rank` and :func:`adjust_pvalues` (shaped like their input), the
single metrics :func:`maxp`, :func:`avgp`, :func:`saturation`, :func:`cps`
(one value per model) and :func:`prompt_sensitivity` (one value per model and
task); :func:`critical_difference` and
:func:`nonsignificant_groups` read numbers or a result, not data.
"""

from .binomial import binomial_test
from .clustered import clustered_difference, clustered_se
from .concordance import kendall_tau, kendall_tau_matrix, kendall_w, rank
from .incomplete import durbin, skillings_mack
from .metrics import avgp, cps, divergence, maxp, prompt_metrics, saturation
from .multitest import adjust_pvalues, pairwise_mcnemar
from .posthoc import bonferroni_dunn, critical_difference, nemenyi, nonsignificant_groups
from .sensitivity import prompt_sensitivity
from .significance import cochran_q, friedman, mcnemar

__all__ = [
    "adjust_pvalues",
    "avgp",
    "binomial_test",
    "bonferroni_dunn",
    "clustered_difference",
    "clustered_se",
    "cochran_q",
    "cps",
    "critical_difference",
    "divergence",
    "durbin",
    "friedman",
    "kendall_tau",
    "kendall_tau_matrix",
    "kendall_w",
    "maxp",
    "mcnemar",
    "nemenyi",
    "nonsignificant_groups",
    "pairwise_mcnemar",
    "prompt_metrics",
    "prompt_sensitivity",
    "rank",
    "saturation",
    "skillings_mack",
]
