"""Hypothesis profiles for the property tests.

The ``ci`` profile (the default) is derandomized, so every run checks the same
examples and a failure reproduces exactly; ``RANKSTATS_MAX_EXAMPLES`` scales the
number of examples per test. ``HYPOTHESIS_PROFILE=dev`` searches with a random
seed and more examples, for local bug hunting.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

MAX_EXAMPLES = int(os.environ.get("RANKSTATS_MAX_EXAMPLES", "50"))

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=MAX_EXAMPLES,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=max(MAX_EXAMPLES, 500),
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
