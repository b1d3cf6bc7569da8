"""Run models over every template × sample, resumably, and build the cube.

The work is planned and checked in full before any model is loaded: every
template is rendered for every sample, every model's configuration and
tokenizer are read, and each prompt gets its cache key. Only prompts whose
key is not in the cache are run, batch by batch, each batch stored as soon
as it completes; the cube is then assembled from the cache, so rescoring
with another scorer reruns nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..cache import ResponseCache
from ..prompts.formatting import check_fields, render
from ..records import records_to_cube
from ..scoring import get_scorer
from ..tasks import Sample, Template
from .errors import CollectorError
from .loading import (
    ModelSpec,
    choose_device,
    choose_dtype,
    library_versions,
    load_model,
    resolve,
)

__all__ = ["MODES", "Settings", "Summary", "collect"]

MODES = ("generate", "likelihood")


@dataclass(frozen=True)
class Settings:
    """Everything that changes a model's output, apart from the model and the prompt."""

    mode: str = "generate"
    max_new_tokens: int = 16
    stop: tuple[str, ...] = ("\n",)
    chat: bool = False
    option_prefix: str | None = None
    dtype: str = "auto"

    def key_parts(self, spec: ModelSpec) -> dict:
        """The settings that enter the cache key for ``spec`` (only those its mode uses)."""
        parts = {"mode": self.mode, "chat": self.chat, "dtype": self.dtype}
        if self.mode == "generate":
            parts.update(
                max_new_tokens=self.max_new_tokens, stop=list(self.stop), decoding="greedy"
            )
        else:
            parts["option_prefix"] = self.prefix(spec)
        return parts

    def prefix(self, spec: ModelSpec) -> str:
        """Text put before each option: a space after a decoder-only prompt, else nothing."""
        if self.option_prefix is not None:
            return self.option_prefix
        return "" if spec.encoder_decoder else " "


@dataclass
class Summary:
    """What a collection did: units (template × sample × model), prompts run, speed."""

    units: int = 0
    cached: int = 0
    computed_prompts: int = 0
    tokens: int = 0
    seconds: float = 0.0
    per_model: dict = field(default_factory=dict)

    @property
    def prompts_per_second(self) -> float:
        """Prompts run per second of model time (NaN when none ran)."""
        return self.computed_prompts / self.seconds if self.seconds else float("nan")

    @property
    def tokens_per_second(self) -> float:
        """Tokens processed (prompt, generated or option tokens) per second of model time."""
        return self.tokens / self.seconds if self.seconds else float("nan")

    def text(self) -> str:
        """The summary as lines of text."""
        lines = [
            f"hf: {self.units} scores ({self.cached} from the cache, "
            f"{self.units - self.cached} computed from {self.computed_prompts} prompts)"
        ]
        if self.computed_prompts:
            lines.append(
                f"  {self.seconds:.2f} s of model time: "
                f"{self.prompts_per_second:.1f} prompts/s, "
                f"{self.tokens_per_second:.0f} tokens/s"
            )
        for model, counts in self.per_model.items():
            lines.append(
                f"  {model}: {counts['computed']} prompts run, "
                f"{counts['cached']} scores from the cache"
            )
        return "\n".join(lines)


@dataclass
class _Unit:
    task: str
    template: Template
    sample: Sample
    prompt: str


def _plan(
    templates: Mapping[str, Sequence[Template]], samples: Mapping[str, Sequence[Sample]], mode: str
) -> list[_Unit]:
    """Every (task, template, sample) with its rendered prompt; all checks before any model."""
    missing = [task for task in templates if task not in samples]
    if missing:
        raise CollectorError(
            f"task {missing[0]!r} has templates but no samples "
            f"(tasks with samples: {', '.join(samples) or 'none'})"
        )
    units = []
    for task, task_templates in templates.items():
        task_samples = samples[task]
        if not task_templates or not task_samples:
            raise CollectorError(f"task {task!r} has no templates or no samples")
        check_fields({t.id: t.text for t in task_templates}, task_samples, task=task)
        if mode == "likelihood":
            for sample in task_samples:
                if not sample.options:
                    raise CollectorError(
                        f"task {task!r}, sample {sample.id}: likelihood "
                        "scoring needs 'options', and this sample has none"
                    )
                if not all(isinstance(o, str) and o for o in sample.options):
                    raise CollectorError(
                        f"task {task!r}, sample {sample.id}: every option "
                        f"must be non-empty text ({sample.options!r})"
                    )
        for template in task_templates:
            for sample in task_samples:
                prompt = render(template.text, sample.fields, template_id=template.id)
                units.append(_Unit(task, template, sample, prompt))
    return units


def _check_golds(units: list[_Unit]) -> None:
    """The built-in scorers compare text: every gold answer must be text (or a list of it)."""
    for unit in units:
        gold = unit.sample.gold
        if not (
            isinstance(gold, str)
            or (isinstance(gold, list) and gold and all(isinstance(g, str) for g in gold))
        ):
            raise CollectorError(
                f"task {unit.task!r}, sample {unit.sample.id}: the gold answer {gold!r} is not "
                "text or a list of texts; the built-in scorers need one (or pass a callable "
                "scorer)"
            )


def _encode(spec: ModelSpec, prompt: str, chat: bool) -> list[int]:
    tokenizer = spec.tokenizer
    if chat:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        return tokenizer(text, add_special_tokens=False)["input_ids"]
    return tokenizer(prompt)["input_ids"]


def _progress(total: int, enabled: bool, description: str):
    if not enabled:
        return None
    from tqdm import tqdm  # a requirement of the hf extra; only needed here

    return tqdm(total=total, desc=description, unit="prompt", dynamic_ncols=True)


def _run_model(spec, model_loader, jobs, settings, batch_size, cache, summary, progress):
    """Run ``jobs`` (cache key → [prompt, options, units]) through one model.

    Each batch is stored in the cache as soon as it completes, so an
    interruption loses at most the batch in flight.
    """
    from .generate import generate
    from .likelihood import score_options

    keys = list(jobs)
    model = model_loader()
    prompts = [_encode(spec, jobs[k][0], settings.chat) for k in keys]

    def store(batch, results):
        for i, result in zip(batch, results, strict=True):
            cache.put(keys[i], _record(result, jobs[keys[i]][1], settings))
            summary.tokens += result.prompt_tokens + (
                result.new_tokens if settings.mode == "generate" else sum(result.tokens)
            )
        summary.computed_prompts += len(batch)
        if progress is not None:
            progress.update(sum(jobs[keys[i]][2] for i in batch))

    started = time.perf_counter()
    try:
        if settings.mode == "generate":
            generate(
                model,
                spec.tokenizer,
                prompts,
                encoder_decoder=spec.encoder_decoder,
                max_new_tokens=settings.max_new_tokens,
                stop=settings.stop,
                batch_size=batch_size,
                on_batch=store,
            )
        else:
            prefix = settings.prefix(spec)
            options = [
                [
                    spec.tokenizer(prefix + option, add_special_tokens=False)["input_ids"]
                    for option in jobs[k][1]
                ]
                for k in keys
            ]
            score_options(
                model,
                spec.tokenizer,
                prompts,
                options,
                encoder_decoder=spec.encoder_decoder,
                batch_size=batch_size,
                on_batch=store,
            )
    finally:
        summary.seconds += time.perf_counter() - started


def _record(result, options, settings) -> dict:
    if settings.mode == "generate":
        return {
            "response": result.text,
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
        }
    return {
        "options": list(options),
        "logprobs": result.logprobs,
        "tokens": result.tokens,
        "prompt_tokens": result.prompt_tokens,
    }


def _logprobs(record: dict, choose: str) -> dict:
    """Likelihood mode: the chosen option's log-probability, and every option's with its length."""
    if "logprobs" not in record:
        return {}
    from .likelihood import OptionScores

    scores = OptionScores(record["logprobs"], record["tokens"], record["prompt_tokens"])
    return {
        "logprob": float(record["logprobs"][scores.best(choose)]),
        "option_logprob": [float(v) for v in record["logprobs"]],
        "option_tokens": [int(n) for n in record["tokens"]],
    }


def _response(record: dict, choose: str) -> str:
    if "response" in record:
        return record["response"]
    from .likelihood import OptionScores

    scores = OptionScores(record["logprobs"], record["tokens"], record["prompt_tokens"])
    return record["options"][scores.best(choose)]


def collect(
    models: Sequence[str],
    templates: Mapping[str, Sequence[Template]],
    samples: Mapping[str, Sequence[Sample]],
    *,
    mode: str = "generate",
    scorer: str | Callable = "exact_match",
    normalisation: Mapping | None = None,
    max_new_tokens: int = 16,
    stop: Sequence[str] = ("\n",),
    chat: bool = False,
    choose: str = "sum",
    option_prefix: str | None = None,
    batch_size: int = 8,
    device: str | None = None,
    dtype: str = "auto",
    revision: str | None = None,
    cache=None,
    progress: bool = False,
    metric: str | None = None,
):
    """Score Hugging Face models on every template × sample of some tasks.

    Parameters
    ----------
    models : sequence of str
        Local model folders (``save_pretrained``) or Hub model ids; decoder-only
        (``AutoModelForCausalLM``) or encoder-decoder (``AutoModelForSeq2SeqLM``).
    templates : mapping
        Task → its :class:`~rankstats_collectors.tasks.Template` list.
    samples : mapping
        Task → its :class:`~rankstats_collectors.tasks.Sample` list.
    mode : {"generate", "likelihood"}
        ``generate``: greedy decoding, then ``scorer`` compares the response
        with the gold answer. ``likelihood``: the response is the option
        with the highest log-probability given the prompt (samples need
        ``options``), then ``scorer`` compares it with the gold answer.
    scorer : str or callable
        ``"exact_match"``, ``"contains"`` or a callable ``(response, sample)
        -> float`` (see :func:`rankstats_collectors.scoring.get_scorer`).
    normalisation : mapping, optional
        Options of :func:`rankstats_collectors.scoring.normalise` for the built-in
        scorers.
    max_new_tokens : int
        The most tokens generated per prompt (``generate``).
    stop : sequence of str
        Stop strings; a response ends before the first one (``generate``).
    chat : bool
        Put each prompt through the tokenizer's chat template as a user turn.
    choose : {"sum", "mean"}
        ``likelihood``: pick the option with the highest summed, or
        per-token mean, log-probability.
    option_prefix : str, optional
        ``likelihood``: text before each option; by default a space for
        decoder-only models and nothing for encoder-decoder ones.
    batch_size : int
        Prompts per forward pass, sorted by length.
    device : str, optional
        A torch device; by default CUDA when present, else CPU.
    dtype : str
        ``"auto"`` (bfloat16 or float16 on CUDA, float32 on CPU) or a torch
        floating dtype name.
    revision : str, optional
        The Hub revision of every model.
    cache : str, os.PathLike or ResponseCache, optional
        The response cache; without one nothing is kept between runs.
    progress : bool
        Show a progress bar (templates × samples per model, with ETA).
    metric : str, optional
        The cube's ``metric``; by default the scorer's name.

    Returns
    -------
    xarray.Dataset
        A validated cube ``score(model, task, template, sample)`` with the raw
        ``response`` of each cell, ``model_revision(model)``,
        ``model_architecture(model)``, ``template_text`` and the templates'
        attributes as ``template_*`` coordinates; attributes record the
        settings (``collector_settings``), library versions and the
        ``collect_summary`` (with prompts/s and tokens/s).

    Raises
    ------
    CollectorError
        A model cannot be found, or the tasks cannot be run as given
        (before any model is loaded).
    rankstats_collectors.prompts.formatting.TemplateError
        A template is malformed or names a field a sample lacks (before any
        model is loaded); the message names the task, template, sample and
        field.

    Notes
    -----
    A prompt's cache key holds the collector, the model and its revision,
    the settings that change the output (mode, decoding settings, stop
    strings, chat template, dtype, option prefix) and the rendered prompt
    (and, for likelihood, the options), so a run restarted with the same
    arguments runs only what the cache lacks. The scorer and ``choose`` are
    applied when the cube is built, from the stored responses and
    log-probabilities, so changing them reruns nothing. Identical prompts
    (e.g. a template without fields) are run once.

    Examples
    --------
    Everything is checked before any model is loaded:

    >>> from rankstats_collectors.hf import collect
    >>> from rankstats_collectors.tasks import Sample, Template
    >>> collect(["./my-model"], {"capital": [Template("1", "The capital of {country} is")]},
    ...         {"capital": [Sample("fr", {"nation": "France"}, "Paris")]})
    Traceback (most recent call last):
    ...
    rankstats_collectors.prompts.formatting.TemplateError: task 'capital', template '1' \
('The capital of {country} is'): sample fr has no field 'country' (it has: nation)
    """
    if mode not in MODES:
        raise CollectorError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    if choose not in ("sum", "mean"):
        raise CollectorError(f"choose {choose!r} is not 'sum' or 'mean'")
    if max_new_tokens < 1 or batch_size < 1:
        raise CollectorError("max_new_tokens and batch_size must be at least 1")
    if not models:
        raise CollectorError("no models given")
    repeated = [m for i, m in enumerate(models) if m in models[:i]]
    if repeated:
        raise CollectorError(f"model {repeated[0]!r} is given twice")
    score = get_scorer(scorer, **dict(normalisation or {}))
    device_ = choose_device(device)
    torch_dtype = choose_dtype(str(dtype), device_)
    # the dtype actually used enters the cache key: "auto" differs between CPU and CUDA
    settings = Settings(
        mode,
        int(max_new_tokens),
        tuple(stop),
        bool(chat),
        option_prefix,
        str(torch_dtype).removeprefix("torch."),
    )
    units = _plan(templates, samples, mode)
    if isinstance(scorer, str):
        _check_golds(units)
    specs = [resolve(model, revision=revision, chat=chat) for model in models]
    if not isinstance(cache, ResponseCache):
        cache = ResponseCache(cache) if cache is not None else _MemoryCache()

    summary = Summary(units=len(units) * len(specs))
    keys_per_model = []
    for spec in specs:
        base = {
            "collector": "hf",
            "model": spec.name,
            "revision": spec.revision,
            **settings.key_parts(spec),
        }
        keys = []
        jobs: dict[str, list] = {}
        for unit in units:
            options = list(unit.sample.options) if mode == "likelihood" else None
            parts = {**base, "prompt": unit.prompt}
            if options is not None:
                parts["options"] = options
            key = ResponseCache.key(parts)
            keys.append(key)
            if key in cache:
                continue
            jobs.setdefault(key, [unit.prompt, options, 0])[2] += 1
        keys_per_model.append(keys)
        cached = len(units) - sum(job[2] for job in jobs.values())
        summary.cached += cached
        summary.per_model[spec.name] = {"computed": len(jobs), "cached": cached}
        if not jobs:
            continue
        bar = _progress(len(units), progress, spec.name)
        if bar is not None:
            bar.update(cached)
        try:
            _run_model(
                spec,
                lambda spec=spec: load_model(spec, device_, torch_dtype),
                jobs,
                settings,
                batch_size,
                cache,
                summary,
                bar,
            )
        finally:
            if bar is not None:
                bar.close()

    rows = []
    for spec, keys in zip(specs, keys_per_model, strict=True):
        for unit, key in zip(units, keys, strict=True):
            response = _response(cache.get(key), choose)
            row = {
                "model": spec.name,
                "task": unit.task,
                "template": unit.template.id,
                "sample": unit.sample.id,
                "score": float(score(response, unit.sample)),
                "response": response,
                "template_text": unit.template.text,
                "model_revision": spec.revision,
                "model_architecture": "encoder-decoder" if spec.encoder_decoder else "decoder-only",
            }
            for name, value in unit.template.attributes.items():
                row[name if name.startswith("template_") else f"template_{name}"] = value
            row.update(_logprobs(cache.get(key), choose))
            rows.append(row)
    scorer_name = scorer if isinstance(scorer, str) else getattr(scorer, "__name__", "custom")
    collector_settings = {
        **{k: v for k, v in settings.__dict__.items() if k != "option_prefix"},
        "stop": list(settings.stop),
        "option_prefix": settings.option_prefix,
        "choose": choose,
        "scorer": scorer_name,
        "normalisation": dict(normalisation or {}),
        "batch_size": batch_size,
        "device": str(device_),
        "revision": revision,
    }
    return records_to_cube(
        rows,
        metric=metric or (scorer_name if mode == "generate" else f"{scorer_name} (likelihood)"),
        source=f"rankstats collect hf: {', '.join(s.name for s in specs)} on "
        f"{', '.join(templates)}",
        attrs={
            "collector": "hf",
            "collector_settings": json.dumps(collector_settings),
            "library_versions": json.dumps(library_versions()),
            "collect_summary": summary.text(),
            "prompts_per_second": summary.prompts_per_second,
            "tokens_per_second": summary.tokens_per_second,
        },
    )


class _MemoryCache(ResponseCache):
    """A cache that keeps its records in memory only."""

    def __init__(self):
        self._records = {}
        self.path = None

    def put(self, key: str, record: dict) -> None:
        self._records[key] = dict(record)
