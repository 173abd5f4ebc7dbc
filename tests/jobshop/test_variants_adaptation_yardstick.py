"""The J2/J4 adaptation yardstick (``adaptation_reference="resolve"``, also what the deferred
mode solves later) is never worse than what an agent reached from the same disrupted state:
it takes the best of CP-SAT re-planning and the dispatching rules continuing from the state
at the first strike. An independent audit found a dispatching agent beating the plan-based
re-solve on 29 of 160 episodes (its adaptation then capped at 1.0 however it re-planned)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.jobshop.variants.heuristics import RULES, GreedyReplanner


def _episode(env_id: str, name: str, policy_name: str) -> dict:
    env = gym.make(env_id, instance=name, adaptation_reference="resolve")
    policy = GreedyReplanner(env) if policy_name == "greedy" else RULES[policy_name]
    obs, info = env.reset(seed=0)
    for _ in range(10_000):
        obs, _, terminated, _, info = env.step(policy(obs, info))
        if terminated:
            return info["metrics"]
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("name", ["j2_small_00", "j2_small_03", "j2_small_05", "j4_small_01", "j4_small_04"])
def test_the_yardstick_is_never_worse_than_the_agents_own_continuation(name):
    env_id = "Realm-J4-v0" if name.startswith("j4") else "Realm-J2-v0"
    for policy_name in (*RULES, "greedy"):
        m = _episode(env_id, name, policy_name)
        if m["disruptions_struck"] == 0:
            assert m["adaptation"] is None
            continue
        assert m["adaptation_reference_cost"] <= m["makespan"], (policy_name, m)
        assert m["adaptation"] == pytest.approx(m["adaptation_reference_cost"] / m["makespan"])
