"""The ``rankstats paraphrase`` command: paraphrase seed templates with a chat model.

Reads seed templates (JSONL, as for ``rankstats collect``), asks a chat model
for paraphrases by the chosen methods, keeps those with exactly the seed's
placeholders, and writes every kept template (seeds first) as JSONL,
atomically. Replies are cached, so a rerun asks nothing twice.

Examples
--------
>>> import argparse
>>> from collectors.paraphrase_cli import add_paraphrase
>>> parser = argparse.ArgumentParser(prog="rankstats")
>>> add_paraphrase(parser.add_subparsers(dest="command"))
>>> arguments = parser.parse_args(["paraphrase", "--templates", "seeds.jsonl",
...                                "--model", "gpt-4o-mini", "-o", "out.jsonl"])
>>> arguments.methods, arguments.n
('rephrase,cot,gradual', 10)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["add_paraphrase", "run"]


def add_paraphrase(commands) -> None:
    """Add ``paraphrase`` to the ``rankstats`` command's sub-parsers."""
    parser = commands.add_parser(
        "paraphrase", help="generate paraphrases of templates with a chat model",
        description="Generate paraphrases of seed templates (rephrase; chain-of-thought; "
                    "gradual) through an OpenAI-compatible chat model. Templates whose "
                    "placeholders differ from the seed's are rejected and counted; duplicates "
                    "are dropped. The key is read from --api-key-env.")
    parser.add_argument("--templates", required=True, metavar="JSONL", help="seed templates")
    parser.add_argument("--samples", metavar="JSONL",
                        help="samples whose first few serve as examples for 'gradual'")
    parser.add_argument("--task", action="append", metavar="TASK",
                        help="only these tasks (repeatable; default: all)")
    parser.add_argument("--methods", default="rephrase,cot,gradual",
                        help="comma-separated: rephrase, cot, gradual (default: all three)")
    parser.add_argument("-n", type=int, default=10, help="templates asked for per method and seed")
    parser.add_argument("--examples", type=int, default=3, help="examples shown to 'gradual'")
    parser.add_argument("--model", required=True, help="the chat model")
    parser.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VARIABLE")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--cache", metavar="JSONL",
                        help="reply cache (default: OUTPUT.cache.jsonl)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--max-attempts", type=int, default=6)
    parser.add_argument("--backoff-base", type=float, default=1.0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("-o", "--output", required=True, metavar="JSONL",
                        help="where to write the kept templates")
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Generate, write and summarise; return the exit status."""
    from rankstats.errors import RankstatsError
    from rankstats.io import write_atomically

    from . import MissingExtraError
    from .prompts.paraphrase import generate_paraphrases
    from .tasks import load_samples, load_templates

    try:
        from .cache import ResponseCache
        from .openai.chat import ChatClient
        from .openai.client import Requester
        from .openai.limits import Backoff

        methods = [m.strip() for m in arguments.methods.split(",") if m.strip()]
        seeds = load_templates(arguments.templates)
        samples = load_samples(arguments.samples) if arguments.samples else {}
        tasks = arguments.task or sorted(seeds)
        missing = [t for t in tasks if t not in seeds]
        if missing:
            raise ValueError(f"no seed templates for task(s) {', '.join(missing)} in "
                             f"{arguments.templates!r}")
        cache = arguments.cache or str(Path(arguments.output).with_suffix("")) + ".cache.jsonl"
        requester = Requester(ResponseCache(cache), base_url=arguments.base_url,
                              api_key_env=arguments.api_key_env,
                              concurrency=arguments.concurrency, timeout=arguments.timeout,
                              max_attempts=arguments.max_attempts,
                              backoff=Backoff(base=arguments.backoff_base),
                              progress=not arguments.no_progress)
        chat = ChatClient(arguments.model, requester, temperature=arguments.temperature)
        lines = []
        for task in tasks:
            result = generate_paraphrases(
                seeds[task], chat, task=task, methods=methods, n=arguments.n,
                examples=samples.get(task, [])[:arguments.examples])
            print(f"{task}: " + result.summary().replace("\n", f"\n{task}: "))
            for template in result.templates:
                lines.append(json.dumps({"task": task, "id": template.id, "text": template.text,
                                         **template.attributes}, ensure_ascii=False))
        write_atomically(arguments.output, ("\n".join(lines) + "\n").encode("utf-8"))
    except MissingExtraError as error:
        print(f"rankstats paraphrase: error: {error}", file=sys.stderr)
        return 2
    except (RankstatsError, ValueError, OSError) as error:
        print(f"rankstats paraphrase: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {len(lines)} templates to {arguments.output}")
    print(requester.ledger.summary())
    return 0
