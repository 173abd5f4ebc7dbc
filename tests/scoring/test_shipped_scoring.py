"""Every REALM id keeps the scoring contract on every shipped instance and on two generated
ones (check_scoring: doing nothing, random, greedy, oracle, reorderings of the reference and a
local search from it).

A new id in the registry is covered at once. The local search is short here (CI time);
``python benchmarks/scoring.py --tries 100`` runs a longer one."""

from __future__ import annotations

import pytest

from crab_gym.envs.registration import realm_ids
from crab_gym.envs.testing import check_scoring


@pytest.mark.parametrize("env_id", realm_ids())
def test_the_scoring_contract_holds_on_shipped_and_generated_instances(env_id):
    report = check_scoring(env_id, generated=2, random_episodes=2, search_tries=12)
    report.raise_if_failed()
    assert report.mean_optimality("oracle") > report.mean_optimality("greedy") > report.mean_optimality("random")
