"""Writes real unitxt evaluation output for the importer's tests, offline.

Run with the Python of a throwaway venv holding unitxt (never a project dependency):

    python -m venv /tmp/venv-unitxt && /tmp/venv-unitxt/bin/pip install unitxt tabulate
    /tmp/venv-unitxt/bin/python tests/data/unitxt/make_fixture.py

A tiny task over 6 local instances, in two templates, answered by unitxt's own
``MockInferenceEngine``-style fixed predictions, evaluated by ``unitxt.evaluate`` and saved
by ``unitxt.evaluate_cli.process_and_save_results`` (what ``unitxt-evaluate --log_samples``
runs after inference; its inference engines need a Hugging Face model or a remote API):
``out/<date>_evaluation_results.json`` and ``out/<date>_samples.json``, one benchmark
subset per template, as ``unitxt-evaluate --tasks "A+B"`` makes them.
"""

import argparse
import importlib.metadata
import json
import os
import pathlib
import shutil
import sys

os.environ.setdefault("UNITXT_ALLOW_UNVERIFIED_CODE", "True")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from unitxt.api import evaluate
from unitxt.benchmark import Benchmark
from unitxt.blocks import InputOutputTemplate, Task, TaskCard
from unitxt.evaluate_cli import _source_to_dataset, process_and_save_results
from unitxt.loaders import LoadFromDictionary
from unitxt.standard import DatasetRecipe

HERE = pathlib.Path(__file__).resolve().parent
DATA = [
    {"question": f"What is {a} + {b}?", "answer": str(a + b)}
    for a, b in [(1, 2), (3, 4), (5, 1), (2, 2), (7, 3), (4, 4)]
]
TEMPLATES = {
    "plain": InputOutputTemplate(input_format="{question}", output_format="{answer}"),
    "qa": InputOutputTemplate(
        input_format="Question: {question}\nAnswer:", output_format="{answer}"
    ),
}
PREDICTIONS = {"plain": ["3", "7", "6", "4", "10", "9"], "qa": ["3", "8", "6", "5", "1", "8"]}

out = HERE / "out"
shutil.rmtree(out, ignore_errors=True)
out.mkdir()
task = Task(
    input_fields={"question": str},
    reference_fields={"answer": str},
    prediction_type=str,
    metrics=["metrics.accuracy"],
)
card = TaskCard(loader=LoadFromDictionary(data={"test": DATA}), task=task)
# as unitxt-evaluate --tasks "card=...,template=plain+card=...,template=qa": one subset each
# (the command line names each subset by its --tasks entry)
source = Benchmark(
    subsets={
        f"card=cards.tiny,template=templates.{name}": DatasetRecipe(
            card=card, template=template, format="formats.empty"
        )
        for name, template in TEMPLATES.items()
    }
)
dataset = _source_to_dataset(source, split="test")
predictions = [PREDICTIONS[row["subset"][0].rsplit(".", 1)[1]].pop(0) for row in dataset]
results = evaluate(predictions, dataset)
args = argparse.Namespace(
    tasks=list(source.subsets),
    split="test",
    model="mock",
    model_args={"pretrained": "org/fixed-answers"},
    log_samples=True,
    output_path="out",
)
process_and_save_results(
    args, results, str(out / "evaluation_results.json"), str(out / "samples.json")
)
print(results.subsets_scores.summary)
version = importlib.metadata.version("unitxt")
(HERE / "VERSION").write_text(f"unitxt {version}\nPython {sys.version.split()[0]}\n")
print(json.dumps(sorted(p.name for p in out.iterdir())))
