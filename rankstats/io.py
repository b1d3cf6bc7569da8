"""Save and open score cubes: netCDF (always), zarr (when installed); writes are atomic."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from . import _text
from .errors import CubeError, MissingPathError, OutputError, ScoreValueError
from .validation import validate

__all__ = ["check_output", "import_files", "open_cube", "save", "write_atomically"]

_FORMATS = ("netcdf", "zarr")
_ZARR_MARKERS = (".zgroup", ".zattrs", "zarr.json")


def _format_of(path: Path, given: str | None) -> str:
    if given is not None:
        return _text.choice(*_FORMATS)("save", "format", given)
    return "zarr" if path.suffix == ".zarr" else "netcdf"


def check_output(
    path,
    *,
    inputs: Iterable | Mapping = (),
    force: bool = False,
    format: str | None = None,
    name: str = "output",
) -> Path:
    """Check, before any work, that ``path`` can and may be written; return it as a Path.

    Call it first, before reading inputs or sending requests, so a run that
    cannot write its result stops before it does anything.

    Parameters
    ----------
    path : str or os.PathLike
        The output: a file, or (``format="zarr"`` or a ``.zarr`` suffix) a
        zarr store, which is a folder.
    inputs : iterable of str or os.PathLike, or mapping
        The paths the run reads (a mapping: the name of the option that
        gives each → its path); the output may not be one of them (hard and
        symbolic links included), lie inside one (a zarr store, a results
        folder) or contain one.
    force : bool, default False
        Replace a write-protected output, or a symbolic link (the link is
        replaced, not the file it points to).
    format : {"netcdf", "zarr"}, optional
        The output's format (by default from the suffix; only a zarr store
        may be an existing folder).
    name : str, default "output"
        What messages call the output (a command-line option: ``"--json"``).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    rankstats.errors.MissingPathError
        The output's folder does not exist.
    rankstats.errors.OutputError
        The output is, lies inside or contains one of the inputs, is a folder
        (other than a zarr store),
        something other than a file, in a folder that cannot be written, or
        (without ``force``) a write-protected file or a symbolic link.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats.io import check_output
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_output(folder / "cube.nc").name
    'cube.nc'
    >>> check_output(folder / "missing" / "cube.nc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankstats.errors.MissingPathError: output '.../missing/cube.nc': the folder '...' does not exist
    >>> check_output(folder / "cube.nc", inputs={"PATH": folder})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankstats.errors.OutputError: output '.../cube.nc' lies inside the input PATH '...': ...
    """
    force = _text.boolean("check_output", "force", force)
    path = Path(path)
    file_format = _format_of(path, format)
    shown = f"{name} {str(path)!r}"
    folder = path.absolute().parent
    if not folder.exists():
        raise MissingPathError(f"{shown}: the folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise OutputError(f"{shown}: {str(folder)!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"{shown}: the folder {str(folder)!r} cannot be written (permission denied)"
        )
    _check_apart(shown, path, inputs)
    if path.is_symlink():
        if not force:
            raise OutputError(
                f"{shown} is a symbolic link to {os.readlink(path)!r}; pass "
                "force to replace the link, or write to the file it points to"
            )
        return path
    if not path.exists():
        return path
    if path.is_dir():
        if file_format != "zarr":
            raise OutputError(f"{shown} is a folder, not a file")
        if not any((path / marker).exists() for marker in _ZARR_MARKERS):
            raise OutputError(
                f"{shown} is a folder that is not a zarr store; it would be "
                "replaced: choose another output"
            )
    elif not path.is_file():
        raise OutputError(f"{shown} is not a regular file")
    if not force and not _writable(path):
        raise OutputError(
            f"{shown} is write-protected; pass force=True (--force on the "
            "command line) to replace it"
        )
    return path


#: What :func:`_overlap` finds, as a message says it; ``{input}`` is the input's option and path.
_RELATIONS = {
    "same": "is also an input ({input}); writing it would replace what is read: choose another "
    "output",
    "inside": "lies inside the input {input}: writing it would change what is read: choose a "
    "path outside it",
    "contains": "contains the input {input}: writing it could replace what is read: choose a "
    "path that does not hold it",
}


def _check_apart(shown: str, output, inputs: Iterable | Mapping) -> None:
    """Raise :class:`OutputError` when ``output`` is, lies inside or contains one of ``inputs``.

    ``shown`` is how the message names the output (``"--json 'cube.nc'"``);
    ``inputs`` are paths, ``(option, path)`` pairs, or a mapping of option → path.
    """
    named = (
        inputs.items()
        if isinstance(inputs, Mapping)
        else (given if isinstance(given, tuple) else ("", given) for given in inputs)
    )
    for option, given in named:
        if not isinstance(given, (str, os.PathLike)):
            continue
        relation = _overlap(output, given)
        if relation:
            where = f"{option} {str(given)!r}" if option else repr(str(given))
            raise OutputError(f"{shown} {_RELATIONS[relation].format(input=where)}")


def _overlap(output, given) -> str | None:
    """How an output meets an input: ``"same"``, ``"inside"``, ``"contains"`` or None.

    Paths are compared once made absolute and with every symbolic link
    followed (:meth:`pathlib.Path.resolve`, which also works for paths that do
    not exist yet, such as an output about to be made), and, when both exist,
    by device and inode (``os.stat``), which finds hard links. An output inside
    an input (a file in a zarr store or in a results folder) changes what is
    read; one that contains an input (a folder for ``--csv``) may replace it.
    Never raises.

    Examples
    --------
    >>> from rankstats.io import _overlap
    >>> _overlap("runs/cube.zarr/tables", "runs/cube.zarr"), _overlap("runs", "runs/a.nc")
    ('inside', 'contains')
    >>> _overlap("runs/b.nc", "runs/a.nc") is None
    True
    """
    output, given = Path(output), Path(given)
    try:
        one, other = output.absolute().resolve(), given.absolute().resolve()
    except (OSError, RuntimeError, ValueError):  # a symbolic link loop: compare as written
        one, other = Path(os.path.abspath(output)), Path(os.path.abspath(given))
    if one == other or _same_path(output, given):
        return "same"
    if other in one.parents:
        return "inside"
    if one in other.parents:
        return "contains"
    return None


def _same_path(one: Path, other: Path) -> bool:
    """Whether two paths name one file (hard or symbolic links included); never raises."""
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        pass
    try:
        return one.absolute().resolve() == other.absolute().resolve()
    except (OSError, RuntimeError, ValueError):  # a symbolic link loop
        return os.path.abspath(one) == os.path.abspath(other)


def _writable(path: Path) -> bool:
    """Whether the file's mode lets its owner write it (root ignores modes; users do not)."""
    mode = path.stat().st_mode
    return bool(mode & stat.S_IWUSR) and os.access(path, os.W_OK)


def import_files(
    load: Callable,
    paths,
    output,
    *,
    options: Iterable[str] | Mapping = (),
    force: bool = False,
    importer: str | None = None,
    format: str | None = None,
) -> xr.Dataset:
    """Check the output, parse the options, import ``paths`` and write the cube, in that order.

    This is ``rankstats import``: nothing is read before the output and the
    options are checked, and the cube is written atomically, so a run that
    fails leaves any previous output as it was.

    Parameters
    ----------
    load : callable
        The importer, ``load(paths, **options) -> cube``. Its ``options``
        attribute, when it has one, maps each option to its parser.
    paths : str, os.PathLike or a sequence of them
        The files or folders to import.
    output : str or os.PathLike
        The cube file to write (see :func:`check_output`).
    options : iterable of str, or mapping
        ``NAME=VALUE`` text (``-O``), or a mapping of values.
    force : bool, default False
        Replace a write-protected output or a symbolic link.
    importer : str, optional
        The importer's name, for messages.
    format : {"netcdf", "zarr"}, optional
        The output's format (by default from its suffix).

    Returns
    -------
    xarray.Dataset
        The cube written.

    Raises
    ------
    rankstats.errors.RankstatsError
        The output may not be written, an option is unknown or not allowed,
        or the inputs are not what the importer reads.
    """
    many = not isinstance(paths, (str, os.PathLike)) and isinstance(paths, Iterable)
    listed = list(paths) if many else [paths]
    check_output(output, inputs=listed, force=force, format=format)
    who = f"importer {importer!r}" if importer else "importer"
    parsed = _text.parse_options(options, getattr(load, "options", None), function=who)
    cube = load(listed if many else paths, **parsed)
    save(cube, output, format=format, force=force)
    return cube


def _encoding(cube: xr.Dataset, file_format: str, float_dtype: str) -> dict:
    """Compact on-disk types: int8 for binary scores (-1 = missing), float otherwise."""
    score = cube["score"]
    if cube.attrs.get("score_kind") == "binary":
        encoding = {"dtype": "int8", "_FillValue": np.int8(-1)}
    else:
        encoding = {"dtype": float_dtype, "_FillValue": np.nan}
    chunks = tuple(
        1 if dim in ("model", "task") else max(1, score.sizes[dim]) for dim in score.dims
    )
    if file_format == "netcdf":
        encoding.update(zlib=True, complevel=4, chunksizes=chunks)
    else:
        encoding["chunks"] = chunks
    found = {"score": encoding}
    if "standard_error" in cube.data_vars:
        # floats whatever the scores are: a binary cube's standard errors lie strictly
        # between 0 and 1
        se = cube["standard_error"]
        found["standard_error"] = {"dtype": float_dtype, "_FillValue": np.nan}
        se_chunks = tuple(
            1 if dim in ("model", "task") else max(1, se.sizes[dim]) for dim in se.dims
        )
        if file_format == "netcdf":
            found["standard_error"].update(zlib=True, complevel=4, chunksizes=se_chunks)
        else:
            found["standard_error"]["chunks"] = se_chunks
    return found


def _storable(cube: xr.Dataset) -> xr.Dataset:
    """Strings as object arrays (portable in netCDF4 and zarr), boolean attributes as ints.

    Labels of models and tasks given as a mix of numbers and text are stored
    as text (validation has made sure their texts differ).
    """
    cube = cube.copy()
    for name, variable in cube.variables.items():
        if variable.dtype.kind in "UT":
            cube[name] = variable.astype(object)
    for dim in ("model", "task"):
        if (
            dim in cube.coords
            and cube[dim].dtype == object
            and not all(isinstance(label, str) for label in cube[dim].values)
        ):
            cube = cube.assign_coords(
                {dim: np.array([str(label) for label in cube[dim].values], dtype=object)}
            )
    cube.attrs = {
        k: int(v) if isinstance(v, (bool, np.bool_)) else v for k, v in cube.attrs.items()
    }
    return cube


def save(
    cube: xr.Dataset,
    path,
    *,
    format: str | None = None,
    float_dtype: str = "float32",
    force: bool = False,
):
    """Write a cube to a netCDF file or a zarr store, atomically.

    Parameters
    ----------
    cube : xarray.Dataset
        A valid cube (checked with :func:`rankstats.validate` first).
    path : str or os.PathLike
        Destination; a ``.zarr`` suffix selects zarr, anything else netCDF.
    format : {"netcdf", "zarr"}, optional
        Override the choice made from the suffix.
    float_dtype : {"float32", "float64"}
        On-disk type of non-binary scores (and of standard errors); float32
        halves the size and keeps seven significant digits, float64 keeps
        every bit.
    force : bool, default False
        Replace a write-protected file or a symbolic link at ``path`` (see
        :func:`check_output`); without it they are refused.

    Returns
    -------
    pathlib.Path
        The written path.

    Raises
    ------
    rankstats.errors.CubeError
        The cube is not valid.
    rankstats.errors.PathError
        ``path`` cannot or may not be written (see :func:`check_output`).

    Notes
    -----
    The cube is written to a temporary file beside ``path`` and moved into
    place only once complete, so an interrupted or failed write leaves no
    partial file and keeps any previous file at ``path`` intact; temporary
    files that a killed run left beside ``path`` are removed by the next
    write to it. Binary
    scores are stored as int8 with ``_FillValue = -1``; chunks hold one
    (model, task) each; netCDF variables are compressed with zlib level 4.
    A ``standard_error`` variable is stored as ``float_dtype`` (NaN where
    none was reported), also for binary cubes, and opened as float64.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import rankstats
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1}]
    ... )
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = rankstats.save(cube, pathlib.Path(folder) / "cube.nc")
    ...     rankstats.open_cube(path).score.values.tolist()
    [[[[1.0]]]]
    """
    validate(cube)
    path = Path(path)
    file_format = _format_of(path, format)
    float_dtype = _text.choice("float32", "float64")("save", "float_dtype", float_dtype)
    check_output(path, force=force, format=file_format)
    stored = _storable(cube)
    encoding = _encoding(stored, file_format, float_dtype)
    if file_format == "netcdf":
        _write_netcdf(stored, path, encoding, force)
    else:
        _write_zarr(stored, path, encoding, force)
    return path


def _usual_permissions(path) -> None:
    """Give a temporary file the permissions a new file gets (mkstemp makes it private)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?:(?P<pid>\d+)-)?[A-Za-z0-9_]+\.part")


def _temporary_prefix(path: Path) -> str:
    """``.NAME.PID-``: the writer's process id tells a live write from one killed mid-way."""
    return f".{path.name}.{os.getpid()}-"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale_temporaries(path) -> list[Path]:
    """Remove the temporary files a killed write of ``path`` left beside it; return them.

    A temporary file is ``.NAME.PID-XXXX.part`` (``.NAME.XXXX.part`` before
    process ids were recorded); it is stale when no process with that id
    runs. A ``.NAME.previous`` zarr store (set aside while a store is
    replaced) is removed when ``path`` exists, and moved back to ``path``
    when a killed run left nothing there.
    """
    path = Path(path)
    folder = path.absolute().parent
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if not match or match["name"] != path.name:
            continue
        if match["pid"] is not None and _alive(int(match["pid"])):
            continue
        _remove(entry)
        removed.append(entry)
    previous = folder / f".{path.name}.previous"
    if previous.exists() and not previous.is_symlink():
        if path.exists() or path.is_symlink():
            _remove(previous)
        else:
            os.replace(previous, path)
        removed.append(previous)
    return removed


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def write_atomically(path, write, *, force: bool = False) -> Path:
    """Write a file through a temporary file beside it, moved into place once complete.

    Parameters
    ----------
    path : str or os.PathLike
        The destination.
    write : bytes or callable
        The content, or ``write(temporary_path)`` that writes it.
    force : bool, default False
        Replace a write-protected file or a symbolic link at ``path``; without
        it they are refused (:func:`check_output`).

    Returns
    -------
    pathlib.Path
        ``path``. A failed or interrupted write leaves no partial file and
        keeps any previous file at ``path``; temporary files that killed
        writes of ``path`` left behind are removed first.

    Raises
    ------
    rankstats.errors.PathError
        ``path`` cannot or may not be written.
    """
    path = Path(path)
    check_output(path, force=force)
    remove_stale_temporaries(path)
    handle, temporary = tempfile.mkstemp(
        prefix=_temporary_prefix(path), suffix=".part", dir=path.absolute().parent
    )
    os.close(handle)
    try:
        if callable(write):
            write(temporary)
        else:
            Path(temporary).write_bytes(write)
        _usual_permissions(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _write_netcdf(cube: xr.Dataset, path: Path, encoding: dict, force: bool) -> None:
    write_atomically(
        path,
        lambda temporary: cube.to_netcdf(temporary, engine="netcdf4", encoding=encoding),
        force=force,
    )


def _write_zarr(cube: xr.Dataset, path: Path, encoding: dict, force: bool) -> None:
    try:
        import zarr  # noqa: F401
    except ImportError as error:
        raise ImportError(
            'saving zarr stores needs the zarr package: pip install "rankstats[io]"'
        ) from error
    remove_stale_temporaries(path)
    temporary = Path(
        tempfile.mkdtemp(prefix=_temporary_prefix(path), suffix=".part", dir=path.absolute().parent)
    )
    try:
        cube.to_zarr(temporary, mode="w", encoding=encoding, consolidated=False)
        if path.is_symlink():
            path.unlink()  # force: the link is replaced, not what it points to
        if path.exists():
            # a directory cannot be replaced in one step: move the old one aside first
            previous = path.with_name(f".{path.name}.previous")
            shutil.rmtree(previous, ignore_errors=True)
            os.replace(path, previous)
            os.replace(temporary, path)
            shutil.rmtree(previous, ignore_errors=True)
        else:
            os.replace(temporary, path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def open_cube(
    path, *, format: str | None = None, chunks=None, check_values: bool | None = None
) -> xr.Dataset:
    """Open a cube written by :func:`save` (or any file following the conventions).

    Parameters
    ----------
    path : str or os.PathLike
        A netCDF file or a zarr store.
    format : {"netcdf", "zarr"}, optional
        Override the choice made from the suffix.
    chunks : dict or "auto", optional
        Open lazily as dask arrays with these chunks (needs the ``dask``
        extra); by default the cube is loaded into memory.
    check_values : bool, optional
        Check every score (see :func:`validate`). Defaults to True for a cube
        loaded into memory and False for one opened lazily, where the check
        would read the whole file before any work starts.

    Returns
    -------
    xarray.Dataset
        The validated cube, scores as float64 with NaN for missing.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    CubeError
        The file is not a readable cube; the message names the file.
    ScoreValueError
        The ``score`` variable is stored as text (or anything but integers
        or floats); the message names the variable and the file.

    Examples
    --------
    See :func:`save`.
    """
    path = Path(path)
    if not path.exists():
        broken = " (a symbolic link to a missing file)" if path.is_symlink() else ""
        raise MissingPathError(f"open_cube: no file at {str(path)!r}{broken}")
    file_format = _format_of(path, format)
    try:
        if file_format == "netcdf":
            cube = xr.open_dataset(path, engine="netcdf4", chunks=chunks)
        else:
            cube = xr.open_zarr(path, consolidated=False, chunks=chunks)
    except (OSError, ValueError) as error:
        raise CubeError(
            f"open_cube: {str(path)!r} is not a readable {file_format} cube: {error}"
        ) from error
    if chunks is None:
        cube = cube.load()
        cube.close()
    if "score" in cube:
        kind = cube["score"].dtype.kind
        if kind not in "biuf":
            # text such as "0.5" would otherwise become a number on the cast below
            what = {
                "O": "objects (text)",
                "S": "bytes (text)",
                "U": "text",
                "T": "text",
                "c": "complex numbers",
            }.get(kind, str(cube["score"].dtype))
            raise ScoreValueError(
                f"open_cube: {str(path)!r}: the variable 'score' is stored as {what} "
                f"(dtype {cube['score'].dtype}), not as numbers; a cube's scores are stored "
                "as integers or floats"
            )
        cube["score"] = cube["score"].astype("float64")
    if "standard_error" in cube.data_vars and cube["standard_error"].dtype.kind in "iuf":
        cube["standard_error"] = cube["standard_error"].astype("float64")
    for name, variable in cube.variables.items():
        if variable.dtype.kind in "OSUT":
            cube[name] = variable.astype(object)
    try:
        return validate(cube, values=chunks is None if check_values is None else check_values)
    except CubeError as error:
        raise type(error)(f"{str(path)!r}: {error}") from error
