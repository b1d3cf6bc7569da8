"""Wall time of ``rankstats reproduce mizrahi2024`` from a fresh interpreter.

Target: under 30 s. Run from the repository root:
``python benchmarks/bench_reproduce.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs; the median counts")
    parser.add_argument("--target", type=float, default=30.0, help="seconds allowed")
    args = parser.parse_args()
    command = [sys.executable, "-m", "rankstats.cli", "reproduce", "mizrahi2024"]
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(
        f"rankstats reproduce mizrahi2024: median {median:.1f} s of {args.runs} runs "
        f"({', '.join(f'{t:.1f}' for t in times)}); target < {args.target:.0f} s"
    )
    ok = median < args.target
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
