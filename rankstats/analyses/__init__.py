"""Analyses composed of the statistics: the report, minimal edits, verbalizers, budgeted estimation.

An analysis calls :mod:`rankstats.statistics` and :mod:`rankstats.stability`;
it never re-implements a statistic.
"""
