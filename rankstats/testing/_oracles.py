"""Compute the reference vectors from their oracles; ``python -m rankstats.testing._oracles``.

The oracles are the libraries rankstats' own tests compare with (SciPy,
statsmodels, pingouin, scikit-posthocs) and values worked by hand or printed
in a paper. They are installed by the ``test`` extra, not by rankstats: this
module imports them only when it runs. Running it writes
``reference_vectors.json`` beside it; the tests rebuild the vectors and
compare them with that file, so the shipped values cannot drift from their
oracles.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

PATH = Path(__file__).with_name("reference_vectors.json")
ORACLES = ("numpy", "scipy", "statsmodels", "pingouin", "scikit-posthocs")
TIES = ("average", "min", "max", "dense", "ordinal")

#: How each statistic is called: ``function(*args, **options)``.
STATISTICS = {
    "rank": "rank(x): ranks along the last axis, 1 = best (the highest score unless "
    "higher_is_better=False), NaN where x is NaN; options ties, higher_is_better",
    "kendall_w": "kendall_w(x): x is judges (rows) x objects (columns); Kendall's W with "
    "average ranks and the tie correction; options ties, tie_correction, "
    "nan_policy",
    "kendall_tau": "kendall_tau(x, y): two rankings of the same objects; tau-b; options "
    "variant, method",
    "friedman": "friedman(x): x is blocks (rows) x treatments (columns); the tie-corrected "
    "chi-square statistic; option tie_correction",
    "mcnemar": "mcnemar(x, y): paired 0/1 outcomes; b counts (x=1, y=0), c (x=0, y=1); the "
    "exact test by default; option method (exact, midp, chi2, chi2_cc)",
    "cochran_q": "cochran_q(x): x is blocks (rows) x treatments (columns) of 0/1 outcomes",
    "nemenyi": "nemenyi(x): x is blocks (rows) x treatments (columns); pvalue is the "
    "treatments x treatments matrix of Nemenyi p-values (1 on the diagonal)",
    "durbin": "durbin(x): x is blocks (rows) x treatments (columns), NaN where a block "
    "lacks a treatment; option higher_is_better",
    "adjust_pvalues": "adjust_pvalues(p): a family of p-values adjusted for multiple "
    "testing; option p_adjust (holm, bonferroni, bh, by)",
    "critical_difference": "critical_difference(n_treatments, n_blocks): the Nemenyi "
    "critical difference of average ranks at alpha 0.05; option test",
    "maxp": "maxp(x): x is models (rows) x templates (columns); the best template's score",
    "avgp": "avgp(x): x is models (rows) x templates (columns); the mean over templates",
    "saturation": "saturation(x): 1 - (MaxP - AvgP), per model (row)",
    "cps": "cps(x): saturation x MaxP, per model (row)",
    "divergence": "divergence(x, original=mask): per model (row), (mean of the original "
    "templates - mean of the others) / their standard deviation (ddof 1)",
}


def versions() -> dict:
    """The version of each oracle library installed."""
    return {name: importlib.metadata.version(name) for name in ORACLES}


def _plain(value):
    """JSON-ready: arrays to nested lists, NaN to None, NumPy scalars to Python ones."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    array = np.asarray(value)
    if array.dtype.kind == "b":
        return array.tolist()
    if array.dtype.kind in "iu":
        return array.tolist()
    if array.dtype.kind == "f":
        listed = array.tolist()
        return _nan_to_none(listed)
    return value


def _nan_to_none(value):
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


class _Vectors:
    def __init__(self):
        self.items = []
        self.versions = versions()

    def add(
        self,
        statistic,
        name,
        args,
        expected,
        *,
        primary="statistic",
        options=None,
        source,
        oracle,
        rtol=1e-10,
        atol=0.0,
    ):
        label = oracle if oracle in ("by hand", "printed") else f"{oracle} {self.versions[oracle]}"
        self.items.append(
            {
                "id": f"{statistic}/{name}",
                "statistic": statistic,
                "args": [_plain(a) for a in args],
                "options": _plain(options or {}),
                "expected": {
                    k: _plain(float(v) if np.ndim(v) == 0 else v) for k, v in expected.items()
                },
                "primary": primary,
                "source": source,
                "oracle": label,
                "rtol": rtol,
                "atol": atol,
            }
        )


def _rng_ints(seed, high, size, scale=1.0):
    return np.random.default_rng(seed).integers(0, high, size=size) / scale


def _rng_normal(seed, size, shift=None):
    x = np.random.default_rng(seed).normal(size=size)
    if shift is not None:
        x = x + shift
    return np.round(x, 3)


def _ranks(v: _Vectors):
    from scipy import stats

    data = {
        "ties": _rng_ints(1, 4, 12),
        "untied": _rng_normal(2, 10),
        "nan": np.where(np.isin(np.arange(12), [1, 6, 7]), np.nan, _rng_ints(3, 5, 12)),
    }
    for kind, x in data.items():
        for ties in TIES:
            options = {} if ties == "average" else {"ties": ties}
            v.add(
                "rank",
                f"{kind}-{ties}",
                [x],
                {"ranks": stats.rankdata(-x, method=ties, nan_policy="omit")},
                primary="ranks",
                options=options,
                oracle="scipy",
                source=f"scipy.stats.rankdata(-x, method={ties!r}, nan_policy='omit')",
            )
    x = data["ties"]
    v.add(
        "rank",
        "lower-is-better",
        [x],
        {"ranks": stats.rankdata(x)},
        primary="ranks",
        options={"higher_is_better": False},
        oracle="scipy",
        source="scipy.stats.rankdata(x, method='average'): the lowest score ranks first",
    )


def _pingouin_friedman(x, method="chisq"):
    import pandas as pd
    import pingouin

    rows, cols = np.nonzero(~np.isnan(x))
    frame = pd.DataFrame({"subject": rows, "within": cols, "dv": x[rows, cols]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pingouin.friedman(
            data=frame, dv="dv", within="within", subject="subject", method=method
        )
    return out.loc["Friedman"]


# Three judges rank four objects; worked by hand in tests/test_oracle_pingouin.py.
HAND_W = np.array([[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 3.0, 1.0], [3.0, 4.0, 2.0, 2.0]])


def _kendall_w(v: _Vectors):
    from scipy import stats

    data = {
        "untied-5x7": _rng_normal(11, (5, 7), np.arange(7) * 0.4),
        "ties-8x5": _rng_ints(12, 3, (8, 5)),
        "proportions-6x8": _rng_ints(13, 20, (6, 8), 20.0),
        "two-objects-9x2": _rng_ints(14, 3, (9, 2)),
        "binary-7x4": _rng_ints(15, 2, (7, 4)),
    }
    source = (
        "pingouin.friedman(long, dv, within=object, subject=judge): W, Q, ddof1, p_unc; "
        "method='f': F, ddof1, ddof2, p_unc"
    )
    for name, x in data.items():
        chisq, f = _pingouin_friedman(x), _pingouin_friedman(x, "f")
        v.add(
            "kendall_w",
            name,
            [x],
            {
                "statistic": chisq["W"],
                "chi2": chisq["Q"],
                "dof": chisq["ddof1"],
                "pvalue": chisq["p_unc"],
                "f": f["F"],
                "f_kbs_dof1": f["ddof1"],
                "f_kbs_dof2": f["ddof2"],
                "f_kbs_pvalue": f["p_unc"],
            },
            source=source,
            oracle="pingouin",
        )
    x = data["proportions-6x8"].copy()
    x[[1, 4], [0, 3]] = np.nan
    chisq = _pingouin_friedman(x)
    v.add(
        "kendall_w",
        "omit-listwise",
        [x],
        {"statistic": chisq["W"], "pvalue": chisq["p_unc"], "n_judges": 4},
        options={"nan_policy": "omit"},
        oracle="pingouin",
        source="pingouin.friedman drops every judge with a missing score (listwise)",
    )
    w = Fraction(23, 28)
    v.add(
        "kendall_w",
        "hand-ties",
        [HAND_W],
        {
            "statistic": w,
            "chi2": Fraction(207, 28),
            "dof": 3,
            "pvalue": stats.chi2.sf(207 / 28, 3),
            "f": Fraction(46, 5),
            "f_dof1": 3,
            "f_dof2": 6,
            "f_pvalue": stats.f.sf(46 / 5, 3, 6),
            "f_kbs_dof1": Fraction(7, 3),
            "f_kbs_dof2": Fraction(14, 3),
            "f_kbs_pvalue": stats.f.sf(46 / 5, 7 / 3, 14 / 3),
        },
        oracle="by hand",
        source="worked by hand: rank sums 4, 5.5, 9, 11.5, S = 34.5, two ties of two, "
        "W = 414 / (9 * 60 - 3 * 12) = 23/28; p-values from scipy.stats.chi2 and f",
    )
    v.add(
        "kendall_w",
        "hand-uncorrected",
        [HAND_W],
        {"statistic": Fraction(23, 30)},
        options={"tie_correction": False},
        oracle="by hand",
        source="worked by hand: W = 414 / 540 = 23/30 without the tie correction",
    )
    v.add(
        "kendall_w",
        "hand-min-uncorrected",
        [HAND_W],
        {"statistic": Fraction(2, 3)},
        options={"ties": "min", "tie_correction": False},
        oracle="by hand",
        source="worked by hand: min ranks, rank sums 4, 5, 8, 11, W = 12 * 30 / 540 = 2/3, "
        "the form of Mizrahi et al. (2024), Table 3",
    )


def _kendall_tau(v: _Vectors):
    from scipy import stats

    rng = np.random.default_rng(21)
    untied = np.round(rng.normal(size=12), 3)
    pairs = {
        "untied-12": (untied, np.round(untied + rng.normal(scale=1.5, size=12), 3)),
        "ties-20": (_rng_ints(22, 4, 20), _rng_ints(22, 4, 20) + _rng_ints(23, 3, 20)),
        "ties-in-y-25": (_rng_normal(24, 25), np.round(_rng_normal(24, 25) + _rng_normal(25, 25))),
    }
    for name, (x, y) in pairs.items():
        for variant in ("b", "c"):
            result = stats.kendalltau(x, y, variant=variant)
            v.add(
                "kendall_tau",
                f"{name}-{variant}",
                [x, y],
                {"statistic": result.statistic, "pvalue": result.pvalue},
                options={} if variant == "b" else {"variant": variant},
                oracle="scipy",
                source=f"scipy.stats.kendalltau(x, y, variant={variant!r})",
            )
    x, y = pairs["untied-12"]
    result = stats.kendalltau(x[:9], y[:9], method="exact")
    v.add(
        "kendall_tau",
        "exact-9",
        [x[:9], y[:9]],
        {"statistic": result.statistic, "pvalue": result.pvalue},
        options={"method": "exact"},
        oracle="scipy",
        source="scipy.stats.kendalltau(x, y, method='exact')",
    )


def _friedman(v: _Vectors):
    from scipy import stats

    data = {
        "untied-10x4": _rng_normal(31, (10, 4), np.arange(4) * 0.3),
        "ties-8x5": _rng_ints(32, 3, (8, 5)),
        "proportions-6x12": _rng_ints(33, 20, (6, 12), 20.0),
    }
    for name, x in data.items():
        result = stats.friedmanchisquare(*x.T)
        v.add(
            "friedman",
            name,
            [x],
            {"statistic": result.statistic, "pvalue": result.pvalue},
            oracle="scipy",
            source="scipy.stats.friedmanchisquare(*x.T), one argument per treatment (column)",
        )
    x = data["ties-8x5"]
    b, k = x.shape
    ties = sum((c**3 - c).sum() for c in (np.unique(row, return_counts=True)[1] for row in x))
    factor = 1 - ties / (b * (k**3 - k))
    v.add(
        "friedman",
        "ties-8x5-uncorrected",
        [x],
        {"statistic": stats.friedmanchisquare(*x.T).statistic * factor},
        options={"tie_correction": False},
        oracle="scipy",
        source="scipy.stats.friedmanchisquare(*x.T).statistic times its tie correction "
        "1 - sum(t^3 - t) / (b (k^3 - k))",
    )


def _paired(n, p_x, p_y, seed):
    rng = np.random.default_rng(seed)
    x = (rng.random(n) < p_x).astype(float)
    y = np.where(rng.random(n) < 0.4, (rng.random(n) < p_y).astype(float), x)
    return x, y


def _mcnemar(v: _Vectors):
    from scipy import stats
    from statsmodels.stats.contingency_tables import mcnemar

    def table(x, y):
        return np.array(
            [
                [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
                [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
            ]
        )

    for name, (n, p_x, p_y, seed) in {"n30": (30, 0.8, 0.3, 2), "n100": (100, 0.5, 0.5, 3)}.items():
        x, y = _paired(n, p_x, p_y, seed)
        for method, exact, correction in (
            ("exact", True, True),
            ("chi2", False, False),
            ("chi2_cc", False, True),
        ):
            result = mcnemar(table(x, y), exact=exact, correction=correction)
            v.add(
                "mcnemar",
                f"{name}-{method}",
                [x, y],
                {"statistic": result.statistic, "pvalue": result.pvalue},
                options={} if method == "exact" else {"method": method},
                oracle="statsmodels",
                source="statsmodels.stats.contingency_tables.mcnemar(table, "
                f"exact={exact}, correction={correction})",
            )
        b, c = int(table(x, y)[0, 1]), int(table(x, y)[1, 0])
        k = min(b, c)
        midp = (
            1 - 0.5 * stats.binom.pmf(k, b + c, 0.5)
            if b == c
            else 2 * stats.binom.cdf(k, b + c, 0.5) - stats.binom.pmf(k, b + c, 0.5)
        )
        v.add(
            "mcnemar",
            f"{name}-midp",
            [x, y],
            {"statistic": k, "pvalue": midp},
            options={"method": "midp"},
            oracle="scipy",
            source="mid-p of Fagerland et al. (2013): 2 * scipy.stats.binom.cdf(min(b, c), "
            "b + c, 0.5) - binom.pmf(min(b, c), b + c, 0.5)",
        )
    before = np.array([1.0] * 2 + [0.0] * 19)
    after = np.array([1.0, 0.0] + [1.0] * 7 + [0.0] * 12)
    for method, printed in (("chi2", 0.034), ("exact", 0.070), ("midp", 0.039)):
        v.add(
            "mcnemar",
            f"fagerland2013-{method}",
            [before, after],
            {"pvalue": printed},
            primary="pvalue",
            options={} if method == "exact" else {"method": method},
            oracle="printed",
            rtol=0.0,
            atol=5e-4,
            source="Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1 "
            "(airway hyper-responsiveness, 21 children), printed to three decimals",
        )


def _cochran_q(v: _Vectors):
    from statsmodels.stats.contingency_tables import cochrans_q

    for name, (b, k, seed) in {
        "12x3": (12, 3, 41),
        "30x5": (30, 5, 42),
        "25x2": (25, 2, 43),
    }.items():
        rng = np.random.default_rng(seed)
        x = (rng.random((b, k)) < np.linspace(0.3, 0.7, k)).astype(float)
        result = cochrans_q(x)
        v.add(
            "cochran_q",
            name,
            [x],
            {"statistic": result.statistic, "pvalue": result.pvalue, "dof": result.df},
            oracle="statsmodels",
            source="statsmodels.stats.contingency_tables.cochrans_q(x), x = (blocks, treatments)",
        )
    x = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    v.add(
        "cochran_q",
        "hand-6x3",
        [x],
        {"statistic": 2.8, "pvalue": math.exp(-1.4), "dof": 2},
        oracle="by hand",
        source="worked by hand: Q = (k - 1)(k sum C^2 - T^2) / (k T - sum R^2) = 28/10, "
        "p = chi2(2).sf(2.8) = exp(-1.4)",
    )


def _posthoc(v: _Vectors):
    import scikit_posthocs as sp
    from scipy import stats

    data = {"untied-10x3": _rng_normal(51, (10, 3)), "ties-11x4": _rng_ints(52, 4, (11, 4))}
    for name, x in data.items():
        v.add(
            "nemenyi",
            name,
            [x],
            {"pvalue": sp.posthoc_nemenyi_friedman(x).to_numpy()},
            primary="pvalue",
            oracle="scikit-posthocs",
            source="scikit_posthocs.posthoc_nemenyi_friedman(x), blocks are rows",
        )
    n = np.nan
    conover = np.array(
        [
            [2, 3, n, 1, n, n, n],
            [n, 3, 1, n, 2, n, n],
            [n, n, 2, 1, n, 3, n],
            [n, n, n, 1, 2, n, 3],
            [3, n, n, n, 1, 2, n],
            [n, 3, n, n, n, 1, 2],
            [3, n, 1, n, n, n, 2],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, statistic, dof = sp.test_durbin(conover)
        pairwise = sp.posthoc_durbin(conover).to_numpy()
    v.add(
        "durbin",
        "conover1999",
        [conover],
        {"statistic": statistic, "pvalue": p, "dof": dof, "pairwise_pvalue": pairwise},
        options={"higher_is_better": False},
        oracle="scikit-posthocs",
        source="Conover (1999), Durbin's test, seven judges rank three of seven ice creams "
        "(1 = best; T1 = 12 by hand); scikit_posthocs.test_durbin(x) and "
        "posthoc_durbin(x)",
    )
    v.add(
        "durbin",
        "conover1999-negated",
        [-conover],
        {"statistic": statistic, "pvalue": p, "dof": dof, "pairwise_pvalue": pairwise},
        oracle="scikit-posthocs",
        source="the Conover (1999) example with its ranks negated, so that the highest "
        "score is the best; scikit_posthocs.test_durbin and posthoc_durbin of the "
        "ranks",
    )
    from statsmodels.stats.multitest import multipletests

    family = np.array([0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.049, 0.8])
    for method, name in (
        ("holm", "holm"),
        ("bonferroni", "bonferroni"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
    ):
        v.add(
            "adjust_pvalues",
            method,
            [family],
            {"pvalue_adjusted": multipletests(family, method=name)[1]},
            primary="pvalue_adjusted",
            options={} if method == "holm" else {"p_adjust": method},
            oracle="statsmodels",
            source=f"statsmodels.stats.multitest.multipletests(p, method={name!r})",
        )
    q = stats.studentized_range.ppf(0.95, 4, np.inf) / np.sqrt(2)
    v.add(
        "critical_difference",
        "demsar2006",
        [4, 14],
        {"statistic": q * np.sqrt(20 / 84)},
        oracle="scipy",
        source="Demšar (2006), worked example: k = 4, N = 14, CD = 2.569 * sqrt(4 * 5 / "
        "(6 * 14)) = 1.25 printed; q = scipy.stats.studentized_range.ppf(0.95, 4, "
        "inf) / sqrt(2)",
    )
    z = stats.norm.ppf(1 - 0.05 / 6)
    v.add(
        "critical_difference",
        "demsar2006-bonferroni-dunn",
        [4, 14],
        {"statistic": z * np.sqrt(20 / 84)},
        options={"test": "bonferroni_dunn"},
        oracle="scipy",
        source="Demšar (2006): q = z_{1 - alpha / (2 (k - 1))} = 2.394 for k = 4, from "
        "scipy.stats.norm.ppf",
    )


def _prompt_metrics(v: _Vectors):
    x = np.array([[0.8, 0.6, 0.7, 0.5], [0.7, 0.7, 0.6, 0.7]])
    source = (
        "Mizrahi et al. (2024), section 5: MaxP, AvgP, saturation = 1 - (MaxP - AvgP), "
        "CPS = saturation * MaxP; worked by hand in tests/test_paper_values.py"
    )
    for better in (True, False):
        best = x.max(axis=-1) if better else x.min(axis=-1)
        avg = x.mean(axis=-1)
        saturation = 1 - np.abs(best - avg)
        values = {"maxp": best, "avgp": avg, "saturation": saturation, "cps": saturation * best}
        for name, expected in values.items():
            if name == "avgp" and not better:
                continue
            v.add(
                name,
                "mizrahi-hand" if better else "mizrahi-hand-lower-is-better",
                [x],
                {"statistic": expected},
                options={} if better else {"higher_is_better": False},
                oracle="by hand",
                source=source,
            )
    original = np.array([True, False, False, False])
    paraphrases = x[:, ~original]
    divergence = (x[:, original].mean(-1) - paraphrases.mean(-1)) / paraphrases.std(-1, ddof=1)
    v.add(
        "divergence",
        "mizrahi-hand",
        [x],
        {"statistic": divergence},
        options={"original": original},
        oracle="by hand",
        source="Mizrahi et al. (2024), section 4.2: (original - mean of paraphrases) / their "
        "standard deviation (ddof 1); by hand 2 and 1/sqrt(3)",
    )


def build() -> dict:
    """Every reference vector, computed now from its oracle."""
    vectors = _Vectors()
    for part in (
        _ranks,
        _kendall_w,
        _kendall_tau,
        _friedman,
        _mcnemar,
        _cochran_q,
        _posthoc,
        _prompt_metrics,
    ):
        part(vectors)
    return {
        "format_version": 1,
        "description": "Reference values of rank statistics, each from an independent oracle "
        "(a library, a hand computation or a printed value); written by "
        "python -m rankstats.testing._oracles",
        "oracles": vectors.versions,
        "statistics": STATISTICS,
        "vectors": vectors.items,
    }


def write(path: Path = PATH) -> Path:
    """Write the vectors as JSON, one vector a line, so that a change shows as a line's diff."""
    data = build()
    vectors = data.pop("vectors")
    head = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
    lines = [
        json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(",", ":")) for v in vectors
    ]
    text = head[:-2] + ',\n "vectors": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":  # pragma: no cover - run by hand to refresh the file
    sys.stdout.write(f"wrote {write()}\n")
