"""Greedy generation in length-sorted batches, cut at stop strings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .batching import length_batches, pad

__all__ = ["Generation", "cut_at_stop", "generate"]


@dataclass
class Generation:
    """One response: its text (cut at the first stop string) and its token counts."""

    text: str
    prompt_tokens: int
    new_tokens: int


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    r"""``text`` up to the earliest stop string, and whether one was found.

    Examples
    --------
    >>> from rankstats_collectors.hf.generate import cut_at_stop
    >>> cut_at_stop(" Paris\nQ: next", ["\n", "Q:"])
    (' Paris', True)
    >>> cut_at_stop(" Paris", ["\n"])
    (' Paris', False)
    """
    ends = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[: min(ends)], True) if ends else (text, False)


def _stopping_criteria(tokenizer, stop: Sequence[str], start: int):
    """Stop each sequence once its new text holds a stop string (the rest is cut anyway)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class StopStrings(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tokenizer.batch_decode(input_ids[:, start:], skip_special_tokens=True)
            done = [cut_at_stop(text, stop)[1] for text in texts]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([StopStrings()]) if stop else None


def generate(
    model,
    tokenizer,
    prompts: Sequence[Sequence[int]],
    *,
    encoder_decoder: bool,
    max_new_tokens: int,
    stop: Sequence[str] = (),
    batch_size: int = 8,
    on_batch=None,
) -> list[Generation]:
    """Greedy responses to tokenised prompts, in batches of similar length.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal or sequence-to-sequence language model, in evaluation mode.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer (decodes the responses; gives the pad and EOS ids).
    prompts : sequence of sequence of int
        Token ids of each prompt, special tokens included.
    encoder_decoder : bool
        Whether ``model`` is an encoder-decoder model.
    max_new_tokens : int
        The most tokens generated per prompt.
    stop : sequence of str
        Stop strings: a response ends before the first one it contains.
    batch_size : int
        Prompts per forward pass.
    on_batch : callable, optional
        Called as ``on_batch(indices, generations)`` after each batch, with
        the positions in ``prompts`` it covered (to store them at once).

    Returns
    -------
    list of Generation
        In the order of ``prompts``.

    Notes
    -----
    Decoding is greedy (``do_sample=False``, one beam). Decoder-only prompts
    are padded on the left and encoder inputs on the right, with attention
    masks, so a prompt's response does not depend on its batch. A sequence
    stops at EOS, at ``max_new_tokens``, or once its text holds a stop
    string; the text is then cut before the stop string.

    Examples
    --------
    >>> import types, torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> from rankstats_collectors.hf.generate import generate
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=8, n_layer=1, n_head=2,
    ...                                    eos_token_id=15, pad_token_id=0)).eval()
    >>> tokenizer = types.SimpleNamespace(  # token ids shown as text
    ...     pad_token_id=0, eos_token_id=15,
    ...     decode=lambda ids, skip_special_tokens: "".join(f" {i}" for i in ids if i != 15))
    >>> prompts = [[5, 6, 7, 8, 9], [3, 4]]
    >>> batched = generate(model, tokenizer, prompts, encoder_decoder=False, max_new_tokens=3)
    >>> alone = [generate(model, tokenizer, [p], encoder_decoder=False, max_new_tokens=3)[0]
    ...          for p in prompts]
    >>> [g.text for g in batched] == [g.text for g in alone], batched[1].prompt_tokens
    (True, 2)
    """
    import torch
    from transformers import GenerationConfig

    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    config = GenerationConfig(
        do_sample=False,
        num_beams=1,
        max_new_tokens=max_new_tokens,
        pad_token_id=pad_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    if encoder_decoder:
        config.decoder_start_token_id = model.generation_config.decoder_start_token_id
    device = model.device
    results: list[Generation | None] = [None] * len(prompts)
    for batch in length_batches([len(p) for p in prompts], batch_size):
        ids, mask = pad([prompts[i] for i in batch], pad_id, "right" if encoder_decoder else "left")
        start = 1 if encoder_decoder else ids.shape[1]
        with torch.inference_mode():
            output = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=config,
                stopping_criteria=_stopping_criteria(tokenizer, stop, start),
            )
        new = output[:, start:].cpu()
        made = []
        for row, i in enumerate(batch):
            tokens = new[row].tolist()
            if tokenizer.eos_token_id is not None and tokenizer.eos_token_id in tokens:
                tokens = tokens[: tokens.index(tokenizer.eos_token_id) + 1]
            while tokens and tokens[-1] == pad_id and pad_id != tokenizer.eos_token_id:
                tokens.pop()
            text, _ = cut_at_stop(tokenizer.decode(tokens, skip_special_tokens=True), stop)
            results[i] = Generation(text, len(prompts[i]), len(tokens))
            made.append(results[i])
        if on_batch is not None:
            on_batch(batch, made)
    return results
