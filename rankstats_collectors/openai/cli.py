"""Collect scores from the OpenAI API or an OpenAI-compatible server: ``rankstats collect openai``.

The key is read from an environment variable (``--api-key-env``, default
``OPENAI_API_KEY``), never from the command line. ``--dry-run`` prints the
requests and tokens a run would take and sends nothing.

Examples
--------
>>> import argparse
>>> from rankstats_collectors.openai import cli
>>> parser = argparse.ArgumentParser()
>>> cli.add_arguments(parser)
>>> arguments = parser.parse_args(["--model", "gpt-4o-mini", "--templates", "t.jsonl",
...                                "--samples", "s.jsonl", "-o", "cube.nc",
...                                "--price", "gpt-4o-mini=0.15,0.6"])
>>> arguments.endpoint, arguments.mode, cli.prices(arguments.price)
('chat', 'generate', {'gpt-4o-mini': (0.15, 0.6)})
"""

from __future__ import annotations

import argparse
import sys

from rankstats.cli import UsageError, check_inputs, integer, resolve_seed
from rankstats.cli.estimate import PAPER_STAGES, parse_stages

from .. import require
from ..cli import (
    add_collector_arguments,
    add_server_arguments,
    default_cache,
    scorer,
    server_requester,
)

require("openai", "openai")

__all__ = ["add_arguments", "price", "prices", "run"]


def add_arguments(parser) -> None:
    """The options of ``rankstats collect openai``."""
    groups = add_collector_arguments(parser, output_required=False)
    how, out = groups["how"], groups["output"]
    how.add_argument(
        "--endpoint",
        choices=("chat", "completions"),
        default="chat",
        help="the API endpoint (default chat); with --mode likelihood, "
        "completions echoes the prompt and each option for its "
        "log-probabilities, chat reads the first token's top_logprobs",
    )
    how.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature (default 0)"
    )
    how.add_argument("--system", metavar="TEXT", help="a system message for chat models")
    server = add_server_arguments(parser, concurrency=8, timeout=60.0)
    server.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN,OUT",
        type=price,
        help="dollars per million input and output tokens (repeatable)",
    )
    out.add_argument(
        "--dry-run",
        action="store_true",
        help="print the requests and tokens the run would take; send nothing "
        "(-o is then not needed)",
    )
    budget = parser.add_argument_group("on a budget")
    budget.add_argument(
        "--estimate",
        choices=("avgp", "maxp"),
        help="instead of every template × sample, estimate AvgP (a random "
        "template per sample, repeated) or MaxP (successive halving) per "
        "model and task, and print the estimates and calls spent",
    )
    budget.add_argument(
        "--templates-per-sample",
        type=integer(1),
        default=20,
        metavar="K",
        help="--estimate avgp: random templates each sample is scored under (default 20)",
    )
    budget.add_argument(
        "--stages",
        type=parse_stages,
        default=PAPER_STAGES,
        help="--estimate maxp: search stages TEMPLATES:SAMPLES (default: the "
        f"paper's, {PAPER_STAGES})",
    )
    budget.add_argument(
        "--seed",
        type=integer(0),
        metavar="SEED",
        help="seed of --estimate's draws (default: fresh entropy, printed on "
        "standard error so the run can be repeated)",
    )


def price(spec: str) -> tuple[str, tuple[float, float]]:
    """An argparse ``type``: one ``MODEL=IN,OUT`` price (dollars per million tokens)."""
    model, equals, values = spec.rpartition("=")
    try:
        price_in, price_out = (float(v) for v in values.split(","))
    except ValueError:
        model = ""
    if not equals or not model:
        raise argparse.ArgumentTypeError(
            f"expected MODEL=IN,OUT (dollars per 1M tokens), not {spec!r}"
        )
    return model, (price_in, price_out)


def prices(specs) -> dict[str, tuple[float, float]]:
    """``MODEL=IN,OUT`` specifications (or :func:`price` pairs) as ``{model: (in, out)}``."""
    return dict(price(spec) if isinstance(spec, str) else spec for spec in specs)


#: ``--mode`` → the collector's ``Settings.scoring``.
SCORING = {"generate": "generate", "likelihood": "options"}


def run(arguments) -> int:
    """Collect, write the cube atomically, print the cost summary; return the exit status."""
    from rankstats.io import save

    from ..cache import ResponseCache
    from ..tasks import load_samples, load_templates
    from .collection import Settings, collect

    if not arguments.dry_run and not arguments.output and not arguments.estimate:
        raise UsageError("give -o/--output CUBE (or --dry-run, or --estimate)")
    if not arguments.cache and not arguments.output:
        raise UsageError("give --cache (or -o) so the run can tell what is cached")
    check_inputs({"--samples": arguments.samples, "--templates": arguments.templates})
    settings = Settings(
        endpoint=arguments.endpoint,
        temperature=arguments.temperature,
        max_tokens=arguments.max_new_tokens,
        system=arguments.system,
        scoring=SCORING[arguments.mode],
    )
    price_table = prices(arguments.price)
    responses = ResponseCache(arguments.cache or default_cache(arguments.output))
    requester = server_requester(arguments, responses)
    if arguments.estimate:
        return _estimate(arguments, requester, settings, price_table)
    result = collect(
        arguments.model,
        load_templates(arguments.templates),
        load_samples(arguments.samples),
        cache=responses,
        settings=settings,
        scorer=scorer(arguments.scorer),
        requester=requester,
        prices=price_table,
        dry_run=arguments.dry_run,
    )
    if arguments.dry_run:
        print("dry run, nothing sent:")
        print(result.plan.summary())
        return 0
    save(result.cube, arguments.output, force=arguments.force)
    print(result.ledger.summary())
    if result.retries:
        print(f"{result.retries} retried attempts (rate limits, server errors, timeouts)")
    sizes = " × ".join(f"{result.cube.sizes[d]} {d}s" for d in result.cube["score"].dims)
    print(f"wrote {arguments.output} ({sizes})")
    return 0


def _estimate(arguments, requester, settings, price_table) -> int:
    """Run the budgeted estimators per model and task through the collector."""
    import rankstats

    from ..tasks import load_samples, load_templates
    from .chat import cell_scorer
    from .costs import Ledger

    drawn = resolve_seed(arguments)
    templates, samples = load_templates(arguments.templates), load_samples(arguments.samples)
    requester.ledger = Ledger(prices=price_table)
    if arguments.dry_run:
        print("dry run, nothing sent; at most:")
    for model in arguments.model:
        for task in sorted(templates):
            ids = [t.id for t in templates[task]]
            cells = [s.id for s in samples.get(task, [])]
            if arguments.dry_run:
                print(f"{model} {task}: {_budget(arguments, len(ids), len(cells)):,} calls")
                continue
            score = cell_scorer(
                model,
                task,
                templates[task],
                samples.get(task, []),
                requester,
                settings=settings,
                scorer=scorer(arguments.scorer),
            )
            if arguments.estimate == "avgp":
                avg = rankstats.estimate_avgp(
                    score,
                    ids,
                    cells,
                    templates_per_sample=arguments.templates_per_sample,
                    seed=arguments.seed,
                )
                print(
                    f"{model} {task}: AvgP ≈ {avg.estimate:.4f} (sd of repetitions "
                    f"{avg.spread[-1]:.4f}), {avg.calls:,} calls of "
                    f"{len(ids) * len(cells):,}"
                )
            else:
                best = rankstats.estimate_maxp(
                    score, ids, cells, stages=arguments.stages, seed=arguments.seed
                )
                print(
                    f"{model} {task}: MaxP ≈ {best.estimate:.4f} with template "
                    f"{best.template!r}, {best.calls:,} calls of {len(ids) * len(cells):,}"
                )
    if not arguments.dry_run:
        print(requester.ledger.summary())
    if drawn and not arguments.dry_run:
        print(drawn, file=sys.stderr)
    return 0


def _budget(arguments, templates: int, samples: int) -> int:
    if arguments.estimate == "avgp":
        return arguments.templates_per_sample * samples
    total, start, kept = 0, 0, templates
    for keep, size in arguments.stages:
        kept = kept if keep is None else min(keep, kept)
        end = samples if size is None else min(start + size, samples)
        total += kept * (end - start)
        start = end
    return total
