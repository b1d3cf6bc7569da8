"""Paraphrase generation through the real openai client and a fake chat server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("openai")

from fake_openai import FakeOpenAI

from rankstats.cli import main
from rankstats_collectors.cache import ResponseCache
from rankstats_collectors.openai import Backoff, Requester
from rankstats_collectors.openai.chat import ChatClient
from rankstats_collectors.prompts.formatting import placeholders
from rankstats_collectors.prompts.paraphrase import generate_paraphrases, parse_templates
from rankstats_collectors.tasks import Sample, Template, load_templates

KEY = "sk-test-paraphrase-0123456789"
ENV = "RANKSTATS_TEST_PARAPHRASE_KEY"
SEED = Template("orig", "Is {word1} longer than {word2}? Answer yes or no.")


def responder(endpoint, body):
    """Replies by method: a mix of good templates, wrong placeholders, malformed and copies."""
    text = body["messages"][-1]["content"]
    if text.startswith("Rephrase"):
        return json.dumps(
            [
                "Is the word {word1} longer than {word2}? Reply yes or no.",
                "Which is longer: {word1} or {word2}? Say yes if the first.",
                "Is {word1} longer than {word3}?",  # a placeholder the seed lacks
                "Is {word1} long?",  # one missing
                "is {word1}  longer than {word2}? answer yes or no.",  # the seed again
                "Is {0} longer than {word2}?",  # positional: malformed
            ]
        )
    if "think step by step" in text:
        return "The task compares the lengths of two words.\nTemplates: " + json.dumps(
            [
                "Compare {word1} and {word2}: is the first longer? yes/no",
                # a duplicate of the rephrase
                "Is the word {word1} longer than {word2}? Reply yes or no.",
                "{word2} vs {word1}: is {word1} the longer one?",
            ]
        )
    if text.startswith("Here is an instruction template") and "Describe the task" in text:
        return "Decide whether the first word has more letters than the second."
    if text.startswith("Task description"):
        assert "Input: Is cat longer than horse? Answer yes or no.\nOutput: no" in text
        return "Say yes when the first word has more letters, else no."
    if text.startswith("Instruction:"):
        return "1. Does {word1} have more letters than {word2}?\n2. Has {word1} more letters?"
    raise AssertionError(f"unexpected prompt: {text[:80]}")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    fake = FakeOpenAI(KEY, responder=responder)
    fake.url = fake.start()
    yield fake
    fake.stop()


def chat_for(server, tmp_path):
    requester = Requester(
        ResponseCache(tmp_path / "replies.jsonl"),
        base_url=server.url,
        api_key_env=ENV,
        backoff=Backoff(base=0.001),
        timeout=5.0,
    )
    return ChatClient("gen-model", requester)


def test_three_methods_keep_only_templates_with_the_seeds_placeholders(server, tmp_path):
    server.fail(429, times=2, retry_after="0.01")
    result = generate_paraphrases(
        [SEED],
        chat_for(server, tmp_path),
        task="longer",
        examples=[Sample("s1", {"word1": "cat", "word2": "horse"}, "no")],
    )
    texts = [t.text for t in result.templates]
    assert texts[0] == SEED.text and result.templates[0].attributes["is_original"] is True
    for template in result.templates:
        assert set(placeholders(template.text)) == {"word1", "word2"}
    methods = [t.attributes["method"] for t in result.templates]
    assert methods == ["original", "rephrase", "rephrase", "cot", "cot", "gradual"]
    assert result.rejected == {
        "rephrase": {"wrong placeholders": 2, "malformed": 1},
        "gradual": {"wrong placeholders": 1},
    }
    assert result.duplicates == 2  # the seed again, and a cot copy of a rephrase
    assert len({t.id for t in result.templates}) == len(result.templates)
    assert all(t.attributes["source"] == "orig" for t in result.templates)
    # rephrase, cot, then gradual's three calls
    assert len(server.completed()) == 5


def test_a_rerun_asks_nothing_again(server, tmp_path):
    chat = chat_for(server, tmp_path)
    first = generate_paraphrases([SEED], chat, methods=["rephrase", "cot"])
    sent = len(server.log)
    again = generate_paraphrases([SEED], chat_for(server, tmp_path), methods=["rephrase", "cot"])
    assert len(server.log) == sent
    assert [t.text for t in again.templates] == [t.text for t in first.templates]


def test_unknown_methods_and_bad_seeds_are_refused(server, tmp_path):
    chat = chat_for(server, tmp_path)
    with pytest.raises(ValueError, match="unknown paraphrase method"):
        generate_paraphrases([SEED], chat, methods=["translate"])
    with pytest.raises(ValueError, match="no seed templates"):
        generate_paraphrases([], chat)
    with pytest.raises(Exception, match="positional"):
        generate_paraphrases([Template("x", "Is {} long?")], chat)
    assert server.log == []


def test_parse_templates_reads_json_or_numbered_lines():
    assert parse_templates("no list here") == []
    assert parse_templates('Think [a] then\nTemplates: ["A {x}", "B {x}"]') == ["A {x}", "B {x}"]
    assert parse_templates("- first {x}\n* second {x}\nnot this") == ["first {x}", "second {x}"]


def test_the_paraphrase_command_writes_loadable_templates(server, tmp_path, capsys):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"task": "longer", "id": SEED.id, "text": SEED.text}) + "\n")
    output = tmp_path / "paraphrases.jsonl"
    assert (
        main(
            [
                "paraphrase",
                "--templates",
                str(seeds),
                "--model",
                "gen-model",
                "--methods",
                "rephrase,cot",
                "--base-url",
                server.url,
                "--api-key-env",
                ENV,
                "--backoff-base",
                "0.001",
                "-o",
                str(output),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "rejected (rephrase): malformed: 1, wrong placeholders: 2" in out
    templates = load_templates(output)["longer"]
    assert [t.attributes["method"] for t in templates] == [
        "original",
        "rephrase",
        "rephrase",
        "cot",
        "cot",
    ]
    assert not [p for p in Path(tmp_path).rglob("*") if KEY.encode() in p.read_bytes()]
