"""Doctests checked exactly: the examples of docs/, README.md and every module.

A printed number passes only when the computed one rounds to it: ``3.`` accepts
3.4 and never 4, ``0.333`` accepts 0.3333 and never 0.334 (half a unit of the
last printed digit; pytest's ``NUMBER`` flag would accept a whole unit either way,
so a wrong ``3.`` for 4 would pass). Everything else is compared as doctest does,
with the flags of ``doctest_optionflags`` in pyproject.toml.

Examples that compare with the oracles of the ``test`` extra (statsmodels,
pingouin, scikit-posthocs) are skipped, block by block, where those are not
installed: a user with ``.[all]`` can run the rest of the examples.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import re

import _pytest.doctest

#: Modules of the ``test`` extra that examples import only to compare with them.
ORACLES = frozenset({"statsmodels", "pingouin", "scikit_posthocs"})

# A number with a fraction or an exponent (an integer must match as text): "3.", "0.333",
# "-1.5e-03", "2e5". Not preceded or followed by a word character or a dot, so that
# "v1.2.3", "x1.5" or "3.1.4" are text.
_NUMBER = re.compile(
    r"(?<![\w.])[+-]?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.])"
)


_PADDING = re.compile(r"[ \t]+([\]),])")


def _half_unit(text: str) -> float:
    """Half a unit of the last digit ``text`` prints: 0.5 for "3.", 0.0005 for "0.333"."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def rounds_to(printed: str, computed: str) -> bool:
    """Whether the number ``computed`` rounds to ``printed`` at the precision printed."""
    want, got = float(printed), float(computed)
    if want == got:
        return True
    # a relative slack of a few ulps, for the binary value of a decimal boundary (0.3335)
    return abs(got - want) <= _half_unit(printed) * (1 + 1e-9)


class RoundedNumberChecker(_pytest.doctest._init_checker_class()):
    """pytest's doctest checker, where a printed number is the computed one rounded."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        """Whether ``got`` matches ``want``, its numbers rounded to the digits ``want`` shows."""
        if super().check_output(want, got, optionflags):
            return True
        wants = list(_NUMBER.finditer(want))
        gots = list(_NUMBER.finditer(got))
        if not wants or len(wants) != len(gots):
            return False
        # Replace each computed number that rounds to the printed one by the printed
        # text, then compare as doctest does: the text around the numbers must match.
        pieces, end = [], 0
        for printed, computed in zip(wants, gots, strict=True):
            pieces.append(got[end : computed.start()])
            close = rounds_to(printed.group(), computed.group())
            pieces.append(printed.group() if close else computed.group())
            end = computed.end()
        pieces.append(got[end:])
        got = "".join(pieces)
        if optionflags & doctest.NORMALIZE_WHITESPACE:
            # NumPy pads the numbers of an array to the widest: "[1.        , 0.33333333]"
            # printed to fewer digits as "[1.  , 0.33]" moves the padding before a closing
            # bracket or a comma, which the printed text need not repeat
            want, got = (_PADDING.sub(r"\1", text) for text in (want, got))
        return super().check_output(want, got, optionflags)


# pytest builds its checker once, from this module-level class; every doctest item of
# the session (modules and text files alike) uses the class set here.
_pytest.doctest.CHECKER_CLASS = RoundedNumberChecker


def _imports(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


def _blocks(examples: list[doctest.Example]) -> list[list[doctest.Example]]:
    """Runs of examples with no text between them: a code block of a page or docstring."""
    blocks: list[list[doctest.Example]] = []
    following = None
    for example in examples:
        if following is None or example.lineno != following:
            blocks.append([])
        blocks[-1].append(example)
        following = example.lineno + example.source.count("\n") + example.want.count("\n")
    return blocks


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def skip_blocks_without_oracles(test: doctest.DocTest) -> int:
    """Mark SKIP every example of a block that imports an oracle not installed; return how many."""
    skipped = 0
    for block in _blocks(test.examples):
        needed = set().union(*(_imports(example.source) for example in block)) & ORACLES
        if any(_missing(module) for module in needed):
            for example in block:
                example.options[doctest.SKIP] = True
            skipped += len(block)
    return skipped


def pytest_collection_modifyitems(items):
    """Skip the examples that need an oracle of the ``test`` extra where it is missing."""
    for item in items:
        if isinstance(item, _pytest.doctest.DoctestItem) and item.dtest is not None:
            skip_blocks_without_oracles(item.dtest)
