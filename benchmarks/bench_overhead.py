"""The fixed cost of a public statistic on a small NumPy input, against its NumPy floor.

Each statistic is called on a small plain NumPy input (a 187 × 11 matrix, as
187 templates ranking 11 models; a binary one for Cochran's Q; two of its
columns for Kendall's tau and McNemar's test) and timed against its floor:
the plain NumPy (and ``scipy.special``) code that computes the same numbers
from the same clean input, with no checks, no missing-value handling and no
result object. The script prints, per statistic, the call's time, the
floor's, and their ratio; it checks in the same run that the call returns the
floor's numbers, and exits with status 1 when a ratio exceeds ``--limit``
(3) or a value differs.

Timings are the best of ``--repeats`` rounds of ``--number`` back-to-back
calls (as :mod:`timeit`), the call and its floor interleaved round by round
so that load on the machine falls on both alike. They count the CPU time of
this thread (``--clock cpu``), so that time the scheduler gives to other
processes on a shared machine does not count; ``--clock wall`` counts
elapsed time instead.

    .venv/bin/python benchmarks/bench_overhead.py
    .venv/bin/python benchmarks/bench_overhead.py --number 500 --repeats 15
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import rankstats  # noqa: E402


def _ranks(x):
    """Ranks 1..n along the last axis, rank 1 the largest (no ties in the inputs).

    One sort, then each row's ranks scattered to the sorted positions: a
    quarter quicker than sorting the order again (``argsort(argsort(-x))``).
    """
    m, n = x.shape
    order = np.argsort(-x, axis=-1)
    ranks = np.empty(m * n)
    ranks[(order + np.arange(0, m * n, n)[:, None]).ravel()] = np.tile(np.arange(1.0, n + 1.0), m)
    return ranks.reshape(m, n)


def _w_floor(x):
    m, n = x.shape
    sums = _ranks(x).sum(0)
    w = 12.0 * ((sums - sums.mean()) ** 2).sum() / (m**2 * (n**3 - n))
    chi2 = m * (n - 1) * w
    f = (m - 1) * w / (1 - w)
    kbs = n - 1 - 2.0 / m
    return (
        w,
        special.chdtrc(n - 1, chi2),
        f,
        special.fdtrc(n - 1, (m - 1) * (n - 1), f),
        special.fdtrc(kbs, (m - 1) * kbs, f),
    )


def _friedman_floor(x):
    b, k = x.shape
    sums = _ranks(x).sum(0)
    chi2 = 12.0 / (b * k * (k + 1)) * (sums**2).sum() - 3.0 * b * (k + 1)
    w = chi2 / (b * (k - 1))
    f = (b - 1) * w / (1 - w)
    return chi2, special.chdtrc(k - 1, chi2), w, f, special.fdtrc(k - 1, (b - 1) * (k - 1), f)


def _tau_floor(x, y):
    """Tau-b of two untied vectors by pair signs, with its normal-approximation p-value.

    C - D is half the sum over the full product of the two sign matrices:
    each pair counted twice is quicker than picking out the upper triangle
    (``np.triu_indices`` and a gather cost more than the products they save).
    Not a matrix product: BLAS threads make its timing erratic on a busy
    machine.
    """
    n = len(x)
    s = (np.sign(x[:, None] - x) * np.sign(y[:, None] - y)).sum() / 2
    tau = s / (n * (n - 1) / 2)
    z = 3 * s / np.sqrt(n * (n - 1) * (2 * n + 5) / 2)
    return tau, 2 * special.ndtr(-abs(z))


def _mcnemar_floor(x, y):
    b = float(np.sum((x == 1) & (y == 0)))
    c = float(np.sum((x == 0) & (y == 1)))
    return min(b, c), min(1.0, 2 * special.bdtr(min(b, c), int(b + c), 0.5))


def _cochran_floor(x):
    k = x.shape[1]
    columns, rows = x.sum(0), x.sum(1)
    total = columns.sum()
    q = (k - 1) * (k * (columns**2).sum() - total**2) / (k * total - (rows**2).sum())
    return q, special.chdtrc(k - 1, q)


def _metrics_floor(x):
    best, average = x.max(-1), x.mean(-1)
    saturation = 1 - np.abs(best - average)
    return average, best, saturation, saturation * best


def cases():
    """``{name: (call, floor, values of the call to compare with the floor's)}``."""
    rng = np.random.default_rng(0)
    x = rng.random((187, 11))
    binary = (x > 0.5).astype(float)
    a, b = x[:, 0].copy(), x[:, 1].copy()
    p, q = binary[:, 0].copy(), binary[:, 1].copy()

    def fields(*names):
        return lambda r: tuple(getattr(r, n) for n in names)

    return {
        "kendall_w": (
            lambda: rankstats.kendall_w(x),
            lambda: _w_floor(x),
            fields("statistic", "pvalue", "f", "f_pvalue", "f_kbs_pvalue"),
        ),
        "friedman": (
            lambda: rankstats.friedman(x),
            lambda: _friedman_floor(x),
            fields("statistic", "pvalue", "kendall_w", "f", "f_pvalue"),
        ),
        "kendall_tau": (
            lambda: rankstats.kendall_tau(a, b),
            lambda: _tau_floor(a, b),
            fields("statistic", "pvalue"),
        ),
        "mcnemar": (
            lambda: rankstats.mcnemar(p, q),
            lambda: _mcnemar_floor(p, q),
            fields("statistic", "pvalue"),
        ),
        "cochran_q": (
            lambda: rankstats.cochran_q(binary),
            lambda: _cochran_floor(binary),
            fields("statistic", "pvalue"),
        ),
        "rank": (lambda: rankstats.rank(x), lambda: _ranks(x), lambda r: r),
        "avgp": (lambda: rankstats.avgp(x), lambda: x.mean(-1), lambda r: r),
        "maxp": (lambda: rankstats.maxp(x), lambda: x.max(-1), lambda r: r),
        "saturation": (lambda: rankstats.saturation(x), lambda: _metrics_floor(x)[2], lambda r: r),
        "cps": (lambda: rankstats.cps(x), lambda: _metrics_floor(x)[3], lambda r: r),
        "prompt_metrics": (
            lambda: rankstats.prompt_metrics(x),
            lambda: _metrics_floor(x),
            fields("avgp", "maxp", "saturation", "cps"),
        ),
    }


CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}


def _timing(fn, number, clock):
    start = clock()
    for _ in range(number):
        fn()
    return (clock() - start) / number


def interleaved(call, floor, number, repeats, clock=time.thread_time):
    """Best seconds per call of ``call`` and of ``floor``, timed in alternating rounds."""
    best_call = best_floor = np.inf
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            best_call = min(best_call, _timing(call, number, clock))
            best_floor = min(best_floor, _timing(floor, number, clock))
    finally:
        if was_enabled:
            gc.enable()
    return best_call, best_floor


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200, help="calls per timing")
    parser.add_argument("--repeats", type=int, default=9, help="timings; the best counts")
    parser.add_argument("--limit", type=float, default=3.0, help="largest ratio allowed")
    parser.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="cpu",
        help="CPU time of this thread, or elapsed time",
    )
    args = parser.parse_args(argv)
    failures = []
    print(f"{'statistic':<16}{'call µs':>10}{'floor µs':>10}{'ratio':>8}")
    for name, (call, floor, values) in cases().items():
        got = values(call())
        expected = floor()
        if not np.allclose(
            np.asarray(got, dtype=float), np.asarray(expected, dtype=float), rtol=1e-9, atol=1e-12
        ):
            failures.append(f"{name}: the call's values differ from the floor's")
        t_call, t_floor = interleaved(call, floor, args.number, args.repeats, CLOCKS[args.clock])
        ratio = t_call / t_floor
        flag = "" if ratio <= args.limit else "  FAIL"
        print(f"{name:<16}{t_call * 1e6:>10.1f}{t_floor * 1e6:>10.1f}{ratio:>8.2f}{flag}")
        if ratio > args.limit:
            failures.append(f"{name}: {ratio:.2f}x its NumPy floor (limit {args.limit}x)")
    if failures:
        print("\nFAIL\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("\nPASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
