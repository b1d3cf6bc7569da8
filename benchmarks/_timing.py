"""Wall time and peak memory of one benchmarked call, shared by the benchmark scripts."""

from __future__ import annotations

import gc
import time
import tracemalloc
import warnings


def best_of(fn, repeats: int):
    """Best wall time of ``repeats`` calls of ``fn``; returns (best, all times, last result)."""
    times, result = [], None
    for _ in range(repeats):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), times, result


def peak_memory(fn) -> int:
    """Peak bytes allocated (Python and NumPy, as tracemalloc sees them) during one call."""
    gc.collect()
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tracemalloc.reset_peak()
            result = fn()
            _, peak = tracemalloc.get_traced_memory()
            del result
    finally:
        tracemalloc.stop()
    return peak
