"""The HELM importer on run folders built to HELM's schema (tests/data/fixtures/helm)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from rankstats.cli import main
from rankstats_collectors import files
from rankstats_collectors.files import ImporterError, helm

SUITE = Path(__file__).parent / "data" / "fixtures" / "helm" / "runs" / "v1"
RUNS = sorted(SUITE.iterdir())
SHOTS = ["max_train_instances"]


@pytest.fixture(scope="module")
def cube():
    return helm.load(SUITE, template_args=SHOTS)


def _label(perturbation) -> str:
    if perturbation is None:
        return "original"
    extra = {
        k: v
        for k, v in perturbation.items()
        if k not in ("name", "robustness", "fairness", "computed_on")
    }
    return perturbation["name"] + "".join(f"({k}={v})" for k, v in extra.items())


def _reported(run: Path, metric="exact_match", split="test"):
    """(model, template) → the mean that the run's stats.json reports, per perturbation."""
    spec = json.loads((run / "run_spec.json").read_text())
    shots = spec["adapter_spec"]["max_train_instances"]
    out = {}
    for stat in json.loads((run / "stats.json").read_text()):
        name = stat["name"]
        perturbation = name.get("perturbation")
        if name["name"] != metric or name["split"] != split:
            continue
        if perturbation is not None and perturbation["computed_on"] != "perturbed":
            continue
        template = f"max_train_instances={shots}|{_label(perturbation)}"
        out[(spec["adapter_spec"]["model"], template)] = stat["mean"]
    return out


@pytest.mark.parametrize("source", ["per_instance_stats", "display_predictions"])
def test_per_template_means_equal_the_reported_stats(source):
    cube = helm.load(SUITE, template_args=SHOTS, source=source)
    reported = {}
    for run in RUNS:
        reported.update(_reported(run))
    means = cube.score.mean("sample")
    got = {
        (str(model), str(template)): float(means.sel(model=model).isel(task=0, template=t))
        for model in cube.model.values
        for t, template in enumerate(cube.template_id.values[0])
    }
    assert got == pytest.approx(reported)
    assert len(got) == 12


def test_both_sources_give_the_same_cube(cube):
    other = helm.load(SUITE, template_args=SHOTS, source="display_predictions")
    np.testing.assert_array_equal(other.score.values, cube.score.values)
    assert other.template_id.values.tolist() == cube.template_id.values.tolist()


def test_the_mapping(cube):
    assert cube.model.values.tolist() == ["meta/llama-7b", "openai/gpt2"]
    assert cube.task.values.tolist() == ["mmlu:subject=anatomy,method=multiple_choice_joint"]
    assert cube.template_perturbation.values.tolist() == [
        ["original", "typos(prob=0.1)", "lowercase"] * 2
    ]
    assert cube.template_variant.values.tolist() == [
        ["max_train_instances=0"] * 3 + ["max_train_instances=5"] * 3
    ]
    assert cube.sample_id.values.tolist() == [["id3", "id11", "id26", "id40", "id57"]]
    assert "10 × the stat is on split 'valid'" not in cube.attrs["import_summary"]
    assert "24 × the stat is on split 'valid', not 'test'" in cube.attrs["import_summary"]


def test_without_template_args_each_prompt_variant_is_a_task():
    cube = helm.load(SUITE)
    assert cube.task.values.tolist() == [
        "mmlu:subject=anatomy,method=multiple_choice_joint,max_train_instances=0",
        "mmlu:subject=anatomy,method=multiple_choice_joint,max_train_instances=5",
    ]
    assert cube.sizes["template"] == 3


def test_another_split_and_metric():
    valid = helm.load(SUITE, template_args=SHOTS, split="valid", metric="quasi_exact_match")
    assert valid.sample_id.values.tolist() == [["id101", "id102"]]
    assert valid.attrs["metric"] == "quasi_exact_match"
    reported = {}
    for run in RUNS:
        reported.update(_reported(run, "quasi_exact_match", "valid"))
    means = valid.score.mean("sample")
    for (model, template), value in reported.items():
        t = list(valid.template_id.values[0]).index(template)
        assert float(means.sel(model=model).isel(task=0, template=t)) == pytest.approx(value)


@pytest.mark.parametrize(
    "metric",
    ["num_output_tokens", "inference_runtime", "num_prompt_tokens", "finish_reason_length"],
)
def test_statistics_that_are_not_scores_are_refused(metric):
    with pytest.raises(ImporterError, match=f"'{metric}' is not a score"):
        helm.load(SUITE, metric=metric)


def test_an_absent_metric_lists_the_scores_there_are():
    with pytest.raises(
        ImporterError,
        match=r"^no stat 'rouge_l' on split 'test' in the \d+ run "
        r"folder\(s\); the scores they have: exact_match, "
        r"quasi_exact_match \(pass metric=NAME; files: ",
    ):
        helm.load(SUITE, metric="rouge_l")


def test_an_absent_metric_says_what_is_wrong_first_and_names_few_files(tmp_path):
    runs = _copy(tmp_path, RUNS[:1])
    many = []
    for i in range(12):
        copy = tmp_path / f"copy{i}" / runs[0].name
        shutil.copytree(runs[0], copy)
        many.append(copy)
    with pytest.raises(ImporterError) as raised:
        helm.load(many, metric="rouge_l", runs="latest")
    message = str(raised.value)
    assert message.startswith("no stat 'rouge_l'")
    assert message.count("per_instance_stats.json") == 3 and message.endswith("and 9 more)")
    assert len(message) < 1200  # three paths, not twelve


def _copy(tmp_path, runs=RUNS) -> list[Path]:
    copies = []
    for run in runs:
        target = tmp_path / "suite" / run.name
        shutil.copytree(run, target)
        copies.append(target)
    return copies


def _edit(path: Path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_malformed_files_are_named(tmp_path):
    run = _copy(tmp_path, RUNS[:1])[0]
    per_instance = run / "per_instance_stats.json"

    def spoil(entries):
        entries[3]["stats"][0]["mean"] = "high"

    _edit(per_instance, spoil)
    with pytest.raises(
        ImporterError,
        match=r"per_instance_stats.json', row 4, column "
        r"'stats\[0\]\.mean': the score 'high' is not",
    ):
        helm.load(run)
    shutil.copy(RUNS[0] / "per_instance_stats.json", per_instance)
    _edit(per_instance, lambda entries: entries[5].pop("instance_id"))
    with pytest.raises(ImporterError, match=r"row 6, column 'instance_id'"):
        helm.load(run)
    per_instance.write_text("{")
    with pytest.raises(ImporterError, match=r"per_instance_stats.json': not valid JSON"):
        helm.load(run)
    shutil.copy(RUNS[0] / "per_instance_stats.json", per_instance)

    def anonymous(spec):
        del spec["adapter_spec"]["model"], spec["adapter_spec"]["model_deployment"]

    _edit(run / "run_spec.json", anonymous)
    with pytest.raises(ImporterError, match=r"run_spec.json', column 'adapter_spec.model'"):
        helm.load(run)


def test_a_folder_without_runs_is_refused(tmp_path):
    with pytest.raises(ImporterError, match=r"no run_spec.json"):
        helm.load(tmp_path)


def test_an_instance_logged_twice_with_different_scores_is_an_error(tmp_path):
    run = _copy(tmp_path, RUNS[:1])[0]

    def repeat(entries):
        copy = json.loads(json.dumps(entries[0]))
        copy["stats"][0]["mean"] = 1.0 - copy["stats"][0]["mean"]
        entries.append(copy)

    _edit(run / "per_instance_stats.json", repeat)
    with pytest.raises(ImporterError, match=r"row 22, column 'score'.*sample=.id3.*different"):
        helm.load(run)


def test_repeated_runs_follow_the_policy(tmp_path):
    first = _copy(tmp_path / "a", RUNS[:1])[0]
    second = _copy(tmp_path / "b", RUNS[:1])[0]
    with pytest.raises(ImporterError, match=r"several run folders .*runs='latest'"):
        helm.load([first, second])
    written = (second / "per_instance_stats.json").stat().st_mtime
    os.utime(second / "per_instance_stats.json", (written + 60, written + 60))
    cube = helm.load([first, second], runs="latest")
    assert cube.sizes["template"] == 3
    summary = cube.attrs["import_summary"]
    assert (
        "skipped 27 rows: 15 × superseded by a run folder written later; 12 × the stat "
        "is on split 'valid'" in summary
    )
    assert str(second) in summary


def test_train_trials_are_templates_or_averaged(tmp_path):
    run = _copy(tmp_path, RUNS[:1])[0]

    def second_trial(entries):
        for entry in list(entries):
            copy = json.loads(json.dumps(entry))
            copy["train_trial_index"] = 1
            copy["stats"][0]["mean"] = 1.0
            entries.append(copy)

    _edit(run / "per_instance_stats.json", second_trial)
    cube = helm.load(run)
    assert cube.template_id.values.tolist() == [
        [
            "original|trial=0",
            "typos(prob=0.1)|trial=0",
            "lowercase|trial=0",
            "original|trial=1",
            "typos(prob=0.1)|trial=1",
            "lowercase|trial=1",
        ]
    ]
    np.testing.assert_array_equal(cube.score.values[..., 3:, :], 1.0)
    mean = helm.load(run, trials="mean")
    assert mean.template_id.values.tolist() == [["original", "typos(prob=0.1)", "lowercase"]]
    np.testing.assert_allclose(mean.score.values, (cube.score.values[..., :3, :] + 1.0) / 2)


def test_imported_by_the_command(tmp_path, capsys):
    assert files.get("helm") is helm.load
    out = tmp_path / "helm.nc"
    assert (
        main(
            [
                "import",
                "helm",
                str(SUITE),
                "-o",
                str(out),
                "--option",
                'template_args=["max_train_instances"]',
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "helm: read 84 rows from 4 files" in printed and "kept 60, skipped 24" in printed
    assert main(["report", str(out), "--quiet", "--json", str(tmp_path / "r.json")]) == 0


# --- the runs helm-run wrote (tests/data/helm/make_fixture.sh; version in VERSION) ---

PRODUCED = Path(__file__).parent / "data" / "helm" / "runs" / "v1"


@pytest.mark.parametrize("metric", ["exact_match", "quasi_exact_match"])
def test_helm_run_output_means_equal_the_stats_helm_reports(metric):
    cube = helm.load(PRODUCED, template_args=["variant"], metric=metric)
    means = cube.score.mean("sample").sel(model="simple/model1").squeeze("task")
    got = dict(zip(cube.template_id.values[0].tolist(), means.values.tolist(), strict=True))
    expected = {}
    for run in sorted(PRODUCED.iterdir()):
        name = json.loads((run / "run_spec.json").read_text())["name"]
        variant = dict(arg.split("=") for arg in name.split(":")[1].split(","))["variant"]
        for stat in json.loads((run / "stats.json").read_text()):
            name = stat["name"]
            perturbation = name.get("perturbation")
            if (
                name["name"] != metric
                or name["split"] != "test"
                or (perturbation is not None and perturbation["computed_on"] != "perturbed")
            ):
                continue
            expected[f"variant={variant}|{_label(perturbation)}"] = stat["mean"]
    assert set(got) == set(expected) and len(got) == 6
    np.testing.assert_allclose([got[k] for k in expected], list(expected.values()))


def test_helm_run_perturbations_are_templates_and_the_unperturbed_is_original():
    cube = helm.load(PRODUCED, template_args=["variant"])
    ids = cube.template_id.values[0].tolist()
    original = cube.template_is_original.values[0].tolist()
    assert original == [i.endswith("|original") for i in ids] and sum(original) == 2
    assert set(cube.template_perturbation.values[0]) == {"original", "lowercase", "typos(prob=0.3)"}
