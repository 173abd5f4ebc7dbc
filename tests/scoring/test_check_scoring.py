"""The scoring check catches each broken promise (envs built to break one each), and its
parts do what they say: the emptiest plan, reorderings, neighbours of a plan."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from crab_gym.checks import check_scoring
from crab_gym.checks.scoring import emptiest_arguments, mutate, reorderings

BROKEN = {
    "AlwaysOptimal": "AlwaysOptimalEnv",
    "InfeasibleCoordinates": "InfeasibleCoordinatesEnv",
    "InvertedOptimality": "InvertedOptimalityEnv",
    "SplitDependent": "SplitDependentEnv",
    "InfeasibleScores": "InfeasibleScoresEnv",
    "LenientSim": "LenientSimEnv",
}
INSTANCES = ["p2_small_00", "p2_small_03", "p2_medium_00", "p2_medium_02", "p2_large_00"]


@pytest.fixture(scope="module", autouse=True)
def broken_ids():
    for name, cls in BROKEN.items():
        env_id = f"Broken{name}-P2-v0"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=f"tests.scoring.broken_envs:{cls}")
    yield
    for name in BROKEN:
        gym.registry.pop(f"Broken{name}-P2-v0", None)


def kinds(env_id: str, **kwargs) -> dict[str, int]:
    return check_scoring(env_id, instances=INSTANCES, search_tries=30, **kwargs).kinds()


def test_the_real_p2_keeps_every_promise_on_these_instances():
    report = check_scoring("Realm-P2-v0", instances=INSTANCES, search_tries=30)
    assert report.ok, report.failures
    assert report.counts()["do-nothing"] == len(INSTANCES)
    assert report.mean_optimality("do-nothing") == 0.0 and report.mean_optimality("oracle") == 1.0


def test_doing_nothing_scored_optimal_is_caught():
    found = kinds("BrokenAlwaysOptimal-P2-v0")
    assert found["doing nothing scores optimality"] == len(INSTANCES)
    assert any(k.startswith("mean optimality of") for k in found)


def test_coordination_of_an_infeasible_plan_is_caught():
    assert kinds("BrokenInfeasibleCoordinates-P2-v0")["an infeasible plan scores coordination"] > 0


def test_an_optimality_that_rewards_dearer_plans_is_caught():
    assert kinds("BrokenInvertedOptimality-P2-v0")["a cheaper plan scores lower optimality"] > 0


def test_a_planning_quality_relative_to_the_reference_split_is_caught():
    found = kinds("BrokenSplitDependent-P2-v0")
    assert any(k.startswith("equal cost, different planning_quality") for k in found), found


def test_an_infeasible_plan_with_optimality_is_caught():
    assert kinds("BrokenInfeasibleScores-P2-v0")["an infeasible plan scores optimality"] > 0


def test_an_env_that_disagrees_with_its_checker_is_caught():
    found = kinds("BrokenLenientSim-P2-v0")
    assert found["the env and its checker disagree on cost"] > 0
    assert found["the env and its checker disagree on feasibility"] > 0  # the do-nothing plan, at least


def test_the_checker_is_asked_about_every_finished_episode():
    report = check_scoring("Realm-P2-v0", instances=INSTANCES[:2], search_tries=5)
    finished = [o for scores in report.instances for o in scores.outcomes if o.terminated]
    assert finished and all(o.checked is not None for o in finished)
    assert all(o.checked[0] == o.feasible for o in finished)
    assert all(o.checked[1] == pytest.approx(o.cost) for o in finished if o.feasible)


def test_a_reference_that_a_plan_beats_is_caught():
    # a reference value above every plan's cost: the greedy's and random plans beat it
    found = kinds("Realm-P2-v0", make_kwargs={"reference": 1e9})
    assert any(k.startswith("a plan beats the reference") for k in found), found


def test_the_emptiest_arguments_empty_every_list_and_keep_every_key():
    schema = {"type": "object", "properties": {
        "routes": {"type": "object", "properties": {"v1": {"type": "array"}, "v2": {"type": "array"}}},
        "trips": {"type": "array"}}}
    assert emptiest_arguments(schema) == {"routes": {"v1": [], "v2": []}, "trips": []}


def test_reorderings_shuffle_records_and_keep_sequences():
    plan = {"trips": [{"a": 1}, {"a": 2}, {"a": 3}], "route": ["x", "y", "z"]}
    variants = reorderings(plan, np.random.default_rng(0), 5)
    assert variants and all(v["route"] == ["x", "y", "z"] for v in variants)
    assert all(sorted(t["a"] for t in v["trips"]) == [1, 2, 3] for v in variants)
    assert any(v["trips"] != plan["trips"] for v in variants)


def test_mutate_changes_the_plan_and_never_the_original():
    plan = {"assignments": {"g1": [{"group": "a", "start": 540}], "g2": [{"group": "b", "start": 600}]}}
    before = repr(plan)
    rng = np.random.default_rng(1)
    neighbours = [mutate(plan, rng) for _ in range(40)]
    assert repr(plan) == before
    assert all(n != plan for n in neighbours)
