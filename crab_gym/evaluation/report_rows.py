"""The rows of the benchmark report: which episodes form a row, and what the row says of them.

A row is one (env, split, kwargs, policy): the episodes of one policy on one env over **every
instance of a split** (a split's episodes carry their instance among the kwargs; the row's
kwargs leave it out), or, for a run that named no split, over the one set of kwargs it used.
The per-size rows add the instance's size class to the key.

Each row counts its episodes by outcome (:mod:`crab_gym.evaluation.outcome`): the infrastructure
failures are counted and left out of every mean; the others are all measured, an agent
failure counting as a failure. A mean of ``return``, ``completeness``, ``success`` and each
REALM score metric gets a 95 % interval (:mod:`crab_gym.evaluation.stats`): a bootstrap over the
row's instances and, within each, its seeds. What applies to an episode that has no plan is
decided per instance (:mod:`crab_gym.evaluation.unfinished`).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.evaluation.episode import EpisodeResult, canonical_json
from crab_gym.evaluation.outcome import is_infra_failure
from crab_gym.evaluation.stats import bootstrap_intervals, draw, mean_pass_at_k, seed_spread
from crab_gym.evaluation.unfinished import SCORE_METRICS, is_number, is_unfinished, measured_metrics, scored_value

#: The means that get a bootstrap interval: the runner's three, then the REALM score metrics.
CI_METRICS = ("return", "completeness", "success", *SCORE_METRICS)
#: Size classes in report order (others follow in natural order: ``15x15`` before ``20x15``).
SIZE_ORDER = ("small", "medium", "large")

RowKey = tuple[Any, ...]


def shown_kwargs(result: EpisodeResult) -> dict[str, Any]:
    """The kwargs a row shows and groups by: the episode's, without the ``instance`` a split
    put there (an instance given by ``--env-kwargs`` has no label and stays: its own row)."""
    if result.instance is None:
        return dict(result.env_kwargs)
    return {k: v for k, v in result.env_kwargs.items() if k != "instance"}


def group_key(result: EpisodeResult) -> tuple[str, str | None, str, str]:
    """(env, split, kwargs without the instance, policy): the episodes of one summary row."""
    return result.env_id, result.split, canonical_json(shown_kwargs(result)), result.policy


def instance_key(result: EpisodeResult) -> str:
    """The instance an episode played, for the bootstrap and the ``instances`` count: its
    label, else its kwargs (a run without a split plays one instance per kwargs)."""
    return result.instance if result.instance is not None else canonical_json(result.env_kwargs)


def applies_key(result: EpisodeResult) -> tuple[str, str]:
    """Where what applies is decided (:func:`~crab_gym.evaluation.unfinished.measured_metrics`):
    the env and its full kwargs, the instance among them."""
    return result.env_id, canonical_json(result.env_kwargs)


class _Facts:
    """Each episode's row key, instance and applicable metrics, worked out once per report
    (canonical JSON of kwargs is most of a report's Python time)."""

    def __init__(self, results: Sequence[EpisodeResult]) -> None:
        self.group = {id(r): group_key(r) for r in results}
        self.instance = {id(r): instance_key(r) for r in results}
        # the same instance as applies_key (a split's kwargs are the row's plus its instance)
        where = {id(r): (*self.group[id(r)][:3], self.instance[id(r)]) for r in results}
        measured = measured_metrics(results, lambda r: where[id(r)])
        self.applies = {id(r): measured[where[id(r)]] for r in results}


def summary_rows(results: Sequence[EpisodeResult], *, by_size: bool = False) -> list[dict[str, Any]]:
    """One row per (env, split, kwargs, policy), or with ``by_size`` per (..., size) for the
    episodes whose size is known, in the order of ``results`` (sorted by spec)."""
    return _rows(results, _Facts(results), by_size)


def report_tables(results: Sequence[EpisodeResult]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The summary rows and the per-size rows (what a written report holds), in one pass."""
    facts = _Facts(results)
    return _rows(results, facts, False), _rows(results, facts, True)


def _rows(results: Sequence[EpisodeResult], facts: _Facts, by_size: bool) -> list[dict[str, Any]]:
    groups: dict[RowKey, list[EpisodeResult]] = {}
    for r in results:
        if by_size and r.size is None:
            continue
        groups.setdefault(facts.group[id(r)] + ((r.size,) if by_size else ()), []).append(r)
    keys = sorted(groups, key=_size_order(list(groups))) if by_size else list(groups)
    built = [summary_row(key, groups[key], facts) for key in keys]
    attach_intervals(built)
    return [row for row, _ in built]


def _size_order(keys: list[RowKey]) -> Any:
    """Sort key of per-size rows: their row's first place, then the size class."""
    first = {}
    for k in keys:
        first.setdefault(k[:-1], len(first))

    def size_rank(size: str) -> tuple[Any, ...]:
        known = SIZE_ORDER.index(size) if size in SIZE_ORDER else len(SIZE_ORDER)
        return known, tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", size))

    return lambda k: (first[k[:-1]], size_rank(k[-1]))


def summary_row(key: RowKey, episodes: list[EpisodeResult], facts: _Facts) -> tuple[dict[str, Any], RowSample]:
    """The row of ``episodes`` (all of one key): counts by outcome, means over the measured
    episodes (every one but the infrastructure failures; ``None`` when there is none) and the
    seeds' statistics; with the sample its intervals come from (:func:`attach_intervals`)."""
    env_id, split, kwargs, policy, *size = key
    ok = [r for r in episodes if not is_infra_failure(r)]
    row: dict[str, Any] = {"env": env_id, "split": split, "kwargs": kwargs, "policy": policy}
    if size:
        row["size"] = size[0]
    row |= {
        "episodes": len(episodes),
        "instances": len({facts.instance[id(r)] for r in episodes}),
        "infra_errors": len(episodes) - len(ok),
        "agent_errors": sum(r.error is not None for r in ok),
        "truncated": sum(is_unfinished(r) and r.error is None for r in ok),
        "return": _mean(r.episode_return for r in ok),
        "completeness": _mean(r.completeness for r in ok),
        "success": _mean(float(r.success) for r in ok),
        "steps": _mean(r.steps for r in ok),
        "invalid": _mean(r.invalid_actions for r in ok),
        "time_s": _mean(r.wall_time_s for r in episodes),
    }
    row |= usage_means(episodes)
    values = episode_values(ok, [facts.applies[id(r)] for r in ok])
    row |= {name: _mean(v for v in vs if v is not None) for name, vs in values.items() if name not in row}
    row["ci"] = dict.fromkeys(m for m in CI_METRICS if m in values)  # filled in by attach_intervals
    clusters: dict[str, list[int]] = {}
    for i, r in enumerate(ok):
        clusters.setdefault(facts.instance[id(r)], []).append(i)
    row |= seed_stats(ok, list(clusters.values()))
    return row, RowSample(list(clusters.values()), {m: values[m] for m in row["ci"]})


def episode_values(ok: list[EpisodeResult], applies: list[set[str]]) -> dict[str, list[float | None]]:
    """Per mean, each measured episode's value in it (None: left out, the metric does not
    apply): the runner's three, then every numeric metric in name order, an unfinished
    episode scoring 0 where a metric applies on its instance (``applies``, aligned with ``ok``)."""
    values: dict[str, list[float | None]] = {
        "return": [r.episode_return for r in ok],
        "completeness": [r.completeness for r in ok],
        "success": [float(r.success) for r in ok],
    }
    names = {k for r in ok for k, v in r.metrics.items() if is_number(v)}
    names |= {m for r, a in zip(ok, applies) if is_unfinished(r) for m in a}
    for name in sorted(names):
        values[name] = [scored_value(r, name, a) for r, a in zip(ok, applies)]
    return values


@dataclass
class RowSample:
    """What a row's intervals are drawn from: its measured episodes' positions per instance
    (``clusters``) and, per mean, each episode's value (None: left out)."""

    clusters: list[list[int]]
    values: dict[str, list[float | None]]

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.clusters)

    def matrix(self, width: int) -> np.ndarray:
        """``(metrics, instances, width)``, NaN where there is no value."""
        flat = np.array([[math.nan if v is None else v for v in vals] for vals in self.values.values()], dtype=float)
        where = [(i, j, episode) for i, c in enumerate(self.clusters) for j, episode in enumerate(c)]
        instance, seed, episode = (np.array(column) for column in zip(*where))
        out = np.full((len(flat), len(self.clusters), width), np.nan)
        out[:, instance, seed] = flat[:, episode]
        return out


def attach_intervals(built: Sequence[tuple[dict[str, Any], RowSample]]) -> None:
    """Fill each row's ``ci``: the 95 % bootstrap interval of each mean, over the row's
    instances and their seeds (None: fewer than two values). Rows of one shape (instances x
    seeds, e.g. every policy on a split) share their resamples and one matrix product."""
    by_shape: dict[tuple[int, ...], list[tuple[dict[str, Any], RowSample]]] = {}
    for row, sample in built:
        if sample.clusters and sample.values:
            by_shape.setdefault(sample.counts, []).append((row, sample))
    for counts, group in by_shape.items():
        draws = draw(counts)
        stacked = np.concatenate([sample.matrix(draws.shape[1]) for _, sample in group])
        found = iter(bootstrap_intervals(stacked, draws))
        for row, sample in group:
            row["ci"] = {name: _as_list(next(found)) for name in sample.values}


def _as_list(ci: tuple[float, float] | None) -> list[float] | None:
    return list(ci) if ci is not None else None


def seed_stats(ok: list[EpisodeResult], clusters: list[list[int]]) -> dict[str, Any]:
    """Across seeds (``clusters``: positions in ``ok`` per instance): ``seeds`` (the fewest
    measured seeds of an instance), ``pass_at_k`` (k -> mean over instances of the unbiased
    pass@k of success, for k = 1 and k = seeds) and ``return_seed_std`` (mean over instances of
    the standard deviation of return across seeds); None where every instance has one seed (a
    deterministic policy: nothing to vary)."""
    counts = [len(c) for c in clusters]
    if not counts or max(counts) < 2:
        return {"seeds": min(counts, default=None), "pass_at_k": None, "return_seed_std": None}
    outcomes = [[ok[i].success for i in c] for c in clusters]
    ks = sorted({1, min(counts)})
    return {
        "seeds": min(counts),
        "pass_at_k": {str(k): mean_pass_at_k(outcomes, k) for k in ks},
        "return_seed_std": seed_spread([[ok[i].episode_return for i in c] for c in clusters]),
    }


def usage_means(episodes: list[EpisodeResult]) -> dict[str, float | None]:
    """REALM's resource usage (policies that report ``usage``): means over every episode,
    infrastructure failures included (their tokens were spent)."""
    if not any(r.usage for r in episodes):
        return {}
    return {
        "llm_tokens": _mean(usage_tokens(r.usage) for r in episodes),
        "llm_requests": _mean(float(r.usage.get("requests", 0)) for r in episodes),
        "llm_latency_s": _mean(float(r.usage.get("latency_s", 0.0)) for r in episodes),
    }


def _mean(values: Iterable[float]) -> float | None:
    vals = list(values)
    return statistics.fmean(vals) if vals else None


def usage_tokens(usage: Mapping[str, Any]) -> float:
    """An episode's LLM tokens: the server's total, else prompt + completion."""
    total = usage.get("total_tokens")
    if total is None:
        total = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return float(total)
