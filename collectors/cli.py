"""The ``rankstats collect BACKEND ...`` command: run models over templates and samples.

Each backend is a module providing ``add_arguments(parser)`` and
``run(arguments) -> int``, imported only when its name is given, so the
``rankstats`` command starts without torch or openai installed. A backend
whose optional dependency is missing fails with a message naming the extra
to install.

Examples
--------
>>> import argparse
>>> from collectors.cli import add_collect
>>> parser = argparse.ArgumentParser(prog="rankstats")
>>> add_collect(parser.add_subparsers(dest="command"))
>>> arguments = parser.parse_args(["collect", "hf", "--model", "gpt2", "-o", "cube.nc"])
>>> arguments.backend, arguments.options
('hf', ['--model', 'gpt2', '-o', 'cube.nc'])
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import MissingExtraError

__all__ = ["BACKENDS", "EXTRAS", "add_collect", "load_backend", "run"]

#: Backend name → the module that runs it.
BACKENDS = {"hf": "collectors.hf.cli", "openai": "collectors.openai.cli"}
#: Backend name → the extra that installs its dependencies.
EXTRAS = {"hf": "hf", "openai": "openai"}


def load_backend(name: str):
    """The module of backend ``name``.

    Raises
    ------
    MissingExtraError
        The backend, or a dependency of it, is not installed; the message
        names ``pip install "rankstats[EXTRA]"``.
    KeyError
        No backend goes by that name.

    Examples
    --------
    >>> from collectors.cli import load_backend
    >>> load_backend("nothing")
    Traceback (most recent call last):
    ...
    KeyError: "no collect backend named 'nothing' (available: hf, openai)"
    """
    if name not in BACKENDS:
        raise KeyError(f"no collect backend named {name!r} (available: {', '.join(BACKENDS)})")
    try:
        return importlib.import_module(BACKENDS[name])
    except MissingExtraError:
        raise
    except ImportError as error:
        missing = getattr(error, "name", None) or str(error)
        raise MissingExtraError(
            f"the {name!r} collector cannot be loaded ({missing!r} is missing): "
            f'pip install "rankstats[{EXTRAS.get(name, name)}]"') from error


def add_collect(commands) -> None:
    """Add ``collect`` to the ``rankstats`` command's sub-parsers.

    A backend's own options are parsed only once that backend is loaded, so
    building the ``rankstats`` parser imports no backend.
    """
    parser = commands.add_parser(
        "collect", help="run models over templates and samples and write a cube",
        description="Run models over every template × sample of some tasks and write a "
                    "score cube. Backends: " + ", ".join(BACKENDS) + ". "
                    "See 'rankstats collect BACKEND --help'.")
    parser.add_argument("backend", choices=sorted(BACKENDS), help="which collector runs")
    parser.add_argument("options", nargs=argparse.REMAINDER,
                        help="the backend's options (see 'rankstats collect BACKEND --help')")
    parser.set_defaults(run=run)


def run(arguments) -> int:
    """Load the backend, parse its own options and run it; return the exit status."""
    try:
        backend = load_backend(arguments.backend)
    except MissingExtraError as error:
        print(f"rankstats collect: error: {error}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(
        prog=f"rankstats collect {arguments.backend}",
        description=(backend.__doc__ or "").split("\n\n")[0])
    backend.add_arguments(parser)
    return int(backend.run(parser.parse_args(arguments.options)) or 0)
