"""The do-nothing baseline: the floor row of the reference results. It fits exactly the problems
where the scoring check finds a way to do nothing (``ProblemSpec.idle_plan``), and there it ends
the episode with a complete-looking but empty plan that scores (almost) 0."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.do_nothing import DoNothingPolicy
from crab_gym.baselines.registry import policy_specs
from crab_gym.checks.scoring import DO_NOTHING_MAX, do_nothing
from crab_gym.envs.realm.common.policy_fit import PolicyFitError
from crab_gym.envs.realm.index import problem_specs

SPECS = problem_specs()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_idle_plan_is_declared_where_the_scoring_check_finds_a_way_to_do_nothing(spec):
    env = gym.make(spec.env_id)
    try:
        assert (do_nothing(env) is not None) == spec.idle_plan
        assert policy_specs()["do_nothing"].fits(spec.env_id) == spec.idle_plan
    finally:
        env.close()


@pytest.mark.parametrize("spec", [s for s in SPECS if s.idle_plan], ids=lambda s: s.problem)
def test_the_policy_ends_the_episode_scoring_the_floor(spec):
    env = gym.make(spec.env_id)
    policy = DoNothingPolicy(env)
    obs, info = env.reset(seed=0)
    total, terminated, truncated, steps = 0.0, False, False, 0
    while not (terminated or truncated) and steps < 50:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info.get("valid", True), info.get("error")
        total, steps = total + float(reward), steps + 1
    metrics = env.unwrapped.finish_metrics() if info["metrics"].get("adaptation_pending") else info["metrics"]
    assert terminated and metrics["optimality"] <= DO_NOTHING_MAX and total <= DO_NOTHING_MAX
    env.close()


def test_where_every_move_does_something_it_refuses_to_run():
    env = gym.make("Realm-P11-v0")
    with pytest.raises(PolicyFitError, match="doing nothing does not apply to Realm-P11-v0"):
        DoNothingPolicy(env)
