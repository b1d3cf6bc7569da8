"""Run OpenAI-compatible models over templates × samples and build a score cube.

Two ways to score a sample:

``"generate"``
    the model answers (temperature 0 by default) and the scorer compares the
    answer with the gold (``exact_match``, ``contains`` or a callable);
``"options"``
    for samples with ``options``, the option the model finds most likely is
    its answer: on the completions endpoint the summed log-probability of
    each option after the prompt (one ``echo`` request per option), on the
    chat endpoint the first generated token's top log-probabilities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import xarray as xr

from rankstats.errors import CubeError, OptionError
from rankstats.io import check_output

from ..cache import ResponseCache
from ..prompts.formatting import check_fields, render
from ..records import records_to_cube
from ..scoring import get_scorer
from ..tasks import Sample, Template
from .client import Request, Requester, run_requests
from .costs import Ledger, Plan

__all__ = ["Job", "Settings", "build_jobs", "collect", "public_url", "score_job"]

SCORINGS = ("generate", "options")


@dataclass(frozen=True)
class Settings:
    """Decoding settings: everything sent with a request that changes its answer.

    Transport settings (server address, key, timeout, concurrency, limits)
    live in :class:`~rankstats_collectors.openai.client.Requester` and are not part of
    the cache key.
    """

    endpoint: str = "chat"
    temperature: float = 0.0
    max_tokens: int = 16
    system: str | None = None
    scoring: str = "generate"
    top_logprobs: int = 20
    option_prefix: str = " "
    seed: int | None = None
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if self.scoring not in SCORINGS:
            raise OptionError(f"scoring must be one of {', '.join(SCORINGS)}, not {self.scoring!r}")


@dataclass(frozen=True)
class Job:
    """One (model, task, template, sample) cell and the requests that answer it."""

    model: str
    task: str
    template: Template
    sample: Sample
    prompt: str
    requests: tuple[Request, ...]
    options: tuple[str, ...] = ()


def _chat_body(prompt: str, settings: Settings, **more) -> dict:
    messages = [{"role": "system", "content": settings.system}] if settings.system else []
    messages.append({"role": "user", "content": prompt})
    body = {"messages": messages, "temperature": settings.temperature, **more}
    if settings.seed is not None:
        body["seed"] = settings.seed
    return {**body, **dict(settings.extra)}


def _requests(
    model: str, prompt: str, sample: Sample, settings: Settings, label: str
) -> tuple[tuple[Request, ...], tuple[str, ...]]:
    if settings.scoring == "options" and sample.options:
        options = tuple(str(o) for o in sample.options)
        if settings.endpoint == "completions":
            return tuple(
                Request(
                    model,
                    "completions",
                    {
                        "prompt": prompt + settings.option_prefix + option,
                        "max_tokens": 0,
                        "echo": True,
                        "logprobs": 0,
                        "temperature": settings.temperature,
                        **dict(settings.extra),
                    },
                    label=f"{label} option {i + 1}",
                )
                for i, option in enumerate(options)
            ), options
        body = _chat_body(
            prompt, settings, max_tokens=1, logprobs=True, top_logprobs=settings.top_logprobs
        )
        return (Request(model, "chat", body, label=label),), options
    if settings.endpoint == "chat":
        body = _chat_body(prompt, settings, max_tokens=settings.max_tokens)
    else:
        body = {
            "prompt": prompt,
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            **dict(settings.extra),
        }
        if settings.seed is not None:
            body["seed"] = settings.seed
    return (Request(model, settings.endpoint, body, label=label),), ()


def build_jobs(
    models: Sequence[str],
    templates: Mapping[str, Sequence[Template]],
    samples: Mapping[str, Sequence[Sample]],
    settings: Settings,
) -> list[Job]:
    """Every (model, task, template, sample) job, after checking every template's fields.

    Raises
    ------
    rankstats_collectors.prompts.formatting.TemplateError
        A template is malformed or a sample lacks a field (before any request).
    ValueError
        A task has templates but no samples, or the other way round.
    """
    tasks = sorted(set(templates) | set(samples))
    for task in tasks:
        if not templates.get(task) or not samples.get(task):
            raise CubeError(
                f"task {task!r} has {len(templates.get(task, []))} templates and "
                f"{len(samples.get(task, []))} samples; it needs both"
            )
        check_fields({t.id: t.text for t in templates[task]}, list(samples[task]), task=task)
    jobs = []
    for model in models:
        for task in tasks:
            for template in templates[task]:
                for sample in samples[task]:
                    prompt = render(template.text, sample.fields, template_id=template.id)
                    label = f"(task {task!r}, template {template.id!r}, sample {sample.id!r})"
                    requests, options = _requests(model, prompt, sample, settings, label)
                    jobs.append(Job(model, task, template, sample, prompt, requests, options))
    return jobs


def _option_logprob(record: dict, prompt_length: int) -> float:
    """Summed log-probability of the tokens after the prompt, from an echo request."""
    logprobs = record.get("logprobs") or {}
    total = 0.0
    for token, value, offset in zip(
        logprobs.get("tokens", []),
        logprobs.get("token_logprobs", []),
        logprobs.get("text_offset", []),
        strict=False,
    ):
        if offset + len(token) > prompt_length and value is not None:
            total += value
    return total


def _option_tokens(record: dict, prompt_length: int) -> int:
    """How many of an echo request's tokens come after the prompt: the option's length."""
    logprobs = record.get("logprobs") or {}
    return sum(
        1
        for token, offset in zip(
            logprobs.get("tokens", []), logprobs.get("text_offset", []), strict=False
        )
        if offset + len(token) > prompt_length
    )


def option_logprobs(job: Job, answers: Mapping[str, dict], settings: Settings) -> dict:
    """Per-sample log-probabilities of a multiple-choice job scored by echoed completions.

    ``logprob`` (the chosen option's, summed over its tokens), ``option_logprob``
    and ``option_tokens`` (each option's), as the cube keeps them; empty
    where they are not known (generated answers, or the chat endpoint's
    first token only).
    """
    if not (job.options and settings.endpoint == "completions"):
        return {}
    records = [answers[r.key] for r in job.requests]
    values = [_option_logprob(rec, len(job.prompt)) for rec in records]
    return {
        "logprob": max(values),
        "option_logprob": values,
        "option_tokens": [_option_tokens(rec, len(job.prompt)) for rec in records],
    }


def _first_token_choice(record: dict, options: Sequence[str]) -> str | None:
    """The option whose start best matches the first generated token's top alternatives."""
    content = record.get("logprobs") or []
    if not content:
        return None
    best, best_value = None, -math.inf
    for token, value in content[0]["top"]:
        start = token.strip().lower()
        if not start:
            continue
        for option in options:
            if option.strip().lower().startswith(start) and value > best_value:
                best, best_value = option, value
    return best


def score_job(
    job: Job, answers: Mapping[str, dict], settings: Settings, scorer: Callable
) -> tuple[float, str]:
    """The score and the response (the answer, or the chosen option) of one job."""
    records = [answers[r.key] for r in job.requests]
    if job.options and settings.endpoint == "completions":
        values = [_option_logprob(rec, len(job.prompt)) for rec in records]
        response = job.options[max(range(len(values)), key=values.__getitem__)]
    elif job.options:
        response = _first_token_choice(records[0], job.options) or records[0]["text"]
    else:
        response = records[0]["text"]
    return float(scorer(response, job.sample)), response


def public_url(url: str | None) -> str:
    """A server address fit to record: no user, password, query or fragment.

    Examples
    --------
    >>> from rankstats_collectors.openai.collection import public_url
    >>> public_url("https://user:secret@example.org:8000/v1?key=abc")
    'https://example.org:8000/v1'
    >>> public_url(None)
    'https://api.openai.com/v1'
    """
    if not url:
        return "https://api.openai.com/v1"
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _attribute_name(name: str) -> str:
    name = re.sub(r"\W+", "_", str(name)).strip("_")
    return name if name.startswith("template_") else f"template_{name}"


def plan(jobs: Sequence[Job], cache: ResponseCache, prices=None) -> Plan:
    """What a run of ``jobs`` would send, given what ``cache`` already holds."""
    result = Plan(prices=dict(prices or {}))
    seen = set()
    for job in jobs:
        for request in job.requests:
            if request.key in seen:
                continue
            seen.add(request.key)
            result.add(
                request.model,
                request.input_text,
                max_tokens=request.max_tokens,
                cached=request.key in cache,
            )
    return result


@dataclass
class Collection:
    """What :func:`collect` returns: the cube (None for a dry run), the ledger and the plan."""

    cube: xr.Dataset | None
    ledger: Ledger
    plan: Plan
    retries: int = 0


def collect(
    models: Sequence[str],
    templates: Mapping[str, Sequence[Template]],
    samples: Mapping[str, Sequence[Sample]],
    *,
    cache,
    settings: Settings | None = None,
    scorer: str | Callable = "exact_match",
    requester: Requester | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    dry_run: bool = False,
    output=None,
    force: bool = False,
    **transport,
) -> Collection:
    """Run every model over every template × sample and build the cube.

    Parameters
    ----------
    models : sequence of str
        Model names as the server knows them.
    templates, samples : mapping
        Task → templates / samples (see :mod:`rankstats_collectors.tasks`).
    cache : str, os.PathLike or ResponseCache
        The response cache; a rerun with the same arguments resumes from it.
    settings : Settings, optional
        Endpoint, decoding and scoring settings (default: chat, temperature
        0, 16 tokens, generated answers scored).
    scorer : str or callable
        ``"exact_match"``, ``"contains"`` or ``(prediction, sample) -> float``.
    requester : Requester, optional
        A configured requester; else one is built from ``transport``
        (``base_url``, ``api_key_env``, ``concurrency``, ``timeout``, ...).
    prices : mapping, optional
        Model → (dollars per 1M input tokens, per 1M output tokens).
    dry_run : bool
        Only plan: count requests and tokens, send nothing (no key needed).
    output : str or os.PathLike, optional
        Where the caller will write the cube: checked first
        (:func:`rankstats.io.check_output`: the folder exists and can be
        written, the path is not a folder nor, without ``force``, a
        write-protected file or a link), so a run that could not save its
        result stops before it sends a paid request.
    force : bool, default False
        Allow ``output`` to replace a write-protected file or a link.

    Returns
    -------
    Collection
        ``cube`` (None for a dry run), ``ledger`` (requests and tokens
        spent), ``plan`` (what was to be sent when the run started).

    Raises
    ------
    rankstats_collectors.openai.client.RequestError
        A request failed for good; everything answered so far is cached.
    rankstats.errors.PathError
        ``output`` cannot or may not be written (nothing was sent).
    rankstats_collectors.cache.CacheBusyError
        Another process is writing the cache (nothing was sent).
    """
    if output is not None:
        check_output(output, force=force)
    settings = settings or Settings()
    cache = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
    score = get_scorer(scorer)
    jobs = build_jobs(models, templates, samples, settings)
    planned = plan(jobs, cache, prices)
    ledger = Ledger(prices=dict(prices or {}))
    if dry_run:
        return Collection(None, ledger, planned)
    if requester is None:
        requester = Requester(cache, ledger=ledger, **transport)
    else:
        requester.ledger = ledger
    answers = run_requests([r for job in jobs for r in job.requests], requester)
    rows = []
    for job in jobs:
        value, response = score_job(job, answers, settings, score)
        served = answers[job.requests[0].key].get("model") or job.model
        row = {
            "model": job.model,
            "task": job.task,
            "template": job.template.id,
            "sample": job.sample.id,
            "score": value,
            "response": response,
            "template_text": job.template.text,
            "model_revision": str(served),
        }
        for name, attribute in job.template.attributes.items():
            row[_attribute_name(name)] = attribute
        row.update(option_logprobs(job, answers, settings))
        rows.append(row)
    cube = records_to_cube(
        rows,
        metric=scorer if isinstance(scorer, str) else getattr(scorer, "__name__", "score"),
        source=(
            f"rankstats_collectors.openai: {', '.join(models)} via {public_url(requester.base_url)}"
        ),
        attrs=_settings_attrs(settings, requester),
    )
    return Collection(cube, ledger, planned, requester.retries)


def _settings_attrs(settings: Settings, requester: Requester) -> dict:
    import openai

    import rankstats

    return {
        "collector": "openai",
        "endpoint": settings.endpoint,
        "base_url": public_url(requester.base_url),
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "scoring": settings.scoring,
        "system_prompt": settings.system or "",
        "decoding_extra": dict(settings.extra),
        "library_versions": {"openai": openai.__version__, "rankstats": rankstats.__version__},
    }
