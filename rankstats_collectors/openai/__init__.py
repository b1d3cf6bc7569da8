"""Collect scores from the OpenAI API or any OpenAI-compatible server (extra ``openai``).

The official ``openai`` client is imported only when requests are sent, so
planning a run (a dry run) needs neither the package nor a key.

Modules: :mod:`~rankstats_collectors.openai.collection` (templates × samples → cube),
:mod:`~rankstats_collectors.openai.client` (concurrent, rate-limited, retrying,
cached requests), :mod:`~rankstats_collectors.openai.limits` (rate limits, backoff),
:mod:`~rankstats_collectors.openai.costs` (tokens and dollars),
:mod:`~rankstats_collectors.openai.chat` (a chat function for paraphrase generation
and budgeted estimates),
:mod:`~rankstats_collectors.openai.cli` (``rankstats collect openai``).

Examples
--------
>>> import tempfile, pathlib
>>> from rankstats_collectors.openai import Settings, collect
>>> from rankstats_collectors.tasks import Sample, Template
>>> result = collect(["gpt-x"], {"t": [Template("1", "Is {x} even? Answer yes or no.")]},
...                  {"t": [Sample(str(i), {"x": i}, "yes" if i % 2 == 0 else "no")
...                         for i in range(3)]},
...                  cache=pathlib.Path(tempfile.mkdtemp()) / "cache.jsonl",
...                  settings=Settings(max_tokens=2), dry_run=True)
>>> print(result.plan.summary())
gpt-x: 3 requests to send (0 already cached), about 21 tokens in, at most 6 tokens out
"""

from .client import Request, Requester, RequestError
from .collection import Collection, Settings, collect
from .costs import Ledger, Plan
from .limits import Backoff, RateLimiter

__all__ = [
    "Backoff",
    "Collection",
    "Ledger",
    "Plan",
    "RateLimiter",
    "Request",
    "RequestError",
    "Requester",
    "Settings",
    "collect",
]
