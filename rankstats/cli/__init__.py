"""The ``rankstats`` command: one module per command, the shared options in one helper.

Every command is a module with ``add(commands)``, which adds its parser and
sets ``run`` (``run(arguments) -> int``) as the parser's default; :func:`main`
parses and calls ``arguments.run``. Commands of other packages come in through
the entry-point group ``rankstats.commands`` the same way (that is how
``rankstats_collectors`` adds ``collect`` and ``paraphrase`` without :mod:`rankstats`
importing it).

Every argument that names a file or folder is declared with its role (read,
written, or both: :func:`add_input`, :func:`add_output`,
:func:`add_input_output`), and :func:`main` runs :func:`check_paths` on the
chosen command's parser before the command: an output that is, lies inside or
contains an input is refused before any work or paid request, in every command,
plugins included.

Exit statuses: 0 ok; 1 ``validate`` found invalid files; 2 usage error (a
malformed option, a value out of range, a name or file that names nothing); 3 data or
runtime error (data that cannot be read or analysed, a failed import, a failed
write); 70 an unexpected error, a bug, shown with its traceback; 130
interrupted; 141 standard output closed early (``| head``). Errors other than
bugs are one line on standard error.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Sequence

from .._version import __version__
from ..errors import OptionError, OutputError, RankstatsError, UnknownNameError
from . import (
    claims,
    compare,
    edits,
    estimate,
    frontier,
    importing,
    info,
    plan,
    ranks,
    records,
    report,
    reproduce,
    stability,
    submission,
    validate,
)
from ._shared import (
    EXIT_BROKEN_PIPE,
    EXIT_BUG,
    EXIT_DATA,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    INPUT,
    INPUT_OUTPUT,
    OUTPUT,
    Parser,
    PathRole,
    UsageError,
    add_input,
    add_input_output,
    add_output,
    add_output_options,
    check_inputs,
    check_outputs,
    check_paths,
    declare,
    fraction,
    integer,
    path_role,
    resolve_seed,
    unit_interval,
)

__all__ = [
    "COMMANDS_GROUP",
    "EXIT_BROKEN_PIPE",
    "EXIT_BUG",
    "EXIT_DATA",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_USAGE",
    "INPUT",
    "INPUT_OUTPUT",
    "OUTPUT",
    "Parser",
    "PathRole",
    "UsageError",
    "add_input",
    "add_input_output",
    "add_output",
    "add_output_options",
    "build_parser",
    "check_inputs",
    "check_outputs",
    "check_paths",
    "declare",
    "fraction",
    "integer",
    "main",
    "path_role",
    "resolve_seed",
    "unit_interval",
]

#: The entry-point group other packages add commands through.
COMMANDS_GROUP = "rankstats.commands"

#: The commands rankstats itself provides, in the order ``--help`` lists them.
BUILTIN = (
    report,
    stability,
    compare,
    plan,
    reproduce,
    estimate,
    edits,
    importing,
    validate,
    info,
    ranks,
    claims,
    frontier,
    submission,
    records,
)

#: Errors that mean the command line asked for something that cannot be: exit status 2
#: (a file that does not exist is a name that names nothing).
USAGE_ERRORS = (UsageError, OptionError, OutputError, UnknownNameError, FileNotFoundError)


def build_parser() -> Parser:
    """The ``rankstats`` parser: the built-in commands, then those of the entry-point group."""
    parser = Parser(
        prog="rankstats",
        description="Multi-prompt evaluation statistics on score cubes.",
        epilog="Exit status: 0 ok, 1 validate found problems, 2 usage error, "
        "3 data or runtime error, 70 a bug. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"rankstats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in BUILTIN:
        command.add(commands)
    _add_plugin_commands(commands)
    return parser


def _add_plugin_commands(commands) -> None:
    """Add the commands other packages register under the entry-point group ``rankstats.commands``.

    Each entry point names a function ``add(commands)`` that adds one parser to
    ``commands`` (an argparse sub-parsers action) and sets its default ``run``
    to a function ``run(arguments) -> int``.
    """
    from importlib.metadata import entry_points

    taken = set(commands.choices)
    for entry in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        if entry.name in taken:
            print(
                f"rankstats: warning: command {entry.name!r} ({entry.value}) is built in; "
                "the plugin is ignored",
                file=sys.stderr,
            )
            continue
        try:
            entry.load()(commands)
        except Exception as error:  # a broken plugin must not take the other commands down
            print(
                f"rankstats: warning: command {entry.name!r} ({entry.value}) could not be "
                f"loaded: {error}",
                file=sys.stderr,
            )


#: The extra that installs each optional module the code imports where it is used
#: (tqdm comes with both collectors' extras, so "all" is the one to name).
EXTRA_OF_MODULE = {
    "h5netcdf": "io",
    "h5py": "io",
    "pyarrow": "io",
    "zarr": "io",
    "zstandard": "io",
    "dask": "dask",
    "distributed": "dask",
    "matplotlib": "plot",
    "openai": "openai",
    "torch": "hf",
    "transformers": "hf",
    "tokenizers": "hf",
    "tqdm": "all",
    "hypothesis": "testing",
}


_OPTIONAL = re.compile(r"Missing optional dependency '([\w.]+)'")


def _missing_extra(error: ImportError) -> str:
    """One line for an optional dependency that is not installed, naming its extra."""
    line = _one_line(error)
    # pandas raises a plain ImportError for its own optional dependencies (read_parquet)
    named = getattr(error, "name", None) or next(iter(_OPTIONAL.findall(line)), "")
    module = named.partition(".")[0]
    if "pip install" in line or module not in EXTRA_OF_MODULE:
        return line  # already names what to install, or not an optional dependency
    return f'{line}: pip install "rankstats[{EXTRA_OF_MODULE[module]}]"'


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankstats`` command; return its exit status.

    Examples
    --------
    >>> from rankstats.cli import main
    >>> main(["validate", "no-such-file.nc"])
    1
    >>> main(["stability", "mizrahi2024", "--confidence-level", "1.5"])
    2
    """
    try:
        parser = build_parser()
        arguments = parser.parse_args(argv)
        # the declared inputs and outputs, before any work: no command destroys its input
        check_paths(parser, arguments)
        drawn = resolve_seed(arguments)
        status = int(arguments.run(arguments) or 0)
        if drawn and status == EXIT_OK:
            print(drawn, file=sys.stderr)
        return status
    except SystemExit as stop:  # argparse: --help, --version, usage errors
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, as command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("rankstats: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except USAGE_ERRORS as error:
        print(f"rankstats: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as error:  # an optional dependency, imported where it is used
        print(f"rankstats: error: {_missing_extra(error)}", file=sys.stderr)
        return EXIT_DATA
    except (RankstatsError, OSError) as error:
        print(f"rankstats: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_DATA
    except Exception:
        traceback.print_exc()
        print(
            "rankstats: this is a bug in rankstats or a plugin, not in your input; please "
            "report it with the traceback above",
            file=sys.stderr,
        )
        return EXIT_BUG
