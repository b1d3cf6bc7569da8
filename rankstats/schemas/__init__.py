"""JSON Schemas of the score cube and of the task-sample and template files (package data).

- ``cube``: the cube's conventions, for ``xarray.Dataset.to_dict(data=False)``
  (enforced by :func:`rankstats.validate`);
- ``samples``: one task sample per line of a JSON Lines file
  (read by :func:`rankstats_collectors.tasks.load_samples`);
- ``templates``: one template per line of a JSON Lines file
  (read by :func:`rankstats_collectors.tasks.load_templates`).

Examples
--------
>>> from rankstats import schemas
>>> schemas.NAMES
('cube', 'samples', 'templates')
>>> schemas.load("cube")["title"]
'rankstats score cube'
>>> schemas.path("samples").name
'samples.schema.json'
"""

from __future__ import annotations

import json
from importlib import resources

from ..errors import OptionError

__all__ = ["NAMES", "load", "path"]

NAMES = ("cube", "samples", "templates")


def path(name: str):
    """The file of schema ``name``, as a :class:`importlib.resources.abc.Traversable`.

    Parameters
    ----------
    name : {"cube", "samples", "templates"}
        Which schema.

    Returns
    -------
    importlib.resources.abc.Traversable
        A real file in an installed or editable package (usable as a path);
        read it with ``read_text()`` wherever the package may be zipped.

    Raises
    ------
    rankstats.errors.OptionError
        ``name`` is not one of :data:`NAMES` (also a ``ValueError``).
    """
    if name not in NAMES:
        raise OptionError(f"no schema named {name!r}; the schemas are {', '.join(NAMES)}")
    return resources.files(__name__) / f"{name}.schema.json"


def load(name: str) -> dict:
    """Schema ``name`` as a dictionary (see :func:`path` for the names)."""
    return json.loads(path(name).read_text(encoding="utf-8"))
