"""The random baseline draws a fresh stream per episode seed: episodes differ, and replay."""

from __future__ import annotations

import crab_gym  # noqa: F401
from crab_gym.baselines import RandomPolicy
from crab_gym.core import Benchmark


def _solutions(seeds):
    report = Benchmark([("Realm-P11-v0", {"instance": "ft06"})], seeds=seeds).run(
        {"random": lambda env: RandomPolicy(env, seed=0)}, progress=False
    )
    return [r.metrics.get("makespan") for r in report.results]


def test_episodes_of_a_fixed_instance_differ_by_seed_and_replay():
    first = _solutions(range(6))
    assert len(set(first)) > 1  # a fixed instance: only the policy's draws can differ
    assert _solutions(range(6)) == first
