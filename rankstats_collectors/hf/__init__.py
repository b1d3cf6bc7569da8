"""Score local Hugging Face models on every template × sample of some tasks (extra ``hf``).

:func:`collect` renders every template for every sample with the safe
formatter, runs decoder-only (``AutoModelForCausalLM``) or encoder-decoder
(``AutoModelForSeq2SeqLM``) models on the prompts, by greedy generation or by
the likelihood of each option, and returns a cube of scores with the raw
responses. Runs are resumable through a content-addressed response cache.
The modules each do one job: :mod:`~rankstats_collectors.hf.loading` (find and
identify models), :mod:`~rankstats_collectors.hf.batching`,
:mod:`~rankstats_collectors.hf.generate`, :mod:`~rankstats_collectors.hf.likelihood`,
:mod:`~rankstats_collectors.hf.run` (plan, cache, cube) and :mod:`~rankstats_collectors.hf.cli`
(``rankstats collect hf``).

Importing this package needs torch and transformers: without them it raises
:class:`rankstats_collectors.MissingExtraError` naming ``pip install "rankstats[hf]"``.
"""

from __future__ import annotations

from .. import require

require("torch", "hf")
require("transformers", "hf")

from .errors import CollectorError  # noqa: E402
from .run import Settings, Summary, collect  # noqa: E402

__all__ = ["CollectorError", "Settings", "Summary", "collect"]
