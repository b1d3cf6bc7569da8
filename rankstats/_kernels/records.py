r"""Kernels of the record audit: the record chain, its selective exact tests, detectable gaps.

A leaderboard's history is a sequence of submissions with dates. A step
sets a new record when the best submission of a date scores strictly above
every earlier one. Each step is tested against the record it replaced by an
exact paired test conditioned on the event that made it a step (see
:func:`selection_bounds`), so a step is not significant merely because it
was selected for scoring higher.

Everything here is NumPy over arrays of models ``(M,)``, items ``(M, N)``
and steps ``(K,)``; no loop runs over models, items or steps.
"""

from __future__ import annotations

import numpy as np

#: Scores closer than this (relative to the largest absolute score) count as tied.
RELATIVE_TIE = 1e-9
#: Sign patterns drawn per block of the Monte Carlo test (bounds the memory used).
BLOCK = 2048


def tolerance(scores) -> float:
    """The tie tolerance for ``scores``: :data:`RELATIVE_TIE` times their scale."""
    scores = np.asarray(scores, dtype=float)
    scale = np.nanmax(np.abs(scores)) if scores.size else 1.0
    return RELATIVE_TIE * max(float(scale), 1.0)


def record_chain(scores, date_code, tol):
    r"""The record-setting steps of a dated history.

    Parameters
    ----------
    scores : (M,) numpy.ndarray
        Each model's score, higher is better.
    date_code : (M,) numpy.ndarray of int
        Each model's date as an integer code, increasing with the date
        (equal codes: the same date).
    tol : float
        Scores closer than ``tol`` are tied.

    Returns
    -------
    dict
        ``first``: the first record (the best of the first date);
        ``previous``, ``new``: ``(K,)`` model positions of each step's
        replaced record and new record.

    Notes
    -----
    Same-date submissions are one step: the best of the date (ties: the one
    listed first) is the date's challenger; it sets a record when it scores
    more than ``tol`` above the best of every earlier date.
    """
    scores = np.asarray(scores, dtype=float)
    codes = np.asarray(date_code)
    m = scores.size
    position = np.arange(m)
    # best of each date: by date, then score descending (ties within tol alike), then position
    order = np.lexsort((position, -np.round(scores / tol), codes))
    head = np.r_[True, codes[order][1:] != codes[order][:-1]]
    best = order[head]  # one model per date, dates ascending
    value = scores[best]
    earlier = np.r_[-np.inf, np.maximum.accumulate(value)[:-1]]
    is_record = value > earlier + tol
    is_record[0] = True
    records = best[is_record]
    return {"first": int(records[0]), "previous": records[:-1], "new": records[1:]}


def selection_bounds(scores, date_code, previous, new, tol):
    r"""The event that made each step a step, as bounds on the new record's margin.

    Parameters
    ----------
    scores : (M,) numpy.ndarray
        Each model's score.
    date_code : (M,) numpy.ndarray of int
        Date codes as in :func:`record_chain`.
    previous, new : (K,) numpy.ndarray of int
        Each step's replaced and new record.
    tol : float
        The tie tolerance.

    Returns
    -------
    dict
        ``(K,)`` arrays ``lower``, ``lower_strict``, ``upper``,
        ``upper_strict``: the step occurs exactly when the margin
        :math:`D = S_B - S_A` of new record B over replaced record A satisfies
        ``lower < D`` (``<=`` where ``lower_strict`` is False) and ``D < upper``
        (``<=`` where ``upper_strict`` is False), every other model's score
        and :math:`C = S_A + S_B` held fixed.

    Notes
    -----
    Swapping the two models' outcomes on items leaves :math:`C` and every
    other score fixed and moves :math:`S_A = (C - D)/2`,
    :math:`S_B = (C + D)/2`. The step (A replaced by B) occurs when

    - B beats A: :math:`D > 0`;
    - B is the best of its date: :math:`S_B > G_s` (the date's models listed
      before B) and :math:`S_B \ge G_w` (listed after), so
      :math:`D > 2G_s - C`, :math:`D \ge 2G_w - C`;
    - A set the record and held it until B's date: :math:`S_A > M_s`, the
      best model of an earlier date than A's or of A's date listed before A,
      and :math:`S_A \ge M_w`, the best of A's date listed after A or dated
      between A and B; so :math:`D < C - 2M_s`, :math:`D \le C - 2M_w`.

    Ties within ``tol`` are applied by the caller (see :func:`selective_pvalues`).
    """
    scores = np.asarray(scores, dtype=float)
    codes = np.asarray(date_code)
    previous, new = np.asarray(previous, dtype=int), np.asarray(new, dtype=int)
    m = scores.size
    position = np.arange(m)[None, :]
    code_a, code_b = codes[previous][:, None], codes[new][:, None]
    pos_a, pos_b = previous[:, None], new[:, None]
    same_a, same_b = codes[None, :] == code_a, codes[None, :] == code_b
    before_a = (codes[None, :] < code_a) | (same_a & (position < pos_a))
    after_a = (same_a & (position > pos_a)) | (
        (codes[None, :] > code_a) & (codes[None, :] < code_b)
    )
    mates_before = same_b & (position < pos_b)
    mates_after = same_b & (position > pos_b)

    def most(mask):
        return np.where(mask, scores[None, :], -np.inf).max(1, initial=-np.inf)

    total = scores[previous] + scores[new]
    g_strict, g_weak = 2 * most(mates_before) - total, 2 * most(mates_after) - total
    m_strict, m_weak = total - 2 * most(before_a), total - 2 * most(after_a)
    # the tighter of each pair of bounds, strict where the strict one binds (ties: strict)
    lower = np.maximum(np.maximum(g_strict, 0.0), g_weak)
    lower_strict = np.maximum(g_strict, 0.0) >= g_weak
    upper = np.minimum(m_strict, m_weak)
    upper_strict = m_strict <= m_weak
    return {
        "lower": lower,
        "lower_strict": lower_strict,
        "upper": upper,
        "upper_strict": upper_strict,
    }


def _inside(d, lower, lower_strict, upper, upper_strict, tol):
    """Whether margins ``d`` lie in the event (bounds broadcast against ``d``)."""
    above = np.where(lower_strict, d > lower + tol, d >= lower - tol)
    below = np.where(upper_strict, d < upper - tol, d <= upper + tol)
    return above & below


def binomial_pvalues(n, wins, unit, bounds, tol):
    r"""Exact selective p-values where every discordant item moves the margin by ``unit``.

    Parameters
    ----------
    n, wins : (K,) numpy.ndarray of int
        Discordant items, and those of them the new record wins.
    unit : (K,) numpy.ndarray
        Each discordant item's share of the margin, :math:`D = u(2X - n)`.
    bounds : dict
        :func:`selection_bounds`.
    tol : float
        The tie tolerance.

    Returns
    -------
    dict
        ``pvalue``: :math:`P(X \ge x \mid x_{lo} \le X \le x_{hi})` with
        :math:`X \sim \mathrm{Bin}(n, 1/2)`; ``x_low``, ``x_high``: the
        event's bounds on the wins.
    """
    from scipy import stats  # scipy.stats is slow to import

    n = np.asarray(n, dtype=float)
    x = np.asarray(wins, dtype=float)
    u = np.where(np.asarray(unit, dtype=float) > 0, unit, 1.0)
    lo, hi = bounds["lower"], bounds["upper"]
    with np.errstate(invalid="ignore", over="ignore"):
        x_low = np.where(
            bounds["lower_strict"],
            np.floor((n + (lo + tol) / u) / 2) + 1,
            np.ceil((n + (lo - tol) / u) / 2),
        )
        x_high = np.where(
            bounds["upper_strict"],
            np.ceil((n + (hi - tol) / u) / 2) - 1,
            np.floor((n + (hi + tol) / u) / 2),
        )
    x_low = np.clip(np.nan_to_num(x_low, nan=0.0, posinf=n + 1, neginf=0.0), 0, n + 1)
    x_high = np.clip(np.nan_to_num(x_high, nan=n, posinf=n, neginf=-1.0), -1, n)
    tail = stats.binom.sf(x - 1, n, 0.5) - stats.binom.sf(x_high, n, 0.5)
    event = stats.binom.sf(x_low - 1, n, 0.5) - stats.binom.sf(x_high, n, 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.clip(tail / event, 0.0, 1.0)
    return {"pvalue": np.where(event > 0, p, 1.0), "x_low": x_low, "x_high": x_high}


def signflip_pvalues(contribution, observed, bounds, tol, n_resamples, rng):
    r"""Monte Carlo selective p-values of the paired sign-flip test.

    Parameters
    ----------
    contribution : (N, K) numpy.ndarray
        Each item's absolute share of each step's margin,
        :math:`w_i |y_{Bi} - y_{Ai}|`.
    observed : (K,) numpy.ndarray
        The observed margins.
    bounds : dict
        :func:`selection_bounds`.
    tol : float
        The tie tolerance.
    n_resamples : int
        Sign patterns drawn (shared by the steps).
    rng : numpy.random.Generator
        The randomness.

    Returns
    -------
    dict
        ``pvalue``: :math:`(1 + \#\{D^* \ge D, D^* \in E\}) / (1 + \#\{D^* \in E\})`,
        valid for every number of draws, as the observed margin is
        exchangeable with the draws that fall in the event :math:`E`;
        ``n_in_event``: those draws.
    """
    c = np.asarray(contribution, dtype=float)
    k = c.shape[1]
    hits = np.zeros(k)
    inside = np.zeros(k)
    done = 0
    while done < n_resamples:
        size = min(BLOCK, n_resamples - done)
        signs = rng.integers(0, 2, size=(size, c.shape[0])).astype(float) * 2.0 - 1.0
        drawn = signs @ c  # (size, K)
        held = _inside(
            drawn,
            bounds["lower"],
            bounds["lower_strict"],
            bounds["upper"],
            bounds["upper_strict"],
            tol,
        )
        inside += held.sum(0)
        hits += (held & (drawn >= observed - tol)).sum(0)
        done += size
    return {"pvalue": (1.0 + hits) / (1.0 + inside), "n_in_event": inside}


def connor_items(gap, discordance, alpha, power):
    r"""Paired items McNemar's test needs to detect ``gap`` with ``power`` (Connor 1987, eq. 3).

    .. math:: n = \left(z_{1-\alpha/2}\sqrt{\psi} + z_{power}
              \sqrt{\psi - \delta^2}\right)^2 / \delta^2,

    the formula that :func:`rankstats.analyses.compare.mcnemar_mde` solves
    for :math:`\delta`; NaN where :math:`\delta^2 \ge \psi` or
    :math:`\psi = 0` (no such gap at this discordance).
    """
    from scipy import stats  # scipy.stats is slow to import

    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    delta = np.asarray(gap, dtype=float)
    psi = np.asarray(discordance, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = (za * np.sqrt(psi) + zb * np.sqrt(psi - delta**2)) ** 2 / delta**2
    return np.where((psi > 0) & (delta**2 < psi), np.ceil(n), np.nan)


def connor_mde(n, discordance, alpha, power):
    r"""The gap McNemar's test detects with ``power`` on ``n`` items (Connor's formula solved).

    The same number as :func:`rankstats.analyses.compare.mcnemar_mde`.
    """
    from scipy import stats  # scipy.stats is slow to import

    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    n = np.asarray(n, dtype=float)
    psi = np.asarray(discordance, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.sqrt(psi) * (za * np.sqrt(n) + zb * np.sqrt(n - za**2 + zb**2)) / (n + zb**2)
    return np.where((psi > 0) & (n - za**2 + zb**2 > 0), delta, np.nan)


def normal_mde(standard_deviation, n, alpha, power):
    r"""Bloom's minimum detectable effect, :math:`(z_{1-\alpha/2} + z_{power})\sigma_d/\sqrt{n}`."""
    from scipy import stats  # scipy.stats is slow to import

    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    sd = np.asarray(standard_deviation, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, z * sd / np.sqrt(n), np.nan)


def normal_items(gap, standard_deviation, alpha, power):
    r"""Items for Bloom's effect to reach ``gap``.

    :math:`\lceil((z_{1-\alpha/2} + z_{power})\sigma_d/\delta)^2\rceil`.
    """
    from scipy import stats  # scipy.stats is slow to import

    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    sd = np.asarray(standard_deviation, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, np.ceil((z * sd / np.asarray(gap, dtype=float)) ** 2), np.nan)


#: Steps with at most this many discordant items are tested by every sign pattern.
MOST_ENUMERATED = 16


def enumerated_pvalues(contribution, observed, bounds, tol):
    r"""Exact selective p-values of the sign-flip test, by every sign pattern.

    Parameters
    ----------
    contribution : (K, n) numpy.ndarray
        Each step's discordant items' absolute shares of the margin, padded
        with zeros to a common ``n`` of at most :data:`MOST_ENUMERATED` (a zero
        doubles every count alike, so the ratio is unchanged).
    observed : (K,) numpy.ndarray
        The observed margins.
    bounds : dict
        :func:`selection_bounds` for the ``K`` steps.
    tol : float
        The tie tolerance.

    Returns
    -------
    numpy.ndarray
        ``(K,)``: :math:`\#\{D^* \ge D, D^* \in E\} / \#\{D^* \in E\}` over
        all :math:`2^n` patterns.
    """
    c = np.asarray(contribution, dtype=float)
    n = c.shape[1]
    patterns = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    drawn = (patterns * 2.0 - 1.0) @ c.T  # (2^n, K)
    held = _inside(
        drawn, bounds["lower"], bounds["lower_strict"], bounds["upper"], bounds["upper_strict"], tol
    )
    hits = (held & (drawn >= observed - tol)).sum(0)
    return hits / np.maximum(held.sum(0), 1)
