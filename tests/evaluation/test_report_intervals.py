"""The report's 95 % intervals: a two-level bootstrap (instances, then each drawn instance's
seeds) equal to a plain loop over the documented random stream, seeds only for one instance,
none for one episode, deterministic, about 95 % coverage, and fast on a full-size report; the
unbiased pass@k and the spread across seeds."""

from __future__ import annotations

import itertools
import json
import math
import random
import time

import numpy as np
import pytest

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.report import BenchmarkReport
from crab_gym.evaluation.report_rows import CI_METRICS
from crab_gym.evaluation.stats import RESAMPLES, SEED, mean_pass_at_k, pass_at_k

SIZES = ("small", "medium", "large")


def episode(policy: str, instance: str, seed: int, value: float, *, success: bool = True,
            metrics: dict | None = None, error: str | None = None, split: str | None = "test",
            size: str | None = None, env_id: str = "Realm-P7-v0") -> EpisodeResult:
    """A finished (or, with ``error``, an infrastructure-failed) episode with these values."""
    return EpisodeResult(
        env_id, {"instance": instance} if split else {}, policy, seed, index=seed, max_steps=100,
        episode_return=value, completeness=min(1.0, value + 0.1), success=success and error is None,
        terminated=error is None, metrics=metrics if metrics is not None else {"optimality": value},
        error=error, split=split, instance=instance if split else None, size=size)


def synthetic_run(rng: random.Random, n_instances: int = 20) -> list[EpisodeResult]:
    """20 instances, 1 to 5 seeds each, adaptation n/a on some episodes, one infrastructure failure."""
    out = []
    for i in range(n_instances):
        name, hardness = f"p7_{SIZES[i % 3]}_{i:02d}", rng.random()
        for seed in range(1 + i % 5):
            value = min(1.0, max(0.0, 0.9 - 0.5 * hardness + rng.gauss(0, 0.1)))
            metrics = {"optimality": value, "planning_quality": 1.0,
                       "adaptation": None if (i + seed) % 3 == 0 else value ** 2}
            out.append(episode("greedy", name, seed, value, success=value > 0.5, metrics=metrics,
                               size=SIZES[i % 3]))
    out.append(episode("greedy", "p7_small_00", 7, 0.0, error="ConnectionError: lost"))  # left out everywhere
    return out


def loop_interval(groups: list[list[float | None]]) -> tuple[float, float] | None:
    """The bootstrap written plainly: the documented stream, one draw at a time."""
    if sum(v is not None for g in groups for v in g) < 2:
        return None
    rng = np.random.default_rng(SEED)
    n_instances, width = len(groups), max(len(g) for g in groups)
    slots = rng.integers(0, n_instances, size=(RESAMPLES, n_instances))
    u = rng.random((RESAMPLES, n_instances, width))
    means = []
    for b in range(RESAMPLES):
        drawn = []
        for k in range(n_instances):
            group = groups[slots[b, k]]
            for s in range(len(group)):
                value = group[int(u[b, k, s] * len(group))]
                if value is not None:
                    drawn.append(value)
        if drawn:
            means.append(sum(drawn) / len(drawn))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def per_instance(results: list[EpisodeResult], read) -> list[list[float | None]]:
    """Each instance's values, instances in the report's order (the specs' order)."""
    groups: dict[str, list[float | None]] = {}
    for r in sorted(results, key=lambda r: r.spec.sort_key):
        if r.error is None:
            groups.setdefault(r.instance, []).append(read(r))
    return list(groups.values())


READERS = {
    "return": lambda r: r.episode_return,
    "completeness": lambda r: r.completeness,
    "success": lambda r: float(r.success),
    "optimality": lambda r: r.metrics["optimality"],
    "planning_quality": lambda r: r.metrics["planning_quality"],
    "adaptation": lambda r: r.metrics["adaptation"],
}


def test_the_intervals_of_a_20_instance_report_are_the_plain_loops():
    results = synthetic_run(random.Random(3))
    (row,) = BenchmarkReport(results).summary()
    assert (row["instances"], row["episodes"], row["infra_errors"]) == (20, 61, 1)
    assert set(row["ci"]) == {"return", "completeness", "success", "optimality", "planning_quality", "adaptation"}
    assert list(row["ci"]) == [m for m in CI_METRICS if m in row["ci"]]  # in the table's order
    for name, read in READERS.items():
        want = loop_interval(per_instance(results, read))
        assert row["ci"][name] == pytest.approx(list(want), abs=1e-12), name
        lo, hi = row["ci"][name]
        assert lo <= row[name] <= hi, name
    assert row["ci"]["planning_quality"] == [1.0, 1.0]  # every value 1: nothing to vary


def test_one_instance_resamples_its_seeds_and_one_episode_has_no_interval():
    seeds = [episode("random", "p7_small_00", s, v) for s, v in enumerate([0.2, 0.9, 0.4, 0.7, 0.5])]
    (row,) = BenchmarkReport(seeds).summary()
    assert row["instances"] == 1
    assert row["ci"]["return"] == pytest.approx(list(loop_interval([[0.2, 0.9, 0.4, 0.7, 0.5]])), abs=1e-12)
    assert 0.2 < row["ci"]["return"][0] < row["return"] < row["ci"]["return"][1] < 0.9  # the seeds vary it
    (single,) = BenchmarkReport(seeds[:1]).summary()
    assert all(single["ci"][m] is None for m in single["ci"])
    md = BenchmarkReport(seeds[:1]).to_markdown()
    assert "| 0.200 | 0.300 | 1.000 |" in md  # return, completeness, success: plain means, no interval


def test_the_report_is_a_pure_function_of_its_episodes():
    results = synthetic_run(random.Random(4))
    shuffled = random.Random(0).sample(results, len(results))
    first, second = BenchmarkReport(results), BenchmarkReport(shuffled)
    assert json.dumps(first.comparable()) == json.dumps(second.comparable())
    assert first.to_markdown() == second.to_markdown()


def test_the_markdown_cell_is_the_mean_and_its_interval_rounded_outward():
    results = synthetic_run(random.Random(3))
    report = BenchmarkReport(results)
    (row,) = report.summary()
    lo, hi = row["ci"]["optimality"]
    cell = f"{row['optimality']:.3f} [{math.floor(lo * 100) / 100:.2f}, {math.ceil(hi * 100) / 100:.2f}]"
    assert cell in report.to_markdown()
    assert "`intervals`: `0.812 [0.78, 0.84]`" in report.to_markdown()
    assert report.to_json()["bootstrap"]["resamples"] == RESAMPLES


def test_intervals_cover_the_true_mean_about_95_percent_of_the_time():
    """200 reports of 20 instances x 5 seeds from a known two-level distribution (instance
    effect N(0, 0.15), seed noise N(0, 0.1) around 0.6): the population mean is 0.6."""
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(200):
        effects = rng.normal(0.0, 0.15, size=20)
        results = [episode("p", f"i{i:02d}", s, float(0.6 + effects[i] + rng.normal(0.0, 0.1)))
                   for i in range(20) for s in range(5)]
        lo, hi = BenchmarkReport(results).summary()[0]["ci"]["return"]
        hits += lo <= 0.6 <= hi
    assert 0.89 <= hits / 200 <= 0.99, hits  # 95 % +- 3 standard errors of a 200-report share


def test_a_full_size_report_builds_in_well_under_a_second_of_work():
    """14 ids x 5 policies x 20 instances x 5 seeds (7000 episodes): the Markdown report, both
    tables and their intervals. The bound is loose (shared CI machines); it builds in about
    0.3 s of CPU, where a per-resample Python loop took minutes."""
    rng = random.Random(0)
    results = [episode(policy, f"p_{SIZES[i % 3]}_{i:02d}", s, rng.random(), env_id=f"Realm-P{e}-v0",
                       size=SIZES[i % 3], metrics={"optimality": rng.random(), "planning_quality": rng.random(),
                                                   "constraint_satisfaction": 1.0})
               for e in range(1, 15) for policy in ("a", "b", "c", "d", "e") for i in range(20) for s in range(5)]
    start = time.process_time()
    report = BenchmarkReport(results)
    text = report.to_markdown()
    elapsed = time.process_time() - start
    assert len(report.summary()) == 70 and text.count("\n| Realm-P") == 70 + 210 + 70
    assert elapsed < 3.0, elapsed


# ---------------------------------------------------------------------------------- seeds
def brute_pass_at_k(outcomes: list[bool], k: int) -> float:
    """The share of the k-subsets of the seeds that hold a success."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n, c", [(5, 0), (5, 1), (5, 3), (5, 5), (4, 2), (1, 1)])
def test_pass_at_k_is_the_unbiased_estimator(n, c):
    outcomes = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(outcomes, k), abs=1e-12)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)
    with pytest.raises(ValueError, match="0 < k <= n"):
        pass_at_k(n, c, n + 1)


def test_stochastic_rows_get_pass_at_k_and_seed_spread_and_deterministic_rows_na():
    wins = {"a": [1, 0, 0, 1, 0], "b": [0, 0, 0, 0, 0], "c": [1, 1, 1, 1, 1]}
    returns = {"a": [0.1, 0.5, 0.3, 0.9, 0.2], "b": [0.4] * 5, "c": [0.6, 0.7, 0.8, 0.6, 0.7]}
    stochastic = [episode("llm", f"p1_small_0{i}", s, returns[name][s], success=bool(wins[name][s]))
                  for i, name in enumerate(wins) for s in range(5)]
    deterministic = [episode("greedy", f"p1_small_0{i}", 0, 0.5) for i in range(3)]
    rows = {r["policy"]: r for r in BenchmarkReport(stochastic + deterministic).summary()}
    llm, greedy = rows["llm"], rows["greedy"]
    outcomes = [[bool(w) for w in ws] for ws in wins.values()]
    assert llm["seeds"] == 5 and set(llm["pass_at_k"]) == {"1", "5"}
    assert llm["pass_at_k"]["1"] == pytest.approx((2 / 5 + 0 + 1) / 3) == pytest.approx(llm["success"])
    assert llm["pass_at_k"]["5"] == pytest.approx((1 + 0 + 1) / 3) == mean_pass_at_k(outcomes, 5)
    stds = [float(np.std(v, ddof=1)) for v in returns.values()]
    assert llm["return_seed_std"] == pytest.approx(sum(stds) / 3)
    assert (greedy["seeds"], greedy["pass_at_k"], greedy["return_seed_std"]) == (1, None, None)
    md = BenchmarkReport(stochastic + deterministic).to_markdown()
    table = md.split("**Across seeds**")[1]
    assert "| Realm-P7-v0 | greedy | test | 3 | 1 | n/a | n/a | n/a |" in table
    assert f"| 0.467 | 0.667 (k=5) | {llm['return_seed_std']:.3f} |" in table
