"""The Hugging Face collector on tiny GPT-2 and T5 models built and trained here, offline."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported

import functools
import json
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_models
import torch

import rankstats
from rankstats_collectors.cache import ResponseCache
from rankstats_collectors.hf import CollectorError, collect
from rankstats_collectors.hf import run as run_module
from rankstats_collectors.hf.likelihood import score_options
from rankstats_collectors.hf.loading import resolve
from rankstats_collectors.prompts.formatting import TemplateError
from rankstats_collectors.records import records_to_cube, rescore
from rankstats_collectors.tasks import Sample, Template, load_samples, load_templates


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared machine: one thread is fastest
    yield {
        name: str(path)
        for name, path in hf_models.build_models(tmp_path_factory.mktemp("models")).items()
    }
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tasks():
    return (
        load_templates(hf_models.COLLECT / "templates.jsonl"),
        load_samples(hf_models.COLLECT / "samples.jsonl"),
    )


@pytest.fixture
def no_model_work(monkeypatch):
    """Fail the test if any model weights are loaded."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(run_module, "load_model", refuse)


class ForwardSpy:
    """Counts forward passes of the tiny models and records the prompts they start on.

    A prompt starts an encoder-decoder model's encoder, or a decoder-only
    model's pass that has no key/value cache to continue. The cache is found
    by its type, whatever keyword it travels under (``past_key_values``,
    then ``cache`` in transformers 5).
    """

    def __init__(self, monkeypatch, tokenizer, fail_after=None):
        from transformers import GPT2LMHeadModel, T5ForConditionalGeneration
        from transformers.models.t5.modeling_t5 import T5Stack

        self.calls = 0
        self.prompts = []
        self.fail_after = fail_after
        self.tokenizer = tokenizer
        for cls in (GPT2LMHeadModel, T5ForConditionalGeneration, T5Stack):
            monkeypatch.setattr(cls, "forward", self._spy(cls.forward))

    def _spy(self, original):
        # wraps: generate() reads the signature of forward to decide on position ids
        @functools.wraps(original)
        def forward(module, *args, **kwargs):
            self.calls += 1
            if self.fail_after is not None and self.calls > self.fail_after:
                raise KeyboardInterrupt("killed")
            ids, masks = kwargs.get("input_ids"), kwargs.get("attention_mask")
            if ids is not None:
                masks = torch.ones_like(ids) if masks is None else masks  # dropped: no padding
                name = type(module).__name__
                starts = (
                    not module.is_decoder
                    if name == "T5Stack"
                    else name.startswith("GPT2") and cached_positions(kwargs) == 0
                )
                if starts:
                    for row, mask in zip(ids, masks, strict=True):
                        self.prompts.append((name, self.tokenizer.decode(row[mask.bool()])))
            return original(module, *args, **kwargs)

        return forward


def cached_positions(kwargs) -> int:
    """Positions already held by the key/value cache among a forward pass's arguments."""
    from transformers import Cache

    for value in kwargs.values():
        if isinstance(value, Cache):
            return value.get_seq_length()
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            return value[0][0].shape[-2]  # older releases: (key, value) per layer
    return 0


# batching ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["generate", "likelihood"])
def test_batched_equals_one_at_a_time(tiny, tasks, mode):
    templates, samples = tasks
    models = [tiny["gpt2"], tiny["t5"]]
    alone = collect(models, templates, samples, mode=mode, batch_size=1, max_new_tokens=6)
    batched = collect(models, templates, samples, mode=mode, batch_size=7, max_new_tokens=6)
    np.testing.assert_array_equal(alone.response.values, batched.response.values)
    np.testing.assert_array_equal(alone.score.values, batched.score.values)
    # not degenerate: some right, some wrong, several distinct answers
    scores = batched.score.values[~np.isnan(batched.score.values)]
    assert 0 < scores.mean() < 1
    assert len({r for r in batched.response.values.ravel() if r}) >= 3


def test_stop_strings_cut_the_greedy_response(tiny, tasks):
    from rankstats_collectors.hf.generate import cut_at_stop

    templates, samples = tasks
    models = [tiny["gpt2"], tiny["t5"]]
    free = collect(models, templates, samples, stop=[], max_new_tokens=8, batch_size=4)
    stopped = collect(models, templates, samples, stop=["e", "a"], max_new_tokens=8, batch_size=4)
    expected = [cut_at_stop(r, ["e", "a"])[0] for r in free.response.values.ravel()]
    assert stopped.response.values.ravel().tolist() == expected
    assert expected != free.response.values.ravel().tolist()


def direct_logprob(model, prompt_ids, option_ids, encoder_decoder):
    """log P(option | prompt) from one plain forward pass over one (prompt, option) pair."""
    with torch.no_grad():
        if encoder_decoder:
            out = model(input_ids=torch.tensor([prompt_ids]), labels=torch.tensor([option_ids]))
            return -out.loss.item() * len(option_ids)
        ids = torch.tensor([prompt_ids + option_ids])
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        start = len(prompt_ids)
        return sum(logprobs[start - 1 + j, token].item() for j, token in enumerate(option_ids))


@pytest.mark.parametrize("name", ["gpt2", "t5"])
def test_likelihood_matches_direct_computation(tiny, tasks, name):
    from rankstats_collectors.hf.loading import load_model
    from rankstats_collectors.prompts.formatting import render

    spec = resolve(tiny[name])
    model = load_model(spec, torch.device("cpu"), torch.float32)
    tokenizer = spec.tokenizer
    templates, samples = tasks
    prefix = "" if spec.encoder_decoder else " "
    prompts, options = [], []
    for task in templates:
        for template in templates[task]:
            for sample in samples[task]:
                prompts.append(tokenizer(render(template.text, sample.fields))["input_ids"])
                options.append(
                    [
                        tokenizer(prefix + o, add_special_tokens=False)["input_ids"]
                        for o in sample.options
                    ]
                )
    with pytest.MonkeyPatch.context() as patch:
        spy = ForwardSpy(patch, tokenizer)
        batched = score_options(
            model, tokenizer, prompts, options, encoder_decoder=spec.encoder_decoder, batch_size=6
        )
    # each prompt is encoded once, whatever its number of options: for the decoder-only
    # model one pass over the prompts and one over all their options, per batch of 6
    assert len(spy.prompts) == len(prompts)
    if not spec.encoder_decoder:
        assert spy.calls == 2 * 3
    alone = score_options(
        model, tokenizer, prompts, options, encoder_decoder=spec.encoder_decoder, batch_size=1
    )
    for i, (prompt, choices) in enumerate(zip(prompts, options, strict=True)):
        direct = [direct_logprob(model, prompt, c, spec.encoder_decoder) for c in choices]
        np.testing.assert_allclose(batched[i].logprobs, direct, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(alone[i].logprobs, direct, rtol=1e-4, atol=1e-4)
        assert batched[i].best("sum") == int(np.argmax(direct))
        mean = np.array(direct) / np.array([len(c) for c in choices])
        assert batched[i].best("mean") == int(np.argmax(mean))
    assert len(prompts) == 18


def test_likelihood_cube_picks_the_direct_best_option(tiny, tasks):
    from rankstats_collectors.hf.loading import load_model

    templates, samples = tasks
    cube = collect([tiny["gpt2"]], templates, samples, mode="likelihood")
    spec = resolve(tiny["gpt2"])
    model = load_model(spec, torch.device("cpu"), torch.float32)
    tokenizer = spec.tokenizer
    for t, task in enumerate(cube.task.values):
        for template in templates[task]:
            for sample in samples[task]:
                prompt = tokenizer(template.text.format(**sample.fields))["input_ids"]
                direct = [
                    direct_logprob(model, prompt, tokenizer(" " + o)["input_ids"], False)
                    for o in sample.options
                ]
                k = list(cube.template_id.values[t]).index(template.id)
                s = list(cube.sample_id.values[t]).index(sample.id)
                response = cube.response.values[0, t, k, s]
                assert response == sample.options[int(np.argmax(direct))]
                # the per-sample log-probabilities the cube keeps: every option's, and the
                # response's
                stored = cube.option_logprob.values[0, t, k, s, : len(direct)]
                np.testing.assert_allclose(stored, direct, atol=1e-4)
                assert np.isnan(cube.option_logprob.values[0, t, k, s, len(direct) :]).all()
                assert cube.logprob.values[0, t, k, s] == pytest.approx(max(stored), abs=1e-9)
                lengths = [len(tokenizer(" " + o)["input_ids"]) for o in sample.options]
                assert cube.option_tokens.values[0, t, k, s, : len(direct)].tolist() == lengths
                gold = sample.gold if isinstance(sample.gold, list) else [sample.gold]
                assert cube.score.values[0, t, k, s] == float(
                    response.lower() in [g.lower() for g in gold]
                )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_weights_load_in_the_requested_dtype(tiny, dtype):
    # releases before the keyword ``dtype`` would pass it on to the config and load float32
    from rankstats_collectors.hf.loading import load_model

    model = load_model(resolve(tiny["gpt2"]), torch.device("cpu"), dtype)
    assert model.dtype == dtype


# resuming ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["generate", "likelihood"])
def test_resume_after_interruption_repeats_no_forward_pass(
    tiny, tasks, tmp_path, monkeypatch, mode
):
    templates, samples = tasks
    models = [tiny["gpt2"], tiny["t5"]]
    tokenizer = resolve(tiny["gpt2"]).tokenizer
    path = tmp_path / "cache.jsonl"
    options = {"mode": mode, "batch_size": 3, "max_new_tokens": 6}

    with monkeypatch.context() as patch:
        killed = ForwardSpy(patch, tokenizer, fail_after=10)
        with pytest.raises(KeyboardInterrupt):
            collect(models, templates, samples, cache=path, **options)
    stored = len(ResponseCache(path))
    assert 0 < stored < 2 * 18 and killed.prompts

    with monkeypatch.context() as patch:
        resumed = ForwardSpy(patch, tokenizer)
        cube = collect(models, templates, samples, cache=path, **options)
    # every prompt the first run stored is skipped; the others run once each
    assert len(ResponseCache(path)) == 2 * 18
    assert len(resumed.prompts) == 2 * 18 - stored
    assert len(set(resumed.prompts)) == len(resumed.prompts)

    with monkeypatch.context() as patch:
        again = ForwardSpy(patch, tokenizer)
        patch.setattr(run_module, "load_model", lambda *a: pytest.fail("a model was loaded"))
        repeat = collect(models, templates, samples, cache=path, **options)
    assert again.calls == 0
    np.testing.assert_array_equal(repeat.response.values, cube.response.values)
    fresh = collect(models, templates, samples, **options)
    np.testing.assert_array_equal(fresh.response.values, cube.response.values)


def test_rescoring_reruns_nothing(tiny, tasks, tmp_path, monkeypatch):
    templates, samples = tasks
    path = tmp_path / "cache.jsonl"
    first = collect([tiny["t5"]], templates, samples, cache=path, max_new_tokens=6)
    monkeypatch.setattr(run_module, "load_model", lambda *a: pytest.fail("a model was loaded"))

    def first_letter(response, sample):
        gold = sample.gold if isinstance(sample.gold, str) else sample.gold[0]
        return float(response.strip()[:1].lower() == gold[:1].lower())

    second = collect(
        [tiny["t5"]], templates, samples, cache=path, max_new_tokens=6, scorer=first_letter
    )
    np.testing.assert_array_equal(first.response.values, second.response.values)
    present = ~np.isnan(first.score.values)
    expected = [
        first_letter(r, g)
        for r, g in zip(
            first.response.values[present],
            np.broadcast_to(_golds(first, samples)[None], first.score.shape)[present],
            strict=True,
        )
    ]
    assert second.score.values[present].tolist() == expected
    assert second.attrs["metric"] == "first_letter"
    # the same from the cube alone, without the cache
    rescored = rescore(first, samples, first_letter)
    np.testing.assert_array_equal(rescored.score.values, second.score.values)
    assert rescore(second, samples, "exact_match").score.equals(first.score)
    # another decoding setting is another key: it needs the model
    with pytest.raises(pytest.fail.Exception):
        collect([tiny["t5"]], templates, samples, cache=path, max_new_tokens=7)


def _golds(cube, samples):
    """Sample objects laid out as (task, template, sample) positions of ``cube``."""
    out = np.empty(cube.score.shape[1:], dtype=object)
    for t, task in enumerate(cube.task.values):
        by_id = {s.id: s for s in samples[task]}
        for s, sample_id in enumerate(cube.sample_id.values[t]):
            out[t, :, s] = by_id.get(sample_id, Sample("", {}, ""))
    return out


# provenance ----------------------------------------------------------------------------------


def test_cube_records_revision_settings_versions(tiny, tasks, tmp_path):
    templates, samples = tasks
    cube = collect(
        [tiny["gpt2"], tiny["t5"]], templates, samples, max_new_tokens=5, stop=["\n", "."]
    )
    assert cube.model_architecture.values.tolist() == ["decoder-only", "encoder-decoder"]
    assert all(r.startswith("sha256:") for r in cube.model_revision.values)
    settings = json.loads(cube.attrs["collector_settings"])
    assert settings["max_new_tokens"] == 5 and settings["stop"] == ["\n", "."]
    assert settings["mode"] == "generate" and settings["scorer"] == "exact_match"
    versions = json.loads(cube.attrs["library_versions"])
    assert versions["torch"] == torch.__version__.split("+")[0] or versions["torch"]
    assert cube.template_method.values.tolist()[0] == ["original", "rephrase", "manual"]
    assert "prompts/s" in cube.attrs["collect_summary"]
    path = rankstats.save(cube, tmp_path / "cube.nc")
    reopened = rankstats.open_cube(path)
    np.testing.assert_array_equal(
        reopened.response.values.astype(str), cube.response.values.astype(str)
    )
    # the weights' hash changes when the weights do
    assert resolve(tiny["gpt2"]).revision != resolve(tiny["t5"]).revision


def test_chat_template_wraps_each_prompt(tiny, tasks, tmp_path, capsys):
    import shutil

    templates, samples = tasks
    folder = tmp_path / "chat-gpt2"
    shutil.copytree(tiny["gpt2"], folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = "{% for m in messages %}User: {{ m['content'] }}{% endfor %} Bot:"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    chat = collect([str(folder)], templates, samples, chat=True, max_new_tokens=4, progress=True)
    bar = capsys.readouterr().err
    assert "18/18" in bar  # the progress bar counts templates × samples
    wrapped = {
        task: [Template(t.id, f"User: {t.text} Bot:", t.attributes) for t in ts]
        for task, ts in templates.items()
    }
    plain = collect([str(folder)], wrapped, samples, max_new_tokens=4)
    np.testing.assert_array_equal(chat.response.values, plain.response.values)
    with pytest.raises(CollectorError, match="no chat template"):
        collect([tiny["gpt2"]], templates, samples, chat=True)


# errors before any model work ----------------------------------------------------------------


def test_unknown_model_fails_before_model_work(tasks, tmp_path, no_model_work):
    templates, samples = tasks
    with pytest.raises(CollectorError, match=r"model '.*no-such-model'.*not found"):
        collect([str(tmp_path / "no-such-model")], templates, samples)


def test_template_field_the_samples_lack(tiny, no_model_work):
    templates = {"t": [Template("good", "{q}"), Template("bad", "{q} {hint}")]}
    samples = {"t": [Sample("1", {"q": "?"}, "a")]}
    with pytest.raises(TemplateError) as caught:
        collect([tiny["gpt2"]], templates, samples)
    assert all(part in str(caught.value) for part in ("task 't'", "'bad'", "field 'hint'"))


def test_sample_missing_a_field(tiny, no_model_work):
    templates = {"t": [Template("1", "{q} / {r}")]}
    samples = {"t": [Sample("1", {"q": "?", "r": "!"}, "a"), Sample("2", {"q": "?"}, "a")]}
    with pytest.raises(TemplateError) as caught:
        collect([tiny["gpt2"]], templates, samples)
    assert all(p in str(caught.value) for p in ("template '1'", "sample 2", "field 'r'"))


def test_other_planning_errors(tiny, tasks, no_model_work):
    templates, samples = tasks
    with pytest.raises(CollectorError, match="sample 1: likelihood scoring needs 'options'"):
        collect(
            [tiny["gpt2"]],
            {"t": [Template("1", "{q}")]},
            {"t": [Sample("1", {"q": "?"}, "a")]},
            mode="likelihood",
        )
    with pytest.raises(CollectorError, match="task 'extra' has templates but no samples"):
        collect([tiny["gpt2"]], {**templates, "extra": [Template("1", "x")]}, samples)
    with pytest.raises(CollectorError, match="mode 'sample'"):
        collect([tiny["gpt2"]], templates, samples, mode="sample")
    with pytest.raises(CollectorError, match=r"task 't', sample 1: the gold answer None"):
        collect(
            [tiny["gpt2"]], {"t": [Template("1", "{q}")]}, {"t": [Sample("1", {"q": "?"}, None)]}
        )
    with pytest.raises(CollectorError, match="given twice"):
        collect([tiny["gpt2"], tiny["gpt2"]], templates, samples)
    with pytest.raises(CollectorError, match="dtype 'int8'"):
        collect([tiny["gpt2"]], templates, samples, dtype="int8")


MISSING_EXTRA = """
import sys
sys.modules["torch"] = None  # as if torch were not installed
from rankstats_collectors import MissingExtraError
from rankstats_collectors.cli import load_collector
from rankstats.cli import main
try:
    load_collector("hf")
except MissingExtraError as error:
    print("load_collector:", error)
print("status:", main(["collect", "hf", "--model", "m", "--samples", "s.jsonl",
                       "--templates", "t.jsonl", "-o", "cube.nc"]))
"""


def test_missing_extra_names_the_install_command():
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", MISSING_EXTRA],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert (
        "load_collector: this collector needs 'torch': pip install \"rankstats[hf]\"" in done.stdout
    )
    assert "status: 3" in done.stdout
    assert 'pip install "rankstats[hf]"' in done.stderr


def test_unknown_backend():
    from rankstats_collectors.cli import load_collector

    with pytest.raises(KeyError, match="no collector named 'nope'"):
        load_collector("nope")


# records -------------------------------------------------------------------------------------


def test_records_to_cube_places_responses_whatever_the_row_order():
    rows = [
        {
            "model": m,
            "task": t,
            "template": k,
            "sample": s,
            "score": float(hash((m, s)) % 2),
            "response": f"{m}|{t}|{k}|{s}",
            "template_method": f"method-{k}",
        }
        for m in ("a", "b")
        for t in ("t1", "t2")
        for k in ("x", "y", "z")[: 2 + (t == "t2")]
        for s in ("1", "2", "3")[: 2 + (t == "t1")]
    ]
    order = np.random.default_rng(0).permutation(len(rows))
    cube = records_to_cube(
        [rows[i] for i in order],
        metric="m",
        source="test",
        attrs={"settings": {"a": [1, 2]}, "flag": True},
    )
    for mi, m in enumerate(cube.model.values):
        for ti, t in enumerate(cube.task.values):
            for ki, k in enumerate(cube.template_id.values[ti]):
                for si, s in enumerate(cube.sample_id.values[ti]):
                    expected = f"{m}|{t}|{k}|{s}" if k and s else ""
                    assert cube.response.values[mi, ti, ki, si] == expected
    assert json.loads(cube.attrs["settings"]) == {"a": [1, 2]} and cube.attrs["flag"] == 1
    methods = [f"method-{k}" if k else "" for k in cube.template_id.values.ravel()]
    assert cube.template_method.values.ravel().tolist() == methods
    assert sorted(cube.template_id.values[list(cube.task.values).index("t2")]) == ["x", "y", "z"]


# the command ---------------------------------------------------------------------------------


def test_command_on_the_papers_templates_and_samples(tiny, tmp_path, capsys):
    from rankstats.cli import main

    output = tmp_path / "cube.nc"
    arguments = [
        "collect",
        "hf",
        "--model",
        tiny["gpt2"],
        "--model",
        tiny["t5"],
        "--samples",
        str(hf_models.RELEASE_SAMPLES),
        "--templates",
        str(hf_models.RELEASE_TEMPLATES),
        "--skip-malformed-templates",
        "--max-templates",
        "4",
        "--max-new-tokens",
        "4",
        "--batch-size",
        "16",
        "--no-progress",
        "-o",
        str(output),
    ]
    for task in hf_models.BBH_TASKS:
        arguments += ["--task", task]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "prompts/s" in printed and "tokens/s" in printed and f"wrote {output}" in printed
    cube = rankstats.open_cube(output)
    assert cube.score.dims == ("model", "task", "template", "sample")
    assert dict(cube.sizes) == {"model": 2, "task": 3, "template": 4, "sample": 12}
    assert cube.attrs["score_kind"] == "binary"
    assert bool(cube.template_is_original.values[:, 0].all())
    # a second run finds everything in the cache
    assert main(arguments) == 0
    assert "288 scores (288 from the cache" in capsys.readouterr().out

    assert main(["report", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "Kendall" in printed
    # the report's item-level sections: Cochran's Q and McNemar between the leaders
    assert "Can the two leaders be told apart item by item?" in printed
    assert "Does the template change which items a model gets right?" in printed
    # McNemar between the two models, per task and template, on the collected samples
    scores = cube.score.values
    test = rankstats.pairwise_mcnemar(cube.score)
    first, second = cube.model.values
    pair = test.sel(model=first, model_b=second).transpose("task", "template")
    np.testing.assert_array_equal(pair.b.values, ((scores[0] == 1) & (scores[1] == 0)).sum(-1))
    np.testing.assert_array_equal(pair.c.values, ((scores[0] == 0) & (scores[1] == 1)).sum(-1))
    assert np.isfinite(pair.pvalue.values).all()
    assert main(["edits", str(output), "--max-distance", "30"]) == 0
    assert "McNemar" in capsys.readouterr().out


def test_registered_as_a_collector():
    from importlib.metadata import entry_points

    import rankstats_collectors

    assert "hf" in rankstats_collectors.available()
    (entry,) = [
        e for e in entry_points(group=rankstats_collectors.ENTRY_POINT_GROUP) if e.name == "hf"
    ]
    assert entry.load() is rankstats_collectors.hf.cli
