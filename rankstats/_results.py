"""Frozen result objects returned for NumPy inputs (xarray inputs give a Dataset)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = [
    "CochranQResult",
    "DivergenceResult",
    "FriedmanResult",
    "KendallTauResult",
    "KendallWResult",
    "McNemarResult",
]


class _Result:
    """Shared behaviour: field access by name, a dict view, a compact repr."""

    def to_dict(self) -> dict[str, np.ndarray]:
        """Return the fields as a ``{name: value}`` dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={_short(value)}" for name, value in self.to_dict().items())
        return f"{type(self).__name__}({shown})"


def _short(value) -> str:
    array = np.asarray(value)
    if array.ndim == 0:
        return f"{float(array):.6g}"
    return f"<array shape={array.shape}>"


@dataclass(frozen=True, eq=False, repr=False)
class KendallWResult(_Result):
    """Kendall's W with its chi-square and F tests (see :func:`rankstats.kendall_w`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    chi2: np.ndarray
    dof: np.ndarray
    f: np.ndarray
    f_dof1: np.ndarray
    f_dof2: np.ndarray
    f_pvalue: np.ndarray
    f_kbs_dof1: np.ndarray
    f_kbs_dof2: np.ndarray
    f_kbs_pvalue: np.ndarray
    n_judges: np.ndarray
    n_objects: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class FriedmanResult(_Result):
    """Friedman's test, Kendall's W and the Iman–Davenport F (see :func:`rankstats.friedman`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    kendall_w: np.ndarray
    f: np.ndarray
    f_dof1: np.ndarray
    f_dof2: np.ndarray
    f_pvalue: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class KendallTauResult(_Result):
    """Kendall's tau and its p-value (see :func:`rankstats.kendall_tau`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    n_objects: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class McNemarResult(_Result):
    """McNemar's test on paired binary outcomes (see :func:`rankstats.mcnemar`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n_samples: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class CochranQResult(_Result):
    """Cochran's Q test (see :func:`rankstats.cochran_q`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DivergenceResult(_Result):
    """Divergence of the original template's score (see :func:`rankstats.divergence`)."""

    statistic: np.ndarray
    original: np.ndarray
    paraphrase_mean: np.ndarray
    paraphrase_std: np.ndarray
    n_original: np.ndarray
    n_paraphrases: np.ndarray
