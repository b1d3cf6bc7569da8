"""Figures without pyplot: a new axes on its own figure, and a figure as PNG bytes."""

from __future__ import annotations

import io


def new_axes(ax, size):
    """``ax`` if given, else the axes of a new constrained-layout figure of ``size`` inches."""
    if ax is not None:
        return ax
    try:
        from matplotlib.figure import Figure
    except ImportError as error:  # pragma: no cover - exercised without the extra
        raise ImportError('figures need matplotlib: pip install "rankstats[plot]"') from error
    return Figure(figsize=size, layout="constrained").add_subplot()


def to_png(figure, *, dpi: int = 110) -> bytes:
    r"""A matplotlib figure, or the figure of an axes, as PNG bytes.

    Every plotting function of :mod:`rankstats.plot` returns its axes; this
    renders one to PNG without pyplot's global state, so it is safe in
    scripts, servers and threads.

    Parameters
    ----------
    figure : matplotlib.figure.Figure or matplotlib.axes.Axes
        What to render; an axes renders its whole figure.
    dpi : int, default 110
        Resolution.

    Returns
    -------
    bytes
        The PNG file's content.

    Examples
    --------
    >>> from rankstats.plot import to_png
    >>> from matplotlib.figure import Figure
    >>> ax = Figure(figsize=(2, 1)).add_subplot()
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> to_png(ax)[:8]
    b'\x89PNG\r\n\x1a\n'
    """
    figure = getattr(figure, "figure", figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
