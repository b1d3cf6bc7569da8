"""Tiny Hugging Face models built and trained locally, for the collector's tests and benchmark.

A byte-level BPE tokenizer is trained on a small in-memory corpus (the prompts
of tests/data/collect and of the copied BBH samples, each followed by its
answer); a 2-layer GPT-2 and a tiny T5 are built from configs with a fixed
seed and trained on the same corpus for a few seconds, so that they answer
some prompts right and some wrong. Everything runs offline.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported anywhere

from pathlib import Path

DATA = Path(__file__).parent / "data"
COLLECT = DATA / "collect"
RELEASE_TEMPLATES = DATA / "mizrahi2024"
RELEASE_SAMPLES = COLLECT / "mizrahi2024"
BBH_TASKS = ("navigate", "sports_understanding", "hyperbaton")
BBH_TEMPLATES = 4  # the first templates of each task the tests use
SPECIAL = ["<pad>", "<s>", "</s>", "<unk>"]


def corpus() -> list[tuple[str, str]]:
    """``(prompt, answer)`` pairs: every template × sample of the test tasks."""
    from rankstats_collectors.prompts.formatting import render
    from rankstats_collectors.tasks import (
        load_samples,
        load_templates,
        mizrahi2024_samples,
        mizrahi2024_templates,
    )

    pairs = []
    templates = load_templates(COLLECT / "templates.jsonl")
    samples = load_samples(COLLECT / "samples.jsonl")
    for task, task_templates in templates.items():
        for template in task_templates:
            for sample in samples[task]:
                gold = sample.gold if isinstance(sample.gold, str) else sample.gold[0]
                # repeated so that these few short prompts weigh as much as the BBH ones
                pairs += [(render(template.text, sample.fields), gold)] * 6
    for task in BBH_TASKS:
        task_samples = mizrahi2024_samples(RELEASE_SAMPLES, task)
        fields = set(task_samples[0].fields)
        task_templates = mizrahi2024_templates(
            RELEASE_TEMPLATES, task, fields=fields, malformed="skip"
        )[:BBH_TEMPLATES]
        for template in task_templates:
            for sample in task_samples:
                pairs.append((render(template.text, sample.fields), str(sample.gold)))
    return pairs


def build_tokenizer(texts: list[str]):
    """A byte-level BPE tokenizer trained on ``texts``, as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    # Without model_input_names, older transformers releases also return token_type_ids,
    # which T5 and GPT-2 do not take.
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        model_input_names=["input_ids", "attention_mask"],
    )


def _train(model, batches, steps: int, learning_rate: float) -> None:
    import torch

    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    for step in range(steps):
        loss = model(**batches[step % len(batches)]).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.eval()


def _batches(tokenizer, pairs, *, seq2seq: bool, size: int = 16):
    import torch

    generator = torch.Generator().manual_seed(0)
    order = torch.randperm(len(pairs), generator=generator).tolist()
    batches = []
    for start in range(0, len(order), size):
        chosen = [pairs[i] for i in order[start : start + size]]
        if seq2seq:
            inputs = tokenizer([p for p, _ in chosen], padding=True, return_tensors="pt")
            labels = tokenizer(
                [a + tokenizer.eos_token for _, a in chosen], padding=True, return_tensors="pt"
            )
            targets = labels["input_ids"].masked_fill(labels["attention_mask"] == 0, -100)
            batches.append({**inputs, "labels": targets})
        else:
            # Prompt and answer tokenised apart, as the collector scores them; the loss is
            # on the answer only, so a few steps teach the answers rather than the prompts.
            rows, targets = [], []
            for prompt, answer in chosen:
                head = tokenizer(prompt)["input_ids"]
                tail = tokenizer(f" {answer}{tokenizer.eos_token}", add_special_tokens=False)[
                    "input_ids"
                ]
                rows.append(head + tail)
                targets.append([-100] * len(head) + tail)
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), tokenizer.pad_token_id)
            labels = torch.full((len(rows), width), -100)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for i, (row, target) in enumerate(zip(rows, targets, strict=True)):
                ids[i, : len(row)] = torch.as_tensor(row)
                labels[i, : len(row)] = torch.as_tensor(target)
                mask[i, : len(row)] = 1
            batches.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    return batches


def build_models(folder: Path, *, steps: int = 60) -> dict[str, Path]:
    """Build, briefly train and save a tiny GPT-2 and a tiny T5 under ``folder``.

    Returns ``{"gpt2": path, "t5": path}``; each folder holds the model and
    its tokenizer as ``save_pretrained`` writes them.
    """
    import torch

    # One thread: on a small shared machine, more threads make these tiny steps slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _build(folder, steps)
    finally:
        torch.set_num_threads(threads)


def _build(folder: Path, steps: int) -> dict[str, Path]:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    pairs = corpus()
    tokenizer = build_tokenizer([f"{p} {a}" for p, a in pairs])
    ids = {name: tokenizer.convert_tokens_to_ids(name) for name in SPECIAL}
    paths = {}

    torch.manual_seed(0)
    gpt2 = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=256,
            n_embd=64,
            n_layer=2,
            n_head=2,
            bos_token_id=ids["<s>"],
            eos_token_id=ids["</s>"],
            pad_token_id=ids["<pad>"],
        )
    )
    _train(gpt2, _batches(tokenizer, pairs, seq2seq=False), steps, 3e-3)
    paths["gpt2"] = folder / "tiny-gpt2"
    gpt2.save_pretrained(paths["gpt2"])

    torch.manual_seed(0)
    t5 = T5ForConditionalGeneration(
        T5Config(
            vocab_size=len(tokenizer),
            d_model=64,
            d_kv=16,
            d_ff=128,
            num_layers=2,
            num_decoder_layers=2,
            num_heads=4,
            pad_token_id=ids["<pad>"],
            eos_token_id=ids["</s>"],
            decoder_start_token_id=ids["<pad>"],
        )
    )
    _train(t5, _batches(tokenizer, pairs, seq2seq=True), steps, 3e-3)
    paths["t5"] = folder / "tiny-t5"
    t5.save_pretrained(paths["t5"])

    for path in paths.values():
        tokenizer.save_pretrained(path)
    return paths
