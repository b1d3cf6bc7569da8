"""The transcription of Mizrahi et al. (2024) in rankstats/reproduce.

``mizrahi2024_published.json`` holds, as printed in the arXiv version of
"State of What Art? A Call for Multi-Prompt LLM Evaluation" (arXiv:2401.00595v1),
the numbers of Tables 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18 and 21 to 24,
and the sentences of the text that state a checkable number (``claims``). Each cell
keeps its printed string and the number it denotes, and each table keeps the
printed lines it was transcribed from (``raw``).

These tests check the structure of the file, that every printed string parses
to its value and occurs in its table's printed lines, a few relations between
tables that hold in the paper, and pin a sample of cells literally so that any
change to the transcription is noticed.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest

import rankstats

PATH = Path(rankstats.__file__).parent / "reproduce" / "mizrahi2024_published.json"

LMENTRY_TASKS = [
    "all_words_from_category",
    "any_words_from_category",
    "ends_with_word",
    "first_alphabetically",
    "homophones",
    "less_letters",
    "more_letters",
    "rhyming_word",
    "word_before",
    "word_not_containing",
]
BBH_TASKS = [
    "causal_judgement",
    "disambiguation_qa",
    "formal_fallacies",
    "geometric_shapes",
    "hyperbaton",
    "logical_deduction_five_objects",
    "logical_deduction_seven_objects",
    "logical_deduction_three_objects",
    "movie_recommendation",
    "navigate",
    "penguins_in_a_table",
    "ruin_names",
    "salient_translation_error_detection",
    "snarks",
    "sports_understanding",
]
# BIG-bench Lite (Table 13 only): BIG-bench task names, not part of the release.
BBL_TASKS = [
    "bbq_lite_json",
    "code_line_description",
    "conceptual_combinations",
    "hindu_knowledge",
    "known_unknowns",
    "language_identification",
    "logic_grid_puzzle",
    "logical_deduction",
    "novel_concepts",
    "play_dialog_same_or_different",
    "strange_stories",
    "strategyqa",
    "vitaminc_fact_verification",
    "winowhy",
]
MODELS = [
    "t0_3b",
    "t0pp",
    "falcon-7b-instruct",
    "mpt-7b-instruct",
    "alpaca-7b",
    "alpaca-13b",
    "flan-t5-small",
    "flan-t5-base",
    "flan-t5-large",
    "flan-t5-xl",
    "flan-t5-xxl",
    "airoboros-13b",
    "nous-hermes-13b",
    "ultralm-13b",
    "vicuna-13b",
    "minotaur-15b",
]
BBH_MODELS = [
    "t0pp",
    "falcon-7b-instruct",
    "mpt-7b-instruct",
    "alpaca-13b",
    "flan-t5-xl",
    "flan-t5-xxl",
    "airoboros-13b",
    "nous-hermes-13b",
    "ultralm-13b",
    "vicuna-13b",
    "minotaur-15b",
]
METHODS = ["all", "rephrase", "cot", "gradual"]

# table -> (number of rows, columns)
SHAPES = {
    "table_2": (8, ["n_automatic", "n_correct", "correct_ratio"]),
    "table_3": (25, ["kendall_w", "friedman_p"]),
    "table_4": (2, ["MaxP", "AvgP", "Sat", "Combined"]),
    "table_7": (
        44,
        ["n_automatic", "n_correct", "correct_ratio", "accuracy_avg", "accuracy_std"],
    ),
    "table_8": (
        64,
        ["n_automatic", "n_correct", "correct_ratio", "accuracy_avg", "accuracy_std"],
    ),
    "table_9": (10, ["tau"]),
    "table_10": (15, ["tau"]),
    "table_13": (14, ["kendall_w", "friedman_p"]),
    "table_14": (25, ["MaxP", "AvgP", "Sat", "Combined"]),
    "table_15": (16, ["average", "maximum", "saturation", "combined"]),
    "table_16": (11, ["average", "maximum", "saturation", "combined"]),
    "table_17": (18, ["default", "rephrase", "cot", "gradual"]),
    "table_18": (13, ["default", "rephrase", "cot", "gradual"]),
    "table_21": (10, ["davinci", "td002", "td003", "cgpt"]),
    "table_22": (10, ["davinci", "td002", "td003", "cgpt"]),
    "table_23": (10, ["davinci", "td002", "td003", "cgpt"]),
    "table_24": (10, ["davinci", "td002", "td003", "cgpt"]),
}

NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:E-\d+)?")


@pytest.fixture(scope="module")
def doc():
    with PATH.open(encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def tables(doc):
    return doc["tables"]


def parse_printed(printed: str) -> float | None:
    """The number a printed cell denotes ("0.0*" means below 1E-50: None)."""
    if printed == "0.0*":
        return None
    text = printed[:-1] if printed.endswith("%") else printed
    assert NUMBER.fullmatch(text), printed
    return float(text)


def find_row(table: dict, **fields) -> dict:
    hits = [r for r in table["rows"] if all(r.get(k) == v for k, v in fields.items())]
    assert len(hits) == 1, (fields, len(hits))
    return hits[0]


def all_cells(tables):
    for name, table in tables.items():
        for row in table["rows"]:
            for column, cell in row["values"].items():
                yield name, row, column, cell


# --- structure -------------------------------------------------------------------


def test_file_is_inside_the_package():
    assert PATH.is_file()


def test_source(doc):
    source = doc["source"]
    assert "Mizrahi" in source["citation"]
    assert "2401.00595" in source["transcribed_from"]
    assert source["note"]


def test_every_table_present(tables):
    assert set(tables) == set(SHAPES)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape(tables, name):
    table = tables[name]
    nrows, columns = SHAPES[name]
    assert table["columns"] == columns
    assert set(table["column_labels"]) == set(columns)
    assert len(table["rows"]) == nrows
    for row in table["rows"]:
        assert list(row["values"]) == columns
        for field in table["row_keys"]:
            assert field in row or field == "aggregate"


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_raw_block_ends_with_caption(tables, name):
    table = tables[name]
    raw = table["raw"]
    assert all(isinstance(line, str) for line in raw)
    number = name.split("_")[1]
    assert raw[-1] == f"Table {number}: {table['caption']}"
    assert not any(re.match(r"Table \d+:", line) for line in raw[:-1])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_rows_are_unique(tables, name):
    table = tables[name]
    keys = [tuple(r.get(k) for k in table["row_keys"]) for r in table["rows"]]
    assert len(set(keys)) == len(keys)


def test_task_ids(tables):
    release = set(LMENTRY_TASKS) | set(BBH_TASKS)
    for name, table in tables.items():
        for row in table["rows"]:
            if "task" not in row:
                continue
            if row["task"] is None:
                assert row["aggregate"] == "all_tasks"
            elif name == "table_13":
                assert row["benchmark"] == "bbl"
                assert row["task"] in BBL_TASKS
            else:
                assert row["task"] in release
                expected = "lmentry" if row["task"] in LMENTRY_TASKS else "bbh"
                assert row["benchmark"] == expected


def test_model_ids(tables):
    for name in ("table_15", "table_16", "table_17", "table_18"):
        for row in tables[name]["rows"]:
            if row["model"] is None:
                assert row["aggregate"] in ("all_models", "all_paraphrases")
            else:
                assert row["model"] in MODELS
                assert "aggregate" not in row


def test_model_labels_as_printed(tables):
    labels = {r["model_label"]: r["model"] for r in tables["table_15"]["rows"]}
    assert labels["t0++"] == "t0pp"
    assert labels["falcon-7b"] == "falcon-7b-instruct"
    assert labels["mpt-7b"] == "mpt-7b-instruct"
    assert labels["t0_3b"] == "t0_3b"
    row = find_row(tables["table_17"], model="t0_3b")
    assert row["model_label"] == "t0_3b (*)"
    assert row["family_marker"] == "*"
    assert find_row(tables["table_17"], model="vicuna-13b")["family_marker"] == "**"
    assert "family_marker" not in find_row(tables["table_17"], model="minotaur-15b")


def test_coverage(tables):
    for name in ("table_3", "table_14"):
        tasks = [r["task"] for r in tables[name]["rows"]]
        assert sorted(tasks) == sorted(LMENTRY_TASKS + BBH_TASKS)
    assert sorted(r["task"] for r in tables["table_13"]["rows"]) == BBL_TASKS
    for name, tasks in (
        ("table_7", LMENTRY_TASKS),
        ("table_8", BBH_TASKS),
        ("table_9", LMENTRY_TASKS),
        ("table_10", BBH_TASKS),
    ):
        assert sorted({r["task"] for r in tables[name]["rows"] if r["task"]}) == tasks
    for name in ("table_2", "table_7", "table_8"):
        assert {r["method"] for r in tables[name]["rows"]} == set(METHODS)
    for name, models in (
        ("table_15", MODELS),
        ("table_16", BBH_MODELS),
        ("table_17", MODELS),
        ("table_18", BBH_MODELS),
    ):
        got = [r["model"] for r in tables[name]["rows"] if r["model"]]
        assert sorted(got) == sorted(models)
    for name in ("table_17", "table_18"):
        aggregates = [r["aggregate"] for r in tables[name]["rows"] if not r["model"]]
        assert aggregates == ["all_models", "all_paraphrases"]


# --- printed strings -------------------------------------------------------------


def test_printed_parses_to_value(tables):
    for name, _row, column, cell in all_cells(tables):
        value = parse_printed(cell["printed"])
        if value is None:
            assert cell["value"] is None
            assert cell["note"] == "<1E-50"
        else:
            assert isinstance(cell["value"], float), (name, column, cell)
            assert cell["value"] == value, (name, column, cell)


def test_printed_occurs_in_raw(tables):
    for name, table in tables.items():
        tokens = {tok for line in table["raw"] for tok in line.split()}
        for row in table["rows"]:
            for cell in row["values"].values():
                assert cell["printed"] in tokens, (name, cell)


def test_labels_occur_in_raw(tables):
    for name, table in tables.items():
        lines = [line.strip() for line in table["raw"]]
        for row in table["rows"]:
            for field in ("task_label", "model_label", "benchmark_label", "method_label"):
                if field in row:
                    assert any(line.startswith(row[field]) for line in lines), (name, row)
            for field in ("template_1", "template_2"):
                if field in row:
                    assert row[field] in lines, (name, row["task"])


def test_row_lines_match_raw(tables):
    """Row-major tables: each row is one printed line, in order."""
    for name in (
        "table_4",
        "table_13",
        "table_14",
        "table_15",
        "table_16",
        "table_21",
        "table_22",
        "table_23",
        "table_24",
    ):
        table = tables[name]
        printed = [
            " ".join(
                [r.get("task_label") or r.get("model_label") or r["benchmark_label"]]
                + [c["printed"] for c in r["values"].values()]
            )
            for r in table["rows"]
        ]
        lines = [line.strip() for line in table["raw"]]
        body = [line for line in lines if line in printed]
        assert body == printed, name


def test_table_3_lines_match_raw(tables):
    table = tables["table_3"]
    lines = [line.strip() for line in table["raw"]]
    for row in table["rows"]:
        w = row["values"]["kendall_w"]
        p = row["values"]["friedman_p"]
        line = f"{row['task_label']} {w['printed']} ({w['note']}) {p['printed']}"
        assert line in lines


def test_kendall_w_strength_notes(tables):
    notes = {r["task"]: r["values"]["kendall_w"]["note"] for r in tables["table_3"]["rows"]}
    assert set(notes.values()) == {"weak", "medium", "strong"}
    assert [t for t, n in notes.items() if n == "strong"] == [
        "causal_judgement",
        "sports_understanding",
    ]
    assert all(notes[t] == "weak" for t in LMENTRY_TASKS)


def test_friedman_star_only_for_lmentry(tables):
    for row in tables["table_3"]["rows"]:
        starred = row["values"]["friedman_p"]["printed"] == "0.0*"
        assert starred == (row["benchmark"] == "lmentry")
    assert "1E-50" in tables["table_3"]["footnote"]


# --- relations between tables that hold as printed ----------------------------------


def test_table_4_is_mean_of_table_14(tables):
    for row in tables["table_4"]["rows"]:
        rows = [
            r
            for r in tables["table_14"]["rows"]
            if r["benchmark"] == row["benchmark"] and r["task"] != "ends_with_word"
        ]
        for column, cell in row["values"].items():
            mean = statistics.mean(r["values"][column]["value"] for r in rows)
            assert math.isclose(mean, cell["value"], abs_tol=5e-4 + 1e-12), (row, column)


def test_table_2_is_all_tasks_rows_of_tables_7_and_8(tables):
    for name, bench in (("table_7", "lmentry"), ("table_8", "bbh")):
        for method in METHODS:
            total = find_row(tables[name], aggregate="all_tasks", method=method)
            summary = find_row(tables["table_2"], benchmark=bench, method=method)
            for column, cell in summary["values"].items():
                assert total["values"][column]["printed"] == cell["printed"]


def test_tables_17_18_rows_sum_to_100(tables):
    for name in ("table_17", "table_18"):
        for row in tables[name]["rows"]:
            total = sum(c["value"] for c in row["values"].values())
            assert abs(total - 100) < 0.05, (name, row["model_label"])


# --- pinned cells ------------------------------------------------------------------

# (table, row selector, column, printed)
PINNED = [
    ("table_2", {"benchmark": "lmentry", "method": "all"}, "n_automatic", "2429"),
    ("table_2", {"benchmark": "lmentry", "method": "cot"}, "n_correct", "1234"),
    ("table_2", {"benchmark": "bbh", "method": "rephrase"}, "n_automatic", "734"),
    ("table_2", {"benchmark": "bbh", "method": "gradual"}, "correct_ratio", "85.88%"),
    ("table_3", {"task": "word_not_containing"}, "kendall_w", ".271"),
    ("table_3", {"task": "word_not_containing"}, "friedman_p", "0.0*"),
    ("table_3", {"task": "movie_recommendation"}, "friedman_p", ".897"),
    ("table_3", {"task": "hyperbaton"}, "friedman_p", "1.0E-4"),
    ("table_3", {"task": "logical_deduction_three_objects"}, "kendall_w", ".740"),
    ("table_3", {"task": "salient_translation_error_detection"}, "friedman_p", "6.9E-9"),
    ("table_3", {"task": "causal_judgement"}, "friedman_p", "4.9E-7"),
    ("table_3", {"task": "sports_understanding"}, "kendall_w", ".873"),
    ("table_4", {"benchmark": "lmentry"}, "MaxP", ".963"),
    ("table_4", {"benchmark": "lmentry"}, "AvgP", ".978"),
    ("table_4", {"benchmark": "bbh"}, "Sat", ".940"),
    ("table_4", {"benchmark": "bbh"}, "Combined", ".966"),
    (
        "table_7",
        {"task": "all_words_from_category", "method": "all"},
        "n_automatic",
        "258",
    ),
    (
        "table_7",
        {"task": "any_words_from_category", "method": "gradual"},
        "correct_ratio",
        "71.23%",
    ),
    ("table_7", {"task": "ends_with_word", "method": "cot"}, "accuracy_std", ".019"),
    ("table_7", {"task": "word_before", "method": "gradual"}, "correct_ratio", "100.0%"),
    ("table_7", {"aggregate": "all_tasks", "method": "all"}, "accuracy_avg", ".296"),
    ("table_8", {"task": "formal_fallacies", "method": "rephrase"}, "n_correct", "19"),
    (
        "table_8",
        {"task": "formal_fallacies", "method": "rephrase"},
        "correct_ratio",
        "38.00%",
    ),
    (
        "table_8",
        {"task": "logical_deduction_five_objects", "method": "cot"},
        "n_correct",
        "27",
    ),
    ("table_8", {"task": "navigate", "method": "cot"}, "correct_ratio", "100.0%"),
    (
        "table_8",
        {"task": "sports_understanding", "method": "rephrase"},
        "accuracy_std",
        ".051",
    ),
    ("table_8", {"aggregate": "all_tasks", "method": "gradual"}, "accuracy_std", ".029"),
    ("table_9", {"task": "all_words_from_category"}, "tau", "0.029"),
    ("table_9", {"task": "any_words_from_category"}, "tau", "-0.200"),
    ("table_9", {"task": "rhyming_word"}, "tau", "0.090"),
    ("table_9", {"task": "word_not_containing"}, "tau", "-0.010"),
    ("table_10", {"task": "causal_judgement"}, "tau", "0.183"),
    ("table_10", {"task": "geometric_shapes"}, "tau", "-0.267"),
    ("table_10", {"task": "salient_translation_error_detection"}, "tau", "0.389"),
    ("table_10", {"task": "snarks"}, "tau", "0.22"),
    ("table_10", {"task": "sports_understanding"}, "tau", "-0.245"),
    ("table_13", {"task": "known_unknowns"}, "friedman_p", "4.4E-5"),
    ("table_13", {"task": "code_line_description"}, "kendall_w", ".756"),
    ("table_13", {"task": "code_line_description"}, "friedman_p", ".002"),
    ("table_13", {"task": "logical_deduction"}, "kendall_w", ".913"),
    ("table_14", {"task": "ends_with_word"}, "MaxP", ".104"),
    ("table_14", {"task": "ends_with_word"}, "Sat", ".050"),
    ("table_14", {"task": "word_not_containing"}, "MaxP", ".836"),
    ("table_14", {"task": "formal_fallacies"}, "Sat", ".818"),
    ("table_14", {"task": "movie_recommendation"}, "MaxP", ".954"),
    ("table_14", {"task": "sports_understanding"}, "Combined", "1.00"),
    ("table_15", {"model": "t0pp"}, "combined", "4.63"),
    ("table_15", {"model": "alpaca-7b"}, "average", "13.90"),
    ("table_15", {"model": "flan-t5-xxl"}, "average", "1.40"),
    ("table_15", {"model": "vicuna-13b"}, "saturation", "14.70"),
    ("table_15", {"model": "minotaur-15b"}, "combined", "13.63"),
    ("table_16", {"model": "t0pp"}, "maximum", "7.47"),
    ("table_16", {"model": "flan-t5-xxl"}, "combined", "1.33"),
    ("table_16", {"model": "nous-hermes-13b"}, "saturation", "8.13"),
    ("table_16", {"model": "minotaur-15b"}, "average", "10.67"),
    ("table_17", {"model": "t0_3b"}, "cot", "58.82"),
    ("table_17", {"model": "alpaca-7b"}, "default", "8.33"),
    ("table_17", {"model": "flan-t5-xxl"}, "cot", "69.57"),
    ("table_17", {"aggregate": "all_models"}, "gradual", "45.58"),
    ("table_17", {"aggregate": "all_paraphrases"}, "cot", "52.94"),
    ("table_18", {"model": "flan-t5-xl"}, "default", "2.38"),
    ("table_18", {"model": "t0pp"}, "rephrase", "50.00"),
    ("table_18", {"model": "minotaur-15b"}, "gradual", "90.91"),
    ("table_18", {"aggregate": "all_models"}, "rephrase", "27.37"),
    ("table_18", {"aggregate": "all_paraphrases"}, "default", "0.57"),
    ("table_21", {"task": "all_words_from_category"}, "davinci", "0.56"),
    ("table_21", {"task": "word_not_containing"}, "td003", "0.97"),
    ("table_21", {"task": "homophones"}, "cgpt", "0.49"),
    ("table_22", {"task": "rhyming_word"}, "cgpt", "0.76"),
    ("table_22", {"task": "word_before"}, "davinci", "0.04"),
    ("table_22", {"task": "less_letters"}, "td002", "0.51"),
    ("table_23", {"task": "word_not_containing"}, "td003", "1.00"),
    ("table_23", {"task": "homophones"}, "td002", "0.25"),
    ("table_23", {"task": "ends_with_word"}, "davinci", "0.15"),
    ("table_24", {"task": "ends_with_word"}, "davinci", "0.88"),
    ("table_24", {"task": "word_before"}, "td002", "0.51"),
    ("table_24", {"task": "any_words_from_category"}, "cgpt", "1.00"),
]

# claim id -> (a fragment of its sentence, the number as printed in it)
CLAIMS = {
    "friedman_significant": (
        "significant differences in model accuracies for 21 out of the 25 tasks",
        "21",
    ),
    "negative_tau_tasks": (
        "Overall, 15 tasks have instruction template paraphrases with negative Kendall",
        "15",
    ),
    "alpaca_13b_divergence": (
        "Alpaca-13B deviated by more than one standard deviation for 7 out of the 10 LMentry tasks",
        "7",
    ),
    "openai_original_above_average": (
        "In 72.5% of the cases, the average performance of the "
        "original instruction template was higher",
        "72.5%",
    ),
    "davinci_original_gain": (
        "the original prompts added, on average, 21 more accuracy points",
        "21",
    ),
    "td002_maxp_above_90": ("above 90% for 8 out of 10 tasks", "8"),
    "openai_average_agreement": (
        "Agreement was observed in only 5 out of 10 tasks for the average metric",
        "5",
    ),
    "openai_maximum_agreement": ("and in 4 out of 10 tasks for the maximum metric", "4"),
    "gpt35_first_in_maxp": (
        "gpt-3.5-turbo notably ranked first in the maximum metric for 8 out of 10 tasks",
        "8",
    ),
}


def test_claims_as_printed(doc):
    claims = {claim["id"]: claim for claim in doc["claims"]}
    assert set(claims) == set(CLAIMS)
    for name, (fragment, printed) in CLAIMS.items():
        claim = claims[name]
        assert fragment in claim["sentence"]
        assert claim["printed"] == printed
        assert claim["value"] == parse_printed(printed)
        assert claim["section"] in ("4.2", "7")


def test_openai_column_names(tables):
    for number in (21, 22, 23, 24):
        table = tables[f"table_{number}"]
        assert table["raw"][0] == "davinci td002 td003 cgpt"
        assert table["openai_models"]["cgpt"] == "gpt-3.5-turbo"


def test_pins_cover_every_table():
    counts = {name: 0 for name in SHAPES}
    for name, *_ in PINNED:
        counts[name] += 1
    assert min(counts.values()) >= 3, counts


@pytest.mark.parametrize(("name", "select", "column", "printed"), PINNED)
def test_pinned_cell(tables, name, select, column, printed):
    cell = find_row(tables[name], **select)["values"][column]
    assert cell["printed"] == printed
    assert cell["value"] == parse_printed(printed)


def test_pinned_labels(tables):
    row = find_row(tables["table_3"], task="first_alphabetically")
    assert row["task_label"] == "first alphabet"
    assert row["benchmark_label"] == "LMentry"
    row = find_row(tables["table_3"], task="salient_translation_error_detection")
    assert row["task_label"] == "translation error"
    assert row["benchmark_label"] == "BIG-bench Hard"
    assert find_row(tables["table_3"], task="sports_understanding")["task_label"] == "sports"
    row = find_row(tables["table_18"], aggregate="all_models")
    assert row["model_label"] == "all tasks"
    assert find_row(tables["table_17"], aggregate="all_models")["model_label"] == "all models"
    assert find_row(tables["table_3"], task="causal_judgement")["values"]["kendall_w"] == {
        "printed": ".851",
        "value": 0.851,
        "note": "strong",
    }
    assert find_row(tables["table_13"], task="strategyqa")["task_label"] == "strategic qa"


def test_pinned_templates(tables):
    row = find_row(tables["table_9"], task="word_not_containing")
    assert row["template_2_plain"] == (
        "Write a word that does not contain the letter “{letter}”. Letter: {letter} Output word:"
    )
    assert row["template_2"].startswith("Write a word that does not contain the letter “{letter")
    row = find_row(tables["table_10"], task="geometric_shapes")
    assert row["template_2_plain"] == (
        "From the given options {options}, select the name of the geometric shape "
        "that is represented by {svg_path_element}."
    )
    for name in ("table_9", "table_10"):
        for row in tables[name]["rows"]:
            for field in ("template_1_plain", "template_2_plain"):
                assert "italic_" not in row[field]
