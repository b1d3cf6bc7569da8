"""Joint posterior draws of every template's accuracy from a grid fit of the item-response model.

:func:`~rankstats._kernels.irt.fit_grid` gives each template's likelihood on a
grid of effects and the prior of its model; :func:`~rankstats._kernels.irt.grid_accuracy`
the template's accuracy at every grid point. A draw picks the spread of the
template effects (one of :data:`SLOTS` equally likely values of its posterior),
each template's effect from its posterior under that spread, a shift of the
model's intercept, and the Bernoulli noise of the outcomes not observed.

The work per draw and template is a few gathers from flat tables: the inverse
cdf is a branch-free binary search over rows padded to :data:`WIDTH` points.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .irt import GRID, SD_GRID, SLOTS, _in_logs, _normal_weights

#: Points of a cdf row in the search: the grid's, then padding (a power of two).
WIDTH = 1 << (GRID.size - 1).bit_length()
#: Sums the posterior weights on the grid into a cdf row of :data:`WIDTH` points. The last
#: grid point and the padding read 2 (twice the total), above every uniform once the row is
#: divided by its total, so the search needs no bounds (the last point is never below a
#: uniform: its cdf is 1).
_CUMULATE = np.triu(np.ones((GRID.size, WIDTH), dtype=np.float32))
_CUMULATE[:, GRID.size - 1 :] = 2.0
#: The halvings of the search.
_HALVES = tuple(WIDTH >> i for i in range(1, WIDTH.bit_length()))
#: Equally likely standard normal values, the midpoints of 4,096 strata: the noise of a
#: template's unobserved outcomes reads one at random (a draw of 12 bits, cheaper than a
#: normal deviate and as good at this resolution).
_NORMAL_STRATA = special.ndtri((np.arange(4096) + 0.5) / 4096).astype(np.float32)
#: Grid points added at each end of the accuracy tables the draws interpolate in.
PAD = 1


def spread_slots(f: dict) -> np.ndarray:
    """The log sds of :data:`SLOTS` equally likely spreads of each slice, ``(slices, SLOTS)``.

    The quantiles at (j + 1/2) / SLOTS of the spread's posterior on
    :data:`~rankstats._kernels.irt.SD_GRID` (its normalised profile likelihood,
    flat in log sd), linear in log sd between grid points. The pairwise sd
    sits where the plug-in likelihood is biased low, so the posterior is
    moved there in log sd, keeping its width.
    """
    chance = np.exp(f["profile"] - f["profile"].max(-1, keepdims=True))
    chance /= chance.sum(-1, keepdims=True)
    logs = np.log(SD_GRID)
    scale = np.maximum(f["tau_a"], SD_GRID[0]) / np.exp(chance @ logs)
    levels = (np.arange(SLOTS) + 0.5) / SLOTS
    cumulative = np.cumsum(chance, -1)
    # np.interp of every row at the levels at once: the first grid point each level reaches
    high = (cumulative[:, None, :] < levels[None, :, None]).sum(-1).clip(1, SD_GRID.size - 1)
    rows = np.arange(cumulative.shape[0])[:, None]
    below, above = cumulative[rows, high - 1], cumulative[rows, high]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip(np.nan_to_num((levels - below) / (above - below)), 0.0, 1.0)
    inside = logs[high - 1] + frac * (logs[high] - logs[high - 1])
    return np.where(levels <= cumulative[:, :1], logs[0], inside) + np.log(scale)[:, None]


def search(cdf: np.ndarray, base: np.ndarray, u: np.ndarray) -> np.ndarray:
    """How many points of each draw's cdf row lie below its uniform: the inverse cdf.

    ``cdf`` flat rows of :data:`WIDTH` points, nondecreasing, each padded
    past its last point with values above every uniform; ``base`` each
    draw's row start (row × WIDTH), ``u`` its uniform in [0, 1), of one
    shape. A branch-free binary search: log2(WIDTH) halvings, each one
    gather for every draw at once. Equals ``searchsorted(row, u)`` (side
    left) on each draw's row.
    """
    at = np.array(base, dtype=np.int64)
    probe = np.empty_like(at)
    for half in _HALVES:
        np.add(at, half - 1, out=probe)
        at += (cdf.take(probe) < u) * half
    return at - base


#: Below this total a template's posterior under a slot's prior is taken in logs and double
#: precision (the likelihood and the prior barely overlap; single precision underflows).
_SMALL = 1e-30


def _by_position(f: dict, values: np.ndarray, fill: float) -> np.ndarray:
    """Per-unit rows ``(units, ...)`` laid out by (slice, template) position, ``fill`` elsewhere."""
    slices, n_t = f["templates"].shape
    out = np.full((slices, n_t, *values.shape[1:]), fill, dtype=values.dtype)
    out[f["unit_slice"], f["unit_t"]] = values
    return out


def _cdf_rows(f: dict) -> np.ndarray:
    """Each template's posterior cdf under each slot's prior, ``(slices, SLOTS, template, WIDTH)``.

    The weights on the grid times a slot's prior, summed into a cdf, are one
    product per model: the templates' scaled likelihoods ``(template, K)`` by
    a ``(K, SLOTS × WIDTH)`` matrix that holds every slot's prior times the
    sums, in single precision; then each row is divided by its total.
    """
    log_sd = spread_slots(f)
    normal = f["family"] == 0
    priors = np.where(
        normal[:, None, None], _normal_weights(np.exp(log_sd)), f["prior"][:, None, :]
    )  # (slices, SLOTS, K): a family other than the normal keeps its fitted prior
    lik = f["likelihood"]
    # a position without a template gets a flat likelihood (its draws are set to NaN)
    scaled = _by_position(f, lik["scaled"].astype(np.float32), 1.0)
    # every slot's prior times the sums, (slices, SLOTS, K, WIDTH), with long inner loops
    sums = np.repeat(priors.astype(np.float32), WIDTH).reshape(*priors.shape, WIDTH)
    sums *= _CUMULATE
    cdf = np.matmul(scaled[:, None], sums)  # (slices, SLOTS, template, WIDTH)
    total = cdf[..., GRID.size - 1 : GRID.size] * np.float32(0.5)  # the column of 2s
    low = ~(total[..., 0] > _SMALL)
    cdf /= total
    if low.any():  # the likelihood and the prior barely overlap: in logs
        unit_at = _by_position(f, np.arange(f["unit_slice"].size), -1)
        for j in np.flatnonzero(low.any((0, 2))):
            mask = np.zeros(f["unit_slice"].size, dtype=bool)
            mask[unit_at[low[:, j]]] = True
            weights = _in_logs(lik, priors[:, j], f["unit_slice"], mask)[0]
            cdf[f["unit_slice"][mask], j, f["unit_t"][mask]] = (
                weights.astype(np.float32) @ _CUMULATE
            )
    return cdf


def _tables(table: dict) -> tuple:
    """The accuracy and the noise's sd at each point, with their steps to the next.

    Each as a complex number (value + step i) in single precision, so that
    one gather reads both; the accuracy less the part the template's
    observed cells give (added back in double precision, so that a fully
    observed template draws its exact accuracy). The ends are repeated
    :data:`PAD` times on each side (a position shifted past an end reads the
    end's value) and once more at the right (the last point's step is 0).
    """
    out = []
    for value in (table["mean"] - table["observed"][:, None], np.sqrt(table["var"])):
        padded = np.pad(value, ((0, 0), (PAD, PAD + 1)), mode="edge")
        packed = np.empty((value.shape[0], padded.shape[1] - 1), dtype=np.complex64)
        packed.real, packed.imag = padded[:, :-1], np.diff(padded)
        out.append(packed)
    return tuple(out)


def draw_blocks(f: dict, table: dict, n_draws: int, rng, chunk: int = 1 << 16):
    """Joint draws of every template's accuracy, a block of slices at a time.

    Yields ``(start, stop, draws)``: the slices ``start:stop`` and their
    draws ``(slices, template, draw)``, NaN where a template does not exist.
    Each draw takes the prior's spread from its posterior (one of
    :data:`SLOTS` equally likely values of it per model, :func:`spread_slots`:
    the spread is integrated over, not plugged in) where the family is a
    normal, each template's effect from its posterior on the grid under that
    prior (:func:`search`), a common shift of the model's intercept from its
    Laplace posterior, and the Bernoulli noise of the template's unobserved
    outcomes (a normal with their variance). A block holds about ``chunk``
    cells, whole slices, every draw of them: the rows it reads stay in cache,
    and its working arrays are small enough that their memory is reused, not
    fetched fresh from the system (a page fault per 4 KiB) for every block.
    """
    slices, n_t = f["templates"].shape
    if not f["unit_slice"].size:
        for start in range(slices):
            yield start, start + 1, np.full((1, n_t, n_draws), np.nan)
        return
    cdf = _cdf_rows(f).ravel()
    mean_table, sd_table = (_by_position(f, v, 0.0).ravel() for v in _tables(table))
    observed = _by_position(f, table["observed"], 0.0)[:, :, None]
    missing = ~_by_position(f, np.ones(f["unit_slice"].size, dtype=bool), False)
    step = GRID[1] - GRID[0]
    sd_mu = np.sqrt(f["var_mu"])[:, None, None]
    per = max(1, chunk // (n_t * n_draws))
    for start in range(0, slices, per):
        stop = min(start + per, slices)
        b = stop - start
        # 64-bit indices: a gather of complex numbers by 32-bit ones is ten times slower
        position = np.arange(start * n_t, stop * n_t, dtype=np.int64).reshape(b, n_t, 1)
        # the rows of a (slice, slot, template): slot j of template t of slice s is row
        # (s * SLOTS + j) * n_t + t
        base = (position + (SLOTS - 1) * n_t * (position // n_t)) * WIDTH
        base = base + rng.integers(0, SLOTS, (b, 1, n_draws)) * (n_t * WIDTH)
        # the model's shift in grid steps: its whole steps move the point, its fraction
        # (the same for every template of the model) interpolates between two points
        shift = sd_mu[start:stop] * rng.standard_normal((b, 1, n_draws)) / step
        whole = np.floor(shift)
        frac = (shift - whole).astype(np.float32)
        u = rng.random((b, n_t, n_draws), dtype=np.float32)
        z = _NORMAL_STRATA.take(rng.integers(0, 4096, (b, n_t, n_draws), dtype=np.int16))
        at = search(cdf, base, u)
        at += whole.astype(np.int64)
        np.clip(at, -PAD, GRID.size + PAD - 2, out=at)
        at += position * (GRID.size + 2 * PAD) + PAD
        mean = mean_table.take(at)
        value = mean.real + frac * mean.imag
        sd = sd_table.take(at)
        value += (sd.real + frac * sd.imag) * z
        value = np.clip(observed[start:stop] + value, 0.0, 1.0)
        if missing[start:stop].any():
            value[missing[start:stop]] = np.nan
        yield start, stop, value


def grid_draws(f: dict, table: dict, n_draws: int, rng, chunk: int = 1 << 16) -> np.ndarray:
    """Joint draws of every template's accuracy, ``(slices, draws, template)``.

    :func:`draw_blocks` put together; NaN where a template does not exist.
    """
    slices, n_t = f["templates"].shape
    out = np.empty((slices, n_draws, n_t))
    for start, stop, block in draw_blocks(f, table, n_draws, rng, chunk):
        out[start:stop] = block.transpose(0, 2, 1)
    return out
