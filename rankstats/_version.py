"""The version of rankstats, read by the build backend."""

__version__ = "0.1.0"
