"""Log-likelihood of each option of a multiple-choice prompt; the prompt is encoded once.

For a decoder-only model the prompts of a batch go through the model once;
their key/value cache is then shared by every option of each prompt, so an
option costs only its own tokens. For an encoder-decoder model the encoder
runs once per prompt and its output is reused for every option.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rankstats.errors import OptionError

from .batching import length_batches, pad
from .compat import cache_argument, last_logits_only, returned_cache, select_rows

__all__ = ["OptionScores", "score_options"]


@dataclass
class OptionScores:
    """Log-probabilities of a prompt's options.

    Attributes
    ----------
    logprobs : list of float
        Sum over each option's tokens of log p(token | prompt, earlier tokens).
    tokens : list of int
        Each option's number of tokens (for length normalisation).
    prompt_tokens : int
        The prompt's number of tokens.
    """

    logprobs: list[float]
    tokens: list[int]
    prompt_tokens: int

    def best(self, choose: str = "sum") -> int:
        """Index of the most likely option, by summed or per-token (``"mean"``) log-probability.

        Ties go to the first option.

        Examples
        --------
        >>> from rankstats_collectors.hf.likelihood import OptionScores
        >>> scores = OptionScores([-2.0, -3.0], [1, 3], 4)
        >>> scores.best("sum"), scores.best("mean")
        (0, 1)
        """
        if choose == "sum":
            values = self.logprobs
        elif choose == "mean":
            values = [lp / n for lp, n in zip(self.logprobs, self.tokens, strict=True)]
        else:
            raise OptionError(f"choose={choose!r} is not 'sum' or 'mean'")
        return max(range(len(values)), key=lambda i: (values[i], -i))


def score_options(
    model,
    tokenizer,
    prompts: Sequence[Sequence[int]],
    options: Sequence[Sequence[Sequence[int]]],
    *,
    encoder_decoder: bool,
    batch_size: int = 8,
    on_batch=None,
) -> list[OptionScores]:
    r"""Summed log-probabilities of each prompt's options, in batches of similar length.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal or sequence-to-sequence language model, in evaluation mode.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer (gives the pad id).
    prompts : sequence of sequence of int
        Token ids of each prompt, special tokens included.
    options : sequence of sequence of sequence of int
        For each prompt, the token ids of each option (a continuation of the
        prompt for decoder-only models; the target for encoder-decoder ones).
        Every option has at least one token.
    encoder_decoder : bool
        Whether ``model`` is an encoder-decoder model.
    batch_size : int
        Prompts per forward pass; all options of a prompt share its batch.
    on_batch : callable, optional
        Called as ``on_batch(indices, scores)`` after each batch.

    Returns
    -------
    list of OptionScores
        In the order of ``prompts``.

    Notes
    -----
    The log-probability of option tokens :math:`o_1 \dots o_k` after prompt
    :math:`p` is :math:`\sum_j \log P(o_j \mid p, o_{<j})`, computed in
    float32 from the model's logits. Decoder-only prompts are padded on the
    left with explicit position ids, so padding changes nothing; options are
    padded on the right, after the positions they are scored at.

    Examples
    --------
    >>> import types, torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from rankstats_collectors.hf.likelihood import score_options
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=8, n_layer=1, n_head=2)).eval()
    >>> tokenizer = types.SimpleNamespace(pad_token_id=0, eos_token_id=0)
    >>> prompt, options = [5, 6, 7], [[3], [4, 9]]
    >>> scores = score_options(model, tokenizer, [prompt], [options], encoder_decoder=False)
    >>> with torch.no_grad():
    ...     logprobs = torch.log_softmax(model(torch.tensor([prompt + [4, 9]])).logits[0], -1)
    >>> direct = (logprobs[2, 4] + logprobs[3, 9]).item()  # positions 2, 3 predict 4, then 9
    >>> abs(scores[0].logprobs[1] - direct) < 1e-5, scores[0].tokens
    (True, [1, 2])
    """
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    for i, choices in enumerate(options):
        if not choices or any(len(choice) == 0 for choice in choices):
            raise OptionError(f"prompt {i}: every option needs at least one token")
    run = _seq2seq_batch if encoder_decoder else _causal_batch
    results: list[OptionScores | None] = [None] * len(prompts)
    for batch in length_batches([len(p) for p in prompts], batch_size):
        sums = run(model, [prompts[i] for i in batch], [options[i] for i in batch], pad_id)
        made = []
        for row, i in enumerate(batch):
            results[i] = OptionScores(sums[row], [len(o) for o in options[i]], len(prompts[i]))
            made.append(results[i])
        if on_batch is not None:
            on_batch(batch, made)
    return results


def _flatten(options, device):
    """Row of the prompt of each (prompt, option) pair, and the options padded on the right."""
    import torch

    owners = [row for row, choices in enumerate(options) for _ in choices]
    flat = [choice for choices in options for choice in choices]
    ids, mask = pad(flat, 0, "right")
    return torch.as_tensor(owners, device=device), ids.to(device), mask.to(device)


def _split(values, options) -> list[list[float]]:
    flat = values.tolist()
    sums, start = [], 0
    for choices in options:
        sums.append(flat[start : start + len(choices)])
        start += len(choices)
    return sums


def _option_logprobs(logits, ids, mask):
    """Sum over each row's unpadded positions of log p(ids | logits at that position)."""
    import torch

    logprobs = torch.log_softmax(logits.float(), dim=-1)
    picked = logprobs.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    return (picked * mask).sum(-1)


def _causal_batch(model, prompts, options, pad_id) -> list[list[float]]:
    import torch

    device = model.device
    ids, mask = pad(prompts, pad_id, "left")
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    owners, option_ids, option_mask = _flatten(options, device)
    with torch.inference_mode():
        # Only the last position's logits are needed from the prompt pass.
        prompt_out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            **last_logits_only(model),
        )
        # One cache row per (prompt, option) pair: the prompt is not run again.
        cache = select_rows(returned_cache(prompt_out), owners)
        lengths = mask.sum(-1)[owners]
        option_positions = lengths.unsqueeze(-1) + torch.arange(option_ids.shape[1], device=device)
        out = model(
            input_ids=option_ids,
            attention_mask=torch.cat([mask[owners], option_mask], dim=-1),
            position_ids=option_positions,
            use_cache=True,
            **cache_argument(model, cache),
        )
        # The prompt's last logits predict each option's first token.
        logits = torch.cat([prompt_out.logits[owners, -1:], out.logits[:, :-1]], dim=1)
        sums = _option_logprobs(logits, option_ids, option_mask)
    return _split(sums, options)


def _seq2seq_batch(model, prompts, options, pad_id) -> list[list[float]]:
    import torch

    device = model.device
    ids, mask = pad(prompts, pad_id, "right")
    ids, mask = ids.to(device), mask.to(device)
    owners, option_ids, option_mask = _flatten(options, device)
    start = model.generation_config.decoder_start_token_id
    if start is None:
        start = model.config.decoder_start_token_id
    decoder_ids = torch.cat([torch.full_like(option_ids[:, :1], start), option_ids[:, :-1]], dim=1)
    decoder_mask = torch.cat([torch.ones_like(option_mask[:, :1]), option_mask[:, :-1]], dim=1)
    with torch.inference_mode():
        encoded = model.get_encoder()(input_ids=ids, attention_mask=mask)
        hidden = encoded.last_hidden_state[owners]
        out = model(
            encoder_outputs=(hidden,),
            attention_mask=mask[owners],
            decoder_input_ids=decoder_ids,
            decoder_attention_mask=decoder_mask,
        )
        sums = _option_logprobs(out.logits, option_ids, option_mask)
    return _split(sums, options)
