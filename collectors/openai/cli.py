"""Collect scores from the OpenAI API or an OpenAI-compatible server: ``rankstats collect openai``.

The key is read from an environment variable (``--api-key-env``, default
``OPENAI_API_KEY``), never from the command line. ``--dry-run`` prints the
requests and tokens a run would take and sends nothing.

Examples
--------
>>> import argparse
>>> from collectors.openai import cli
>>> parser = argparse.ArgumentParser()
>>> cli.add_arguments(parser)
>>> arguments = parser.parse_args(["--model", "gpt-4o-mini", "--templates", "t.jsonl",
...                                "--samples", "s.jsonl", "-o", "cube.nc",
...                                "--price", "gpt-4o-mini=0.15,0.6"])
>>> arguments.endpoint, arguments.temperature, cli.prices(arguments.price)
('chat', 0.0, {'gpt-4o-mini': (0.15, 0.6)})
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import require

require("openai", "openai")

__all__ = ["add_arguments", "prices", "run"]


def add_arguments(parser) -> None:
    """The options of ``rankstats collect openai``."""
    parser.add_argument("--model", action="append", required=True, metavar="NAME",
                        help="a model (repeatable)")
    parser.add_argument("--templates", required=True, metavar="JSONL",
                        help="templates: one JSON object a line with task, id, text")
    parser.add_argument("--tasks", "--samples", dest="samples", required=True, metavar="JSONL",
                        help="samples: one JSON object a line with task, id, gold, fields")
    parser.add_argument("-o", "--output", metavar="CUBE",
                        help="the cube file to write (.nc or .zarr); needed unless --dry-run")
    parser.add_argument("--cache", metavar="JSONL",
                        help="the response cache (default: OUTPUT with .responses.jsonl)")
    parser.add_argument("--endpoint", choices=("chat", "completions"), default="chat")
    parser.add_argument("--base-url", metavar="URL",
                        help="an OpenAI-compatible server (default: OpenAI's)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VARIABLE",
                        help="the environment variable holding the key (default OPENAI_API_KEY)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--system", metavar="TEXT", help="a system message for chat models")
    parser.add_argument("--scoring", choices=("generate", "options"), default="generate",
                        help="score generated answers, or pick the likeliest option "
                             "(samples with options; needs logprobs)")
    parser.add_argument("--scorer", choices=("exact_match", "contains"), default="exact_match")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--rpm", type=float, metavar="N", help="requests per minute at most")
    parser.add_argument("--tpm", type=float, metavar="N", help="tokens per minute at most")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per response")
    parser.add_argument("--max-attempts", type=int, default=6)
    parser.add_argument("--backoff-base", type=float, default=1.0,
                        help="seconds before the first retry (doubling after)")
    parser.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT",
                        help="dollars per million input and output tokens (repeatable)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the requests and tokens the run would take; send nothing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--estimate", choices=("avgp", "maxp"),
                        help="instead of every template × sample, estimate AvgP (a random "
                             "template per sample, repeated) or MaxP (successive halving) per "
                             "model and task, and print the estimates and calls spent")
    parser.add_argument("--repetitions", type=int, default=20,
                        help="AvgP repetitions for --estimate avgp (default 20)")
    parser.add_argument("--stages", default="all:10,100:10,10:rest",
                        help="search stages TEMPLATES:SAMPLES for --estimate maxp "
                             "(default: the paper's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --estimate's draws")


def prices(specs) -> dict[str, tuple[float, float]]:
    """``MODEL=IN,OUT`` specifications as ``{model: (in, out)}``."""
    result = {}
    for spec in specs:
        model, equals, values = spec.rpartition("=")
        try:
            price_in, price_out = (float(v) for v in values.split(","))
        except ValueError:
            model = ""
        if not equals or not model:
            raise ValueError(f"--price {spec!r}: expected MODEL=IN,OUT (dollars per 1M tokens)")
        result[model] = (price_in, price_out)
    return result


def run(arguments) -> int:
    """Collect, write the cube atomically, print the cost summary; return the exit status."""
    from rankstats.errors import RankstatsError
    from rankstats.io import save

    from ..tasks import load_samples, load_templates
    from .client import Requester
    from .collect import Settings, collect
    from .limits import Backoff, RateLimiter

    try:
        if not arguments.dry_run and not arguments.output and not arguments.estimate:
            raise ValueError("give -o/--output CUBE (or --dry-run, or --estimate)")
        cache = arguments.cache or (str(Path(arguments.output).with_suffix("")) +
                                    ".responses.jsonl" if arguments.output else None)
        if cache is None:
            raise ValueError("give --cache (or -o) so the run can tell what is cached")
        settings = Settings(endpoint=arguments.endpoint, temperature=arguments.temperature,
                            max_tokens=arguments.max_tokens, system=arguments.system,
                            scoring=arguments.scoring)
        limiter = (RateLimiter(arguments.rpm, arguments.tpm)
                   if arguments.rpm or arguments.tpm else None)
        price_table = prices(arguments.price)
        from ..cache import ResponseCache

        responses = ResponseCache(cache)
        requester = Requester(
            responses, base_url=arguments.base_url, api_key_env=arguments.api_key_env,
            concurrency=arguments.concurrency, limiter=limiter,
            backoff=Backoff(base=arguments.backoff_base), max_attempts=arguments.max_attempts,
            timeout=arguments.timeout, progress=not arguments.no_progress)
        if arguments.estimate:
            return _estimate(arguments, requester, settings, price_table)
        result = collect(arguments.model, load_templates(arguments.templates),
                         load_samples(arguments.samples), cache=responses, settings=settings,
                         scorer=arguments.scorer, requester=requester, prices=price_table,
                         dry_run=arguments.dry_run)
    except (RankstatsError, ValueError, OSError) as error:
        print(f"rankstats collect openai: error: {error}", file=sys.stderr)
        return 2
    if arguments.dry_run:
        print("dry run, nothing sent:")
        print(result.plan.summary())
        return 0
    save(result.cube, arguments.output)
    print(result.ledger.summary())
    if result.retries:
        print(f"{result.retries} retried attempts (rate limits, server errors, timeouts)")
    sizes = " × ".join(f"{result.cube.sizes[d]} {d}s" for d in result.cube["score"].dims)
    print(f"wrote {arguments.output} ({sizes})")
    return 0


def _estimate(arguments, requester, settings, price_table) -> int:
    """Run the budgeted estimators per model and task through the collector."""
    import rankstats

    from ..estimate_cli import parse_stages
    from ..tasks import load_samples, load_templates
    from .chat import cell_scorer
    from .costs import Ledger

    templates, samples = load_templates(arguments.templates), load_samples(arguments.samples)
    stages = parse_stages(arguments.stages)
    requester.ledger = Ledger(prices=price_table)
    if arguments.dry_run:
        print("dry run, nothing sent; at most:")
    for model in arguments.model:
        for task in sorted(templates):
            ids = [t.id for t in templates[task]]
            cells = [s.id for s in samples.get(task, [])]
            if arguments.dry_run:
                print(f"{model} {task}: {_budget(arguments, stages, len(ids), len(cells)):,} "
                      "calls")
                continue
            score = cell_scorer(model, task, templates[task], samples.get(task, []),
                                requester, settings=settings, scorer=arguments.scorer)
            if arguments.estimate == "avgp":
                avg = rankstats.estimate_avgp(score, ids, cells,
                                              repetitions=arguments.repetitions,
                                              seed=arguments.seed)
                print(f"{model} {task}: AvgP ≈ {avg.estimate:.4f} (sd of repetitions "
                      f"{avg.spread[-1]:.4f}), {avg.calls:,} calls of "
                      f"{len(ids) * len(cells):,}")
            else:
                best = rankstats.estimate_maxp(score, ids, cells, stages=stages,
                                               seed=arguments.seed)
                print(f"{model} {task}: MaxP ≈ {best.estimate:.4f} with template "
                      f"{best.template!r}, {best.calls:,} calls of {len(ids) * len(cells):,}")
    if not arguments.dry_run:
        print(requester.ledger.summary())
    return 0


def _budget(arguments, stages, templates: int, samples: int) -> int:
    if arguments.estimate == "avgp":
        return arguments.repetitions * samples
    total, start, kept = 0, 0, templates
    for keep, size in stages:
        kept = kept if keep is None else min(keep, kept)
        end = samples if size is None else min(start + size, samples)
        total += kept * (end - start)
        start = end
    return total
