"""The ``rankstats paraphrase`` command: paraphrase seed templates with a chat model.

Reads seed templates (JSONL, as for ``rankstats collect``), asks a chat model
for paraphrases by the chosen methods, keeps those with exactly the seed's
placeholders, and writes every kept template (seeds first) as JSONL,
atomically. Replies are cached, so a rerun asks nothing twice.

Examples
--------
>>> from rankstats.cli import Parser
>>> from rankstats_collectors.paraphrase_cli import add_paraphrase
>>> parser = Parser(prog="rankstats")
>>> add_paraphrase(parser.add_subparsers(dest="command"))
>>> arguments = parser.parse_args(["paraphrase", "--templates", "seeds.jsonl",
...                                "--model", "gpt-4o-mini", "-o", "out.jsonl"])
>>> arguments.methods, arguments.n
(['rephrase', 'cot', 'gradual'], 10)
"""

from __future__ import annotations

import argparse
import json

from rankstats.cli import (
    UsageError,
    add_input,
    add_input_output,
    add_output,
    check_inputs,
    integer,
)

from .cli import add_server_arguments, default_cache, server_requester

__all__ = ["add_paraphrase", "methods", "run"]


def methods(text: str) -> list[str]:
    """An argparse ``type``: comma-separated paraphrase methods, each one of ``METHODS``."""
    from .prompts.paraphrase import METHODS

    chosen = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected methods among {', '.join(METHODS)}, comma-separated, not {text!r}"
        )
    return chosen


def add_paraphrase(commands) -> None:
    """Add ``paraphrase`` to the ``rankstats`` command's sub-parsers."""
    parser = commands.add_parser(
        "paraphrase",
        help="generate paraphrases of templates with a chat model",
        description="Generate paraphrases of seed templates (rephrase; chain-of-thought; "
        "gradual) through an OpenAI-compatible chat model. Templates whose "
        "placeholders differ from the seed's are rejected and counted; duplicates "
        "are dropped. The key is read from --api-key-env.",
    )
    add_input(parser, "--templates", required=True, metavar="JSONL", help="seed templates")
    add_input(
        parser,
        "--samples",
        metavar="JSONL",
        help="samples whose first few serve as examples for 'gradual'",
    )
    parser.add_argument(
        "--task",
        action="append",
        metavar="TASK",
        help="only these tasks (repeatable; default: all)",
    )
    parser.add_argument(
        "--methods",
        type=methods,
        default="rephrase,cot,gradual",
        help="comma-separated: rephrase, cot, gradual (default: all three)",
    )
    parser.add_argument(
        "-n",
        type=integer(1),
        default=10,
        help="templates asked for per method and seed (default 10)",
    )
    parser.add_argument(
        "--examples", type=integer(0), default=3, help="examples shown to 'gradual' (default 3)"
    )
    parser.add_argument("--model", required=True, help="the chat model")
    parser.add_argument(
        "--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)"
    )
    add_input_output(
        parser,
        "--cache",
        metavar="JSONL",
        help="the response cache, which makes a rerun resume (default OUTPUT.cache.jsonl)",
    )
    add_server_arguments(parser, concurrency=4, timeout=120.0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_output(
        parser,
        "-o",
        "--output",
        required=True,
        metavar="JSONL",
        help="where to write the kept templates",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a write-protected output file or a symbolic link",
    )
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Generate, write and summarise; return the exit status."""
    from rankstats.io import write_atomically

    from .cache import ResponseCache
    from .openai.chat import ChatClient
    from .prompts.paraphrase import generate_paraphrases
    from .tasks import load_samples, load_templates

    check_inputs({"--templates": arguments.templates, "--samples": arguments.samples})
    seeds = load_templates(arguments.templates)
    samples = load_samples(arguments.samples) if arguments.samples else {}
    tasks = arguments.task or sorted(seeds)
    missing = [t for t in tasks if t not in seeds]
    if missing:
        raise UsageError(
            f"--task {', '.join(map(repr, missing))}: no seed templates in {arguments.templates!r}"
        )
    requester = server_requester(
        arguments, ResponseCache(arguments.cache or default_cache(arguments.output))
    )
    chat = ChatClient(arguments.model, requester, temperature=arguments.temperature)
    lines = []
    for task in tasks:
        result = generate_paraphrases(
            seeds[task],
            chat,
            task=task,
            methods=arguments.methods,
            n=arguments.n,
            examples=samples.get(task, [])[: arguments.examples],
        )
        print(f"{task}: " + result.summary().replace("\n", f"\n{task}: "))
        for template in result.templates:
            lines.append(
                json.dumps(
                    {"task": task, "id": template.id, "text": template.text, **template.attributes},
                    ensure_ascii=False,
                )
            )
    write_atomically(
        arguments.output, ("\n".join(lines) + "\n").encode("utf-8"), force=arguments.force
    )
    print(f"wrote {len(lines)} templates to {arguments.output}")
    print(requester.ledger.summary())
    return 0
