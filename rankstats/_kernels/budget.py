r"""Budgeted estimators of AvgP and MaxP, simulated over many random trials at once.

Two forms of input, both with templates on the last axis but one:

* per-sample scores ``(..., template, sample)``: a trial uses the observed
  score of each (template, sample) cell it asks for;
* per-template scores ``(..., template)`` with a number of samples per slice:
  a trial draws each sample's outcome as Bernoulli(p) of the template that
  answers it (the released accuracies of a study carry no per-sample scores).

NaN marks padding: a template without any observed score is not in the pool,
a sample without any observed score is not in the task. Everything is
vectorised over the leading axes and the trials; the only Python loops run
over the (few) stages of the search and over chunks of trials.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Working memory per chunk of trials, in bytes.
BUDGET = 64 * 2**20
#: Differences smaller than this count as equal (accuracies are ratios of small integers).
EQUAL = 1e-9


def pools(x: np.ndarray, per_sample: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The templates (and samples) that exist in each slice."""
    if not per_sample:
        return ~np.isnan(x), None
    observed = ~np.isnan(x)
    return observed.any(-1), observed.any(-2)


def template_means(x: np.ndarray, per_sample: bool) -> np.ndarray:
    """Each template's score over all its observed samples (NaN where none)."""
    if not per_sample:
        return x.astype(float)
    observed = ~np.isnan(x)
    count = observed.sum(-1)
    total = np.where(observed, x, 0.0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def masked_mean(values: np.ndarray, mask: np.ndarray, axis: int = -1) -> np.ndarray:
    """Mean of ``values`` where ``mask`` holds, NaN (without a warning) where it never does."""
    count = mask.sum(axis)
    total = np.where(mask, values, 0.0).sum(axis)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _trial_chunks(trials: int, per_trial_bytes: int) -> list[slice]:
    step = max(1, min(trials, BUDGET // max(per_trial_bytes, 1)))
    return [slice(start, min(start + step, trials)) for start in range(0, trials, step)]


def avgp_repetitions(x, *, per_sample: bool, n_samples, repetitions: int, trials: int, rng):
    """Estimates of AvgP by random template assignment, one per trial and repetition.

    A repetition gives every sample of the task one template drawn uniformly
    from the pool and averages the scores. Returns ``(..., trials,
    repetitions)`` estimates.

    For per-template scores the repetition's estimate is drawn exactly: each
    sample is answered by a uniform template and succeeds with that
    template's p, so it succeeds with probability AvgP (the mean p) whatever
    template it got, independently of the other samples, and the estimate is
    Binomial(n, AvgP) / n.
    """
    lead = x.shape[:-2] if per_sample else x.shape[:-1]
    if not per_sample:
        tpool = ~np.isnan(x)
        avgp = masked_mean(x, tpool)
        n = np.broadcast_to(np.asarray(n_samples, dtype=np.int64), lead)
        p = np.where(np.isnan(avgp), 0.0, np.clip(avgp, 0.0, 1.0))
        size = (*lead, trials, repetitions)
        hits = rng.binomial(n[..., None, None], p[..., None, None], size=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            estimate = hits / n[..., None, None]
        return np.where(
            np.isnan(avgp)[..., None, None] | (n[..., None, None] == 0), np.nan, estimate
        )
    tpool, spool = pools(x, per_sample=True)
    n_templates = tpool.sum(-1)
    # the pool's templates first, so a uniform index below n_templates picks from the pool
    order = np.argsort(~tpool, axis=-1, kind="stable")
    flipped = np.swapaxes(x, -1, -2)  # (..., sample, template)
    n_s = x.shape[-1]
    out = np.empty((*lead, trials, repetitions))
    for part in _trial_chunks(
        trials, 8 * 3 * int(np.prod(lead, dtype=np.int64)) * repetitions * n_s
    ):
        count = part.stop - part.start
        u = rng.random((*lead, count, repetitions, n_s))
        top = n_templates[..., None, None, None]
        pick = np.minimum((u * top).astype(np.int64), np.maximum(top - 1, 0))
        template = np.take_along_axis(order[..., None, None, :], pick, axis=-1)
        scores = np.take_along_axis(flipped[..., None, None, :, :], template[..., None], axis=-1)[
            ..., 0
        ]
        used = spool[..., None, None, :] & ~np.isnan(scores)
        out[..., part, :] = masked_mean(scores, used)
    return out


def first_within(errors: np.ndarray, tolerance: float) -> np.ndarray:
    """The first repetition count k (1-based) whose error is below ``tolerance``; NaN if none."""
    inside = np.abs(errors) < tolerance - EQUAL
    reached = inside.any(-1)
    return np.where(reached, inside.argmax(-1) + 1.0, np.nan)


def keep_best(candidates, hits, seen, keep, keys, higher_is_better: bool = True):
    """The ``keep`` best candidates by mean score so far; ties broken by the random ``keys``.

    ``candidates`` ``(..., template)`` bool, ``hits`` and ``seen`` the summed
    scores and the number of scored samples of each template, ``keys``
    uniform numbers of the same shape. A candidate never scored ranks below
    every scored one. Returns the new candidate mask and each template's
    order (position 0 = best).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(
            seen > 0, hits / np.maximum(seen, 1), -np.inf if higher_is_better else np.inf
        )
    # quantise, so that equal means summed in different orders tie
    mean = np.round(mean, 12)
    primary = -mean if higher_is_better else mean
    order = np.lexsort((keys, primary, ~candidates), axis=-1)
    position = np.argsort(order, axis=-1)
    return candidates & (position < keep), order


def best_of(candidates, hits, seen, keys, higher_is_better: bool = True) -> np.ndarray:
    """The index of the best candidate by mean score, ties broken by the random ``keys``.

    Equal to the first entry of :func:`keep_best`'s order, without a full sort.
    """
    sign = 1.0 if higher_is_better else -1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(candidates & (seen > 0), sign * hits / np.maximum(seen, 1), -np.inf)
    mean = np.round(mean, 12)
    top = mean.max(-1, keepdims=True)
    tied = candidates & (mean == top)
    return np.where(tied, keys, -1.0).argmax(-1)


def successive_halving(
    x,
    *,
    per_sample: bool,
    n_samples,
    stages: Sequence[tuple],
    trials: int,
    rng,
    higher_is_better: bool = True,
) -> dict:
    """Simulate the successive-halving search for the best template, over many trials.

    ``stages`` is a sequence of ``(templates, samples)``: stage i scores the
    ``templates`` best templates so far (None: every template still in)
    on ``samples`` new samples (None: every sample left). The samples of a
    trial are a random order of the task's samples, taken stage after stage,
    so no (template, sample) cell is scored twice. The winner is the best
    template of the last stage by its mean over every sample it was scored on.

    Returns ``chosen`` (template index), ``observed`` (its mean over the
    samples it saw) and ``calls`` (cells scored), each ``(..., trials)``.
    """
    lead = x.shape[:-2] if per_sample else x.shape[:-1]
    n_t = x.shape[-2] if per_sample else x.shape[-1]
    tpool, spool = pools(x, per_sample)
    if per_sample:
        n = spool.sum(-1)
        observed = (~np.isnan(x)).astype(float)
        filled = np.where(np.isnan(x), 0.0, x)
    else:
        n = np.broadcast_to(np.asarray(n_samples, dtype=np.int64), lead)
        p = np.where(tpool, np.clip(np.nan_to_num(x), 0.0, 1.0), 0.0)
    chosen = np.empty((*lead, trials), dtype=np.int64)
    score = np.empty((*lead, trials))
    calls = np.empty((*lead, trials))
    per_trial = 8 * 6 * int(np.prod(lead, dtype=np.int64)) * max(n_t, x.shape[-1])
    for part in _trial_chunks(trials, per_trial):
        count = part.stop - part.start
        candidates = np.broadcast_to(tpool[..., None, :], (*lead, count, n_t)).copy()
        hits = np.zeros((*lead, count, n_t))
        seen = np.zeros((*lead, count, n_t))
        spent = np.zeros((*lead, count))
        start = np.zeros(lead, dtype=np.int64)
        if per_sample:
            keys = np.where(spool[..., None, :], rng.random((*lead, count, x.shape[-1])), np.inf)
            position = np.argsort(np.argsort(keys, axis=-1), axis=-1)
        for keep, size in stages:
            if keep is not None:
                candidates, _ = keep_best(
                    candidates, hits, seen, keep, rng.random(candidates.shape), higher_is_better
                )
            end = n if size is None else np.minimum(start + size, n)
            if per_sample:
                window = (
                    (position >= start[..., None, None]) & (position < end[..., None, None])
                ).astype(float)
                # (..., trials, sample) @ (..., sample, template): the stage's sums per template
                got = np.matmul(window, np.swapaxes(filled, -1, -2))
                looked = np.matmul(window, np.swapaxes(observed, -1, -2))
            else:
                # no draws for templates out of the race (Binomial(0, p) is 0)
                m = np.where(candidates, (end - start)[..., None, None], 0)
                got = rng.binomial(m, np.broadcast_to(p[..., None, :], candidates.shape))
                looked = m.astype(float)
            hits += np.where(candidates, got, 0.0)
            seen += np.where(candidates, looked, 0.0)
            spent += np.where(candidates, looked, 0.0).sum(-1)
            start = end
        best = best_of(candidates, hits, seen, rng.random(candidates.shape), higher_is_better)
        chosen[..., part] = best
        h = np.take_along_axis(hits, best[..., None], -1)[..., 0]
        s = np.take_along_axis(seen, best[..., None], -1)[..., 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            score[..., part] = np.where(s > 0, h / np.maximum(s, 1), np.nan)
        calls[..., part] = spent
    empty = ~tpool.any(-1)
    score[empty] = np.nan
    calls[empty] = 0.0
    return {"chosen": np.where(empty[..., None], -1, chosen), "observed": score, "calls": calls}


def search_outcome(truth: np.ndarray, chosen: np.ndarray, higher_is_better: bool = True) -> dict:
    """Whether each trial found a best template, and how far its choice falls short.

    ``truth`` ``(..., template)`` the templates' scores over all samples,
    ``chosen`` ``(..., trials)`` indices (-1 where the slice is empty).
    """
    present = ~np.isnan(truth)
    filler = -np.inf if higher_is_better else np.inf
    ranked = np.where(present, truth, filler)
    best = ranked.max(-1) if higher_is_better else ranked.min(-1)
    best = np.where(present.any(-1), best, np.nan)
    picked = np.take_along_axis(truth, np.maximum(chosen, 0), axis=-1)
    picked = np.where(chosen >= 0, picked, np.nan)
    shortfall = np.abs(best[..., None] - picked)
    found = np.where(np.isnan(picked), np.nan, (shortfall <= EQUAL).astype(float))
    return {"best": best, "picked": picked, "found": found, "shortfall": shortfall}


def synthetic_samples(p: np.ndarray, n_samples, correlation: float, rng) -> np.ndarray:
    """Per-sample 0/1 scores with each template's exact accuracy and correlated samples.

    ``p`` is ``(..., template)``, ``n_samples`` the samples per slice. Sample s
    of template t gets the latent value ``sqrt(rho) z_s + sqrt(1 - rho) e_ts``
    (standard normals; ``z_s`` shared by every template, so a hard sample is
    hard under every wording) and template t succeeds on the
    ``round(p_t n)`` samples with the smallest latent values. Returns
    ``(..., template, sample)``, NaN beyond a slice's samples and for
    templates without a score.
    """
    lead, n_t = p.shape[:-1], p.shape[-1]
    n = np.broadcast_to(np.asarray(n_samples, dtype=np.int64), lead)
    width = int(n.max()) if n.size else 0
    inside = np.arange(width) < n[..., None, None]
    latent = np.sqrt(correlation) * rng.standard_normal((*lead, 1, width)) + np.sqrt(
        1.0 - correlation
    ) * rng.standard_normal((*lead, n_t, width))
    order = np.argsort(np.where(inside, latent, np.inf), axis=-1)
    place = np.argsort(order, axis=-1)
    successes = np.rint(np.nan_to_num(np.clip(p, 0.0, 1.0)) * n[..., None])
    scores = (place < successes[..., None]).astype(float)
    return np.where(inside & ~np.isnan(p)[..., None], scores, np.nan)


def item_model_samples(
    p: np.ndarray, n_samples, sample_sd: float, rng, iterations: int = 60
) -> np.ndarray:
    r"""Per-sample 0/1 scores from an item-difficulty model fitted to template accuracies.

    ``p`` is ``(..., template)``, ``n_samples`` the samples per slice. Each
    slice draws difficulties :math:`b_i \sim N(0, \text{sample\_sd}^2)`, shared
    by its templates, and gives template t the ability :math:`\theta_t` for
    which the mean over the slice's samples of
    :math:`\operatorname{logistic}(\theta_t - b_i)` is :math:`p_t` (found by
    Newton's method on the increasing mean; :math:`p_t` of 0 or 1 gives
    every outcome 0 or 1). Outcomes are then Bernoulli of those
    probabilities, independent given the difficulties: a hard sample is
    hard under every template, and a template's expected accuracy is
    :math:`p_t`. Returns ``(..., template, sample)``, NaN beyond a slice's
    samples and for templates without a score.
    """
    lead = p.shape[:-1]
    n = np.broadcast_to(np.asarray(n_samples, dtype=np.int64), lead)
    width = int(n.max()) if n.size else 0
    inside = np.arange(width) < n[..., None, None]  # (..., 1, sample)
    b = sample_sd * rng.standard_normal((*lead, 1, width))
    target = np.clip(np.nan_to_num(p), 0.0, 1.0)
    edge = (target <= 0.0) | (target >= 1.0)
    goal = np.clip(target, 1e-9, 1 - 1e-9)
    count = np.maximum(n, 1)[..., None]
    # start from the probit approximation of the mean of logistic(theta - b)
    theta = np.log(goal / (1 - goal)) * np.sqrt(1 + np.pi * sample_sd**2 / 8)
    for _ in range(iterations):
        q = 1.0 / (1.0 + np.exp(-(theta[..., None] - b)))
        mean = np.where(inside, q, 0.0).sum(-1) / count
        slope = np.where(inside, q * (1 - q), 0.0).sum(-1) / count
        step = np.clip((mean - goal) / np.maximum(slope, 1e-12), -2.0, 2.0)
        theta = theta - step
        if np.max(np.abs(step), initial=0.0) < 1e-10:
            break
    q = 1.0 / (1.0 + np.exp(-(theta[..., None] - b)))
    q = np.where(edge[..., None], np.round(target)[..., None], q)
    scores = (rng.random(q.shape) < q).astype(float)
    return np.where(inside & ~np.isnan(p)[..., None], scores, np.nan)
