"""Safe template formatting: named fields only, nothing evaluated, clear errors."""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankstats.errors import CubeError
from rankstats_collectors.prompts.formatting import (
    TemplateError,
    check_fields,
    placeholders,
    render,
)

NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
LITERALS = st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=12)


@st.composite
def templates(draw):
    """A template of literal text, escaped braces and named fields, with its fields."""
    names = draw(st.lists(NAMES, min_size=0, max_size=4))
    pieces = []
    for name in names:
        pieces.append(draw(LITERALS))
        pieces.append(draw(st.sampled_from(["{{", "}}", ""])))
        pieces.append("{" + name + "}")
    pieces.append(draw(LITERALS))
    return "".join(pieces), names


@given(templates(), st.data())
def test_render_equals_str_format_on_plain_templates(template, data):
    text, names = template
    values = {name: data.draw(st.text(max_size=10)) for name in names}
    assert render(text, values) == text.format(**values)
    assert placeholders(text) == tuple(dict.fromkeys(names))


def test_placeholders_in_order_of_first_appearance():
    assert placeholders("{b} {a} {b} {{c}} {d}") == ("b", "a", "d")
    assert placeholders("no fields {{here}}") == ()


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        ("Q: {}", "{}", "positional"),
        ("Q: {0}", "{0}", "positional"),
        ("Q: {x.__class__}", "{x.__class__}", "attribute and index"),
        ("Q: {x[0]}", "{x[0]}", "attribute and index"),
        ("Q: {x!r}", "{x!r}", "conversions"),
        ("Q: {x:>10}", "{x:>10}", "format specs"),
    ],
)
def test_forbidden_fields_name_template_and_field(text, field, problem):
    with pytest.raises(TemplateError) as caught:
        placeholders(text, template_id="7")
    message = str(caught.value)
    assert "template '7'" in message and repr(text) in message
    assert field in message and problem in message
    with pytest.raises(TemplateError):
        render(text, {"x": "value"})


@pytest.mark.parametrize("text", ["Q: {question", "Q: question}", "{a{b}}"])
def test_unmatched_braces(text):
    with pytest.raises(TemplateError, match="literal brace"):
        placeholders(text)


def test_nothing_is_evaluated():
    class Loud:
        def __format__(self, spec):
            raise AssertionError("formatted")

        def __str__(self):
            return "loud"

    # str() is the one conversion; attribute access never happens
    assert render("{x}", {"x": Loud()}) == "loud"
    with pytest.raises(TemplateError):
        render("{x.__init__.__globals__}", {"x": Loud()})


def test_render_missing_field_names_template_and_field():
    with pytest.raises(TemplateError, match=r"template 'orig' .*no value for field 'options'"):
        render("Q: {question}\n{options}", {"question": "?"}, template_id="orig")


def test_errors_are_cube_errors_and_value_errors():
    assert issubclass(TemplateError, CubeError)
    assert issubclass(TemplateError, ValueError)


def test_check_fields_names_task_template_sample_and_field():
    templates_ = {"1": "Q: {question}", "2": "Q: {question} ({hint})"}
    samples = [{"question": "a", "hint": "b"}, {"question": "c"}]
    with pytest.raises(TemplateError) as caught:
        check_fields(templates_, samples, task="navigate")
    message = str(caught.value)
    for part in ("task 'navigate'", "template '2'", "sample 2", "field 'hint'"):
        assert part in message


def test_check_fields_reads_sample_objects_and_malformed_templates():
    from rankstats_collectors.tasks import Sample

    check_fields({"1": "{a}"}, [Sample("x", {"a": 1}, "g")], task="t")
    with pytest.raises(TemplateError, match="sample x has no field 'a'"):
        check_fields({"1": "{a}"}, [Sample("x", {"b": 1}, "g")], task="t")
    with pytest.raises(TemplateError, match=r"task 't', template '3'.*positional"):
        check_fields({"3": "{}"}, [], task="t")


def test_formatter_agrees_with_string_formatter_on_field_names():
    text = "{{x}} {alpha} and {beta}{alpha}"
    parsed = [f for _, f, _, _ in string.Formatter().parse(text) if f]
    assert placeholders(text) == tuple(dict.fromkeys(parsed))
