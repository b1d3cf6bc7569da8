"""One way for every importer to treat the paths it is given or finds: readable, or an error.

A path an importer was given, or found in a folder because its name is one
the importer reads, is either a regular file it can read or an
:class:`~rankstats_collectors.files.ImporterError` naming it: a broken symbolic link, a
link that loops, a folder, a device or pipe, or a file it may not read is
never skipped in silence.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from rankstats.errors import InputTypeError

from . import file_error

__all__ = ["as_paths", "few", "files_in", "found_in", "lexists", "readable_file"]


def as_paths(paths) -> list[Path]:
    """``paths`` (one path or a sequence of them) as a list of :class:`~pathlib.Path`."""
    if isinstance(paths, (str, os.PathLike)) or not isinstance(paths, Iterable):
        paths = [paths]
    paths = list(paths)
    for path in paths:
        if not isinstance(path, (str, os.PathLike)):
            raise InputTypeError(
                f"a path is text or an os.PathLike, not {type(path).__name__} ({path!r})"
            )
    return [Path(path) for path in paths]


def few(paths, limit: int = 3) -> str:
    """At most ``limit`` of ``paths``, quoted, and how many more: for messages about many files.

    Examples
    --------
    >>> from rankstats_collectors.files._paths import few
    >>> few(["a.json", "b.json", "c.json", "d.json", "e.json"])
    "'a.json', 'b.json', 'c.json' and 2 more"
    """
    paths = [str(path) for path in paths]
    shown = ", ".join(repr(path) for path in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def lexists(path: Path) -> bool:
    """Whether anything is at ``path``, a broken symbolic link included."""
    return os.path.lexists(path)


def _problem(path: Path) -> str | None:
    """What keeps ``path`` from being read as a file, or None."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            return f"a symbolic link to a missing file ({os.readlink(path)!r})"
        return "the file does not exist"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link that loops"
        return f"cannot be read ({error.strerror or error})"
    if stat.S_ISDIR(info.st_mode):
        return "a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a device, pipe or socket)"
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    return None


def readable_file(path, shown: str | None = None) -> Path:
    """``path`` if it is a regular file that can be read, else an error naming it.

    Examples
    --------
    >>> import tempfile, pathlib, os
    >>> from rankstats_collectors.files._paths import readable_file
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> os.symlink(folder / "gone.jsonl", folder / "samples_x.jsonl")
    >>> readable_file(folder / "samples_x.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankstats_collectors.files.ImporterError: '.../samples_x.jsonl': a symbolic link to a ...
    """
    path = Path(path)
    problem = _problem(path)
    if problem is not None:
        raise file_error(str(path) if shown is None else shown, problem)
    return path


def found_in(folder: Path, wanted: Callable[[str], bool]) -> list[Path]:
    """Every entry below ``folder`` whose name ``wanted`` accepts, each checked readable, sorted.

    Files, folders and links alike are found by name, so a log that is a
    broken link or a folder is an error, not a file that is not there.
    Linked folders are not searched (as :meth:`pathlib.Path.rglob`); a
    folder that cannot be listed is an error.
    """

    def refuse(error: OSError):
        raise file_error(
            error.filename or folder, f"the folder cannot be read ({error.strerror or error})"
        )

    found = []
    for root, folders, names in os.walk(folder, onerror=refuse):
        for name in sorted(names + folders):
            if wanted(name):
                found.append(readable_file(Path(root) / name))
    return sorted(found)


def files_in(paths, suffixes: Sequence[str]) -> list[Path]:
    """The files named by ``paths``; a folder stands for the files below it with ``suffixes``.

    Raises an error naming a path that does not exist or cannot be read, an
    entry below a folder that has such a suffix but is not a readable file,
    or a folder without such files.
    """
    found = []
    for path in as_paths(paths):
        if path.is_dir():
            inside = found_in(path, lambda name: Path(name).suffix in suffixes)
            if not inside:
                names = " or ".join(suffixes)
                raise file_error(path, f"the folder holds no {names} file")
            found.extend(inside)
        else:
            found.append(readable_file(path))
    return found
