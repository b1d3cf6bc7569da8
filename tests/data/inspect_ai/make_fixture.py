"""Writes real inspect_ai logs for the importer's tests, offline.

Run with the Python of a throwaway venv holding inspect-ai (never a project dependency):

    python -m venv /tmp/venv-inspect && /tmp/venv-inspect/bin/pip install inspect-ai
    /tmp/venv-inspect/bin/python tests/data/inspect_ai/make_fixture.py

The task is ``tiny_task.py`` beside this script (8 local samples, two prompt variants);
the model is inspect_ai's own ``mockllm/model`` with ``custom_outputs`` (fixed answers,
each with its token usage: without usage mockllm counts tokens with tiktoken, which
downloads its encoding and fails offline). Each variant runs 2 epochs; the logs are
written in both of inspect_ai's formats, ``logs/eval/*.eval`` (the default: a zip archive
whose members this version compresses with Zstandard) and ``logs/json/*.json``.
"""

import importlib.metadata
import pathlib
import shutil
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tiny_task import SAMPLES, tiny  # noqa: E402

# Per variant, the answer to each sample in each epoch: "plain" gets more right than "brief".
ANSWERS = {
    "plain": [
        "3",
        "7",
        "6",
        "4",
        "10",
        "9",
        "output",
        "none",  # epoch 1
        "3",
        "7",
        "6",
        "5",
        "10",
        "8",
        "output",
        "mock",
    ],  # epoch 2
    "brief": [
        "3",
        "8",
        "6",
        "5",
        "1",
        "9",
        "none",
        "none",
        "3",
        "7",
        "0",
        "5",
        "1",
        "9",
        "none",
        "mock",
    ],
}

logs = HERE / "logs"
shutil.rmtree(logs, ignore_errors=True)
for log_format in ("eval", "json"):
    for variant, answers in ANSWERS.items():
        assert len(answers) == 2 * len(SAMPLES)
        outputs = [ModelOutput.from_content("mockllm/model", answer) for answer in answers]
        for output in outputs:
            output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        model = get_model("mockllm/model", custom_outputs=outputs)
        inspect_eval(
            tiny(variant=variant),
            model=model,
            epochs=2,
            log_dir=str(logs / log_format),
            log_format=log_format,
            display="none",
            max_connections=1,
            max_samples=1,
        )
version = importlib.metadata.version("inspect-ai")
(HERE / "VERSION").write_text(f"inspect-ai {version}\nPython {sys.version.split()[0]}\n")
print("\n".join(sorted(str(p) for p in logs.glob("*/*"))))
