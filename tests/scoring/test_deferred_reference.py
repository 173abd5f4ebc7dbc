"""No solver inside ``step()`` or ``reset()`` on an instance nobody shipped (issue 23): with the
default ``reference_solve="deferred"`` a generated instance's episode solves nothing (its
reference and solo baselines wait, the metrics say ``optimality_pending``), the runner's
``finished_metrics`` then gives exactly the metrics the inline solve gives (and
``deferred_reward()`` the rest of the inline return), and the return is the same however many
solves are cached already."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.datasets import generate_instance
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.episode_runner import finished_metrics


def _instance(env_id: str):
    return generate_instance(env_id.split("-")[1], size="small", seed=4242)


def _play(env_id: str, inst, **kwargs) -> tuple[gym.Env, dict, float]:
    """One seeded random episode on a new env: the env, its last info and its return."""
    env = gym.make(env_id, instance=inst, **kwargs)
    return (env, *_episode(env))


def _episode(env: gym.Env) -> tuple[dict, float]:
    """One seeded random episode: its last info and its return."""
    policy = RandomPolicy(env, seed=0)
    obs, info = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        total, done = total + reward, terminated or truncated
    return info, total


def _records(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.json"))


@pytest.mark.parametrize("env_id", realm_ids())
def test_a_generated_instance_is_solved_after_the_episode_with_the_inline_numbers(env_id, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    inst = _instance(env_id)
    env, info, deferred_return = _play(env_id, inst)
    shaped = env.unwrapped.reference_shapes_episode  # P7: its sub-goals need the reference at reset
    if not shaped:
        assert _records(tmp_path) == []  # the whole episode solved nothing
    assert info["metrics"]["optimality_pending"] and info["metrics"]["optimality"] is None
    finished = finished_metrics(env, info)
    assert not finished["optimality_pending"] and finished["optimality"] is not None
    assert _records(tmp_path)  # the runner's finish solved (and cached) what waited
    inline_kwargs = {"reference_solve": "inline"}
    if "adaptation_pending" in info["metrics"]:
        inline_kwargs["adaptation_reference"] = "resolve"
    inline_env, inline_info, inline_return = _play(env_id, inst, **inline_kwargs)
    assert finished == inline_info["metrics"]
    # the rewards plus what the finish settled are the inline return (issue 34)
    assert deferred_return + env.unwrapped.deferred_reward() == pytest.approx(inline_return, abs=1e-12)
    assert inline_env.unwrapped.deferred_reward() == 0.0
    # the deferred return does not depend on what is cached: the same once everything is solved
    _, again_info, again_return = _play(env_id, inst)
    assert again_return == pytest.approx(deferred_return, abs=1e-12)


def test_reference_solve_is_checked():
    with pytest.raises(ValueError, match='reference_solve must be "deferred" or "inline"'):
        gym.make("Realm-P1-v0", reference_solve="later")


@pytest.mark.parametrize("env_id", ["Realm-P3-v0", "Realm-P4-v0", "Realm-P11-v0"])
def test_the_same_env_gives_the_same_return_before_and_after_a_finish(env_id, tmp_path, monkeypatch):
    """An evaluation that finishes every episode (solving its reference) and plays the instance
    again in the same env object: the next episode's return is the first one's."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    env = gym.make(env_id, instance=_instance(env_id))
    returns = []
    for _ in range(2):
        info, total = _episode(env)
        returns.append(total)
        assert finished_metrics(env, info)["optimality"] is not None
    assert returns[1] == pytest.approx(returns[0], abs=1e-12)
