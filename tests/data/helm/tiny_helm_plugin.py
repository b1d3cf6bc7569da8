"""A HELM plugin: a tiny local scenario and its run spec, so helm-run needs no download.

Loaded by ``helm-run --plugins tiny_helm_plugin`` (see make_fixture.sh). The run spec
``tiny:variant=plain|answer`` has two prompt variants; HELM's own ``simple/model1`` answers
with the last word of the prompt, so ``plain`` (no output prefix) answers the last input
word and ``answer`` (output prefix ``Answer:``) never does. Each test instance is also
evaluated lower-cased and with typos (HELM's LowerCasePerturbation and TyposPerturbation).
"""

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.augmentations.data_augmenter import DataAugmenterSpec
from helm.benchmark.metrics.common_metric_specs import (
    get_basic_metric_specs,
    get_generic_metric_specs,
)
from helm.benchmark.run_expander import lower, typo
from helm.benchmark.run_spec import RunSpec, run_spec_function
from helm.benchmark.scenarios.scenario import (
    CORRECT_TAG,
    TEST_SPLIT,
    Input,
    Instance,
    Output,
    Reference,
    Scenario,
    ScenarioSpec,
)

WORDS = [
    ("red green Blue", "Blue"),
    ("one two Three", "Three"),
    ("cat dog bird", "dog"),
    ("Paris Rome Oslo", "Oslo"),
    ("sun moon Star", "moon"),
    ("up down Left", "Left"),
]


class TinyScenario(Scenario):
    name = "tiny"
    description = "Name the last word (a local debugging scenario)"
    tags = ["tiny"]  # noqa: RUF012 (as HELM declares it)

    def get_instances(self, output_path: str):
        return [
            Instance(
                Input(text=text),
                references=[Reference(Output(text=answer), tags=[CORRECT_TAG])],
                split=TEST_SPLIT,
                id=f"id{i}",
            )
            for i, (text, answer) in enumerate(WORDS)
        ]


@run_spec_function("tiny")
def get_tiny_spec(variant: str = "plain") -> RunSpec:
    adapter_spec = AdapterSpec(
        method="generation",
        instructions="Name the last word.",
        input_prefix="",
        input_suffix="",
        output_prefix="" if variant == "plain" else "\nAnswer:",
        max_train_instances=0,
        num_outputs=1,
        num_train_trials=1,
        model="simple/model1",
        model_deployment="simple/model1",
        max_tokens=5,
    )
    augmenter = DataAugmenterSpec(
        perturbation_specs=[lower(), typo(prob=0.3)],
        should_augment_train_instances=False,
        should_include_original_train=True,
        should_skip_unchanged_train=True,
        should_augment_eval_instances=True,
        should_include_original_eval=True,
        should_skip_unchanged_eval=True,
        seeds_per_instance=1,
    )
    return RunSpec(
        name=f"tiny:variant={variant}",
        scenario_spec=ScenarioSpec(class_name="tiny_helm_plugin.TinyScenario", args={}),
        adapter_spec=adapter_spec,
        data_augmenter_spec=augmenter,
        metric_specs=get_basic_metric_specs(["exact_match", "quasi_exact_match"])
        + get_generic_metric_specs(),
        groups=[],
    )
