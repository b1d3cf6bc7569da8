"""Pure NumPy/SciPy kernels: reduce along the last axes, vectorised over the leading ones.

Nothing here imports xarray; the public functions reach these kernels through
:mod:`rankstats._xr`.
"""
