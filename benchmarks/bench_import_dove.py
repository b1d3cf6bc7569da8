"""Peak memory and time of importing a large DOVE Parquet file.

Generates a file of the requested size in a temporary folder, in the DOVE
record schema of tests/data/fixtures/dove (the same nested fields), with token
log-probabilities (``instance.prompt_logprobs``: 200 tokens per record, each a
``{logprob, rank, decoded_token}``) making up most of its size, as they do in
the full DOVE release. One model, one dataset, 100 prompt variants (5
instruction phrasings × 4 enumerators × 5 separators), as many samples as the
size needs. Then imports it with ``rankstats_collectors.files.dove.load`` in a fresh
interpreter and reports that interpreter's peak resident memory (``VmHWM``),
its memory just before the import (the libraries loaded), and the import's
wall time.

Run from the repository root::

    .venv/bin/python benchmarks/bench_import_dove.py            # about 1 GB
    .venv/bin/python benchmarks/bench_import_dove.py --size-mb 50
    .venv/bin/python benchmarks/bench_import_dove.py --keep /tmp/dove.parquet  # reuse the file

Writes ``benchmarks/results/import_dove.json`` (or ``--output``).

Recorded (2-core machine, 23 GB, Python 3.11.7, pyarrow 26.0.1): a 1,036,909,875
byte file of 520,000 records imported in 9.3 s; peak resident memory 485.7 MiB,
of which 132.0 MiB before the import (libraries loaded); the cube holds all
520,000 scores (1 model × 1 task × 100 templates × 5,200 samples). Reading the
same file whole with ``pyarrow.parquet.read_table`` peaks at 4.2 GiB.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
TOKENS = 200
TEMPLATES = [
    (i, e, s)
    for i in range(5)
    for e in ("capitals", "lowercase", "numbers", "roman")
    for s in ("\n", "; ", " | ", ", ", " OR ")
]
VOCAB = np.array([f"tok{i}" for i in range(512)], dtype=object)

# VmHWM, not ru_maxrss: Linux carries ru_maxrss over execve, so a child started by
# this (large) process would report this process's peak
CHILD = """
import json, sys, time
def hwm():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
from rankstats_collectors.files import dove
before = hwm()
start = time.perf_counter()
cube = dove.load(sys.argv[1])
seconds = time.perf_counter() - start
peak = hwm()
print(json.dumps({"seconds": seconds, "rss_before_kib": before, "peak_rss_kib": peak,
                  "scores": int(cube.score.notnull().sum()), "sizes": dict(cube.sizes)}))
"""


def _struct(**fields) -> pa.StructArray:
    return pa.StructArray.from_arrays(list(fields.values()), list(fields))


def _batch(rng, start: int, rows: int) -> pa.Table:
    """``rows`` records: sample ``(start + k) // len(TEMPLATES)``, template ``k % len``."""
    index = np.arange(start, start + rows)
    template = index % len(TEMPLATES)
    sample = index // len(TEMPLATES)
    instruction = np.array(
        [f"Instruction phrasing {TEMPLATES[t][0]}: {{question}}\n{{choices}}" for t in template],
        dtype=object,
    )
    enumerator = np.array([TEMPLATES[t][1] for t in template], dtype=object)
    separator = np.array([TEMPLATES[t][2] for t in template], dtype=object)
    tokens = rows * TOKENS
    offsets = pa.array(np.arange(0, tokens + 1, TOKENS, dtype=np.int32))
    logprobs = pa.ListArray.from_arrays(
        offsets,
        _struct(
            logprob=pa.array(-rng.exponential(2.0, tokens)),
            rank=pa.array(rng.integers(1, 20, tokens)),
            decoded_token=pa.array(VOCAB[rng.integers(0, len(VOCAB), tokens)]),
        ),
    )

    def constant(value, kind=None):
        return pa.array([value] * rows, kind)

    return pa.table(
        {
            "evaluation_id": pa.array([f"{i:032x}" for i in index]),
            "model": _struct(
                model_info=_struct(name=constant("Bench-Model-7B"), family=constant("Bench"))
            ),
            "prompt_config": _struct(
                prompt_class=constant("MultipleChoice"),
                format=_struct(
                    template=pa.array(instruction),
                    separator=pa.array(separator),
                    enumerator=pa.array(enumerator),
                    choices_order=_struct(
                        method=constant("none"),
                        description=constant("Preserves the original order"),
                    ),
                    shots=constant(0, pa.int64()),
                ),
            ),
            "instance": _struct(
                task_type=constant("classification"),
                raw_input=pa.array([f"prompt of sample {s}" for s in sample]),
                language=constant("en"),
                sample_identifier=_struct(
                    dataset_name=constant("mmlu.bench"),
                    hf_repo=constant("cais/mmlu"),
                    hf_index=pa.array(sample),
                    hf_split=constant("test"),
                ),
                perplexity=pa.array(rng.uniform(2, 20, rows)),
                prompt_logprobs=logprobs,
            ),
            "output": _struct(
                response=constant("A. an answer"),
                cumulative_logprob=pa.array(-rng.exponential(1.0, rows)),
            ),
            "evaluation": _struct(
                ground_truth=constant("A. an answer"),
                score=pa.array((rng.random(rows) < 0.6).astype(float)),
            ),
        }
    )


def generate(path: Path, size_mb: float, batch_rows: int = 20_000) -> int:
    """Write batches until the file reaches ``size_mb``; return the number of records."""
    rng = np.random.default_rng(0)
    first = _batch(rng, 0, batch_rows)
    written = 0
    with pq.ParquetWriter(path, first.schema) as writer:
        batch = first
        while True:
            writer.write_table(batch, row_group_size=batch_rows)
            written += batch.num_rows
            if path.stat().st_size >= size_mb * 1e6:
                break
            batch = _batch(rng, written, batch_rows)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=1000)
    parser.add_argument(
        "--output", default=str(ROOT / "benchmarks" / "results" / "import_dove.json")
    )
    parser.add_argument(
        "--keep",
        metavar="PATH",
        help="write the generated file here and keep it (reused if present)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(args.keep or Path(folder) / "mmlu.bench.parquet")
        start = time.perf_counter()
        if path.exists():
            records = pq.ParquetFile(path).metadata.num_rows
        else:
            records = generate(path, args.size_mb)
        generated = time.perf_counter() - start
        size = path.stat().st_size
        run = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        child = json.loads(run.stdout.strip().splitlines()[-1])
    result = {
        "file_bytes": size,
        "records": records,
        "generate_seconds": round(generated, 1),
        "import_seconds": round(child["seconds"], 2),
        "rss_before_import_mib": round(child["rss_before_kib"] / 1024, 1),
        "peak_rss_mib": round(child["peak_rss_kib"] / 1024, 1),
        "scores": child["scores"],
        "sizes": child["sizes"],
        "python": platform.python_version(),
        "pyarrow": pa.__version__,
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    ok = child["scores"] == records
    print("scores read == records written:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
