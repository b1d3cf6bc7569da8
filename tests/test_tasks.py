"""Task and template files, their JSON Schemas, and the paper's released layout."""

import json
from pathlib import Path

import pytest

from rankstats import schemas
from rankstats_collectors.files import ImporterError
from rankstats_collectors.prompts.formatting import check_fields
from rankstats_collectors.tasks import (
    Sample,
    Template,
    load_samples,
    load_templates,
    mizrahi2024_samples,
    mizrahi2024_templates,
)

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "collect"
RELEASE_TEMPLATES = ROOT / "tests" / "data" / "mizrahi2024"
RELEASE_SAMPLES = DATA / "mizrahi2024"


def schema(name):
    return schemas.load(name)


def test_load_templates_and_samples():
    templates = load_templates(DATA / "templates.jsonl")
    samples = load_samples(DATA / "samples.jsonl")
    assert list(templates) == ["longer", "capital"] == list(samples)
    assert templates["longer"][0] == Template(
        "plain",
        "Which word is longer, {word1} or {word2}? Answer:",
        {"is_original": True, "method": "original"},
    )
    assert samples["capital"][0] == Sample(
        "fr", {"country": "France"}, ["Paris", "paris"], ["Paris", "Rome", "Berlin"]
    )
    for task in templates:
        check_fields({t.id: t.text for t in templates[task]}, samples[task], task=task)


@pytest.mark.parametrize("name", ["templates", "samples"])
def test_shipped_files_follow_their_schema(name):
    validator = jsonschema.Draft202012Validator(schema(name))
    for line in (DATA / f"{name}.jsonl").read_text().splitlines():
        validator.validate(json.loads(line))


BAD_TEMPLATES = [
    ({"id": "1", "text": "x"}, "task", "'task' must be"),
    ({"task": "t", "text": "x"}, "id", "'id' must be"),
    ({"task": "t", "id": "1"}, "text", "'text' must be a string"),
    ({"task": "t", "id": "1", "text": "x", "method": ["a"]}, "method", "template attribute"),
    ({"task": "t", "id": True, "text": "x"}, "id", "'id' must be"),
]


@pytest.mark.parametrize(("row", "column", "message"), BAD_TEMPLATES)
def test_bad_template_lines_name_file_line_and_key(tmp_path, row, column, message):
    path = tmp_path / "templates.jsonl"
    path.write_text(
        json.dumps({"task": "t", "id": "0", "text": "ok"}) + "\n\n" + json.dumps(row) + "\n"
    )
    with pytest.raises(ImporterError) as caught:
        load_templates(path)
    text = str(caught.value)
    assert "templates.jsonl" in text and "row 3" in text and f"column {column!r}" in text
    assert message in text
    # the schema rejects the same line (except where only the loader can judge)
    if row.get("id") is not True:
        assert not jsonschema.Draft202012Validator(schema("templates")).is_valid(row)


BAD_SAMPLES = [
    ({"task": "t", "id": "1", "q": "x"}, "gold", "no 'gold'"),
    ({"task": "t", "id": "1", "gold": {"a": 1}}, "gold", "'gold' must be"),
    ({"task": "t", "id": "1", "gold": []}, "gold", "list of gold answers"),
    ({"task": "t", "id": "1", "gold": "a", "options": ["a"]}, "options", "at least two"),
    ({"task": "t", "id": "1", "gold": "a", "options": ["a", "a"]}, "options", "repeats"),
    ({"task": "t", "id": "", "gold": "a"}, "id", "'id' must be"),
]


@pytest.mark.parametrize(("row", "column", "message"), BAD_SAMPLES)
def test_bad_sample_lines_name_file_line_and_key(tmp_path, row, column, message):
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(ImporterError) as caught:
        load_samples(path)
    text = str(caught.value)
    assert "row 1" in text and f"column {column!r}" in text and message in text
    assert not jsonschema.Draft202012Validator(schema("samples")).is_valid(row)


def test_structural_errors(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "t", "id": "1", "text": "a"}\n{"task": "t", "id": 1, "text": "b"}\n')
    with pytest.raises(ImporterError, match=r"row 2.*two templates with id '1'"):
        load_templates(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ImporterError, match="JSON object"):
        load_templates(path)
    path.write_text("{oops\n")
    with pytest.raises(ImporterError, match="not valid JSON"):
        load_samples(path)
    with pytest.raises(ImporterError, match="no such file"):
        load_samples(tmp_path / "missing.jsonl")
    path.write_text('{"task": "t", "id": "1", "text": "Q: {x!r}"}\n')
    with pytest.raises(ImporterError, match=r"column 'text'.*\{x!r\}.*conversions"):
        load_templates(path)


def test_mizrahi_templates_match_the_release_csv():
    import csv

    templates = mizrahi2024_templates(RELEASE_TEMPLATES, "navigate")
    with open(
        RELEASE_TEMPLATES / "automatic paraphrases" / "BBH" / "navigate.csv", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    assert [t.id for t in templates] == [r["prompt idx"] for r in rows]
    assert [t.text for t in templates] == [r["prompt template"] for r in rows]
    assert [t.attributes["is_original"] for t in templates] == [
        r["default prompt"] == "True" for r in rows
    ]
    assert sum(t.attributes["is_original"] for t in templates) == 1
    assert set(templates[0].attributes) == {
        "is_original",
        "method",
        "language_style",
        "valid",
        "format",
        "length",
        "samples",
    }
    # a benchmark folder or the paraphrases folder work as well as the release root
    inner = mizrahi2024_templates(RELEASE_TEMPLATES / "automatic paraphrases" / "BBH", "navigate")
    assert inner == templates


def test_mizrahi_malformed_templates_raise_or_are_skipped():
    with pytest.raises(ImporterError, match=r"hyperbaton.csv.*field 'hyperbaton'.*lack"):
        mizrahi2024_templates(RELEASE_TEMPLATES, "hyperbaton", fields={"options"})
    kept = mizrahi2024_templates(
        RELEASE_TEMPLATES, "hyperbaton", fields={"options"}, malformed="skip"
    )
    everything = mizrahi2024_templates(RELEASE_TEMPLATES, "hyperbaton")
    assert 0 < len(kept) < len(everything)
    assert all("{hyperbaton}" not in t.text for t in kept)
    with pytest.raises(ImporterError, match="no 'automatic paraphrases' file for task 'nope'"):
        mizrahi2024_templates(RELEASE_TEMPLATES, "nope")


def test_mizrahi_samples():
    release = json.loads((RELEASE_SAMPLES / "benchmarks" / "BBH" / "navigate.json").read_text())
    navigate = mizrahi2024_samples(RELEASE_SAMPLES, "navigate")
    assert [s.id for s in navigate] == list(release["examples"])
    assert [s.gold for s in navigate] == [e["gold"] for e in release["examples"].values()]
    assert sorted(navigate[0].options) == ["No", "Yes"]
    hyperbaton = mizrahi2024_samples(RELEASE_SAMPLES, "hyperbaton")
    assert all(s.gold in s.options for s in hyperbaton)
    assert hyperbaton[0].fields["options"].count("\n") == 1
    templates = mizrahi2024_templates(RELEASE_TEMPLATES, "navigate")
    check_fields({t.id: t.text for t in templates}, navigate, task="navigate")
