"""Prompts per second of the Hugging Face collector, batched against one prompt at a time.

Run from the repository root::

    .venv/bin/python benchmarks/bench_hf_collector.py                  # about a minute on CPU
    .venv/bin/python benchmarks/bench_hf_collector.py --max-templates 40 --threads 4

The models are the tiny GPT-2 and T5 of the collector's tests (``tests/hf_models.py``:
2 layers, a byte-level BPE tokenizer trained here, a few seconds of training), built
offline into a temporary folder, or read from ``--models`` when given. The prompts are
the paper's released templates of three BBH tasks (navigate, sports_understanding,
hyperbaton; the first ``--max-templates`` valid ones of each) filled with the 12 copied
samples of each task.

For each device (CPU, and CUDA when present), model and mode (``generate``: greedy,
up to 8 new tokens, stop at a newline; ``likelihood``: the options' log-probabilities),
``rankstats_collectors.hf.collect`` runs once with ``--batch-size`` prompts per forward pass and
once with one prompt at a time, without a cache, after one untimed warm-up run. The
table shows prompts/s and tokens/s of model time (as the collector reports them) and
the speed-up of batching. The responses of the two runs must be identical; the script
writes ``benchmarks/results/<name>.json`` and exits with status 1 if they are not, or
if batching is not faster on the CPU.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def workload(max_templates: int):
    import hf_models

    from rankstats_collectors.tasks import mizrahi2024_samples, mizrahi2024_templates

    templates, samples = {}, {}
    for task in hf_models.BBH_TASKS:
        samples[task] = mizrahi2024_samples(hf_models.RELEASE_SAMPLES, task)
        templates[task] = mizrahi2024_templates(
            hf_models.RELEASE_TEMPLATES, task, fields=set(samples[task][0].fields), malformed="skip"
        )[:max_templates]
    return templates, samples


def run_once(model, templates, samples, mode, batch_size, device):
    from rankstats_collectors.hf import collect

    started = time.perf_counter()
    cube = collect(
        [model],
        templates,
        samples,
        mode=mode,
        batch_size=batch_size,
        max_new_tokens=8,
        stop=["\n"],
        device=device,
    )
    wall = time.perf_counter() - started
    return cube, wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, help="folder with tiny-gpt2/ and tiny-t5/")
    parser.add_argument("--max-templates", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, help="torch CPU threads (default torch's)")
    parser.add_argument("--devices", nargs="*", help="default: cpu, and cuda when present")
    parser.add_argument("--name", default="hf_collector")
    arguments = parser.parse_args(argv)

    import hf_models
    import torch

    if arguments.threads:
        torch.set_num_threads(arguments.threads)
    devices = arguments.devices or (["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    folder = arguments.models
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="rankstats-tiny-models-"))
        print(f"building the tiny models in {folder} ...", flush=True)
        hf_models.build_models(folder)
    models = {"gpt2": str(folder / "tiny-gpt2"), "t5": str(folder / "tiny-t5")}
    templates, samples = workload(arguments.max_templates)
    prompts = sum(len(templates[t]) * len(samples[t]) for t in templates)
    print(f"{prompts} prompts per run ({len(templates)} tasks)")

    rows, ok = [], True
    header = (
        f"{'device':6} {'model':5} {'mode':10} {'batch':>5} {'prompts/s':>10} "
        f"{'tokens/s':>10} {'wall s':>7} {'speed-up':>8}  same responses"
    )
    print(header)
    print("-" * len(header))
    for device in devices:
        for name, model in models.items():
            for mode in ("generate", "likelihood"):
                run_once(model, templates, samples, mode, arguments.batch_size, device)
                timed = {}
                for batch_size in (1, arguments.batch_size):
                    cube, wall = run_once(model, templates, samples, mode, batch_size, device)
                    timed[batch_size] = (cube, wall)
                one, many = timed[1][0], timed[arguments.batch_size][0]
                same = bool((one.response.values == many.response.values).all())
                speedup = many.attrs["prompts_per_second"] / one.attrs["prompts_per_second"]
                ok &= same and (device != "cpu" or speedup > 1)
                for batch_size, (cube, wall) in timed.items():
                    row = {
                        "device": device,
                        "model": name,
                        "mode": mode,
                        "batch_size": batch_size,
                        "prompts_per_second": cube.attrs["prompts_per_second"],
                        "tokens_per_second": cube.attrs["tokens_per_second"],
                        "wall_seconds": wall,
                        "same_responses": same,
                        "speedup": speedup if batch_size > 1 else 1.0,
                    }
                    rows.append(row)
                    print(
                        f"{device:6} {name:5} {mode:10} {batch_size:5d} "
                        f"{row['prompts_per_second']:10.1f} {row['tokens_per_second']:10.0f} "
                        f"{wall:7.2f} {row['speedup']:8.2f}  {same}",
                        flush=True,
                    )

    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    payload = {
        "benchmark": "hf_collector",
        "when": _dt.datetime.now(_dt.UTC).isoformat(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "prompts_per_run": prompts,
        "rows": rows,
        "passed": ok,
    }
    (results / f"{arguments.name}.json").write_text(json.dumps(payload, indent=2))
    print(f"{'PASSED' if ok else 'FAILED'}: wrote benchmarks/results/{arguments.name}.json")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
