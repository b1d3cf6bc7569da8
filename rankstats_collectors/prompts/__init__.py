"""Prompts: safe template formatting, paraphrase generation and verbalizer variants.

Each job has its own module: :mod:`rankstats_collectors.prompts.formatting` fills
templates (plain named fields only), :mod:`rankstats_collectors.prompts.paraphrase`
generates paraphrases of a template through a chat client, and
:mod:`rankstats_collectors.prompts.verbalizer` builds the verbalizer variants of a
classification task.
"""
