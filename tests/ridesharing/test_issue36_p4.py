"""Issue 36 on Realm-P4-v0: adaptation holds against the adversarial probes
(:mod:`crab_gym.checks.scoring_probes`).

1. No re-planner of the probes beats the yardstick from the same state (p4_small_01: random
   continuations reached 15058 against the yardstick 15068).
2. Adaptation measures the avoidable part after the strike: serving nobody new scores 0, the
   yardstick 1 (honest random play scored 1.000 on 5 of 8 small instances).
3. The yardstick starts with parked vehicles back on the road: parking (holding a vehicle
   back) before the strike does not shrink the fleet the replan is measured against.
"""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.envs.realm.ridesharing.adaptation import adaptation_score, trivial_cost, yardstick_start
from crab_gym.evaluation.episode_runner import finished_metrics


def to_first_strike(name: str, seed: int) -> gym.Env:
    """Honest random play on a shipped instance until its first disruption strikes."""
    env = gym.make("Realm-P4-v0", instance=name, adaptation_reference="resolve")
    policy = RandomPolicy(env, seed=seed)
    obs, info = env.reset(seed=seed)
    while not info.get("disruptions"):
        obs, _, done, _, info = env.step(policy(obs, info))
        assert not done
    return env


def finish(env: gym.Env, policy_seed: int) -> dict:
    """A copy of ``env`` played to its end by random play: the runner's final metrics."""
    env = copy.deepcopy(env)
    policy = RandomPolicy(env, seed=policy_seed)
    obs, info = env.unwrapped._get_obs(), {}
    done = False
    while not done:
        obs, _, done, _, info = env.step(policy(obs, info))
    return finished_metrics(env, info)


def test_no_random_continuation_beats_the_yardstick_of_the_probes_case():
    env = to_first_strike("p4_small_01", 0)
    rows = [finish(env, seed) for seed in range(6)]
    assert {m["adaptation_reference_cost"] for m in rows} == {15058.0}  # it was 15068
    assert min(m["cost"] for m in rows if not m["violations"]) == 15058


def test_serving_nobody_new_after_the_strike_scores_zero_and_the_yardstick_one():
    env = to_first_strike("p4_small_01", 0)
    rows = {m["cost"]: m for m in (finish(env, seed) for seed in range(6))}
    trivial = rows[15058]["adaptation_trivial_cost"]
    assert trivial == 20028 and rows[20028]["adaptation"] == 0.0  # the ratio gave 0.752
    assert rows[15058]["adaptation"] == 1.0


def test_the_score_is_the_avoidable_share():
    assert adaptation_score(100, 1100, 600, True) == pytest.approx(0.5)
    assert adaptation_score(100, 1100, 1100, True) == 0.0
    assert adaptation_score(100, 1100, 90, True) == 1.0
    assert adaptation_score(100, 1100, 600, False) == 0.0
    assert adaptation_score(100, 100, 100, True) is None  # nothing avoidable: not applicable, never 1.0


def test_the_yardstick_starts_with_parked_vehicles_back_on_the_road():
    env = to_first_strike("p4_small_01", 0)
    base = env.unwrapped
    assert [v.parked for v in base._snapshot.vehicles] == [True, False]  # random parked v1 at once
    start = yardstick_start(base._snapshot, base._yardstick_schedule())
    assert [v.parked for v in start.vehicles] == [False, False]
    assert start.vehicles[0].free == 515 and start.clock == 515  # free from the strike's minute
    assert trivial_cost(start) == 20028
    assert base.restore_adaptation_start() and not any(v.parked for v in base.sim.vehicles)
