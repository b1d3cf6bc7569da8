"""Prompts: safe template formatting, paraphrase generation and verbalizer variants.

Each job has its own module: :mod:`collectors.prompts.formatting` fills
templates (plain named fields only), :mod:`collectors.prompts.paraphrase`
generates paraphrases of a template through a chat client, and
:mod:`collectors.prompts.verbalizer` builds the verbalizer variants of a
classification task.
"""
