"""Verbalizer variants: the paper's table 1, the builder, answer parsing and the cube."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats_collectors.prompts.formatting import TemplateError
from rankstats_collectors.prompts.verbalizer import (
    COT_TRIGGER,
    VerbalizerTable,
    build_variants,
    example_samples,
    paper_table,
    paper_tables,
    parse_answer,
    slot,
)
from rankstats_collectors.tasks import Sample

# Table 1 of Li et al. (2023), "Instruction-following Evaluation through Verbalizer
# Manipulation", typed from the paper: dataset | golden label | natural | neutral | unnatural.
TABLE_1 = """
SST-2 | positive | positive, 1, yes | foo, bar, sfo, lax, lake, river | negative, 0, no
  | negative | negative, 0, no | bar, foo, lax, sfo, river, lake | positive, 1, yes
FP | positive | positive, 1, yes | foo, bar, sfo, lax, lake, river | negative, 0, no
  | negative | negative, 0, no | bar, foo, lax, sfo, river, lake | positive, 1, yes
EMOTION | joy | joy, 1, yes | foo, bar, sfo, lax, lake, river | sadness, 0, no
  | sadness | sadness, 0, no | bar, foo, lax, sfo, river, lake | joy, 1, yes
SNLI | entailment | entailment, 1, yes | foo, bar, sfo, lax, lake, river | contradiction, 0, no
  | contradiction | contradiction, 0, no | bar, foo, lax, sfo, river, lake | entailment, 1, yes
SICK | entailment | entailment, 1, yes | foo, bar, sfo, lax, lake, river | contradiction, 0, no
  | contradiction | contradiction, 0, no | bar, foo, lax, sfo, river, lake | entailment, 1, yes
RTE | entailment | entailment, 1, yes | foo, bar, sfo, lax, lake, river | not entailment, 0, no
  | not entailment | not entailment, 0, no | bar, foo, lax, sfo, river, lake | entailment, 1, yes
QQP | duplicate | duplicate, 1, yes | foo, bar, sfo, lax, lake, river | not duplicate, 0, no
  | not duplicate | not duplicate, 0, no | bar, foo, lax, sfo, river, lake | duplicate, 1, yes
MRPC | equivalent | equivalent, 1, yes | foo, bar, sfo, lax, lake, river | not equivalent, 0, no
  | not equivalent | not equivalent, 0, no | bar, foo, lax, sfo, river, lake | equivalent, 1, yes
SUBJ | subjective | subjective, 1, yes | foo, bar, sfo, lax, lake, river | objective, 0, no
  | objective | objective, 0, no | bar, foo, lax, sfo, river, lake | subjective, 1, yes
"""


def printed_table() -> dict[str, dict[str, dict[str, list[str]]]]:
    """Dataset name -> golden label -> group -> the words of that row and column."""
    table, dataset = {}, None
    for line in TABLE_1.strip().splitlines():
        name, label, *groups = (cell.strip() for cell in line.split("|"))
        dataset = name or dataset
        table.setdefault(dataset, {})[label] = {
            group: [w.strip() for w in cell.split(",")]
            for group, cell in zip(("natural", "neutral", "unnatural"), groups, strict=True)
        }
    return table


def synthetic_samples(table: VerbalizerTable, n: int) -> list[dict]:
    return [
        {
            "id": f"s{i}",
            **{f: f"{f} text {i}" for f in table.fields},
            "label": table.labels[i % len(table.labels)],
        }
        for i in range(n)
    ]


def test_table_1_reproduced_exactly():
    printed = printed_table()
    tables = paper_tables()
    assert [t.name for t in tables.values()] == list(printed)
    for table in tables.values():
        rows = printed[table.name]
        assert list(rows) == list(table.labels)
        for label, groups in rows.items():
            for group, words in groups.items():
                assert [v.mapping[label] for v in table.group(group)] == words, (
                    table.name,
                    label,
                    group,
                )
        assert [len(table.group(g)) for g in ("natural", "neutral", "unnatural")] == [3, 6, 3]


def test_verbalizer_names_follow_the_paper():
    table = paper_table("rte")
    assert [v.name for v in table.verbalizers] == [
        "golden",
        "1|0",
        "yes|no",
        "foo|bar",
        "bar|foo",
        "sfo|lax",
        "lax|sfo",
        "lake|river",
        "river|lake",
        "flipped golden",
        "0|1",
        "no|yes",
    ]


def test_paper_counts_for_100_examples_per_dataset():
    total = None
    for key, table in paper_tables().items():
        variants = build_variants(synthetic_samples(table, 100), table, task=key)
        total = variants if total is None else total + variants
    assert total.count("verbalizer_group") == {"natural": 2700, "neutral": 5400, "unnatural": 2700}
    assert len(total) == 10800
    assert total.count("prompting") == {"direct": 10800}
    assert sum(len(t) for t in total.templates.values()) == 9 * 12


def test_expected_output_follows_the_mapping():
    table = paper_table("rte")
    samples = [{"id": "a", "premise": "p", "hypothesis": "h", "label": "not entailment"}]
    variants = build_variants(samples, table, task="rte")
    expected = {v.verbalizer: v.expected for v in variants.variants}
    assert expected == {
        "golden": "not entailment",
        "1|0": "0",
        "yes|no": "no",
        "foo|bar": "bar",
        "bar|foo": "foo",
        "sfo|lax": "lax",
        "lax|sfo": "sfo",
        "lake|river": "river",
        "river|lake": "lake",
        "flipped golden": "entailment",
        "0|1": "1",
        "no|yes": "yes",
    }
    unnatural = next(v for v in variants.variants if v.verbalizer == "flipped golden")
    assert 'does, answer "not entailment"' in unnatural.prompt
    assert 'does not, answer "entailment"' in unnatural.prompt


def test_template_attributes_and_text():
    variants = build_variants(
        [{"sentence": "x", "label": "positive"}],
        paper_table("sst2"),
        task="sst2",
        cot=["flipped golden"],
    )
    templates = {t.id: t for t in variants.templates["sst2"]}
    cot = templates["unnatural:flipped golden:cot"]
    assert cot.attributes == {
        "verbalizer_group": "unnatural",
        "verbalizer": "flipped golden",
        "prompting": "cot",
    }
    assert "{sentence}" in cot.text and cot.text.endswith(COT_TRIGGER)
    assert '"negative"' in cot.text and "verbalizer_" not in cot.text
    assert len(templates) == 13


def test_literal_braces_and_words_with_braces_survive():
    table = VerbalizerTable.build(["a", "b"], natural={"curly": ["{x}", "y"]})
    variants = build_variants(
        [{"t": "T", "label": "a"}],
        table,
        task="t",
        template="{{json}} {t}: {verbalizer_a} / {verbalizer_b}",
    )
    assert variants.variants[0].prompt == "{json} T: {x} / y"
    assert variants.templates["t"][0].text == "{{json}} {t}: {{x}} / y"


def test_gold_map_and_sample_objects():
    table = paper_table("sst2")
    samples = [Sample("1", {"sentence": "ok"}, 1), Sample("2", {"sentence": "bad"}, 0)]
    variants = build_variants(samples, table, task="sst2", gold_map={1: "positive", 0: "negative"})
    assert [v.gold for v in variants.variants[:2]] == ["positive", "negative"]
    assert [v.sample_id for v in variants.variants[:2]] == ["1", "2"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"template": "{sentence} {verbalizer_positive}"}, "lacks the verbalizer slot"),
        (
            {"template": "{sentence} {verbalizer_positive} {verbalizer_negative} {verbalizer_x}"},
            "match no label",
        ),
        (
            {"template": "{sentence.upper} {verbalizer_positive} {verbalizer_negative}"},
            "attribute and index access",
        ),
        ({"cot": ["flipped"]}, "unknown verbalizer"),
    ],
)
def test_template_errors(kwargs, message):
    with pytest.raises(TemplateError, match=message):
        build_variants(
            [{"sentence": "x", "label": "positive"}], paper_table("sst2"), task="sst2", **kwargs
        )


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        (
            [{"id": "q7", "sentence": "x", "label": "neutral"}],
            r"task 'sst2', sample 'q7': the gold label 'neutral' is not one of",
        ),
        (
            [{"id": "q7", "text": "x", "label": "positive"}],
            r"task 'sst2', sample 'q7' has no field 'sentence'",
        ),
        ([{"id": "q7", "sentence": "x"}], r"sample 'q7' has no gold label 'label'"),
        ([{"id": "a", "sentence": "x", "label": "positive"}] * 2, "two samples have the id 'a'"),
        ([], "no samples"),
    ],
)
def test_sample_errors_name_task_and_sample(samples, message):
    with pytest.raises(TemplateError, match=message):
        build_variants(samples, paper_table("sst2"), task="sst2")


def test_multiclass_table_with_permutation():
    labels = ["joy", "sadness", "anger"]
    flip = {"joy": "anger", "sadness": "joy", "anger": "sadness"}
    table = VerbalizerTable.build(
        labels,
        natural={"golden": labels, "digits": ["1", "2", "3"]},
        neutral=[["foo", "bar", "baz"]],
        flip=flip,
    )
    unnatural = table.group("unnatural")
    assert [v.name for v in unnatural] == ["flipped golden", "3|1|2"]
    assert unnatural[0].mapping == {"joy": "anger", "sadness": "joy", "anger": "sadness"}
    template = "{text} {verbalizer_joy} {verbalizer_sadness} {verbalizer_anger}"
    variants = build_variants(
        [{"text": "yay", "label": "joy"}], table, task="emo", template=template
    )
    assert variants.n_labels == {"emo": 3}
    assert {v.verbalizer: v.expected for v in variants.variants} == {
        "golden": "joy",
        "digits": "1",
        "foo|bar|baz": "foo",
        "flipped golden": "anger",
        "3|1|2": "3",
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flip": {"a": "b", "b": "c", "c": "a", "d": "a"}}, "not a permutation"),
        ({"flip": {"a": "b", "b": "a", "c": "c"}}, r"leaves \['c'\] unflipped"),
        ({}, "say how to flip them"),
        (
            {"natural": {"golden": ["a", "b"]}, "flip": {"a": "b", "b": "c", "c": "a"}},
            "2 word\\(s\\) for 3 labels",
        ),
        (
            {"neutral": [["x", "X", "y"]], "flip": {"a": "b", "b": "c", "c": "a"}},
            "must be distinct",
        ),
    ],
)
def test_table_errors(kwargs, message):
    with pytest.raises(TemplateError, match=message):
        VerbalizerTable.build(["a", "b", "c"], **kwargs)


def test_slots():
    assert slot("Not Entailment") == "verbalizer_not_entailment"
    with pytest.raises(TemplateError, match="clashing slots"):
        VerbalizerTable.build(["not entailment", "not-entailment"])


@pytest.mark.parametrize(
    ("response", "cot", "expected"),
    [
        ("positive", False, 0),
        ("  NEGATIVE.", False, 1),
        ("Answer: negative", False, 1),
        ("The answer is: Positive!", False, 0),
        ("negative, because the review praises it", False, 1),
        ("It is not positive; negative.", False, None),
        ("", False, None),
        ("I cannot decide.", False, None),
        ("positively", False, None),
        (
            "The review praises the film, so it is positive. Mapped, that is negative.\n"
            "Final answer: negative",
            True,
            1,
        ),
        ("The review is negative, so I say positive.\nSo the answer is positive.", True, 0),
        ("Step 1: positive words.\nStep 2: the mapping.\nnegative", True, 1),
        ("positive or negative, hard to say\nI am unsure", True, None),
    ],
)
def test_parse_answer(response, cot, expected):
    assert parse_answer(response, ["positive", "negative"], chain_of_thought=cot) == expected


def test_parse_prefers_the_longer_label():
    words = ["entailment", "not entailment"]
    assert parse_answer("not entailment", words) == 1
    assert parse_answer("Entailment", words) == 0
    assert parse_answer("Answer: Not-Entailment.", words) == 1
    assert parse_answer("1", ["1", "0"]) == 0 and parse_answer("0.", ["1", "0"]) == 1
    assert parse_answer("10", ["1", "0"]) is None


@settings(max_examples=200, deadline=None)
@given(
    response=st.text(alphabet=st.sampled_from(list("fobar yesn10.!:\n")), max_size=30),
    gold=st.sampled_from(["positive", "negative"]),
    verbalizer=st.integers(0, 11),
    cot=st.booleans(),
)
def test_unparseable_answers_never_score(response, gold, verbalizer, cot):
    table = paper_table("sst2")
    variants = build_variants(
        [{"sentence": "s", "label": gold}], table, task="sst2", cot="all" if cot else ()
    )
    for variant in variants.variants:
        scored = variants.score(variant, response)
        if scored["unparseable"]:
            assert scored["score"] == 0.0 and scored["answer"] is None
        else:
            assert scored["answer"] in variant.words
            assert scored["score"] == float(scored["answer"] == variant.expected)


def test_records_and_cube():
    table = paper_table("sst2")
    samples = example_samples()[:4]
    variants = build_variants(samples, table, task="sst2", cot=["flipped golden"])
    answers = [
        v.expected if v.verbalizer_group == "natural" else "I cannot tell"
        for v in variants.variants
    ]
    rows = variants.records("m1", answers, family="F", parameters=1.0)
    rows += variants.records(
        "m2",
        {(v.task, v.template_id, v.sample_id): v.expected for v in variants.variants[:20]},
        family="F",
        parameters=2.0,
    )
    cube = variants.to_cube(rows)
    assert dict(cube.score.sizes) == {"model": 2, "task": 1, "template": 13, "sample": 4}
    assert cube.verbalizer_group.sel(task="sst2").values.tolist().count("neutral") == 6
    assert cube["n_labels"].values.tolist() == [2]
    assert cube["family"].values.tolist() == ["F", "F"]
    m1 = cube.sel(model="m1")
    natural = m1.verbalizer_group == "natural"
    assert float(m1.score.where(natural).mean()) == 1.0
    assert float(m1.unparseable.where(~natural).mean()) == 1.0
    assert float(m1.score.where(~natural).sum()) == 0.0
    m2 = cube.sel(model="m2")
    assert int(m2.score.notnull().sum()) == 20 and float(m2.score.sum()) == 20.0
    assert int(m2.unparseable.notnull().sum()) == 20
    with pytest.raises(TemplateError, match="3 response\\(s\\) for 52 item"):
        variants.records("m3", ["a", "b", "c"])
    with pytest.raises(TemplateError, match="model 'm3', task 'sst2'"):
        variants.records("m3", [None, 3] + [None] * 50)


def test_example_dataset():
    samples = example_samples()
    assert len(samples) == 40
    assert sorted({s["label"] for s in samples}) == ["negative", "positive"]
    assert sum(s["label"] == "positive" for s in samples) == 20
    assert len({s["id"] for s in samples}) == len({s["sentence"] for s in samples}) == 40


def test_every_paper_template_renders():
    for key, table in paper_tables().items():
        variants = build_variants(
            synthetic_samples(table, 2), table, task=key, cot=["flipped golden"]
        )
        prompts = np.array([v.prompt for v in variants.variants])
        assert not any("{" in p for p in prompts), key
        flipped = [v for v in variants.variants if v.verbalizer == "flipped golden"]
        assert all(f'"{v.expected}"' in v.prompt for v in flipped)


def test_rescore_a_collected_cube():
    from rankstats_collectors.records import records_to_cube

    variants = build_variants(
        example_samples()[:3], paper_table("sst2"), task="sst2", cot=["flipped golden"]
    )
    rows = [
        {
            "model": m,
            "task": v.task,
            "template": v.template_id,
            "sample": v.sample_id,
            "score": 0.0,
            "response": v.expected if m == "good" else "Positive!",
            "model_revision": f"{m}-rev",
            "model_family": "F",
        }
        for m in ("good", "stubborn")
        for v in variants.variants
    ]
    collected = records_to_cube(rows[:-1], metric="exact_match", source="a collector")
    cube = variants.rescore(collected)
    assert cube.attrs["source"] == "a collector"
    assert cube.model_revision.values.tolist() == ["good-rev", "stubborn-rev"]
    assert cube.model_family.values.tolist() == ["F", "F"]
    good, stubborn = cube.sel(model="good"), cube.sel(model="stubborn")
    assert float(good.score.mean()) == 1.0 and float(good.unparseable.sum()) == 0
    assert int(stubborn.score.notnull().sum()) == len(variants) - 1
    assert np.isnan(float(stubborn.score.isel(task=0, template=-1, sample=-1)))
    golden = stubborn.where(stubborn.verbalizer == "golden", drop=True)
    positives = [s["label"] == "positive" for s in example_samples()[:3]]
    assert golden.score.values.ravel().tolist() == [float(p) for p in positives]
    assert stubborn.response.sel(template=0).values.ravel().tolist() == ["Positive!"] * 3
    missing = build_variants(example_samples()[:4], paper_table("sst2"), task="sst2")
    with pytest.raises(TemplateError, match="task 'sst2' of the cube has no sample 'r04'"):
        missing.rescore(collected)


def test_variants_feed_the_openai_collector(tmp_path):
    pytest.importorskip("rankstats_collectors.openai")
    from rankstats_collectors.openai import Settings, collect

    variants = build_variants(example_samples()[:5], paper_table("sst2"), task="sst2")
    assert [s.id for s in variants.samples["sst2"]] == ["r01", "r02", "r03", "r04", "r05"]
    result = collect(
        ["model-x"],
        variants.templates,
        variants.samples,
        cache=tmp_path / "cache.jsonl",
        settings=Settings(max_tokens=4),
        dry_run=True,
    )
    assert result.plan.summary().startswith(f"model-x: {len(variants)} requests to send")
