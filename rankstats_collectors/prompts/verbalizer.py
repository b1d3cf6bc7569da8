"""Verbalizer variants of a classification task: instruction following as a template axis.

A *verbalizer* maps each gold label of a classification task to the word the
model must answer with. Li et al. (2023) group verbalizers by how well they
fit a model's priors: *natural* (the label names themselves, ``1|0``,
``yes|no``), *neutral* (``foo|bar``, ``sfo|lax``, ...) and *unnatural* (the
natural ones flipped, so a positive review must be answered "negative"). Each
verbalizer turns one instruction template into one evaluation variant, whose
coordinates ``verbalizer_group``, ``verbalizer`` and ``prompting`` become
template attributes of the cube, so :mod:`rankstats.verbalizer` and every
other statistic of rankstats read them like any other template axis.

A template names each label's word with a slot ``{verbalizer_<label>}``
(the label lower-cased, every run of other characters than letters and
digits an underscore: ``{verbalizer_not_entailment}``) beside the sample's
own fields.

Examples
--------
>>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
>>> table = paper_table("sst2")
>>> [v.name for v in table.verbalizers]  # doctest: +NORMALIZE_WHITESPACE
['golden', '1|0', 'yes|no', 'foo|bar', 'bar|foo', 'sfo|lax', 'lax|sfo', 'lake|river',
 'river|lake', 'flipped golden', '0|1', 'no|yes']
>>> variants = build_variants([{"id": "r1", "sentence": "A joy to watch.", "label": "positive"}],
...                           table, task="sst2")
>>> len(variants)
12
>>> one = variants.variants[-3]
>>> one.verbalizer_group, one.verbalizer, one.expected
('unnatural', 'flipped golden', 'negative')
>>> print(one.prompt)
Review: A joy to watch.
Is the sentiment of this movie review positive or negative? If it is positive, answer \
"negative". If it is negative, answer "positive".
Answer:
>>> variants.score(one, "Negative.")
{'score': 1.0, 'answer': 'negative', 'unparseable': False}
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

from ..tasks import Sample, Template
from .formatting import TemplateError, placeholders, render

__all__ = [
    "COT_TRIGGER",
    "GROUPS",
    "PROMPTINGS",
    "Variant",
    "VariantSet",
    "Verbalizer",
    "VerbalizerTable",
    "build_variants",
    "example_samples",
    "paper_table",
    "paper_tables",
    "parse_answer",
    "slot",
]

GROUPS = ("natural", "neutral", "unnatural")
PROMPTINGS = ("direct", "cot")
COT_TRIGGER = "Let's think step by step."
GOLDEN = "golden"
FLIPPED_GOLDEN = "flipped golden"
_DATA = "verbalizers.json"
_NON_WORD = re.compile(r"[^0-9a-z]+")
_CUE = re.compile(r"\b(?:final answer|answer|label)\b(?:\s+(?:is|would be|should be))?")


def slot(label: str) -> str:
    """The template slot naming a label's word: ``verbalizer_`` and the label as an identifier.

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import slot
    >>> slot("not entailment"), slot("Positive")
    ('verbalizer_not_entailment', 'verbalizer_positive')
    """
    key = _NON_WORD.sub("_", str(label).casefold()).strip("_")
    if not key:
        raise TemplateError(f"the label {label!r} has no letters or digits to name its slot")
    return f"verbalizer_{key}"


@dataclass(frozen=True)
class Verbalizer:
    """One verbalizer: its group, its name and the word for each label.

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import Verbalizer
    >>> Verbalizer("neutral", "foo|bar", {"positive": "foo", "negative": "bar"}).words
    ('foo', 'bar')
    """

    group: str
    name: str
    mapping: dict

    @property
    def words(self) -> tuple[str, ...]:
        """The words, in the order of the labels."""
        return tuple(self.mapping.values())


def _name(words: Sequence[str]) -> str:
    return "|".join(words)


@dataclass(frozen=True)
class VerbalizerTable:
    """The labels of a classification task and its verbalizers, grouped.

    Build one from explicit mappings with :meth:`build` (any number of
    labels), or take one of the paper's with :func:`paper_table`.

    Attributes
    ----------
    labels : tuple of str
        The gold label names, in order.
    verbalizers : tuple of Verbalizer
        Natural, then neutral, then unnatural.
    template : str, optional
        A default instruction template with a ``{verbalizer_<label>}`` slot per
        label.
    fields : tuple of str
        The sample fields the default template names.
    name : str
        The dataset's display name.
    """

    labels: tuple[str, ...]
    verbalizers: tuple[Verbalizer, ...]
    template: str | None = None
    fields: tuple[str, ...] = ()
    name: str = ""

    @classmethod
    def build(
        cls,
        labels: Sequence[str],
        *,
        natural: Mapping[str, Sequence[str]] | None = None,
        neutral: Mapping[str, Sequence[str]] | Sequence[Sequence[str]] = (),
        unnatural: Mapping[str, Sequence[str]] | Sequence[Sequence[str]] = (),
        flip: Mapping[str, str] | None = None,
        template: str | None = None,
        fields: Sequence[str] = (),
        name: str = "",
    ) -> VerbalizerTable:
        """A table from explicit word lists, the unnatural group by flipping the natural one.

        Parameters
        ----------
        labels : sequence of str
            The gold labels, in order; every word list follows this order.
        natural : mapping, optional
            Verbalizer name → one word per label. Default: ``{"golden":
            labels}``, the label names themselves.
        neutral, unnatural : mapping or sequence of word lists
            Further verbalizers; a bare word list is named by its words
            joined with ``|``.
        flip : mapping, optional
            A permutation of the labels: label ℓ is answered with the natural
            word of ``flip[ℓ]``. Each natural verbalizer gets its flipped
            counterpart in the unnatural group (``golden`` becomes ``flipped
            golden``, the others are named by their words). Default for two
            labels: the swap; with more labels it must be given (or
            ``unnatural`` listed explicitly).

        Raises
        ------
        rankstats_collectors.prompts.formatting.TemplateError
            Repeated labels, a word list of the wrong length, one word for two
            labels, a ``flip`` that is not a permutation of the labels (or
            leaves a label in place), or two verbalizers of one name.

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import VerbalizerTable
        >>> table = VerbalizerTable.build(
        ...     ["joy", "sadness", "anger"], natural={"golden": ["joy", "sadness", "anger"],
        ...                                           "numbers": ["1", "2", "3"]},
        ...     flip={"joy": "sadness", "sadness": "anger", "anger": "joy"})
        >>> [(v.group, v.name, v.words) for v in table.verbalizers[2:]]
        [('unnatural', 'flipped golden', ('sadness', 'anger', 'joy')), \
('unnatural', '2|3|1', ('2', '3', '1'))]
        """
        labels = tuple(str(label) for label in labels)
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise TemplateError(
                f"a verbalizer table needs two or more distinct labels, not {list(labels)}"
            )
        slots = [slot(label) for label in labels]
        if len(set(slots)) != len(slots):
            raise TemplateError(f"the labels {list(labels)} give clashing slots {slots}")
        natural = dict(natural) if natural is not None else {GOLDEN: labels}
        made = [cls._verbalizer(labels, "natural", name, words) for name, words in natural.items()]
        made += [cls._verbalizer(labels, "neutral", name, words) for name, words in _named(neutral)]
        explicit = [
            cls._verbalizer(labels, "unnatural", name, words) for name, words in _named(unnatural)
        ]
        if flip is not None or not explicit:
            made += cls._flipped(labels, made, flip)
        made += explicit
        names = [v.name for v in made]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise TemplateError(f"verbalizer names must be unique; repeated: {repeated}")
        if template is not None:
            _check_template(template, labels)
        return cls(labels, tuple(made), template, tuple(fields), name)

    @staticmethod
    def _verbalizer(labels, group, name, words) -> Verbalizer:
        words = tuple(str(word) for word in words)
        if len(words) != len(labels):
            raise TemplateError(
                f"{group} verbalizer {name!r}: {len(words)} word(s) for "
                f"{len(labels)} labels {list(labels)}"
            )
        if len({_words(w) for w in words}) != len(words) or any(not _words(w) for w in words):
            raise TemplateError(
                f"{group} verbalizer {name!r}: the words {list(words)} must be "
                "distinct and non-empty (ignoring case and punctuation)"
            )
        return Verbalizer(group, str(name), dict(zip(labels, words, strict=True)))

    @classmethod
    def _flipped(cls, labels, made, flip) -> list[Verbalizer]:
        if flip is None:
            if len(labels) != 2:
                raise TemplateError(
                    f"with {len(labels)} labels, say how to flip them: pass "
                    "flip={label: label it is answered as}, a permutation"
                )
            flip = {labels[0]: labels[1], labels[1]: labels[0]}
        flip = {str(k): str(v) for k, v in flip.items()}
        if sorted(flip) != sorted(labels) or sorted(flip.values()) != sorted(labels):
            raise TemplateError(f"flip={flip} is not a permutation of the labels {list(labels)}")
        fixed = [label for label in labels if flip[label] == label]
        if fixed:
            raise TemplateError(f"flip={flip} leaves {fixed} unflipped")
        out = []
        for natural in (v for v in made if v.group == "natural"):
            words = [natural.mapping[flip[label]] for label in labels]
            name = FLIPPED_GOLDEN if natural.name == GOLDEN else _name(words)
            out.append(cls._verbalizer(labels, "unnatural", name, words))
        return out

    def group(self, group: str) -> list[Verbalizer]:
        """The verbalizers of one group, in table order.

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import paper_table
        >>> [v.name for v in paper_table("mrpc").group("natural")]
        ['golden', '1|0', 'yes|no']
        """
        if group not in GROUPS:
            raise TemplateError(f"no verbalizer group {group!r} (groups: {', '.join(GROUPS)})")
        return [v for v in self.verbalizers if v.group == group]


def _named(entries) -> list[tuple[str, Sequence[str]]]:
    if isinstance(entries, Mapping):
        return list(entries.items())
    return [(_name([str(w) for w in words]), words) for words in entries]


def _check_template(text: str, labels: Sequence[str], template_id: str | None = None) -> tuple:
    fields = placeholders(text, template_id=template_id)
    missing = [slot(label) for label in labels if slot(label) not in fields]
    if missing:
        raise TemplateError(
            f"template {text!r} lacks the verbalizer slot(s) "
            f"{', '.join('{' + m + '}' for m in missing)}: the instruction "
            "must say which word answers each label"
        )
    unknown = [
        f
        for f in fields
        if f.startswith("verbalizer_") and f not in {slot(label) for label in labels}
    ]
    if unknown:
        raise TemplateError(
            f"template {text!r} names the slot(s) {unknown}, which match no label of {list(labels)}"
        )
    return fields


def _load() -> dict:
    with resources.files(__package__).joinpath("data", _DATA).open(encoding="utf-8") as handle:
        return json.load(handle)["datasets"]


def paper_tables() -> dict[str, VerbalizerTable]:
    """The verbalizer tables of the nine binary datasets of Li et al. (2023), table 1.

    Keys: ``sst2``, ``fp``, ``emotion``, ``snli``, ``sick``, ``rte``, ``qqp``,
    ``mrpc``, ``subj``. Each table has 3 natural, 6 neutral and 3 unnatural
    verbalizers, and a default template (written for rankstats; the paper's
    templates are not transcribed).

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import paper_tables
    >>> tables = paper_tables()
    >>> list(tables)
    ['sst2', 'fp', 'emotion', 'snli', 'sick', 'rte', 'qqp', 'mrpc', 'subj']
    >>> tables["rte"].labels
    ('entailment', 'not entailment')
    """
    tables = {}
    for key, entry in _load().items():
        groups = entry["verbalizers"]
        tables[key] = VerbalizerTable.build(
            entry["labels"],
            natural={
                _golden_name(entry["labels"], words, GOLDEN): words for words in groups["natural"]
            },
            neutral=groups["neutral"],
            unnatural={
                _golden_name(entry["labels"][::-1], words, FLIPPED_GOLDEN): words
                for words in groups["unnatural"]
            },
            template=entry["template"],
            fields=entry["fields"],
            name=entry["name"],
        )
    return tables


def _golden_name(golden, words, name) -> str:
    return name if list(words) == list(golden) else _name(words)


def paper_table(dataset: str) -> VerbalizerTable:
    """One of :func:`paper_tables`, by key (``"sst2"``, ``"rte"``, ...).

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import paper_table
    >>> [v.words for v in paper_table("qqp").group("unnatural")]
    [('not duplicate', 'duplicate'), ('0', '1'), ('no', 'yes')]
    """
    tables = paper_tables()
    if dataset not in tables:
        raise TemplateError(
            f"no verbalizer table named {dataset!r} (available: {', '.join(tables)})"
        )
    return tables[dataset]


@dataclass(frozen=True)
class Variant:
    """One evaluation item: a sample under one verbalizer and one prompting.

    ``expected`` is the word the instruction asks for given the sample's gold
    label; ``words`` are the verbalizer's words in label order, which is what
    :func:`parse_answer` looks for.
    """

    task: str
    template_id: str
    sample_id: str
    prompt: str
    gold: str
    expected: str
    verbalizer_group: str
    verbalizer: str
    prompting: str
    words: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass
class VariantSet:
    """The variants of one or more tasks: templates (per task) and items.

    Combine the sets of several tasks with ``+``. :meth:`score` parses one
    response; :meth:`records` scores every response of a model into rows for
    :func:`rankstats.from_records`; :meth:`to_cube` builds the cube at once,
    with an ``unparseable`` variable beside ``score``.
    """

    templates: dict[str, list[Template]] = field(default_factory=dict)
    variants: list[Variant] = field(default_factory=list)
    n_labels: dict[str, int] = field(default_factory=dict)
    samples: dict[str, list[Sample]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.variants)

    def __add__(self, other: VariantSet) -> VariantSet:
        shared = set(self.templates) & set(other.templates)
        if shared:
            raise TemplateError(f"both variant sets hold the task(s) {sorted(shared)}")
        return VariantSet(
            {**self.templates, **other.templates},
            [*self.variants, *other.variants],
            {**self.n_labels, **other.n_labels},
            {**self.samples, **other.samples},
        )

    def count(self, *by: str) -> dict:
        """How many items per value of the given :class:`Variant` fields.

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
        >>> items = [{"sentence": "Fine.", "label": "positive"}]
        >>> build_variants(items, paper_table("sst2"), task="sst2").count("verbalizer_group")
        {'natural': 3, 'neutral': 6, 'unnatural': 3}
        """
        counts: dict = {}
        for variant in self.variants:
            key = tuple(getattr(variant, name) for name in by)
            key = key[0] if len(key) == 1 else key
            counts[key] = counts.get(key, 0) + 1
        return counts

    @staticmethod
    def score(variant: Variant, response: str) -> dict:
        """Parse one response against the variant's words; score 1 only for the expected word.

        Returns ``{"score", "answer", "unparseable"}``: an unparseable
        response (no label word, or several without an answer cue) scores 0
        and is flagged, so it is never counted as correct and can be told
        apart from a wrong answer.

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import (
        ...     VariantSet, build_variants, paper_table)
        >>> variants = build_variants([{"sentence": "Dull.", "label": "negative"}],
        ...                           paper_table("sst2"), task="sst2")
        >>> item = next(v for v in variants.variants if v.verbalizer == "foo|bar")
        >>> VariantSet.score(item, "BAR"), VariantSet.score(item, "negative")
        ({'score': 1.0, 'answer': 'bar', 'unparseable': False}, \
{'score': 0.0, 'answer': None, 'unparseable': True})
        """
        index = parse_answer(response, variant.words, chain_of_thought=variant.prompting == "cot")
        if index is None:
            return {"score": 0.0, "answer": None, "unparseable": True}
        answer = variant.words[index]
        return {"score": float(answer == variant.expected), "answer": answer, "unparseable": False}

    def records(
        self,
        model: str,
        responses: Mapping[tuple[str, str, str], str] | Sequence[str],
        **model_attrs,
    ) -> list[dict]:
        """Score a model's responses into long records (one per item).

        Parameters
        ----------
        model : str
            The model's name.
        responses : mapping or sequence
            ``{(task, template_id, sample_id): response}``, or one response
            per item in the order of :attr:`variants`. An item without a
            response is left out (missing, not wrong).
        **model_attrs
            Model attributes to add to every row (``family="...",
            parameters=...``).

        Returns
        -------
        list of dict
            Rows with ``model``, ``task``, ``template``, ``sample``,
            ``score``, ``unparseable``, ``answer``, ``response``,
            ``verbalizer_group``, ``verbalizer``, ``prompting``, ``n_labels``
            and the model attributes.

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
        >>> variants = build_variants([{"id": "a", "sentence": "Dull.", "label": "negative"}],
        ...                           paper_table("sst2"), task="sst2")
        >>> rows = variants.records("m", {("sst2", "natural:1|0:direct", "a"): "0"}, size=7)
        >>> [(r["template"], r["score"], r["size"]) for r in rows]
        [('natural:1|0:direct', 1.0, 7)]
        """
        if isinstance(responses, Mapping):
            pairs = [
                (v, responses.get((v.task, v.template_id, v.sample_id))) for v in self.variants
            ]
        else:
            responses = list(responses)
            if len(responses) != len(self.variants):
                raise TemplateError(
                    f"model {model!r}: {len(responses)} response(s) for "
                    f"{len(self.variants)} item(s)"
                )
            pairs = list(zip(self.variants, responses, strict=True))
        rows = []
        for variant, response in pairs:
            if response is None:
                continue
            if not isinstance(response, str):
                raise TemplateError(
                    f"model {model!r}, task {variant.task!r}, template {variant.template_id!r}, "
                    f"sample {variant.sample_id!r}: the response is "
                    f"{type(response).__name__}, not text"
                )
            rows.append(
                {
                    "model": model,
                    "task": variant.task,
                    "template": variant.template_id,
                    "sample": variant.sample_id,
                    **self.score(variant, response),
                    "response": response,
                    "verbalizer_group": variant.verbalizer_group,
                    "verbalizer": variant.verbalizer,
                    "prompting": variant.prompting,
                    "n_labels": self.n_labels[variant.task],
                    **model_attrs,
                }
            )
        return rows

    def to_cube(
        self,
        records: Iterable[Mapping],
        *,
        source: str = "verbalizer variants",
        attrs: Mapping | None = None,
    ):
        """A binary cube of scored records, with the raw responses and the unparseable flags.

        Built by :func:`rankstats_collectors.records.records_to_cube`: ``response`` and
        ``unparseable`` lie beside ``score`` on (model, task, template,
        sample); ``unparseable`` is 1 where the response named no label, 0
        where it did, NaN where there is no response. ``verbalizer_group``,
        ``verbalizer`` and ``prompting`` become template coordinates,
        ``n_labels`` a task coordinate, and every other column (the model
        attributes given to :meth:`records`, e.g. ``family`` and
        ``parameters``) a model coordinate. ``attrs`` are extra cube
        attributes (collector settings).

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
        >>> items = [{"sentence": "Fine.", "label": "positive"}]
        >>> variants = build_variants(items, paper_table("sst2"), task="sst2")
        >>> rows = variants.records("m", ["positive"] * len(variants), family="F")
        >>> cube = variants.to_cube(rows)
        >>> float(cube.score.sum()), float(cube.unparseable.sum()), cube.family.values.tolist()
        (1.0, 10.0, ['F'])
        """
        import pandas as pd

        from ..records import records_to_cube

        frame = pd.DataFrame.from_records(list(records))
        if frame.empty:
            raise TemplateError("no scored records to build a cube from")
        frame = frame.drop(columns=[c for c in ("answer",) if c in frame])
        flags = frame.pop("unparseable").astype(float)
        renames = {
            name: f"template_{name}" for name in ("verbalizer_group", "verbalizer", "prompting")
        }
        renames["n_labels"] = "task_n_labels"
        known = {"model", "task", "template", "sample", "score", "response", *renames}
        renames.update(
            {
                c: f"model_{c}"
                for c in frame.columns
                if c not in known and not c.startswith("model_")
            }
        )
        frame = frame.rename(columns=renames)
        back = {new: old for old, new in renames.items()}
        settings = {"collector": "rankstats_collectors.prompts.verbalizer", **(attrs or {})}
        cube = records_to_cube(
            frame, metric="accuracy", source=source, attrs=settings, score_kind="binary"
        ).rename(back)
        flagged = records_to_cube(
            frame.drop(columns=["response"], errors="ignore").assign(score=flags),
            metric="unparseable",
            source=source,
            score_kind="binary",
        )
        cube["unparseable"] = flagged["score"].rename(back)
        return cube

    def rescore(self, cube, *, source: str | None = None):
        """Score the raw responses of a collected cube against the verbalizers.

        A collector given :attr:`templates` and :attr:`samples` (e.g.
        :func:`rankstats_collectors.openai.collect`) scores each response against the
        sample alone, which cannot know the verbalizer; its cube keeps the raw
        ``response``, and this turns it into a verbalizer cube as
        :meth:`to_cube` builds it: the expected word of each template,
        ``unparseable`` flags, the verbalizer coordinates. Model coordinates
        of ``cube`` (``family``, ``parameters``, ``model_revision``, ...)
        are kept.

        Raises
        ------
        rankstats_collectors.prompts.formatting.TemplateError
            ``cube`` has no ``response`` variable, or lacks a task, template
            or sample of the variants (naming it).

        Examples
        --------
        >>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
        >>> from rankstats_collectors.records import records_to_cube
        >>> variants = build_variants([{"id": "a", "sentence": "Fine.", "label": "positive"}],
        ...                           paper_table("sst2"), task="sst2")
        >>> collected = records_to_cube(
        ...     [{"model": "m", "task": "sst2", "template": t.id, "sample": "a", "score": 0.0,
        ...       "response": "Positive."} for t in variants.templates["sst2"]],
        ...     metric="none", source="example")
        >>> cube = variants.rescore(collected)
        >>> float(cube.score.sum()), float(cube.unparseable.sum())
        (1.0, 10.0)
        """
        import numpy as np

        if "response" not in cube:
            raise TemplateError("rescore needs a cube with the raw 'response' of each score")
        tasks = {str(t): i for i, t in enumerate(cube["task"].values)}
        template_ids = cube["template_id"].transpose("task", "template").values.astype(str)
        sample_ids = cube["sample_id"].transpose("task", "sample").values.astype(str)
        responses = cube["response"].transpose("model", "task", "template", "sample").values
        observed = cube["score"].notnull().transpose("model", "task", "template", "sample").values
        where = {}
        for variant in self.variants:
            if variant.task not in tasks:
                raise TemplateError(f"the cube has no task {variant.task!r}")
            i = tasks[variant.task]
            found_t = np.flatnonzero(template_ids[i] == variant.template_id)
            found_s = np.flatnonzero(sample_ids[i] == variant.sample_id)
            if not len(found_t) or not len(found_s):
                what = (
                    ("template", variant.template_id)
                    if not len(found_t)
                    else ("sample", variant.sample_id)
                )
                raise TemplateError(
                    f"task {variant.task!r} of the cube has no {what[0]} {what[1]!r}"
                )
            where[variant] = (i, found_t[0], found_s[0])
        model_coords = [n for n, c in cube.coords.items() if c.dims == ("model",) and n != "model"]
        rows = []
        for m, model in enumerate(cube["model"].values):
            attrs = {
                n: cube[n].values[m].item()
                if hasattr(cube[n].values[m], "item")
                else cube[n].values[m]
                for n in model_coords
            }
            answered = {
                (v.task, v.template_id, v.sample_id): str(responses[(m, *where[v])])
                for v in self.variants
                if observed[(m, *where[v])]
            }
            rows += self.records(str(model), answered, **attrs)
        return self.to_cube(
            rows,
            source=source or str(cube.attrs.get("source", "")),
            attrs={"rescored_from_metric": str(cube.attrs.get("metric", ""))},
        )


def _sample_parts(sample, position: int, label_key: str):
    if isinstance(sample, Sample):
        return str(sample.id), dict(sample.fields), sample.gold
    if not isinstance(sample, Mapping):
        raise TemplateError(
            f"sample {position}: a sample is a mapping or a Sample, not {type(sample).__name__}"
        )
    if label_key not in sample:
        raise TemplateError(
            f"sample {sample.get('id', position)!r} has no gold label "
            f"{label_key!r} (it has: {', '.join(map(str, sample))})"
        )
    fields = {k: v for k, v in sample.items() if k not in ("id", label_key)}
    return str(sample.get("id", position)), fields, sample[label_key]


def _fill_slots(text: str, words: Mapping[str, str]) -> str:
    """``text`` with the verbalizer slots filled and every other field and brace kept."""
    pieces = []
    for literal, name, _, _ in string.Formatter().parse(text):
        pieces.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        pieces.append(
            words[name].replace("{", "{{").replace("}", "}}") if name in words else "{" + name + "}"
        )
    return "".join(pieces)


def build_variants(
    samples: Iterable,
    table: VerbalizerTable,
    *,
    task: str,
    template: str | None = None,
    cot: Sequence[str] | str = (),
    cot_template: str | None = None,
    label_key: str = "label",
    gold_map: Mapping | None = None,
) -> VariantSet:
    """Every evaluation variant of a classification task under a table of verbalizers.

    Parameters
    ----------
    samples : iterable
        The task's records: mappings with the fields the template names, the
        gold label under ``label_key`` and optionally an ``id`` (default: the
        position, from 1); or :class:`rankstats_collectors.tasks.Sample` objects.
    table : VerbalizerTable
        The labels and verbalizers (e.g. :func:`paper_table`).
    task : str
        The task's name in the cube.
    template : str, optional
        The direct-prompting template, with a ``{verbalizer_<label>}`` slot
        per label (:func:`slot`); default: the table's template.
    cot : sequence of str or "all"
        Verbalizer names that also get a zero-shot chain-of-thought variant
        (``prompting="cot"``); Li et al. (2023) use ``("flipped golden",)``.
        Default: none, so the counts are those of the paper's table 1.
    cot_template : str, optional
        The chain-of-thought template; default: the direct one followed by
        :data:`COT_TRIGGER` ("Let's think step by step.").
    label_key : str, default "label"
        The key of the gold label in mapping samples.
    gold_map : mapping, optional
        Raw gold value → label (e.g. ``{0: "negative", 1: "positive"}``).

    Returns
    -------
    VariantSet
        Templates ``<group>:<verbalizer>:<prompting>`` (their text with the
        verbalizer filled in, the sample fields still open, and the
        attributes ``verbalizer_group``, ``verbalizer``, ``prompting``) and
        one :class:`Variant` per template and sample, in table order.

    Raises
    ------
    rankstats_collectors.prompts.formatting.TemplateError
        A template lacks a label's slot or is malformed; a sample lacks a
        field or has a gold label outside the table (naming task, sample and
        value); ``cot`` names an unknown verbalizer; sample ids repeat.

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import build_variants, paper_table
    >>> items = [{"id": "a", "sentence": "Dull.", "label": 0}]
    >>> variants = build_variants(items, paper_table("sst2"), task="sst2",
    ...                           gold_map={0: "negative", 1: "positive"},
    ...                           cot=["flipped golden"])
    >>> variants.count("verbalizer_group", "prompting")
    {('natural', 'direct'): 3, ('neutral', 'direct'): 6, ('unnatural', 'direct'): 3, \
('unnatural', 'cot'): 1}
    >>> [v.prompt.splitlines()[-1] for v in variants.variants if v.prompting == "cot"]
    ["Answer: Let's think step by step."]
    """
    template = template if template is not None else table.template
    if template is None:
        raise TemplateError(f"task {task!r}: the table has no default template; pass template=")
    labels = table.labels
    fields = [
        f
        for f in _check_template(template, labels, template_id=task)
        if not f.startswith("verbalizer_")
    ]
    names = [v.name for v in table.verbalizers]
    cot_names = names if cot == "all" else list(cot)
    unknown = [name for name in cot_names if name not in names]
    if unknown:
        raise TemplateError(
            f"task {task!r}: cot names unknown verbalizer(s) {unknown} "
            f"(verbalizers: {', '.join(names)})"
        )
    if cot_template is None:
        cot_template = f"{template.rstrip()} {COT_TRIGGER}"
    elif cot_names:
        _check_template(cot_template, labels, template_id=f"{task} (chain of thought)")
    items = _items(samples, task, labels, label_key, gold_map, fields)
    templates, variants = [], []
    for verbalizer in table.verbalizers:
        words = {slot(label): word for label, word in verbalizer.mapping.items()}
        forms = [("direct", template)]
        if verbalizer.name in cot_names:
            forms.append(("cot", cot_template))
        for prompting, text in forms:
            ident = f"{verbalizer.group}:{verbalizer.name}:{prompting}"
            filled = _fill_slots(text, words)
            templates.append(
                Template(
                    ident,
                    filled,
                    {
                        "verbalizer_group": verbalizer.group,
                        "verbalizer": verbalizer.name,
                        "prompting": prompting,
                    },
                )
            )
            for sample_id, values, gold in items:
                variants.append(
                    Variant(
                        task,
                        ident,
                        sample_id,
                        render(filled, values, template_id=ident),
                        gold,
                        verbalizer.mapping[gold],
                        verbalizer.group,
                        verbalizer.name,
                        prompting,
                        verbalizer.words,
                        labels,
                    )
                )
    return VariantSet(
        {task: templates},
        variants,
        {task: len(labels)},
        {task: [Sample(i, v, gold) for i, v, gold in items]},
    )


def _items(samples, task, labels, label_key, gold_map, fields) -> list[tuple[str, dict, str]]:
    items, seen = [], set()
    for position, sample in enumerate(samples, start=1):
        sample_id, values, gold = _sample_parts(sample, position, label_key)
        if gold_map is not None:
            if gold not in gold_map:
                raise TemplateError(
                    f"task {task!r}, sample {sample_id!r}: gold {gold!r} is not "
                    f"in gold_map ({', '.join(map(repr, gold_map))})"
                )
            gold = gold_map[gold]
        if not isinstance(gold, str) or gold not in labels:
            raise TemplateError(
                f"task {task!r}, sample {sample_id!r}: the gold label {gold!r} "
                f"is not one of {list(labels)} (map raw labels with gold_map=)"
            )
        missing = [f for f in fields if f not in values]
        if missing:
            raise TemplateError(
                f"task {task!r}, sample {sample_id!r} has no field "
                f"{missing[0]!r} (it has: {', '.join(map(str, values))})"
            )
        if sample_id in seen:
            raise TemplateError(f"task {task!r}: two samples have the id {sample_id!r}")
        seen.add(sample_id)
        items.append((sample_id, values, gold))
    if not items:
        raise TemplateError(f"task {task!r}: no samples")
    return items


def _words(text: str) -> tuple[str, ...]:
    """Lower-cased words: punctuation separates words, so 'answer:no' is ('answer', 'no')."""
    cleaned = "".join(
        " " if unicodedata.category(c).startswith("P") else c for c in text.casefold()
    )
    return tuple(cleaned.split())


def _occurrences(tokens: tuple[str, ...], candidates) -> list[tuple[int, int]]:
    """Leftmost-longest whole-word matches ``(start, label index)``; a longer word wins."""
    found, i = [], 0
    while i < len(tokens):
        for index, words in candidates:
            if tokens[i : i + len(words)] == words:
                found.append((i, index))
                i += len(words)
                break
        else:
            i += 1
    return found


def _pick(tokens, candidates) -> int | None:
    found = _occurrences(tokens, candidates)
    if not found:
        return None
    if found[0][0] == 0:
        return found[0][1]
    labels = {index for _, index in found}
    return found[0][1] if len(labels) == 1 else None


def parse_answer(
    response: str, words: Sequence[str], *, chain_of_thought: bool = False
) -> int | None:
    r"""The position in ``words`` of the label a response gives, or None if it gives none.

    Parameters
    ----------
    response : str
        The model's text.
    words : sequence of str
        The verbalizer's words, one per label.
    chain_of_thought : bool, default False
        The response reasons before answering: only an answer cue or the last
        line counts, never a word met in the reasoning.

    Returns
    -------
    int or None

    Notes
    -----
    Case and punctuation are ignored (punctuation separates words), and words
    match whole words only, the longest first ("not entailment" before
    "entailment"). The rules, in order:

    1. After the last answer cue ("answer", "final answer", "label",
       optionally followed by "is"), the label word that comes first.
    2. Direct prompting: the label the response starts with; else the one
       label it mentions, if it mentions only one.
    3. Chain of thought: rule 2 applied to the last non-empty line.

    Anything else (no label word, or several different ones with no cue) is
    unparseable: None.

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import parse_answer
    >>> parse_answer("Not entailment.", ["entailment", "not entailment"])
    1
    >>> parse_answer("I'd say FOO!", ["foo", "bar"])
    0
    >>> parse_answer("Maybe foo, though bar fits too.", ["foo", "bar"]) is None
    True
    >>> parse_answer("I cannot tell.", ["foo", "bar"]) is None
    True
    >>> parse_answer("It praises the film, so it is positive, which maps to bar.\n"
    ...              "Answer: bar", ["foo", "bar"], chain_of_thought=True)
    1
    """
    candidates = sorted(
        ((i, _words(w)) for i, w in enumerate(words)), key=lambda pair: -len(pair[1])
    )
    text = " ".join(_words(response))
    cues = list(_CUE.finditer(text))
    if cues:
        after = tuple(text[cues[-1].end() :].split())
        found = _occurrences(after, candidates)
        if found:
            return found[0][1]
    if not chain_of_thought:
        return _pick(_words(response), candidates)
    lines = [line for line in response.splitlines() if _words(line)]
    return _pick(_words(lines[-1]), candidates) if lines else None


def example_samples() -> list[dict]:
    """The small synthetic binary sentiment dataset shipped with rankstats.

    Forty one-sentence movie reviews (``id``, ``sentence``, ``label``
    positive or negative), generated for rankstats and free of any licence
    (see ``rankstats/datasets/README-verbalizer_example.md``).

    Examples
    --------
    >>> from rankstats_collectors.prompts.verbalizer import example_samples
    >>> samples = example_samples()
    >>> len(samples), samples[0]["label"] in ("positive", "negative")
    (40, True)
    """
    path = resources.files("rankstats.datasets").joinpath("verbalizer_example.jsonl")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
