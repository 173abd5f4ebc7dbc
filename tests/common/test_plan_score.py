"""``plan_score``: an episode's plan (``RealmEnv.plan_arguments()``), scored on a fresh env,
earns what the episode earned, on every REALM id; a plan the env refuses counts as no plan."""

from __future__ import annotations

import json
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.common.plan_score import (
    PlanFormatError,
    check_plan_arguments,
    project,
    score_plan,
)
from crab_gym.envs.realm.index import problem_specs

SPECS = problem_specs()


def _small(spec: Any) -> str:
    names = spec.part("names")()
    return "ft06" if spec.problem == "P11" else next((n for n in names if "_small_" in n), names[0])


def _random_episode(env: gym.Env, seed: int) -> dict[str, Any]:
    """Masked random play to the end; the episode's finished metrics."""
    base = env.unwrapped
    env.reset(seed=seed)
    rng, done, terminated = np.random.default_rng(seed), False, False
    while not done:
        action = base.codec.flat_to_call(int(rng.choice(np.flatnonzero(base.action_masks()))))
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    assert terminated
    return base.finish_metrics()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_an_episodes_plan_scores_what_the_episode_scored(spec: Any) -> None:
    env = gym.make(spec.env_id, instance=_small(spec))
    metrics = _random_episode(env, seed=1)
    base = env.unwrapped
    plan = json.loads(base.plan_json())  # through JSON, as a plan file goes
    assert plan == base.plan_arguments()
    score = score_plan(gym.make(spec.env_id, instance=_small(spec)), plan)
    assert score.optimality == metrics["optimality"]
    assert score.metrics == metrics
    assert score.feasible == base._plan_feasible()
    assert not score.refused and not score.notes
    if score.feasible:
        assert score.cost == pytest.approx(base._agent_cost())


def test_plan_json_writes_the_plan_file(tmp_path) -> None:
    env = gym.make("Realm-P11-v0", instance="ft06")
    _random_episode(env, seed=0)
    path = tmp_path / "plan.json"
    text = env.unwrapped.plan_json(path)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text) == env.unwrapped.plan_arguments()
    assert set(json.loads(text)) == {"sequence"}  # the solution's makespan and schedule are left out


def test_a_plan_the_env_refuses_counts_as_no_plan() -> None:
    env = gym.make("Realm-P11-v0", instance="ft06")
    plan = {"sequence": [list(row) for row in env.unwrapped.solved_reference().plan["sequence"]]}
    plan["sequence"][1].append(plan["sequence"][0].pop())  # an operation moved to another machine's list
    score = score_plan(env, plan)
    assert not score.feasible and score.violations == ["sequence", "schedule"]
    assert score.refused.startswith("the env refuses the plan")
    assert score.optimality == 0.0 and score.metrics["optimality"] == 0.0
    assert math.isinf(score.cost) and score.to_dict()["cost"] is None
    assert "error" in score.details


def test_a_plan_outside_the_actions_schema_names_its_field() -> None:
    env = gym.make("Realm-P1-v0", instance="p1_small_00")
    with pytest.raises(PlanFormatError) as caught:
        check_plan_arguments(env, {"route": ["entrance", "nowhere"]}, "mine.json")
    assert caught.value.source == "mine.json" and caught.value.field == "route.1"
    assert str(caught.value).startswith("mine.json: not a plan of Realm-P1-v0 (its fields: route)")


def test_project_keeps_what_the_schema_declares() -> None:
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "trips": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                             "properties": {"vehicle": {"type": "string"}}}},
        "loads": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": False,
                                                             "properties": {"water": {"type": "integer"}}}},
    }}
    solution = {"trips": [{"vehicle": "truck1", "depart": 510}], "loads": {"r1": {"water": 3, "eta": 9}},
                "cost": 12}
    assert project(solution, schema) == {"trips": [{"vehicle": "truck1"}], "loads": {"r1": {"water": 3}}}
