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
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import RankstatsError

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


def add_output_options(parser, *, n_resamples: int | None = None, minimum: int = 1,
                       resamples_help: str = "bootstrap replicates",
                       confidence_level: bool = False) -> None:
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
    output.add_argument("--json", metavar="PATH",
                        help="write every table as one JSON document "
                             "{attrs, tables: {NAME: [rows]}} to PATH; '-' for standard output")
    output.add_argument("--csv", metavar="FOLDER",
                        help="write each table as FOLDER/NAME.csv; '-' writes every table "
                             "to standard output, each after a '# NAME' line")
    output.add_argument("--force", action="store_true",
                        help="replace a write-protected output file or a symbolic link")
    output.add_argument("--quiet", action="store_true",
                        help="print no markdown (what --json and --csv write still goes out)")
    if n_resamples is None and not confidence_level:
        return
    draws = parser.add_argument_group("resampling")
    if n_resamples is not None:
        draws.add_argument("--n-resamples", type=integer(minimum), default=n_resamples,
                           metavar="N", help=f"{resamples_help} (default {n_resamples})")
        draws.add_argument("--seed", type=integer(0), metavar="SEED",
                           help="seed of the random draws (default: fresh entropy, printed "
                                "on standard error so the run can be repeated)")
    if confidence_level:
        draws.add_argument("--confidence-level", type=fraction, default=0.95, metavar="LEVEL",
                           help="confidence level of the intervals, strictly between 0 and 1 "
                                "(default 0.95)")


def resolve_seed(arguments) -> str | None:
    """Give ``arguments.seed`` a value from fresh entropy when none was given.

    Returns the note that says which seed was drawn (to print once the run has
    gone through), or None when the seed was given or the command has none.
    """
    if getattr(arguments, "seed", 0) is not None:
        return None
    arguments.seed = secrets.randbits(32)
    return f"rankstats: seed {arguments.seed} (give --seed {arguments.seed} to repeat this run)"


#: Outputs that are folders, or files the run reads as well as writes: only their
#: parent folder is checked.
_FOLDER_OR_SHARED = ("csv", "figures", "cache")


def check_outputs(arguments, *, inputs: Sequence = (), **paths) -> None:
    """Fail before any work when ``--json``, ``--csv`` or another output cannot be written.

    ``paths`` maps an option (``html="..."``) to the file it names, or None;
    ``inputs`` are the paths the command reads, which no output may be. A
    write-protected file or a symbolic link is replaced only with ``--force``
    (see :func:`rankstats.io.check_output`).
    """
    json_path, csv = getattr(arguments, "json", None), getattr(arguments, "csv", None)
    if json_path == "-" and csv == "-":
        raise UsageError("--json - and --csv - both write to standard output; give one a path")
    if csv and csv != "-":
        folder = Path(csv)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"--csv {csv!r}: names a folder (one file per table), and a file "
                             "is there")
        if not folder.exists() and folder.suffix.lower() == ".csv":
            raise UsageError(f"--csv {csv!r}: names a folder that gets one file per table; "
                             "give a folder name (or '-')")
        paths["csv"] = csv
    if json_path and json_path != "-":
        paths["json"] = json_path
    for option, path in paths.items():
        if path and not Path(path).absolute().parent.is_dir():
            raise UsageError(f"--{option.replace('_', '-')} {str(path)!r}: the folder "
                             f"{str(Path(path).absolute().parent)!r} does not exist")
    from ..io import check_output

    force = bool(getattr(arguments, "force", False))
    for option, path in paths.items():
        if path and option not in _FOLDER_OR_SHARED:
            check_output(path, inputs=[i for i in inputs if i], force=force)


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
    return not arguments.quiet and "-" not in (getattr(arguments, "json", None),
                                                 getattr(arguments, "csv", None))


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
        document = {"attrs": jsonable(dict(attrs or {})),
                    "tables": {name: [jsonable(row) for row in
                                      frame.to_dict(orient="records")]
                               for name, frame in frames.items()}}
        text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        if arguments.json == "-":
            sys.stdout.write(text)
        else:
            write_atomically(arguments.json, text.encode("utf-8"))
    if getattr(arguments, "csv", None):
        if arguments.csv == "-":
            sys.stdout.write("\n".join(f"# {name}\n{frame.to_csv(index=False)}"
                                       for name, frame in frames.items()))
        else:
            folder = Path(arguments.csv)
            folder.mkdir(exist_ok=True)
            for name, frame in frames.items():
                write_atomically(folder / f"{name}.csv",
                                 frame.to_csv(index=False).encode("utf-8"))


def write_text(path, text: str) -> None:
    """Write ``text`` atomically: a failed write leaves no partial file."""
    from ..io import write_atomically

    write_atomically(path, text.encode("utf-8"))


def add_cube_argument(parser) -> None:
    """Add the positional ``CUBE``: a cube file, or the name of an embedded example."""
    parser.add_argument("cube", metavar="CUBE",
                        help="a cube file (.nc, .zarr), or the name of an embedded example "
                             "(e.g. mizrahi2024)")


def load_cube(name_or_path: str, chunks=None):
    """A cube from a file, or an embedded example by name; a usage error when it is neither."""
    from .. import datasets
    from ..io import open_cube

    if Path(name_or_path).exists():
        return open_cube(name_or_path, chunks=chunks) if chunks else open_cube(name_or_path)
    if name_or_path in datasets.available():
        cube = datasets.load(name_or_path)
        return cube.chunk(chunks) if chunks else cube
    raise UsageError(f"CUBE {name_or_path!r}: no such file, and no embedded example of that "
                     f"name (examples: {', '.join(datasets.available())})")


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
            warnings.showwarning(warning.message, warning.category, warning.filename,
                                 warning.lineno)
    return result
