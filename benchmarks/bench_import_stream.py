"""Peak memory and time of importing a large lm-evaluation-harness per-sample log.

Generates a samples file of the requested size in a temporary folder, modelled
line for line on the real asdiv log in tests/data/fixtures/lm_eval (same fields,
an 8-shot prompt of about 2.7 kB per line, a fresh doc_id, doc_hash and score on
each), then imports it with ``rankstats_collectors.files.lm_eval.load`` in a fresh
interpreter and reports that interpreter's peak resident memory, its memory
just before the import (the libraries loaded), and the import's wall time; then
saves the cube as ``rankstats import`` does (:func:`rankstats.save`, which
validates it again) and reports the peak including that step.

Run from the repository root::

    .venv/bin/python benchmarks/bench_import_stream.py            # about 1 GB
    .venv/bin/python benchmarks/bench_import_stream.py --size-mb 20

Writes ``benchmarks/results/import_stream.json`` (or ``--output``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = (
    ROOT
    / "tests"
    / "data"
    / "fixtures"
    / "lm_eval"
    / "asdiv"
    / "meta-llama__Meta-Llama-3-8B-Instruct"
    / "samples_asdiv_2024-08-21T03-44-09.494230.jsonl"
)
DATE = "2024-08-21T03-44-09.494230"

CHILD = """
import json, resource, sys, time
from rankstats_collectors.files import lm_eval
import rankstats
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
cube = lm_eval.load(sys.argv[1], model="bench/model")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
rankstats.save(cube, sys.argv[2])
saved = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss_before_kib": before, "peak_rss_kib": peak,
                  "save_seconds": saved,
                  "peak_with_save_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "samples": int(cube.sizes["sample"]),
                  "mean": float(rankstats.template_scores(cube).mean())}))
"""


def generate(folder: Path, size_bytes: int) -> tuple[Path, int, float]:
    """Write a samples file of at least ``size_bytes``; return it, its lines and mean score."""
    with open(REAL, encoding="utf-8") as handle:
        real = [json.loads(line) for line in handle]
    path = folder / f"samples_asdiv_{DATE}.jsonl"
    written, lines, total = 0, 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < size_bytes:
            record = dict(real[lines % len(real)])
            record["doc_id"] = lines
            record["doc_hash"] = hashlib.sha256(str(lines).encode()).hexdigest()
            # A deterministic pattern with a known mean (4 of every 7 correct).
            record["acc"] = int(lines % 7 < 4)
            total += record["acc"]
            line = json.dumps(record, ensure_ascii=False) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            lines += 1
    return path, lines, total / lines


def run(size_bytes: int, folder: Path | None = None) -> dict:
    """Generate, import in a fresh interpreter, and return the measurements."""
    with tempfile.TemporaryDirectory(dir=folder) as temporary:
        start = time.perf_counter()
        path, lines, mean = generate(Path(temporary), size_bytes)
        generated = time.perf_counter() - start
        size = path.stat().st_size
        cube_path = Path(temporary) / "cube.nc"
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), str(cube_path)],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        if child.returncode != 0:
            raise RuntimeError(f"the import failed:\n{child.stderr}")
        measured = json.loads(child.stdout.strip().splitlines()[-1])
    if measured["samples"] != lines or abs(measured["mean"] - mean) > 1e-12:
        raise RuntimeError(
            f"the cube does not hold the file: {measured} vs {lines} lines, mean {mean}"
        )
    return {
        "file_bytes": size,
        "file_mib": round(size / 2**20, 1),
        "lines": lines,
        "generate_seconds": round(generated, 2),
        "import_seconds": round(measured["seconds"], 2),
        "rss_before_import_mib": round(measured["rss_before_kib"] / 1024, 1),
        "peak_rss_mib": round(measured["peak_rss_kib"] / 1024, 1),
        "peak_minus_before_mib": round(
            (measured["peak_rss_kib"] - measured["rss_before_kib"]) / 1024, 1
        ),
        "save_seconds": round(measured["save_seconds"], 2),
        "peak_rss_with_save_mib": round(measured["peak_with_save_kib"] / 1024, 1),
        "mean_score": measured["mean"],
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size-mb",
        type=float,
        default=1024,
        help="size of the generated samples file in MiB (default 1024)",
    )
    parser.add_argument(
        "--tmp",
        type=Path,
        default=None,
        help="folder for the temporary file (default: the system's)",
    )
    parser.add_argument(
        "--output", type=Path, default=ROOT / "benchmarks" / "results" / "import_stream.json"
    )
    args = parser.parse_args(argv)
    result = run(int(args.size_mb * 2**20), args.tmp)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for key, value in result.items():
        print(f"{key:>24}: {value}")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
