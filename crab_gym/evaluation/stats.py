"""The report's statistics: bootstrap intervals over instances and seeds, pass@k, seed spread.

A benchmark number describes a *set*: a split of instances, each played for a few seeds. Its
uncertainty has two sources, which instances the split happened to hold and what the seeds
drew, so the interval of a mean comes from a **two-level (hierarchical) bootstrap**: draw the
instances with replacement, then, within each drawn instance, its seeds with replacement, and
take the mean of the values drawn; the 2.5th and 97.5th percentiles of
:data:`RESAMPLES` such means are the 95 % interval. With one instance only the seeds are
drawn again (the first level always picks it); with one value there is no interval.

The report is a pure function of its episodes, so the draws come from a fixed seed
(:data:`SEED`) and a fixed order, the **stream** (what a test repeats in a loop to check the
vectorised code): ``rng = numpy.random.default_rng(SEED)``, then

1. ``rng.integers(0, I, size=(B, I))``: the instance in each of the ``I`` slots of each of the
   ``B`` resamples;
2. ``u = rng.random((B, I, S))``: in slot ``k`` of resample ``b``, holding an instance with
   ``n`` values, the ``s``-th drawn value (``s < n``) is that instance's value
   ``floor(u[b, k, s] * n)``; ``S`` is the most values an instance has.

The resample's mean is the mean of the values drawn (``B`` = :data:`RESAMPLES`, ``I``
instances), computed as counts of draws times values (:class:`Draws`).

Every row with the same shape (instances x seeds) draws the same resamples: two policies
played on the same instances are resampled alike (common random numbers), so the intervals
of their rows move together where their instances do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Bootstrap resamples per interval (the percentiles' Monte Carlo error is about 0.005 of the
#: interval's width at 2000).
RESAMPLES = 2000
#: The fixed seed of every bootstrap: the same episodes give the same intervals.
SEED = 34
#: The intervals' confidence level.
LEVEL = 0.95


@dataclass(frozen=True)
class Draws:
    """The bootstrap resamples of one grouping of values, as weights: ``weights[i * S + j, b]``
    is how many times resample ``b`` drew value ``j`` of instance ``i``. A resample's mean of
    a metric is then one dot product (``values @ weights``), so all the metrics of all the
    rows of one shape cost one matrix product, however many resamples."""

    weights: np.ndarray
    shape: tuple[int, int]
    totals: np.ndarray  #: values drawn per resample (the count of a mean that has every value)


@lru_cache(maxsize=8)
def draw(counts: tuple[int, ...], resamples: int = RESAMPLES, seed: int = SEED) -> Draws:
    """The resamples of instances holding ``counts`` values each, from the documented stream.
    Cached (a read-only array): the rows of a report mostly share one shape, e.g. 20 instances
    x 5 seeds for every policy, and so their draws."""
    n = np.asarray(counts, dtype=np.int64)
    n_instances, width = len(n), int(n.max())
    rng = np.random.default_rng(seed)
    slot_instance = rng.integers(0, n_instances, size=(resamples, n_instances))
    u = rng.random((resamples, n_instances, width))
    slot_n = n[slot_instance][:, :, None]
    position = np.minimum(np.floor(u * slot_n).astype(np.int64), slot_n - 1)  # min: a guard, floor(u * n) < n
    used = np.arange(width)[None, None, :] < slot_n
    cell = slot_instance[:, :, None] * width + position + np.arange(resamples)[:, None, None] * (n_instances * width)
    weights = np.bincount(cell[used], minlength=resamples * n_instances * width).astype(float)
    weights = np.ascontiguousarray(weights.reshape(resamples, n_instances * width).T)
    totals = weights.sum(axis=0)
    for array in (weights, totals):
        array.flags.writeable = False
    return Draws(weights, (n_instances, width), totals)


def bootstrap_intervals(values: np.ndarray, draws: Draws, level: float = LEVEL) -> list[tuple[float, float] | None]:
    """The percentile interval of the mean of each metric in ``values`` (``(M, I, S)``, NaN =
    no value) under ``draws``; None for a metric with fewer than two values (one episode: no
    interval).

    Each resample's mean is over the values it drew (a NaN drawn is left out, as the report's
    means leave out a metric that does not apply); a resample that drew no value of a metric
    (one that applies on few instances) is left out of that metric's percentiles."""
    flat = values.reshape(values.shape[0], -1)
    present = ~np.isnan(flat)
    sums = np.where(present, flat, 0.0) @ draws.weights  # (M, B): one product for every metric
    means = sums / draws.totals
    gaps = ~present.all(axis=1)  # metrics that miss values: count what each resample drew of them
    empty = False
    if gaps.any():
        counts = present[gaps].astype(float) @ draws.weights
        with np.errstate(invalid="ignore", divide="ignore"):
            means[gaps] = sums[gaps] / counts
        empty = bool((counts == 0).any())
    tail = 100.0 * (1.0 - level) / 2.0
    pct = np.nanpercentile if empty else np.percentile
    bounds = pct(means, [tail, 100.0 - tail], axis=1) if len(flat) else np.empty((2, 0))
    return [(float(lo), float(hi)) if k >= 2 else None
            for lo, hi, k in zip(bounds[0], bounds[1], present.sum(axis=1))]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one instance: the chance that k of its n seeds, drawn without
    replacement, hold at least one of its c successes: ``1 - C(n-c, k) / C(n, k)``."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_pass_at_k(outcomes: Sequence[Sequence[bool]], k: int) -> float:
    """pass@k averaged over instances (``outcomes[i]``: the successes of instance i's seeds)."""
    return math.fsum(pass_at_k(len(o), sum(o), k) for o in outcomes) / len(outcomes)


def seed_spread(groups: Sequence[Sequence[float]]) -> float | None:
    """The mean over instances of the sample standard deviation of a value across seeds
    (instances with one seed left out); None when no instance has two."""
    stds = [_stdev(g) for g in groups if len(g) >= 2]
    return math.fsum(stds) / len(stds) if stds else None


def _stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1), without numpy's per-call cost on a few seeds."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
