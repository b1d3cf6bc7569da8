"""Metrics over ``(..., models, templates)``: MaxP, AvgP, saturation, CPS, divergence."""

from __future__ import annotations

import numpy as np

from .ranking import missing_among_present, warn_nan


def _kept_scores(x, valid, nan_policy, statistic):
    """Scores with padding, invalid templates and (under ``omit``) holes set to NaN.

    Returns ``(scores, poisoned)``; ``poisoned`` marks models whose result is NaN
    under ``propagate`` because a present template has no score for them.
    """
    x = np.asarray(x, dtype=float)
    if valid is not None:
        x = np.where(np.asarray(valid, dtype=bool)[..., None, :], x, np.nan)
    templates_present, models_present, incomplete = missing_among_present(x, nan_policy, statistic)
    keep = models_present[..., :, None] & templates_present[..., None, :]
    poisoned = incomplete if nan_policy == "propagate" else np.zeros_like(incomplete)
    return np.where(keep, x, np.nan), poisoned


def _masked_mean(values, mask, count):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mask, values, 0.0).sum(-1) / count


def prompt_metrics(x, *, valid=None, higher_is_better=True, nan_policy="propagate"):
    """MaxP, AvgP, saturation and CPS of each model over the templates (last axis).

    MaxP is the best template score (the maximum, or the minimum when lower is
    better), AvgP the mean, saturation ``1 - |MaxP - AvgP|`` and
    CPS ``saturation * MaxP``.
    """
    x = np.asarray(x, dtype=float)
    if (valid is None or np.all(valid)) and x.size and not np.isnan(x).any():
        return _complete_metrics(x, higher_is_better)
    scores, poisoned = _kept_scores(x, valid, nan_policy, "prompt metrics")
    observed = ~np.isnan(scores)
    count = observed.sum(-1).astype(float)
    if higher_is_better:
        best = np.where(observed, scores, -np.inf).max(-1, initial=-np.inf)
    else:
        best = np.where(observed, scores, np.inf).min(-1, initial=np.inf)
    undefined = poisoned | (count == 0)
    best = np.where(undefined, np.nan, best)
    average = np.where(undefined, np.nan, _masked_mean(scores, observed, count))
    saturation = 1.0 - np.abs(best - average)
    return {
        "maxp": best,
        "avgp": average,
        "saturation": saturation,
        "cps": saturation * best,
        "n_templates": count,
    }


def _complete_metrics(x, higher_is_better):
    """:func:`prompt_metrics` of scores with every template valid and no score missing.

    The same numbers, without the masks: the mean sums a C-ordered array, as
    the masked mean does.
    """
    best, average = _best(x, higher_is_better), _average(x)
    saturation = 1.0 - np.abs(best - average)
    return {
        "maxp": best,
        "avgp": average,
        "saturation": saturation,
        "cps": saturation * best,
        "n_templates": np.full(x.shape[:-1], float(x.shape[-1])),
    }


def _best(x, higher_is_better):
    return x.max(-1) if higher_is_better else x.min(-1)


def _average(x):
    return np.ascontiguousarray(x).sum(-1) / float(x.shape[-1])


def one_metric(name: str, x, higher_is_better: bool):
    """One metric of :func:`_complete_metrics` (``"maxp"``, ``"avgp"``, ...), computing only it.

    The same operations in the same order, so the same numbers, without the
    metrics the caller does not return.
    """
    if name == "avgp":
        return _average(x)
    best = _best(x, higher_is_better)
    if name == "maxp":
        return best
    saturation = 1.0 - np.abs(best - _average(x))
    return saturation if name == "saturation" else saturation * best


def divergence(x, original, *, valid=None, ddof=1, nan_policy="propagate"):
    """How many standard deviations the original template(s) lie from the paraphrases.

    ``original`` is a boolean ``(..., templates)`` mask. The original score is
    the mean over a task's original templates; the mean and the standard
    deviation (with ``ddof``) are taken over the other templates.
    """
    scores, poisoned = _kept_scores(x, valid, nan_policy, "divergence")
    observed = ~np.isnan(scores)
    original = np.broadcast_to(np.asarray(original, dtype=bool)[..., None, :], scores.shape)
    is_original = observed & original
    is_paraphrase = observed & ~original
    n_original = is_original.sum(-1).astype(float)
    n_paraphrases = is_paraphrase.sum(-1).astype(float)
    original_score = _masked_mean(scores, is_original, n_original)
    paraphrase_mean = _masked_mean(scores, is_paraphrase, n_paraphrases)
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = np.where(is_paraphrase, scores - paraphrase_mean[..., None], 0.0)
        spread = np.sqrt((deviation**2).sum(-1) / (n_paraphrases - ddof))
        z = (original_score - paraphrase_mean) / spread
    model_present = observed.any(-1) & ~poisoned
    no_original = model_present & (n_original == 0)
    too_few = model_present & ~no_original & (n_paraphrases <= ddof)
    constant = model_present & ~no_original & ~too_few & (spread == 0)
    warn_nan("divergence", no_original, "no original template")
    warn_nan("divergence", too_few, f"at most {ddof} paraphrase score(s)")
    warn_nan("divergence", constant, "the paraphrase scores are all equal")
    undefined = ~model_present | no_original | too_few | constant
    nan_if = lambda values: np.where(poisoned, np.nan, values)  # noqa: E731
    return {
        "divergence": np.where(undefined, np.nan, z),
        "original": nan_if(np.where(n_original > 0, original_score, np.nan)),
        "paraphrase_mean": nan_if(np.where(n_paraphrases > 0, paraphrase_mean, np.nan)),
        "paraphrase_std": nan_if(np.where(n_paraphrases > ddof, spread, np.nan)),
        "n_original": n_original,
        "n_paraphrases": n_paraphrases,
    }
