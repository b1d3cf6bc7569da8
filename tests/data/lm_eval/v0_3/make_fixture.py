"""Writes a real lm-evaluation-harness 0.3 results file, offline.

Run with the Python of a throwaway venv holding lm-eval 0.3.0 (never a project dependency):

    python -m venv /tmp/venv-lmeval03
    /tmp/venv-lmeval03/bin/pip install torch "lm-eval==0.3.0" requests "transformers<4.45" \
        "datasets<3"   # 0.3.0 imports modules newer transformers and datasets removed
    /tmp/venv-lmeval03/bin/python tests/data/lm_eval/v0_3/make_fixture.py

0.3 tasks are Python classes: two prompt variants of a tiny multiple-choice task over
local documents are registered in lm-eval's task registry, evaluated with lm-eval's own
`dummy` model, and the result written as 0.3's main.py writes it (``json.dumps(results,
indent=2)`` to ``--output_path``, then the model line and ``evaluator.make_table`` on
standard output, kept here as ``console.md``). 0.3.0 ships no command-line script in its
wheel, so the lines of its main.py are repeated below.
"""

import json
import pathlib
import random
import sys

import numpy as np
from lm_eval import evaluator, tasks
from lm_eval.base import MultipleChoiceTask

HERE = pathlib.Path(__file__).resolve().parent
DOCS = [
    {"query": f"What is {a} + {b}?", "choices": [str(a + b), str(a + b + 1), str(a - b)], "gold": 0}
    for a, b in [(1, 2), (3, 4), (5, 1), (2, 2), (7, 3), (4, 4), (9, 1), (6, 2)]
]


def variant(number: int, text: str):
    class Tiny(MultipleChoiceTask):
        VERSION = 0
        DATASET_PATH = None

        def download(self, *args, **kwargs):
            self.dataset = {"test": DOCS}

        def has_training_docs(self):
            return False

        def has_validation_docs(self):
            return False

        def has_test_docs(self):
            return True

        def test_docs(self):
            return self.dataset["test"]

        def doc_to_text(self, doc):
            return text.format(**doc)

    Tiny.__name__ = f"TinyPrompt{number}"
    return Tiny


tasks.TASK_REGISTRY["tiny_prompt_1"] = variant(1, "Question: {query}\nAnswer:")
tasks.TASK_REGISTRY["tiny_prompt_2"] = variant(2, "Q: {query}\nA:")

random.seed(1234)
np.random.seed(1234)  # noqa: NPY002 (the global state lm-eval 0.3 draws from)
model, model_args = "dummy", "pretrained=org/dummy-03"
results = evaluator.simple_evaluate(
    model=model,
    model_args=model_args,
    tasks=["tiny_prompt_1", "tiny_prompt_2"],
    num_fewshot=0,
    no_cache=True,
)
# as 0.3.0's main.py:
dumped = json.dumps(results, indent=2)
(HERE / "results.json").write_text(dumped)
table = (
    f"{model} ({model_args}), limit: None, provide_description: False, num_fewshot: 0, "
    f"batch_size: None\n" + evaluator.make_table(results)
)
(HERE / "console.md").write_text(table)
import importlib.metadata as metadata  # noqa: E402

(HERE / "VERSION").write_text(
    f"lm-eval {metadata.version('lm-eval')}\nPython {sys.version.split()[0]}\n"
)
print(table)
