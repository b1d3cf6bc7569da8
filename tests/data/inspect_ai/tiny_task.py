"""A tiny inspect_ai task over local samples, in two prompt variants (no download)."""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, prompt_template

SAMPLES = [
    Sample(input=f"What is {a} + {b}?", target=str(a + b), id=f"q{i}")
    for i, (a, b) in enumerate([(1, 2), (3, 4), (5, 1), (2, 2), (7, 3), (4, 4)])
]
# mockllm/model answers "Default output from mockllm/model": a target that occurs in it
# is scored correct, so the accuracy is neither 0 nor 1.
SAMPLES += [
    Sample(input="Say 'output'.", target="output", id="q6"),
    Sample(input="Say 'mock'.", target="mock", id="q7"),
]


@task
def tiny(variant: str = "plain"):
    template = "{prompt}" if variant == "plain" else "Answer briefly.\n{prompt}"
    return Task(
        dataset=MemoryDataset(SAMPLES),
        solver=[prompt_template(template), generate()],
        scorer=includes(),
    )
