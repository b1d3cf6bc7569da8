"""What every command shares: the parser, option types, the output options, exit statuses.

One rule for output, in every command that produces tables:

- ``--json PATH`` writes one JSON document: ``{"attrs": {...}, "tables": {NAME: [ROW, ...]}}``,
  each row an object of column → value (NaN → ``null``); ``--json -`` writes it to
  standard output.
- ``--csv FOLDER`` writes each table as ``FOLDER/NAME.csv`` (the folder is made if its
  parent exists); ``--csv -`` writes every table to standard output, each after a line
  ``# NAME``.
- ``--quiet`` prints no markdown; neither does a command whose ``--json`` or ``--csv`` is ``-``.

Commands that draw random numbers take ``--n-resamples N`` and ``--seed SEED``. Without
``--seed`` a seed is drawn from fresh entropy and printed on standard error, so any run can
be repeated.

Every argument that names a file or folder is declared with the role its path plays
(:func:`add_input`, :func:`add_output`, :func:`add_input_output`, or :func:`declare` on an
argument already added): read, written, or both (a response cache). :func:`check_paths`
reads the declarations and refuses, before the command runs, an output that is, lies
inside or contains an input, so no command can destroy what it reads and none checks
that by hand.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputTypeError, MissingPathError, OptionError, RankstatsError

#: The run went through.
EXIT_OK = 0
#: ``validate`` checked and found problems.
EXIT_PROBLEMS = 1
#: Usage error: a malformed option, a value out of range, a name that names nothing.
EXIT_USAGE = 2
#: Data or runtime error: unreadable or invalid data, a failed import, a failed write.
EXIT_DATA = 3
#: An unexpected exception: a bug (the traceback is printed).
EXIT_BUG = 70
#: Interrupted (Ctrl-C).
EXIT_INTERRUPTED = 130
#: Standard output closed before the command finished (``rankstats ... | head``).
EXIT_BROKEN_PIPE = 141


class UsageError(RankstatsError, ValueError):
    """A command-line argument is malformed, out of range, or names nothing that exists."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on standard error, exit status 2.

    Examples
    --------
    >>> from rankstats.cli._shared import Parser
    >>> parser = Parser(prog="demo")
    >>> _ = parser.add_argument("--n", type=int)
    >>> parser.parse_args(["--n", "x"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _number(kind, text: str, what: str):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None


def integer(minimum: int):
    """An argparse ``type``: a whole number of at least ``minimum``.

    Examples
    --------
    >>> from rankstats.cli._shared import integer
    >>> integer(1)("5")
    5
    >>> integer(1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be at least 1, not 0
    """

    def parse(text: str) -> int:
        value = _number(int, text, "a whole number")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def fraction(text: str) -> float:
    """An argparse ``type``: a number strictly between 0 and 1 (a confidence level).

    Examples
    --------
    >>> from rankstats.cli._shared import fraction
    >>> fraction("0.9")
    0.9
    >>> fraction("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must lie strictly between 0 and 1, not 1.5
    """
    value = _number(float, text, "a number between 0 and 1")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, not {text}")
    return value


def unit_interval(text: str) -> float:
    """An argparse ``type``: a number from 0 to 1, both included."""
    value = _number(float, text, "a number from 0 to 1")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must lie from 0 to 1, not {text}")
    return value


def add_output_options(
    parser,
    *,
    n_resamples: int | None = None,
    minimum: int = 1,
    resamples_help: str = "bootstrap replicates",
    confidence_level: bool = False,
) -> None:
    """Add ``--json``, ``--csv`` and ``--quiet``; where the command resamples, its options too.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A command's parser.
    n_resamples : int, optional
        The default of ``--n-resamples``; when given, ``--n-resamples`` and ``--seed``
        are added.
    minimum : int
        The smallest ``--n-resamples`` the command accepts.
    resamples_help : str
        What one resample is, for the help text.
    confidence_level : bool
        Add ``--confidence-level`` (default 0.95, strictly between 0 and 1).
    """
    output = parser.add_argument_group("output (the same in every command)")
    add_output(
        output,
        "--json",
        metavar="PATH",
        help="write every table as one JSON document "
        "{attrs, tables: {NAME: [rows]}} to PATH; '-' for standard output",
    )
    add_output(
        output,
        "--csv",
        metavar="FOLDER",
        folder=True,
        help="write each table as FOLDER/NAME.csv; '-' writes every table "
        "to standard output, each after a '# NAME' line",
    )
    output.add_argument(
        "--force",
        action="store_true",
        help="replace a write-protected output file or a symbolic link",
    )
    output.add_argument(
        "--quiet",
        action="store_true",
        help="print no markdown (what --json and --csv write still goes out)",
    )
    if n_resamples is None and not confidence_level:
        return
    draws = parser.add_argument_group("resampling")
    if n_resamples is not None:
        draws.add_argument(
            "--n-resamples",
            type=integer(minimum),
            default=n_resamples,
            metavar="N",
            help=f"{resamples_help} (default {n_resamples})",
        )
        draws.add_argument(
            "--seed",
            type=integer(0),
            metavar="SEED",
            help="seed of the random draws (default: fresh entropy, printed "
            "on standard error so the run can be repeated)",
        )
    if confidence_level:
        draws.add_argument(
            "--confidence-level",
            type=fraction,
            default=0.95,
            metavar="LEVEL",
            help="confidence level of the intervals, strictly between 0 and 1 (default 0.95)",
        )


def resolve_seed(arguments) -> str | None:
    """Give ``arguments.seed`` a value from fresh entropy when none was given.

    Returns the note that says which seed was drawn (to print once the run has
    gone through), or None when the seed was given or the command has none.
    """
    if getattr(arguments, "seed", 0) is not None:
        return None
    arguments.seed = secrets.randbits(32)
    return f"rankstats: seed {arguments.seed} (give --seed {arguments.seed} to repeat this run)"


#: The roles of a path argument: the command reads it, writes it, or both (a response
#: cache, read to resume and appended to).
INPUT, OUTPUT, INPUT_OUTPUT = "input", "output", "input and output"
ROLES = (INPUT, OUTPUT, INPUT_OUTPUT)


@dataclass(frozen=True)
class PathRole:
    """What a command does with the path an argument names.

    Attributes
    ----------
    role : {"input", "output", "input and output"}
        Read, written, or both (a cache).
    folder : bool
        An output folder the command writes files into (``--csv``, ``--figures``);
        it may exist, and is made when its parent exists.
    keywords : tuple of str
        Values that are names, not paths (``--conventions standard``).
    """

    role: str
    folder: bool = False
    keywords: tuple[str, ...] = ()

    @property
    def reads(self) -> bool:
        return self.role in (INPUT, INPUT_OUTPUT)

    @property
    def writes(self) -> bool:
        return self.role in (OUTPUT, INPUT_OUTPUT)


def declare(
    action: argparse.Action, role: str, *, folder: bool = False, keywords: Sequence[str] = ()
) -> argparse.Action:
    """Declare what a command does with the path an argument names; return the argument.

    Every argument that names a file or folder is declared: :func:`check_paths`
    (which :func:`rankstats.cli.main` runs before any command) then refuses an
    output that is, lies inside or contains an input.

    Parameters
    ----------
    action : argparse.Action
        What ``parser.add_argument`` returned.
    role : {"input", "output", "input and output"}
        :data:`INPUT`, :data:`OUTPUT` or :data:`INPUT_OUTPUT` (a cache, read and appended to).
    folder : bool, default False
        An output folder the command writes files into (``--csv``, ``--figures``).
    keywords : sequence of str
        Values of the argument that are names, not paths.

    Examples
    --------
    >>> from rankstats.cli._shared import INPUT, Parser, declare, path_role
    >>> parser = Parser(prog="demo")
    >>> path_role(declare(parser.add_argument("cube", metavar="CUBE"), INPUT)).role
    'input'
    """
    if role not in ROLES:
        raise OptionError(f"declare: role {role!r} is not one of {', '.join(map(repr, ROLES))}")
    if folder and role != OUTPUT:
        raise OptionError(
            f"declare: folder=True declares an output folder; role {role!r} must be 'output'"
        )
    action.path_role = PathRole(role, folder, tuple(keywords))
    return action


def add_input(parser, *flags, keywords: Sequence[str] = (), **kwargs) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)``, declared as a path the command reads.

    Examples
    --------
    >>> from rankstats.cli._shared import Parser, add_input, path_role
    >>> parser = Parser(prog="demo")
    >>> path_role(add_input(parser, "--samples", metavar="PATH"))
    PathRole(role='input', folder=False, keywords=())
    """
    return declare(parser.add_argument(*flags, **kwargs), INPUT, keywords=keywords)


def add_output(parser, *flags, folder: bool = False, **kwargs) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)``, declared as a path the command writes.

    ``folder=True``: a folder the command writes files into (``--csv``).

    Examples
    --------
    >>> from rankstats.cli._shared import Parser, add_output, path_role
    >>> parser = Parser(prog="demo")
    >>> path_role(add_output(parser, "--figures", metavar="FOLDER", folder=True)).folder
    True
    """
    return declare(parser.add_argument(*flags, **kwargs), OUTPUT, folder=folder)


def add_input_output(parser, *flags, **kwargs) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)``, declared as read and written (a cache).

    Examples
    --------
    >>> from rankstats.cli._shared import Parser, add_input_output, path_role
    >>> parser = Parser(prog="demo")
    >>> path_role(add_input_output(parser, "--cache", metavar="PATH")).role
    'input and output'
    """
    return declare(parser.add_argument(*flags, **kwargs), INPUT_OUTPUT)


def path_role(action: argparse.Action) -> PathRole | None:
    """The :class:`PathRole` an argument was declared with, or None."""
    return getattr(action, "path_role", None)


def option_name(action: argparse.Action) -> str:
    """An argument as the user sees it: ``-o/--output``, ``--json``, ``CUBE``."""
    if action.option_strings:
        return "/".join(action.option_strings)
    metavar = action.metavar
    return metavar if isinstance(metavar, str) else action.dest.upper()


def command_parsers(parser, arguments) -> list:
    """``parser`` and the sub-parser of each command ``arguments`` chose, outermost first."""
    chain = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(arguments, action.dest, None))
            if chosen is not None:
                chain += command_parsers(chosen, arguments)
    return chain


def _given_paths(parsers, arguments) -> list[tuple[str, str, PathRole]]:
    """``(option, path, role)`` for every path the parsed arguments give a declared argument."""
    found = []
    for parser in parsers:
        for action in parser._actions:
            role = path_role(action)
            given = getattr(arguments, action.dest, None) if role else None
            for value in given if isinstance(given, (list, tuple)) else [given]:
                # '-' is standard output, a keyword (an example's name) names no file
                if value is not None and str(value) != "-" and str(value) not in role.keywords:
                    found.append((option_name(action), str(value), role))
    return found


def check_paths(parser, arguments) -> None:
    """Refuse, before any work, outputs that would destroy an input or cannot be written.

    The one input/output check of every command: :func:`rankstats.cli.main`
    runs it on the chosen command's parser before the command runs, and
    ``rankstats collect`` on the collector's parser before the collector runs.
    It reads the roles the arguments were declared with (:func:`declare`),
    and refuses an output that is an input (symbolic links followed, hard
    links found by device and inode), lies inside one (a zarr store, a
    results folder) or contains one (a ``--csv`` folder holding the cube).
    An input that does not exist (the name of an embedded example) is not a
    path; a cache is one even before it exists, since the run makes it. Then
    every output must be writable: its folder exists, and a file output is
    not a folder, not write-protected and not a symbolic link (unless
    ``--force``); see :func:`rankstats.io.check_output`.

    Raises
    ------
    rankstats.errors.OutputError
        An output is, lies inside or contains an input, or may not be written.
    UsageError
        ``--json -`` and ``--csv -`` together, an output in a missing folder, a
        folder output that is a file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats.cli._shared import Parser, add_input, add_output, check_paths
    >>> cube = pathlib.Path(tempfile.mkdtemp()) / "cube.nc"
    >>> _ = cube.write_bytes(b"scores")
    >>> parser = Parser(prog="demo")
    >>> _ = add_input(parser, "cube", metavar="CUBE")
    >>> _ = add_output(parser, "--json", metavar="PATH")
    >>> check_paths(parser, parser.parse_args([str(cube), "--json", str(cube)]))
    Traceback (most recent call last):
    ...
    rankstats.errors.OutputError: --json '...cube.nc' is also an input (CUBE '...cube.nc'); ...
    """
    _check(_given_paths(command_parsers(parser, arguments), arguments), arguments)


def _check(paths: Sequence[tuple[str, str, PathRole]], arguments) -> None:
    """Check ``(option, path, role)`` triples: no output meets an input; each can be written."""
    from ..io import _check_apart, check_output

    if getattr(arguments, "json", None) == "-" and getattr(arguments, "csv", None) == "-":
        raise UsageError("--json - and --csv - both write to standard output; give one a path")
    # an input that does not exist is not read as a file (it is an example's name, or
    # missing, which the command reports); a cache is read once the run has made it
    inputs = [
        (option, path)
        for option, path, role in paths
        if role.reads and (role.writes or os.path.lexists(path))
    ]
    for option, path, role in paths:
        if role.writes:
            _check_apart(
                f"{option} {path!r}",
                path,
                [(other, given) for other, given in inputs if other != option],
            )
    force = bool(getattr(arguments, "force", False))
    for option, path, role in paths:
        if not role.writes:
            continue
        target = Path(path)
        if not target.absolute().parent.is_dir():
            raise UsageError(
                f"{option} {path!r}: the folder {str(target.absolute().parent)!r} does not exist"
            )
        if role.folder:
            if target.exists() and not target.is_dir():
                raise UsageError(
                    f"{option} {path!r}: names a folder (one file each), and a file is there"
                )
            if not target.exists() and target.suffix.lower() in _FILE_SUFFIXES:
                raise UsageError(
                    f"{option} {path!r}: names a folder that gets one file each; "
                    "give a folder name" + (" (or '-')" if option == "--csv" else "")
                )
        elif role.reads:  # a cache: read and appended to, never replaced
            if target.is_dir():
                raise UsageError(f"{option} {path!r}: is a folder, not a file")
        else:
            check_output(path, force=force, name=option)


#: Suffixes that name a file: a folder output (``--csv``) given one is a mistake.
_FILE_SUFFIXES = (".csv", ".json", ".png", ".html", ".nc")


def check_outputs(arguments, *, inputs: Sequence = (), **paths) -> None:
    """:func:`check_paths` for a command whose arguments are not declared.

    ``paths`` maps an option (``html="..."``) to the file it names, or None;
    ``inputs`` are the paths the command reads. ``--json`` and ``--csv``
    come from ``arguments``; ``csv`` and ``figures`` are folders, ``cache``
    is read and written. Prefer declaring the arguments (:func:`declare`):
    then :func:`rankstats.cli.main` checks them before the command runs.
    """
    given = [
        (
            f"--{option.replace('_', '-')}",
            str(path),
            PathRole(INPUT_OUTPUT)
            if option == "cache"
            else PathRole(OUTPUT, folder=option in ("csv", "figures")),
        )
        for option, path in {
            "json": getattr(arguments, "json", None),
            "csv": getattr(arguments, "csv", None),
            **paths,
        }.items()
        if path and str(path) != "-"
    ]
    given += [("input", str(path), PathRole(INPUT)) for path in inputs if path]
    _check(given, arguments)


def check_inputs(paths: Mapping) -> None:
    """Fail before any work when an input named on the command line does not exist.

    ``paths`` maps an option or argument as the user sees it (``"--samples"``,
    ``"PATH"``) to the path it names, a list of paths, or None.
    """
    for option, given in paths.items():
        for path in [given] if isinstance(given, (str, Path)) else (given or ()):
            if not Path(path).exists():
                raise UsageError(f"{option} {str(path)!r}: no such file or folder")


def prints_markdown(arguments) -> bool:
    """Whether the command prints its markdown: not ``--quiet``, and stdout not taken by data."""
    return not arguments.quiet and "-" not in (
        getattr(arguments, "json", None),
        getattr(arguments, "csv", None),
    )


def _flat(frame):
    """A table with its index as ordinary columns (an unnamed range index is dropped)."""
    import pandas as pd

    if isinstance(frame.index, pd.RangeIndex) and frame.index.name is None:
        return frame.reset_index(drop=True)
    return frame.reset_index()


def jsonable(value):
    """``value`` with NumPy scalars as Python ones and NaN as None (JSON's null)."""
    import numpy as np

    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def write_tables(arguments, tables: Mapping, attrs: Mapping | None = None) -> None:
    """Write ``tables`` (name → DataFrame) where ``--json`` and ``--csv`` say.

    ``attrs`` (what the run used: seed, n_resamples, ...) go into the JSON document.
    """
    from ..io import write_atomically

    frames = {name: _flat(frame) for name, frame in tables.items()}
    if getattr(arguments, "json", None):
        document = {
            "attrs": jsonable(dict(attrs or {})),
            "tables": {
                name: [jsonable(row) for row in frame.to_dict(orient="records")]
                for name, frame in frames.items()
            },
        }
        text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        if arguments.json == "-":
            sys.stdout.write(text)
        else:
            write_atomically(arguments.json, text.encode("utf-8"))
    if getattr(arguments, "csv", None):
        if arguments.csv == "-":
            sys.stdout.write(
                "\n".join(
                    f"# {name}\n{frame.to_csv(index=False)}" for name, frame in frames.items()
                )
            )
        else:
            folder = Path(arguments.csv)
            folder.mkdir(exist_ok=True)
            for name, frame in frames.items():
                write_atomically(folder / f"{name}.csv", frame.to_csv(index=False).encode("utf-8"))


def write_text(path, text: str) -> None:
    """Write ``text`` atomically: a failed write leaves no partial file."""
    from ..io import write_atomically

    write_atomically(path, text.encode("utf-8"))


def add_cube_argument(parser) -> None:
    """Add the positional ``CUBE``: a cube file, or the name of an embedded example."""
    add_input(
        parser,
        "cube",
        metavar="CUBE",
        help="a cube file (.nc, .zarr), or the name of an embedded example (e.g. mizrahi2024)",
    )


def load_cube(name_or_path: str, chunks=None):
    """A cube from a file, or an embedded example by name; a usage error when it is neither."""
    from .. import datasets
    from ..io import open_cube

    if Path(name_or_path).exists():
        return open_cube(name_or_path, chunks=chunks) if chunks else open_cube(name_or_path)
    if name_or_path in datasets.available():
        cube = datasets.load(name_or_path)
        return cube.chunk(chunks) if chunks else cube
    raise UsageError(
        f"CUBE {name_or_path!r}: no such file, and no embedded example of that "
        f"name (examples: {', '.join(datasets.available())})"
    )


def describe(cube) -> str:
    """``"3 models × 2 tasks × ..., binary accuracy"``."""
    sizes = " × ".join(f"{cube.sizes[d]} {d}s" for d in cube["score"].dims)
    return f"{sizes}, {cube.attrs.get('score_kind')} {cube.attrs.get('metric')}"


def noted(function, *args, **kwargs):
    """Run ``function``; print its RankstatsWarnings as one-line notes on stderr."""
    import warnings

    from ..errors import RankstatsWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RankstatsWarning)
        result = function(*args, **kwargs)
    for warning in caught:
        if issubclass(warning.category, RankstatsWarning):
            print(f"rankstats: note: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return result


def read_table(path: str):
    """A CSV table (``.tsv``: tab-separated), or a one-line error naming the file."""
    import pandas as pd

    if not Path(path).is_file():
        raise MissingPathError(f"{path}: no such file")
    try:
        return pd.read_csv(path, sep="\t" if path.endswith(".tsv") else ",")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise InputTypeError(f"{path}: not a CSV table ({type(error).__name__})") from None


def table_column(table, name: str, option: str):
    """The column ``name`` that ``option`` names, or a usage error listing the columns."""
    if name not in table.columns:
        raise UsageError(
            f"{option} {name!r} is not a column of the table (columns: "
            f"{', '.join(map(str, table.columns))})"
        )
    return table[name]


def label_column(table, labels: str | None, used):
    """The models' labels: the ``--labels`` column, else the first text column not in ``used``.

    None when there is no such column (the caller decides what names the models then).
    """
    import pandas as pd

    if labels:
        return table_column(table, labels, "--labels")
    text = [
        c for c in table.columns if c not in used and not pd.api.types.is_numeric_dtype(table[c])
    ]
    return table[text[0]] if text else None
