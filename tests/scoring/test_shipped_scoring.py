"""Every REALM id keeps the scoring contract on every shipped instance and on two generated
ones (check_scoring: doing nothing, random, greedy, oracle, reorderings of the reference and a
local search from it).

A new id in the registry is covered at once. The local search is short here (CI time);
``python benchmarks/scoring.py --tries 100`` runs a longer one. Envs with disruptions score
adaptation against their stored adaptive reference here (``adaptation_reference="oracle"``,
no solver per episode); a few instances each also run the default, where the runner re-solves
after every episode."""

from __future__ import annotations

import gymnasium as gym
import pytest

from crab_gym.checks import check_scoring
from crab_gym.checks.scoring import shipped_instances
from crab_gym.envs.registration import realm_ids


def has_disruptions(env_id: str) -> bool:
    env = gym.make(env_id)
    try:
        return getattr(env.unwrapped, "adaptation_mode", None) is not None
    finally:
        env.close()


@pytest.mark.parametrize("env_id", realm_ids())
def test_the_scoring_contract_holds_on_shipped_and_generated_instances(env_id):
    fast = {"adaptation_reference": "oracle"} if has_disruptions(env_id) else None
    report = check_scoring(env_id, generated=2, random_episodes=2, search_tries=12, make_kwargs=fast)
    report.raise_if_failed()
    assert report.mean_optimality("oracle") > report.mean_optimality("greedy") > report.mean_optimality("random")


@pytest.mark.parametrize("env_id", [i for i in realm_ids() if has_disruptions(i)])
def test_the_default_adaptation_keeps_the_promises_too(env_id):
    names = [n for n in shipped_instances(env_id) if "small" in n][:3]
    report = check_scoring(env_id, instances=names, random_episodes=1, search_tries=4, discriminate=False)
    report.raise_if_failed()
