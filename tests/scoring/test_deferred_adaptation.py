"""Moving the adaptation re-solve out of ``step()`` changes no number: on the shipped
instances, the metrics the runner reports (deferred solve, ``finish_metrics()``) equal
those of the old way (``adaptation_reference="resolve"``: the solve inside the last step),
for the greedy heuristic on every shipped instance and a random episode on the small ones."""

from __future__ import annotations

import gymnasium as gym
import pytest

from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.checks.scoring import greedy_factory, shipped_instances
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.episode_runner import finished_metrics


def disruption_ids() -> list[str]:
    ids = []
    for env_id in realm_ids():
        env = gym.make(env_id)
        if getattr(env.unwrapped, "adaptation_mode", None) is not None:
            ids.append(env_id)
        env.close()
    return ids


def play(env_id: str, instance: str, mode: str, policy_name: str) -> tuple[dict, dict]:
    """(the last step's metrics, the metrics the runner reports) of one seeded episode."""
    env = gym.make(env_id, instance=instance, adaptation_reference=mode)
    policy = greedy_factory(env_id)(env) if policy_name == "greedy" else RandomPolicy(env, seed=3)
    obs, info = env.reset(seed=3)
    for _ in range(5000):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            break
    last = dict(info["metrics"])
    return last, finished_metrics(env, info)


#: The 200 x 50 job shops take 8-50 s a case (two yardstick re-plans of 10,000 operations) and
#: follow the path the small and medium ones do: one large instance each keeps the size covered.
ONE_LARGE = {"Realm-J2-v0": "j2_large_03", "Realm-J4-v0": "j4_large_02"}
CASES = [(env_id, name, policy) for env_id in disruption_ids() for name in shipped_instances(env_id)
         for policy in ("greedy", "random") if policy == "greedy" or "small" in name
         if "_large_" not in name or ONE_LARGE.get(env_id, name) == name]


def test_every_disruption_id_defers_by_default():
    assert len(disruption_ids()) == 7
    for env_id in disruption_ids():
        assert gym.make(env_id).unwrapped.adaptation_mode == "deferred"


@pytest.mark.parametrize(("env_id", "instance", "policy_name"), CASES)
def test_the_runner_reports_the_adaptation_of_the_old_way(env_id, instance, policy_name):
    old_last, old = play(env_id, instance, "resolve", policy_name)
    new_last, new = play(env_id, instance, "deferred", policy_name)
    assert old_last == old and not old["adaptation_pending"]  # nothing was left for the runner
    if new_last["adaptation_pending"]:
        assert new_last["adaptation"] is None and new_last["adaptation_reference_cost"] is None
    assert new == old
