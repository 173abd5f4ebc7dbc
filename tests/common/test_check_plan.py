"""Every REALM env names its family's independent checker (the spec's ``check`` role) and
answers ``check_plan``: on a plan it is given, and on the episode's own plan."""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.index import problem_specs

SPECS = problem_specs()


def _small(spec: Any) -> str:
    names = spec.part("names")()
    return "ft06" if spec.problem == "P11" else next((n for n in names if "_small_" in n), names[0])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_the_env_names_its_spec_checker(spec: Any) -> None:
    assert spec.part("env").checker is spec.part("check")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_check_plan_judges_a_given_plan_and_changes_nothing(spec: Any) -> None:
    env = gym.make(spec.env_id, instance=_small(spec)).unwrapped
    obs, _ = env.reset(seed=0)
    plan = env.solved_reference().plan
    verdict = env.check_plan(copy.deepcopy(plan))
    assert verdict.feasible and not verdict.violations
    assert verdict.cost == pytest.approx(spec.part("check")(env.instance, copy.deepcopy(plan)).cost)
    empty = env.check_plan({})  # no plan at all: judged, never an exception
    assert (not empty.feasible and empty.violations) or empty.cost > verdict.cost  # P10: soft delivery
    for key, value in env._get_obs().items():  # asking changed nothing
        assert np.array_equal(np.asarray(value), np.asarray(obs[key])), key


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_check_plan_without_a_plan_judges_the_episode_played(spec: Any) -> None:
    env = gym.make(spec.env_id, instance=_small(spec)).unwrapped
    env.reset(seed=3)
    rng, done = np.random.default_rng(3), False
    while not done:
        action = env.codec.flat_to_call(int(rng.choice(np.flatnonzero(env.action_masks()))))
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    verdict = env.check_plan()
    assert verdict.feasible == env._plan_feasible()
    if verdict.feasible:
        assert verdict.cost == pytest.approx(env._agent_cost())
    assert env.check_plan(info["solution"]).cost == verdict.cost or not math.isfinite(verdict.cost)
