"""Save and open score cubes: netCDF (always), zarr (when installed); writes are atomic."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr

from .errors import CubeError
from .validation import validate

__all__ = ["open_cube", "save"]

_FORMATS = ("netcdf", "zarr")


def _format_of(path: Path, given: str | None) -> str:
    if given is not None:
        if given not in _FORMATS:
            raise ValueError(f"format={given!r} is not one of {_FORMATS}")
        return given
    return "zarr" if path.suffix == ".zarr" else "netcdf"


def _encoding(cube: xr.Dataset, file_format: str, float_dtype: str) -> dict:
    """Compact on-disk types: int8 for binary scores (-1 = missing), float otherwise."""
    score = cube["score"]
    if cube.attrs.get("score_kind") == "binary":
        encoding = {"dtype": "int8", "_FillValue": np.int8(-1)}
    else:
        encoding = {"dtype": float_dtype, "_FillValue": np.nan}
    chunks = tuple(1 if dim in ("model", "task") else max(1, score.sizes[dim])
                   for dim in score.dims)
    if file_format == "netcdf":
        encoding.update(zlib=True, complevel=4, chunksizes=chunks)
    else:
        encoding["chunks"] = chunks
    return {"score": encoding}


def _storable(cube: xr.Dataset) -> xr.Dataset:
    """Strings as object arrays (portable in netCDF4 and zarr), boolean attributes as ints."""
    cube = cube.copy()
    for name, variable in cube.variables.items():
        if variable.dtype.kind in "UT":
            cube[name] = variable.astype(object)
    cube.attrs = {k: int(v) if isinstance(v, (bool, np.bool_)) else v
                  for k, v in cube.attrs.items()}
    return cube


def save(cube: xr.Dataset, path, *, format: str | None = None, float_dtype: str = "float32"):
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
        On-disk type of non-binary scores; float32 halves the size and keeps
        seven significant digits, float64 keeps every bit.

    Returns
    -------
    pathlib.Path
        The written path.

    Notes
    -----
    The cube is written to a temporary file beside ``path`` and moved into
    place only once complete, so an interrupted or failed write leaves no
    partial file and keeps any previous file at ``path`` intact. Binary
    scores are stored as int8 with ``_FillValue = -1``; chunks hold one
    (model, task) each; netCDF variables are compressed with zlib level 4.

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
    if float_dtype not in ("float32", "float64"):
        raise ValueError(f"float_dtype={float_dtype!r} is not 'float32' or 'float64'")
    if not path.parent.exists():
        raise FileNotFoundError(f"save: the folder {str(path.parent)!r} does not exist")
    stored = _storable(cube)
    encoding = _encoding(stored, file_format, float_dtype)
    if file_format == "netcdf":
        _write_netcdf(stored, path, encoding)
    else:
        _write_zarr(stored, path, encoding)
    return path


def _usual_permissions(path) -> None:
    """Give a temporary file the permissions a new file gets (mkstemp makes it private)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_atomically(path, write) -> Path:
    """Write a file through a temporary file beside it, moved into place once complete.

    Parameters
    ----------
    path : str or os.PathLike
        The destination.
    write : bytes or callable
        The content, or ``write(temporary_path)`` that writes it.

    Returns
    -------
    pathlib.Path
        ``path``. A failed or interrupted write leaves no partial file and
        keeps any previous file at ``path``.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                         dir=path.parent)
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


def _write_netcdf(cube: xr.Dataset, path: Path, encoding: dict) -> None:
    write_atomically(path, lambda temporary: cube.to_netcdf(temporary, engine="netcdf4",
                                                            encoding=encoding))


def _write_zarr(cube: xr.Dataset, path: Path, encoding: dict) -> None:
    try:
        import zarr  # noqa: F401
    except ImportError as error:
        raise ImportError(
            'saving zarr stores needs the zarr package: pip install "rankstats[io]"'
        ) from error
    temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    try:
        cube.to_zarr(temporary, mode="w", encoding=encoding, consolidated=False)
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


def open_cube(path, *, format: str | None = None, chunks=None,
              check_values: bool | None = None) -> xr.Dataset:
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

    Examples
    --------
    See :func:`save`.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"open_cube: no file at {str(path)!r}")
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
        cube["score"] = cube["score"].astype("float64")
    for name, variable in cube.variables.items():
        if variable.dtype.kind in "OSUT":
            cube[name] = variable.astype(object)
    try:
        return validate(cube, values=chunks is None if check_values is None else check_values)
    except CubeError as error:
        raise type(error)(f"{str(path)!r}: {error}") from error
