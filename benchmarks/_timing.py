"""Wall time and peak memory of one benchmarked call, shared by the benchmark scripts."""

from __future__ import annotations

import gc
import time
import tracemalloc
import warnings


def best_of(fn, repeats: int, number: int = 1):
    """Best time per call over ``repeats`` timings of ``number`` back-to-back calls of ``fn``.

    As :mod:`timeit` does, the garbage collector is run before each timing and
    kept off during it, and a timing covers ``number`` calls so that a call of
    a few milliseconds is not measured against a cache just emptied by the
    collector. Returns (best seconds per call, seconds per call of every
    timing, last result).
    """
    times, result = [], None
    for _ in range(repeats):
        result = None
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            for _ in range(number):
                result = fn()
            times.append((time.perf_counter() - start) / number)
        finally:
            if was_enabled:
                gc.enable()
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
