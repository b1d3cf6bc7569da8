"""The ``rankstats collect NAME ...`` command: run models over templates and samples.

Collectors are found only through the entry-point group ``rankstats.collectors``
(:data:`rankstats_collectors.ENTRY_POINT_GROUP`): this distribution declares ``hf`` and
``openai`` there, and any other package can add one without editing rankstats
or collectors::

    [project.entry-points."rankstats.collectors"]
    mine = "my_package.rankstats_collector"

The entry point names a module (or any object) with ``add_arguments(parser)``,
which adds its options to an argparse parser, and ``run(arguments) -> int``,
which collects and returns the exit status; the first paragraph of its
docstring is the help's description. It is imported only when its name is
given, so the ``rankstats`` command starts without torch or openai installed;
one whose optional dependency is missing fails with a message naming the
extra to install (:func:`rankstats_collectors.require`).

:func:`add_collector_arguments` adds the options every collector shares, with
one name and one help text each.

Examples
--------
>>> from rankstats.cli import Parser
>>> from rankstats_collectors.cli import add_collect
>>> parser = Parser(prog="rankstats")
>>> add_collect(parser.add_subparsers(dest="command"))
>>> arguments = parser.parse_args(["collect", "hf", "--model", "gpt2", "-o", "cube.nc"])
>>> arguments.collector, arguments.options
('hf', ['--model', 'gpt2', '-o', 'cube.nc'])
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rankstats.cli import Parser, add_input, add_input_output, add_output, check_paths, integer

from . import available, get

__all__ = [
    "add_collect",
    "add_collector_arguments",
    "add_server_arguments",
    "default_cache",
    "load_collector",
    "run",
    "scorer",
    "server_requester",
]


def load_collector(name: str):
    """The collector registered as ``name`` in the entry-point group ``rankstats.collectors``.

    Raises
    ------
    rankstats_collectors.UnknownCollectorError
        No collector goes by that name; the message lists those installed.
    rankstats_collectors.MissingExtraError
        The collector, or a dependency of it, is not installed; the message
        names ``pip install "rankstats[EXTRA]"``.
    rankstats.RankstatsError
        The entry point loads, but has no ``add_arguments`` and ``run``.

    Examples
    --------
    >>> from rankstats_collectors.cli import load_collector
    >>> load_collector("nothing")
    Traceback (most recent call last):
    ...
    rankstats_collectors.UnknownCollectorError: no collector named 'nothing' (available: ...)
    """
    from rankstats.errors import RankstatsError

    collector = get(name)
    missing = [
        hook for hook in ("add_arguments", "run") if not callable(getattr(collector, hook, None))
    ]
    if missing:
        raise RankstatsError(
            f"collector {name!r} ({collector!r}) has no "
            f"{' and no '.join(missing)}: a collector for 'rankstats collect' "
            "provides add_arguments(parser) and run(arguments)"
        )
    return collector


def add_collect(commands) -> None:
    """Add ``collect`` to the ``rankstats`` command's sub-parsers.

    A collector's own options are parsed only once it is loaded, so building
    the ``rankstats`` parser imports no collector.
    """
    names = ", ".join(available()) or "none installed"
    parser = commands.add_parser(
        "collect",
        help="run models over templates and samples and write a cube",
        description="Run models over every template × sample of some tasks and write a "
        f"score cube. Collectors (entry-point group 'rankstats.collectors'): "
        f"{names}. See 'rankstats collect NAME --help'.",
    )
    parser.add_argument("collector", metavar="NAME", help=f"which collector runs ({names})")
    parser.add_argument(
        "options",
        nargs=argparse.REMAINDER,
        help="the collector's options (see 'rankstats collect NAME --help')",
    )
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Load the collector, parse its own options and run it; return the exit status.

    The collector's options are parsed here, not by :func:`rankstats.cli.main`, so
    the inputs and outputs they declare are checked here
    (:func:`rankstats.cli.check_paths`), before the collector sends anything.
    """
    collector = load_collector(arguments.collector)
    parser = Parser(
        prog=f"rankstats collect {arguments.collector}",
        description=(collector.__doc__ or "").split("\n\n")[0],
    )
    collector.add_arguments(parser)
    options = parser.parse_args(arguments.options)
    check_paths(parser, options)
    return int(collector.run(options) or 0)


def default_cache(output) -> Path:
    """Where a collector keeps its responses unless ``--cache`` says: ``OUTPUT.cache.jsonl``.

    Examples
    --------
    >>> from rankstats_collectors.cli import default_cache
    >>> default_cache("runs/cube.nc").as_posix()
    'runs/cube.nc.cache.jsonl'
    """
    output = Path(output)
    return output.with_name(output.name + ".cache.jsonl")


def scorer(name: str):
    """``--scorer``'s value: a built-in scorer's name as it is, or the function it names.

    Examples
    --------
    >>> from rankstats_collectors.cli import scorer
    >>> scorer("exact_match"), scorer("rankstats_collectors.scoring:contains").__name__
    ('exact_match', 'contains')
    """
    import importlib

    from rankstats.errors import RankstatsError

    if ":" not in name:
        return name
    module, _, attribute = name.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise RankstatsError(f"--scorer {name!r} cannot be imported: {error}") from None


def add_collector_arguments(parser, *, output_required: bool = True) -> dict:
    """Add the options every collector shares: one name and one help text per idea.

    ``--model`` (repeatable), ``--samples``, ``--templates``, ``--mode
    {generate,likelihood}``, ``--scorer``, ``--max-new-tokens``, ``-o/--output``, ``--cache``
    and ``--no-progress``, each with the same help in every collector (what a
    collector does differently belongs in the help of its own options).
    ``--samples`` and ``--templates`` are declared as inputs, ``-o`` as an
    output and ``--cache`` as both (:func:`rankstats.cli.declare`), so ``rankstats
    collect`` refuses an output that would destroy an input before the
    collector runs; a collector's own path options are declared the same way.
    Returns the argument groups (``"what"``, ``"how"``, ``"output"``) for the
    collector's own options.

    Examples
    --------
    >>> import argparse
    >>> from rankstats_collectors.cli import add_collector_arguments
    >>> parser = argparse.ArgumentParser()
    >>> groups = add_collector_arguments(parser)
    >>> arguments = parser.parse_args(["--model", "m", "--samples", "s.jsonl",
    ...                                "--templates", "t.jsonl", "-o", "cube.nc"])
    >>> arguments.model, arguments.mode, arguments.max_new_tokens
    (['m'], 'generate', 16)
    """
    what = parser.add_argument_group("what to run")
    what.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="MODEL",
        help="a model: a local folder or Hub id (hf), a model name (openai); repeatable",
    )
    add_input(
        what,
        "--samples",
        required=True,
        metavar="PATH",
        help="the samples: a JSONL file (task, id, gold, fields; "
        "rankstats/schemas/samples.schema.json)",
    )
    add_input(
        what,
        "--templates",
        required=True,
        metavar="PATH",
        help="the templates: a JSONL file (task, id, text; "
        "rankstats/schemas/templates.schema.json)",
    )
    how = parser.add_argument_group("how to score")
    how.add_argument(
        "--mode",
        choices=("generate", "likelihood"),
        default="generate",
        help="generate: greedy generation, compared with the gold answer by "
        "--scorer; likelihood: the sample's option with the highest "
        "log-probability (default generate)",
    )
    how.add_argument(
        "--scorer",
        default="exact_match",
        metavar="NAME",
        help="exact_match, contains, or package.module:function taking "
        "(response, sample) and returning a score (default exact_match)",
    )
    how.add_argument(
        "--max-new-tokens",
        type=integer(1),
        default=16,
        metavar="N",
        help="the most tokens generated per prompt (default 16)",
    )
    out = parser.add_argument_group("output")
    add_output(
        out,
        "-o",
        "--output",
        required=output_required,
        metavar="CUBE",
        help="the cube file to write (.nc, or .zarr)",
    )
    add_input_output(
        out,
        "--cache",
        metavar="PATH",
        help="the response cache, which makes a rerun resume (default OUTPUT.cache.jsonl)",
    )
    out.add_argument(
        "--force",
        action="store_true",
        help="replace a write-protected output file or a symbolic link",
    )
    out.add_argument("--no-progress", action="store_true", help="no progress bar")
    return {"what": what, "how": how, "output": out}


def add_server_arguments(parser, *, concurrency: int, timeout: float):
    """Add the options of an OpenAI-compatible server; return their argument group.

    ``rankstats collect openai`` and ``rankstats paraphrase`` share them:
    ``--base-url``, ``--api-key-env``, ``--concurrency``, ``--rpm``, ``--tpm``,
    ``--timeout``, ``--max-attempts`` and ``--backoff-base``.
    """
    server = parser.add_argument_group("the server")
    server.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server (default: OpenAI's)"
    )
    server.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VARIABLE",
        help="the environment variable holding the key (default OPENAI_API_KEY)",
    )
    server.add_argument(
        "--concurrency",
        type=integer(1),
        default=concurrency,
        help=f"requests in flight (default {concurrency})",
    )
    server.add_argument("--rpm", type=float, metavar="N", help="requests per minute at most")
    server.add_argument("--tpm", type=float, metavar="N", help="tokens per minute at most")
    server.add_argument(
        "--timeout", type=float, default=timeout, help=f"seconds per response (default {timeout:g})"
    )
    server.add_argument(
        "--max-attempts", type=integer(1), default=6, help="attempts per request (default 6)"
    )
    server.add_argument(
        "--backoff-base",
        type=float,
        default=1.0,
        help="seconds before the first retry (doubling after)",
    )
    return server


def server_requester(arguments, cache):
    """The requester the options of :func:`add_server_arguments` describe, over ``cache``."""
    from .openai.client import Requester
    from .openai.limits import Backoff, RateLimiter

    limiter = RateLimiter(arguments.rpm, arguments.tpm) if arguments.rpm or arguments.tpm else None
    return Requester(
        cache,
        base_url=arguments.base_url,
        api_key_env=arguments.api_key_env,
        concurrency=arguments.concurrency,
        limiter=limiter,
        backoff=Backoff(base=arguments.backoff_base),
        max_attempts=arguments.max_attempts,
        timeout=arguments.timeout,
        progress=not arguments.no_progress,
    )
