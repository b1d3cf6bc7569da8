r"""Minimal template edits: which tiny wording changes move which models.

Two templates of a task that differ by a word or a punctuation mark should
rank the models alike; Mizrahi et al. (2024, tables 5 and 12, figure 7)
show that they often do not. :func:`minimal_edits` finds every such pair in
a cube, names its edit (``excludes → lacks``, ``'.' → ':'``, ``+ 'using'``),
gives each model's score difference and, where the cube has per-sample
correctness, a corrected McNemar test of it; :func:`edit_rules` aggregates
the differences per edit across pairs and tasks; :func:`largest_edits` lists
the largest effects.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .._kernels import edits as _ke
from .._kernels.multitest import ADJUST_METHODS, adjust_last
from .._kernels.ranking import check_choice
from .._kernels.significance import MCNEMAR_METHODS
from .._xr import mean_over
from ..errors import DimensionError, OptionError
from ..validation import score_kind_of

__all__ = ["describe_edit", "edit_pairs", "edit_rules", "largest_edits", "minimal_edits"]

_CUBE_DIMS = ("model", "task", "template", "sample")
_FAMILY_LABELS = ("model", "task")


def _check_distances(max_distance, min_distance) -> tuple[int, int]:
    for name, value in (("max_distance", max_distance), ("min_distance", min_distance)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise OptionError(f"{name} must be a whole number >= 0, not {value!r}")
    if min_distance > max_distance:
        raise OptionError(f"min_distance={min_distance} exceeds max_distance={max_distance}")
    return int(max_distance), int(min_distance)


def _is_text(value) -> bool:
    return isinstance(value, str) and value != ""


def edit_pairs(texts, groups=None, *, max_distance=1, unit="tokens", min_distance=1):
    r"""Pairs of texts within a small edit distance, without comparing every pair.

    Parameters
    ----------
    texts : sequence of str
        The templates. Empty strings and non-strings (padding) are never paired.
    groups : sequence of int or str, optional
        Only texts of the same group are compared (e.g. the task). Default:
        one group.
    max_distance : int, default 1
        The largest Levenshtein distance kept.
    unit : {"tokens", "characters"}
        What an edit inserts, deletes or substitutes. Tokens are words
        (``doesn't`` is one), punctuation marks (each its own token), line
        breaks, and placeholders together with their quotes (``"{word}"``
        is one token, so re-quoting a field is a single substitution).
    min_distance : int, default 1
        The smallest distance kept; 0 also keeps texts that are the same
        token for token.

    Returns
    -------
    pandas.DataFrame
        ``first``, ``second`` (positions in ``texts``, ``first < second``),
        ``distance``; ``attrs["candidates"]`` is the number of pairs whose
        distance was computed and ``attrs["possible"]`` the number of pairs
        within groups.

    Notes
    -----
    Blocking, then verification (Chaudhuri, Ganti & Kaushik 2006): every
    token is keyed by its occurrence number within its text, making each
    text a set; a pair within distance d shares at least
    :math:`\max(|A|, |B|) - d` keys. Ordering each group's keys from
    rarest to commonest, such a pair shares a key among the first d + 1 of
    each text (prefix filtering); only those keys are indexed (an inverted
    index of rare tokens), and texts of at most d tokens share one extra
    key. Candidates whose lengths differ by more than d drop out; the rest
    get a banded Levenshtein distance (only diagonals within d), computed
    for all candidates at once with NumPy. The result equals comparing
    every pair.

    References
    ----------
    .. [1] Chaudhuri, S., Ganti, V., & Kaushik, R. (2006). A primitive
       operator for similarity joins in data cleaning. ICDE.

    Examples
    --------
    >>> from rankstats.analyses.edits import edit_pairs
    >>> texts = ["Write a word that excludes the letter {x}.",
    ...          "Write a word that lacks the letter {x}.",
    ...          "Write a word that lacks the letter {x}",
    ...          "Name a fruit."]
    >>> edit_pairs(texts).to_dict("list")
    {'first': [0, 1], 'second': [1, 2], 'distance': [1, 1]}
    >>> edit_pairs(texts, max_distance=2).to_dict("list")
    {'first': [0, 0, 1], 'second': [1, 2, 2], 'distance': [1, 2, 1]}
    """
    max_distance, min_distance = _check_distances(max_distance, min_distance)
    check_choice("unit", unit, _ke.UNITS)
    texts = list(texts)
    if groups is None:
        group_codes = np.zeros(len(texts), dtype=np.int64)
    else:
        groups = list(groups)
        if len(groups) != len(texts):
            raise OptionError(f"edit_pairs: {len(groups)} groups for {len(texts)} texts")
        group_codes = pd.factorize(pd.Series(groups, dtype=object))[0].astype(np.int64)
    used = np.array([_is_text(t) for t in texts], dtype=bool)
    where = np.nonzero(used)[0]
    codes, lengths, _ = _ke.encode([texts[k] for k in where], unit)
    first, second = _ke.candidate_pairs(codes, lengths, group_codes[where], max_distance)
    distance = _ke.banded_levenshtein(
        codes[first], codes[second], lengths[first], lengths[second], max_distance
    )
    keep = (distance >= min_distance) & (distance <= max_distance)
    out = pd.DataFrame(
        {"first": where[first[keep]], "second": where[second[keep]], "distance": distance[keep]}
    )
    sizes = np.bincount(group_codes[where]) if len(where) else np.zeros(0, dtype=np.int64)
    out.attrs = {"candidates": len(first), "possible": int((sizes * (sizes - 1) // 2).sum())}
    return out


def _show(text: str, quoted: bool) -> str:
    return repr(text) if quoted else text


def _render(hunks) -> str:
    parts = []
    for before, after in hunks:
        if not before:
            parts.append(f"+ {_show(after, True)}")
        elif not after:
            parts.append(f"- {_show(before, True)}")
        else:
            quoted = not (_ke.wordlike(before) and _ke.wordlike(after))
            parts.append(f"{_show(before, quoted)} → {_show(after, quoted)}")
    return "; ".join(parts)


def _edit_hunks(a: str, b: str, tokens_a=None, tokens_b=None) -> tuple[tuple[str, str], ...]:
    """The token edits turning ``a`` into ``b`` as ``(before, after)`` text spans."""
    tokens_a = _ke.tokenize(a) if tokens_a is None else tokens_a
    tokens_b = _ke.tokenize(b) if tokens_b is None else tokens_b
    out = []
    for i1, i2, j1, j2 in _ke.hunks([t for t, _, _ in tokens_a], [t for t, _, _ in tokens_b]):
        before = a[tokens_a[i1][1] : tokens_a[i2 - 1][2]] if i2 > i1 else ""
        after = b[tokens_b[j1][1] : tokens_b[j2 - 1][2]] if j2 > j1 else ""
        out.append((before, after))
    return tuple(out)


def _name_hunks(a: str, b: str, hunks) -> str:
    if hunks:
        return _render(hunks)
    return "(identical)" if a == b else "(whitespace)"


def describe_edit(a: str, b: str) -> str:
    """The edit turning template ``a`` into ``b``, as a readable rule.

    Parameters
    ----------
    a, b : str
        Two templates.

    Returns
    -------
    str
        One part per run of consecutive token edits, joined by ``"; "``:
        ``before → after`` for a substitution (quoted unless both sides are
        words or placeholders), ``+ 'text'`` for an insertion, ``- 'text'``
        for a deletion; ``(whitespace)`` when only spacing differs and
        ``(identical)`` when nothing does.

    Notes
    -----
    The texts are compared token by token (see :func:`edit_pairs`), after
    the longest common prefix and suffix, with a minimal Levenshtein
    alignment; each part quotes the original text of its span. Placeholders
    carry their quotes, so ``{word}`` and ``"{word}"`` differ by one
    substitution.

    Examples
    --------
    >>> from rankstats.analyses.edits import describe_edit
    >>> describe_edit('Write a word that excludes the letter "{letter}".',
    ...               'Write a word that lacks the letter "{letter}".')
    'excludes → lacks'
    >>> describe_edit("Create a word that does not include the letter {x}.",
    ...               "Create a word that does not include the letter {x}:")
    "'.' → ':'"
    >>> describe_edit("Write a word without the letter {x}.",
    ...               "Write a word without using the letter {x}.")
    "+ 'using'"
    >>> describe_edit("Sentence ending in {word}.", 'Sentence ending in "{word}".')
    '{word} → "{word}"'
    >>> describe_edit("Is {q} true?", "Q: Is {q} true")
    "+ 'Q:'; - '?'"
    """
    return _name_hunks(a, b, _edit_hunks(a, b))


def _check_cube(cube) -> xr.DataArray:
    if not isinstance(cube, xr.Dataset) or "score" not in cube.data_vars:
        raise DimensionError(
            "minimal_edits: needs a score cube (an xarray Dataset with a 'score' variable)"
        )
    score = cube["score"]
    extra = [d for d in score.dims if d not in _CUBE_DIMS]
    missing = [d for d in ("model", "task", "template") if d not in score.dims]
    if extra or missing:
        raise DimensionError(
            "minimal_edits: the score must have the dims model, task, template and optionally "
            "sample; "
            + "; ".join(
                filter(
                    None,
                    [
                        "missing " + ", ".join(missing) if missing else "",
                        "unexpected " + ", ".join(extra) if extra else "",
                    ],
                )
            )
        )
    if "template_text" not in cube.coords:
        raise DimensionError(
            "minimal_edits: the cube has no 'template_text' coordinate "
            "(task, template): the templates' wording is needed"
        )
    return score


def _orient(natural):
    """Whether to swap each pair so that every pair of an edit reads the same way.

    An edit and its reverse (``a → b``, ``b → a``) are one edit. It reads as
    an insertion when it only inserts or only deletes, else the way most of
    its pairs go in template order (ties: the alphabetically first way).
    """
    reverse = [tuple((after, before) for before, after in h) for h in natural]
    key = [min(h, r) for h, r in zip(natural, reverse, strict=True)]
    numbers: dict = {}
    codes = np.fromiter(
        (numbers.setdefault(k, len(numbers)) for k in key), dtype=np.int64, count=len(key)
    )
    uniques = list(numbers)
    forward = np.array([h == k for h, k in zip(natural, key, strict=True)], dtype=bool)
    n_forward = np.bincount(codes, weights=forward, minlength=len(uniques))
    n_reverse = np.bincount(codes, weights=~forward, minlength=len(uniques))
    insertion = np.array(
        [bool(k) and all(before == "" for before, _ in k) for k in uniques], dtype=bool
    )
    deletion = np.array(
        [bool(k) and all(after == "" for _, after in k) for k in uniques], dtype=bool
    )
    keep_key = np.where(insertion, True, np.where(deletion, False, n_forward >= n_reverse))
    return forward != keep_key[codes]


def _family_labels(family) -> tuple[str, ...]:
    labels = (family,) if isinstance(family, str) else tuple(family)
    for label in labels:
        check_choice("family", label, _FAMILY_LABELS)
    return labels


def _families(family, model_count, task_codes):
    """Family number of every (model, pair) test."""
    labels = _family_labels(family)
    pairs = len(task_codes)
    model_part = np.arange(model_count)[:, None] if "model" in labels else np.zeros((1, 1))
    task_part = task_codes[None, :] if "task" in labels else np.zeros((1, 1))
    width = int(task_codes.max(initial=0)) + 1
    number = (model_part * width + task_part).astype(np.int64)
    return np.broadcast_to(number, (model_count, pairs)), ",".join(labels) or "all"


def _adjust_by_family(pvalue, families, correction):
    """Adjust the p-values of every family at once (a NaN-padded family per row)."""
    flat, groups = pvalue.reshape(-1), families.reshape(-1)
    codes, uniques = pd.factorize(groups)
    if not len(uniques):
        return np.full_like(pvalue, np.nan)
    position = np.zeros(len(flat), dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    position[order] = _ke._within_group_index(codes[order])
    table = np.full((len(uniques), int(position.max()) + 1), np.nan)
    table[codes, position] = flat
    adjusted = adjust_last(table, correction)
    return adjusted[codes, position].reshape(pvalue.shape)


def _binary(score: xr.DataArray, cube) -> bool:
    if "score_kind" in cube.attrs:
        return score_kind_of(cube) == "binary"
    values = score.values
    seen = values[~np.isnan(values)]
    return bool(np.isin(seen, (0.0, 1.0)).all())


def minimal_edits(
    cube,
    *,
    max_distance=1,
    unit="tokens",
    min_distance=1,
    method="exact",
    p_adjust="holm",
    family=(),
) -> xr.Dataset:
    r"""Every pair of templates of a task within a small edit, and what it does to each model.

    Parameters
    ----------
    cube : xarray.Dataset
        A score cube with the coordinate ``template_text(task, template)``;
        with a ``sample`` dimension and binary scores, each pair is also
        tested per model with McNemar's test.
    max_distance, unit, min_distance
        Which pairs count as minimal edits: see :func:`edit_pairs`.
    method : {"exact", "midp", "chi2", "chi2_cc"}
        McNemar's test (:func:`rankstats.mcnemar`); the mid-p test is less
        conservative than the exact one.
    p_adjust : {"holm", "bh", "by", "bonferroni", "none"}
        Multiple-testing adjustment (:func:`rankstats.adjust_pvalues`):
        Holm's or Bonferroni's control of the family-wise error,
        Benjamini–Hochberg's or Benjamini–Yekutieli's control of the false
        discovery rate, or none.
    family : str or sequence of str, default ()
        What splits the tests into separately corrected families: ``()``
        one family of every (model, pair) test, ``"model"`` one per model,
        ``"task"`` one per task, ``("model", "task")`` one per model and task.

    Returns
    -------
    xarray.Dataset
        Over ``pair`` (coordinates ``task``, ``template`` and ``template_b``
        positions, ``template_id``, ``template_id_b``, ``text``, ``text_b``,
        ``distance`` and ``rule``) and ``model``: ``score``, ``score_b`` and
        ``difference`` = ``score_b - score``. With samples: ``pvalue``,
        ``pvalue_adjusted``, ``b`` (samples right under ``template`` only),
        ``c`` (right under ``template_b`` only), ``n_samples`` (scored under
        both) and ``n_dropped`` (scored under one of the two only: left out
        of the test by pairwise deletion). The attribute ``test`` says which
        test ran, or why none could.

    Notes
    -----
    Pairs are found by :func:`edit_pairs` (blocking on length and shared
    tokens, then a banded edit distance), and their edits named by
    :func:`describe_edit`, always on tokens. An edit and its reverse are the
    same edit: every pair is oriented so that its rule reads one way for
    all its pairs (an insertion rather than a deletion; otherwise the way
    most pairs go in the cube's template order), and ``difference`` follows
    that orientation.

    McNemar's test compares the paired per-sample correctness of the two
    templates, with pairwise deletion of samples missing on one side (a
    sample missing on both is padding); a pair with a model missing
    altogether is not tested and stays out of the family. A cube of
    aggregated scores (no ``sample`` dimension), or of non-binary
    per-sample scores, admits no such test: the p-value variables are
    absent and ``attrs["test"]`` says why, rather than testing the
    aggregated accuracies as if they were independent samples.

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of what art? A call for multi-prompt LLM
       evaluation. TACL, 12. Tables 5 and 12, figure 7.
    .. [2] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika, 12(2).

    See Also
    --------
    edit_rules : the differences averaged per edit.
    largest_edits : the largest effects as a table.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.edits import minimal_edits
    >>> texts = {"p1": "Write a word that excludes the letter {x}.",
    ...          "p2": "Write a word that lacks the letter {x}.",
    ...          "p3": "Name a word without {x}"}
    >>> scores = {"m1": [0.54, 0.12, 0.3], "m2": [0.19, 0.81, 0.5]}
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": p, "template_text": texts[p], "score": s}
    ...      for m, row in scores.items() for p, s in zip(texts, row)])
    >>> edits = minimal_edits(cube)
    >>> edits.rule.values.tolist(), edits.difference.round(2).values.tolist()
    (['excludes → lacks'], [[-0.42], [0.62]])
    >>> edits.attrs["test"].startswith("none: the cube has no sample dimension")
    True
    """
    score = _check_cube(cube)
    check_choice("method", method, MCNEMAR_METHODS)
    check_choice("p_adjust", p_adjust, ADJUST_METHODS)
    _family_labels(family)
    texts = cube["template_text"].transpose("task", "template")
    grid = texts.values
    n_tasks, n_templates = grid.shape
    found = edit_pairs(
        grid.reshape(-1),
        np.repeat(np.arange(n_tasks), n_templates),
        max_distance=max_distance,
        unit=unit,
        min_distance=min_distance,
    )
    task_index = found["first"].to_numpy() // max(n_templates, 1)
    first = found["first"].to_numpy() % max(n_templates, 1)
    second = found["second"].to_numpy() % max(n_templates, 1)
    flat = grid.reshape(-1)
    # naming each pair's edit is string work, one pair at a time
    tokens = {}
    for k in np.unique(found[["first", "second"]].to_numpy()):
        tokens[k] = _ke.tokenize(flat[k])
    natural = [
        _edit_hunks(flat[i], flat[j], tokens[i], tokens[j])
        for i, j in zip(found["first"], found["second"], strict=True)
    ]
    swap = _orient(natural) if natural else np.zeros(0, dtype=bool)
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    hunks = [
        tuple((after, before) for before, after in h) if s else h
        for h, s in zip(natural, swap, strict=True)
    ]
    a_text = grid[task_index, first] if len(first) else np.zeros(0, dtype=object)
    b_text = grid[task_index, second] if len(first) else np.zeros(0, dtype=object)
    rules = [_name_hunks(a, b, h) for a, b, h in zip(a_text, b_text, hunks, strict=True)]

    per_template = mean_over(score, "sample") if "sample" in score.dims else score
    pick = {
        "task": xr.DataArray(task_index, dims="pair"),
        "template": xr.DataArray(first, dims="pair"),
    }
    pick_b = {"task": pick["task"], "template": xr.DataArray(second, dims="pair")}
    strip = lambda array: array.reset_coords(drop=True).transpose("model", "pair", ...)  # noqa: E731
    score_a = strip(per_template.isel(pick)).astype(float)
    score_b = strip(per_template.isel(pick_b)).astype(float)
    ids = (
        cube["template_id"].transpose("task", "template").values
        if "template_id" in cube.coords
        else np.full(grid.shape, "", dtype=object)
    )
    task_labels = cube["task"].values
    pair_coords = {
        "task": ("pair", np.asarray(task_labels[task_index], dtype=object)),
        "template": ("pair", first.astype(np.int64)),
        "template_b": ("pair", second.astype(np.int64)),
        "template_id": ("pair", np.asarray(ids[task_index, first], dtype=object)),
        "template_id_b": ("pair", np.asarray(ids[task_index, second], dtype=object)),
        "text": ("pair", np.asarray(a_text, dtype=object)),
        "text_b": ("pair", np.asarray(b_text, dtype=object)),
        "distance": ("pair", found["distance"].to_numpy().astype(np.int64)),
        "rule": ("pair", np.asarray(rules, dtype=object)),
    }
    model_coords = {
        name: coord for name, coord in cube["score"].coords.items() if coord.dims == ("model",)
    }
    out = xr.Dataset(
        {"score": score_a, "score_b": score_b, "difference": score_b - score_a},
        coords={**model_coords, "pair": np.arange(len(first)), **pair_coords},
    )
    attrs = {
        "statistic": "minimal_edits",
        "unit": unit,
        "max_distance": max_distance,
        "min_distance": min_distance,
        "candidates": found.attrs["candidates"],
        "possible_pairs": found.attrs["possible"],
        "metric": str(cube.attrs.get("metric", "score")),
    }
    if "sample" not in score.dims:
        attrs["test"] = (
            "none: the cube has no sample dimension (aggregated scores only), so "
            "no paired test of a pair's difference is possible"
        )
    elif not _binary(score, cube):
        attrs["test"] = (
            "none: the per-sample scores are not binary (0/1), so McNemar's test does not apply"
        )
    else:
        out, family_name = _tested(out, score, pick, pick_b, method, p_adjust, family, task_index)
        attrs.update(
            {
                "test": f"McNemar ({method}), {p_adjust}-corrected",
                "method": method,
                "p_adjust": p_adjust,
                "family": family_name,
            }
        )
    out.attrs = attrs
    return out


def _tested(out, score, pick, pick_b, method, correction, family, task_index):
    import warnings

    from ..errors import RankstatsWarning
    from ..statistics.significance import mcnemar

    x = score.isel(pick).reset_coords(drop=True).transpose("model", "pair", "sample")
    y = score.isel(pick_b).reset_coords(drop=True).transpose("model", "pair", "sample")
    with warnings.catch_warnings():
        # a model absent from a task is untested, not worth a warning per pair
        warnings.simplefilter("ignore", RankstatsWarning)
        test = mcnemar(x, y, dim="sample", method=method, nan_policy="omit")
    pvalue = test["pvalue"].transpose("model", "pair").values
    # a pair none of whose samples both templates observe is untested
    untested = test["n_samples"].transpose("model", "pair").values == 0
    pvalue = np.where(untested, np.nan, pvalue)
    families, family_name = _families(family, out.sizes["model"], task_index)
    adjusted = _adjust_by_family(pvalue, families, correction)
    dims = ("model", "pair")
    return out.assign(
        pvalue=(dims, pvalue),
        pvalue_adjusted=(dims, adjusted),
        b=(dims, test["b"].transpose(*dims).values),
        c=(dims, test["c"].transpose(*dims).values),
        n_samples=(dims, test["n_samples"].transpose(*dims).values),
        n_dropped=(dims, test["n_dropped"].transpose(*dims).values),
    ), family_name


def log_drops(edits: xr.Dataset, cube: xr.Dataset, structure, log, section: str = "edits") -> None:
    """Log what :func:`minimal_edits` leaves out, for the report's minimal-edits section.

    Templates with a score but no wording, tasks with fewer than two worded
    templates, the pairs of a model that lacks a score under one of their
    templates, the pairs no sample of which both templates score (untested),
    and the samples a pair's McNemar test leaves out (pairwise deletion).
    ``structure`` and ``log`` are the report's
    :class:`~rankstats.analyses._left_out.Structure` and ``Log``.
    """
    st = structure
    texts = cube["template_text"].transpose("task", "template").values
    worded = (
        np.vectorize(_is_text, otypes=[bool])(texts)
        if texts.size
        else np.zeros(texts.shape, dtype=bool)
    )
    log.templates(
        section,
        st,
        st.scored & ~worded,
        "no wording (template_text is empty): never compared with another template",
    )
    for t in np.flatnonzero((st.n_models > 0) & ((st.scored & worded).sum(1) < 2)):
        log.task(
            section,
            st.tasks[t],
            "fewer than two templates with a score and a wording: no pair to compare",
        )
    if not edits.sizes["pair"]:
        return
    task_of = pd.Index(st.tasks).get_indexer(edits["task"].values.astype(str))
    labels = np.char.add(
        np.char.add(edits["template_id"].values.astype(str), " ~ "),
        edits["template_id_b"].values.astype(str),
    )
    present = st.present.T[:, task_of]  # (model, pair): the model has scores on the task
    lacking = present & np.isnan(edits["difference"].transpose("model", "pair").values)
    _log_pairs(
        log,
        section,
        st,
        lacking,
        task_of,
        labels,
        "no score from this model under one of the two templates: no difference, left "
        "out of the largest effects and the edit means",
    )
    if "n_samples" not in edits:
        return
    untested = present & ~lacking & (edits["n_samples"].transpose("model", "pair").values == 0)
    _log_pairs(
        log,
        section,
        st,
        untested,
        task_of,
        labels,
        "no sample scored under both templates: not tested",
    )
    score = cube["score"].transpose("model", "task", "template", "sample")
    seen = [
        np.asarray(
            score.isel(
                task=xr.DataArray(task_of, dims="pair"),
                template=xr.DataArray(edits[name].values, dims="pair"),
            )
            .notnull()
            .transpose("model", "pair", "sample")
            .values
        )
        for name in ("template", "template_b")
    ]
    tested = edits["n_samples"].transpose("model", "pair").values > 0
    one_side = (seen[0] ^ seen[1]) & tested[..., None]  # (model, pair, sample)
    by_task = np.zeros((edits.sizes["pair"], len(st.tasks)))
    by_task[np.arange(edits.sizes["pair"]), task_of] = 1.0
    dropped = np.einsum("mps,pt->mts", one_side.astype(float), by_task) > 0
    ids = (
        np.asarray(cube["sample_id"].transpose("task", "sample").values, dtype=object).astype(str)
        if "sample_id" in cube.coords
        else np.broadcast_to(
            np.arange(score.sizes["sample"]).astype(str), (len(st.tasks), score.sizes["sample"])
        )
    )
    for m, t in np.argwhere(dropped.any(-1)):
        log.add(
            section,
            "samples",
            ids[t][dropped[m, t]].tolist(),
            "scored under only one template of a pair: left out of that pair's McNemar "
            "test by pairwise deletion ('samples left out' counts them per pair)",
            task=st.tasks[t],
            model=st.models[m],
        )


def _log_pairs(log, section, st, mask, task_of, labels, why) -> None:
    """One row per model and task: the pairs where ``mask`` (model, pair) holds."""
    groups: dict = {}
    for m, p in np.argwhere(mask):
        groups.setdefault((m, task_of[p]), []).append(labels[p])
    for (m, t), which in groups.items():
        log.add(section, "template pairs", which, why, task=st.tasks[t], model=st.models[m])


def edit_rules(edits: xr.Dataset, *, alpha: float = 0.05) -> xr.Dataset:
    """Each edit's mean effect per model, over its pairs and tasks (figure 7 of the paper).

    Parameters
    ----------
    edits : xarray.Dataset
        The result of :func:`minimal_edits`.
    alpha : float, default 0.05
        Level at which an adjusted p-value counts as significant.

    Returns
    -------
    xarray.Dataset
        Over ``rule`` (most tasks first, then most pairs) and ``model``:
        ``mean_difference`` (NaN-skipping mean of ``difference`` over the
        rule's pairs), ``n_pairs`` and ``n_tasks`` (per rule), and with tests
        ``n_significant`` (pairs whose adjusted p-value is below ``alpha``,
        per model) and ``n_tested``.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.edits import edit_rules, minimal_edits
    >>> texts = ["Write a word that excludes {x}.", "Write a word that lacks {x}.",
    ...          "Name a word that excludes {x}.", "Name a word that lacks {x}."]
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": k, "template_text": text, "score": s}
    ...      for k, (text, s) in enumerate(zip(texts, [0.5, 0.25, 0.5, 0.75]))])
    >>> rules = edit_rules(minimal_edits(cube))
    >>> rules.rule.values.tolist()
    ['excludes → lacks', 'Write → Name']
    >>> rules.mean_difference.sel(model="m").values.tolist(), rules.n_pairs.values.tolist()
    ([0.0, 0.25], [2, 2])
    """
    codes, names = pd.factorize(pd.Series(edits["rule"].values, dtype=object))
    n_rules = len(names)
    difference = edits["difference"].transpose("model", "pair").values
    observed = ~np.isnan(difference)
    one_hot = np.zeros((len(codes), n_rules))
    one_hot[np.arange(len(codes)), codes] = 1.0
    total = np.where(observed, difference, 0.0) @ one_hot
    count = observed.astype(float) @ one_hot
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, np.nan)
    # differences that cancel leave float residue (1e-17) that would print as an effect
    mean = np.round(mean, 12)
    n_pairs = one_hot.sum(axis=0).astype(np.int64)
    task_codes = pd.factorize(pd.Series(edits["task"].values, dtype=object))[0]
    distinct = (
        np.unique(np.stack([codes, task_codes], axis=1), axis=0)
        if len(codes)
        else np.zeros((0, 2), dtype=np.int64)
    )
    n_tasks = np.bincount(distinct[:, 0], minlength=n_rules).astype(np.int64)
    order = np.lexsort((np.arange(n_rules), -n_pairs, -n_tasks))
    model_coords = {name: coord for name, coord in edits.coords.items() if coord.dims == ("model",)}
    data = {
        "mean_difference": (("model", "rule"), mean[:, order]),
        "n_pairs": ("rule", n_pairs[order]),
        "n_tasks": ("rule", n_tasks[order]),
    }
    if "pvalue_adjusted" in edits:
        adjusted = edits["pvalue_adjusted"].transpose("model", "pair").values
        tested = ~np.isnan(adjusted)
        data["n_significant"] = (
            ("model", "rule"),
            ((tested & (adjusted < alpha)).astype(float) @ one_hot)[:, order].astype(np.int64),
        )
        data["n_tested"] = (
            ("model", "rule"),
            (tested.astype(float) @ one_hot)[:, order].astype(np.int64),
        )
    rules = np.asarray(names, dtype=object)[order]
    return xr.Dataset(
        data,
        coords={**model_coords, "rule": rules},
        attrs={**edits.attrs, "statistic": "edit_rules", "alpha": alpha},
    )


def largest_edits(
    edits: xr.Dataset, top: int | None = 20, *, by: str = "difference", rule: str | None = None
) -> pd.DataFrame:
    """The largest effects of minimal edits, one row per model and pair (table 5 of the paper).

    Parameters
    ----------
    edits : xarray.Dataset
        The result of :func:`minimal_edits`.
    top : int or None, default 20
        How many rows; None keeps every (model, pair) with a difference.
    by : {"difference", "pvalue"}
        Order by the absolute difference (largest first) or by the adjusted
        p-value (smallest first; needs tests).
    rule : str, optional
        Keep only the pairs of this edit.

    Returns
    -------
    pandas.DataFrame
        Columns ``edit``, ``model``, ``task``, ``template``, ``text``,
        ``score``, ``template_b``, ``text_b``, ``score_b``, ``difference``
        and, with tests, ``pvalue``, ``pvalue_adjusted`` and ``n_dropped``
        (the samples the test left out); ``template`` is the template's id.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.edits import largest_edits, minimal_edits
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": p, "template_text": text, "score": s}
    ...      for m, row in {"m1": [0.54, 0.12], "m2": [0.19, 0.81]}.items()
    ...      for p, text, s in zip(["a", "b"], ["Use {x}.", "Use {x}:"], row)])
    >>> table = largest_edits(minimal_edits(cube))
    >>> table[["edit", "model", "score", "score_b", "difference"]].round(2)
              edit model  score  score_b  difference
    0  '.' → ':'    m2   0.19     0.81        0.62
    1  '.' → ':'    m1   0.54     0.12       -0.42
    """
    check_choice("by", by, ("difference", "pvalue"))
    if by == "pvalue" and "pvalue_adjusted" not in edits:
        raise OptionError(
            f"largest_edits: by='pvalue' needs tests, and this result has none "
            f"({edits.attrs.get('test', 'no test')})"
        )
    if rule is not None:
        edits = edits.isel(pair=np.asarray(edits["rule"].values == rule, dtype=bool))
    names = ["score", "score_b", "difference"]
    names += [n for n in ("pvalue", "pvalue_adjusted", "n_dropped") if n in edits]
    dims = ("model", "pair")
    values = {n: edits[n].transpose(*dims).values.reshape(-1) for n in names}
    n_models, n_pairs = edits.sizes["model"], edits.sizes["pair"]
    pair = np.tile(np.arange(n_pairs), n_models)
    frame = pd.DataFrame(
        {
            "edit": edits["rule"].values[pair],
            "model": np.repeat(edits["model"].values, n_pairs),
            "task": edits["task"].values[pair],
            "template": edits["template_id"].values[pair],
            "text": edits["text"].values[pair],
            "score": values["score"],
            "template_b": edits["template_id_b"].values[pair],
            "text_b": edits["text_b"].values[pair],
            **{n: values[n] for n in names[1:]},
        }
    )
    frame = frame[~np.isnan(frame["difference"].to_numpy())]
    if by == "difference":
        key = -np.abs(frame["difference"].to_numpy())
    else:
        key = np.where(np.isnan(frame["pvalue_adjusted"]), np.inf, frame["pvalue_adjusted"])
    frame = frame.iloc[np.argsort(key, kind="stable")]
    if top is not None:
        frame = frame.head(int(top))
    return frame.reset_index(drop=True)
