"""Writes anatomy.npz: a constructed PromptEval correctness array for the importer's tests.

PromptEval's correctness arrays are released on the Hugging Face hub
(PromptEval/PromptEval_MMLU_correctness), which cannot be reached here, and PromptEval
itself is not a tool that writes them; so this array is constructed (seeded, 3 models ×
100 prompts × 20 examples, 0/1) in the layout of PromptEval's arrays, with the real
templates file anatomy.csv (copied verbatim from github.com/felipemaiapolo/prompteval,
data/templates/MMLU/anatomy.csv, MIT, LICENSE_prompteval_MIT).

    python tests/data/prompteval/build.py
"""

import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
rng = np.random.default_rng(2024)
skill = np.array([0.3, 0.5, 0.7])[:, None, None]  # three models of different accuracy
prompt = rng.normal(0, 0.1, size=(1, 100, 1))  # prompt effects, as PromptEval models them
Y = (rng.random((3, 100, 20)) < np.clip(skill + prompt, 0, 1)).astype(np.int8)
np.savez(
    HERE / "anatomy.npz",
    Y=Y,
    models=np.array(["model-a", "model-b", "model-c"]),
    prompts=np.arange(100).astype(str),
    examples=np.array([f"q{i}" for i in range(20)]),
)
