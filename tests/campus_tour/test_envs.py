"""Realm-P1-v0: Gymnasium contract, masks, plans, metrics and rendering."""


import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.envs.realm.campus_tour.checker import check_p1
from crab_gym.envs.realm.campus_tour.formats import load_p1
from crab_gym.envs.realm.campus_tour.heuristics import InsertionTourPolicy
from crab_gym.envs.realm.campus_tour.oracle import brute_force_p1
from crab_gym.envs.realm.campus_tour.references import shipped_p1_references
from crab_gym.evaluation.episode_runner import finished_metrics
from tests.realm_helpers import P1_ID, ensure_registered, metrics_match, random_masked, run_policy

ensure_registered()

METRICS = ("planning_quality", "optimality", "constraint_satisfaction")


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        (P1_ID, {}),
        (P1_ID, {"instance": "p1_medium_02", "render_mode": "rgb_array"}),
        (P1_ID, {"instance": "p1_small_03", "render_mode": "ansi"}),
        (P1_ID, {"generator": 4, "reference": 60}),
    ],
)
def test_check_env_through_gym_make(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped)
    env.close()


def test_p1_spaces_and_first_observation():
    env = gym.make(P1_ID)
    obs, info = env.reset(seed=0)
    base = env.unwrapped
    assert base.instance.name == "p1_small_00"
    assert [t["function"]["name"] for t in base.tools()] == ["visit", "submit_plan"]
    enum = base.tools()[0]["function"]["parameters"]["properties"]["location"]["enum"]
    assert enum == [*base.instance.targets, "entrance"]
    assert base.codec.n_flat == 9 and obs["action_mask"].shape == (9,)
    assert obs["clock"][0] == 510 and obs["location"] == 0 and obs["travel_left"][0] == 70
    assert info["clock"] == 510 and info["location"] == "entrance" and info["metrics"] == {}


def test_generator_mode_is_fixed_by_the_seed():
    env = gym.make(P1_ID, generator={"n_targets": 5, "size": "medium"})
    a = env.reset(seed=3)[0]
    inst_a = env.unwrapped.instance
    b = env.reset(seed=3)[0]
    assert env.unwrapped.instance == inst_a and np.array_equal(a["travel"], b["travel"])
    env.reset(seed=4)
    assert env.unwrapped.instance != inst_a
    assert env.unwrapped.instance.locations == inst_a.locations  # same actions every episode


def test_p1_masked_visit_is_refused_and_changes_nothing():
    env = gym.make(P1_ID, instance="p1_small_00", invalid_action_penalty=0.1)
    obs, _ = env.reset(seed=0)
    base = env.unwrapped
    # the north dormitory opens at 09:15: leaving at 08:30, the visitor waits there 27 min
    obs, _, _, _, info = env.step({"name": "visit", "arguments": {"location": "dormitory_north"}})
    assert info["valid"] and info["event"] == "arrived at dormitory_north at 08:48, waited 27 min"
    obs, _, _, _, info = env.step({"name": "visit", "arguments": {"location": "dormitory_north"}})
    assert not info["valid"] and "already visited" in info["error"]
    before = (base.tour.clock, base.tour.walked, list(base.tour.route))
    for flat in np.flatnonzero(~base.action_masks()):
        obs, reward, term, _, info = env.step(base.codec.flat_to_call(int(flat)))
        assert not info["valid"] and reward == -0.1 and not term
    assert (base.tour.clock, base.tour.walked, list(base.tour.route)) == before
    # after the dormitory, the seven other locations and the way back all remain possible
    assert base.action_masks().sum() == 8 and np.array_equal(obs["action_mask"], base.action_masks())
    # on to the art museum (12 min, 09:27): the greenhouse (09:40) is 14 min away, so it closes
    obs, _, _, _, info = env.step({"name": "visit", "arguments": {"location": "art_museum"}})
    assert info["clock"] == 9 * 60 + 27
    greenhouse = base.codec.call_to_flat({"name": "visit", "arguments": {"location": "greenhouse"}})
    assert not obs["action_mask"][greenhouse]
    *_, info = env.step({"name": "visit", "arguments": {"location": "greenhouse"}})
    assert not info["valid"] and "after it closes at 09:40" in info["error"]


def test_p1_mask_never_blocks_a_feasible_route():
    for name in ("p1_small_02", "p1_medium_05"):
        env = gym.make(P1_ID, instance=name)
        env.reset(seed=0)
        route = shipped_p1_references()[name]["plan"]["route"]
        for loc in route[1:]:
            flat = env.unwrapped.codec.call_to_flat({"name": "visit", "arguments": {"location": loc}})
            assert env.unwrapped.action_masks()[flat], loc
            *_, info = env.step({"name": "visit", "arguments": {"location": loc}})
        assert info["metrics"]["optimality"] == 1.0


@pytest.mark.parametrize("name", ["p1_small_00", "p1_medium_03", "p1_large_01"])
def test_p1_oracle_plan_scores_one(name):
    env = gym.make(P1_ID, instance=name)
    env.reset(seed=0)
    rec = shipped_p1_references()[name]
    obs, reward, term, trunc, info = env.unwrapped.submit_plan(rec["plan"])
    assert term and info["valid"]
    m = info["metrics"]
    assert m["optimality"] == 1.0 and m["planning_quality"] == 1.0 and m["constraint_satisfaction"] == 1.0
    assert m["travel_minutes"] == rec["value"] and reward == pytest.approx(1.0)
    assert info["solution"]["route"] == rec["plan"]["route"]
    metrics_match(m, check_p1(env.unwrapped.instance, info["solution"], rec["value"]).metrics)


def test_p1_plan_after_some_visits_and_plan_errors():
    env = gym.make(P1_ID, instance="p1_small_00")
    env.reset(seed=0)
    route = shipped_p1_references()["p1_small_00"]["plan"]["route"]
    env.step({"name": "visit", "arguments": {"location": route[1]}})
    bad = [
        (["entrance", route[2], *route[3:]], "must begin with the locations walked so far"),
        (route[:-1], "must end at entrance"),
        ([*route[:3], route[2], *route[3:]], "listed twice"),
        (route[:3] + ["entrance"] + route[3:], "may only open and close"),
    ]
    for plan, why in bad:
        *_, info = env.unwrapped.submit_plan({"route": plan})
        assert not info["valid"] and why in info["error"]
    *_, info = env.step({"name": "submit_plan", "arguments": {"route": route}})
    assert info["valid"] and info["metrics"]["optimality"] == 1.0


def test_p1_infeasible_plan_is_scored_not_refused():
    name = "p1_small_00"
    inst = load_p1(name)
    env = gym.make(P1_ID, instance=name)
    env.reset(seed=0)
    # the dormitory (waiting until 09:15) and the art museum first: the greenhouse (09:40) is missed
    route = shipped_p1_references()[name]["plan"]["route"]
    first = ["dormitory_north", "art_museum"]
    plan = {"route": ["entrance", *first, *[x for x in route[1:-1] if x not in first], "entrance"]}
    *_, info = env.unwrapped.submit_plan(plan)
    m = info["metrics"]
    assert info["valid"] and not m["feasible"] and m["optimality"] == 0.0
    assert m["constraint_satisfaction"] < 1.0
    metrics_match(m, check_p1(inst, plan, 61).metrics)
    # skipping a location: planning quality counts the visited share
    env.reset(seed=0)
    *_, info = env.unwrapped.submit_plan({"route": ["entrance", "admin_building", "entrance"]})
    assert info["metrics"]["planning_quality"] == pytest.approx(1 / 8)


@pytest.mark.parametrize("name", ["p1_small_01", "p1_medium_00", "p1_large_02"])
def test_p1_greedy_policy_is_feasible_and_checked_independently(name):
    env = gym.make(P1_ID, instance=name)
    info, ret, steps = run_policy(env, InsertionTourPolicy(env))
    m = info["metrics"]
    assert m["feasible"] and m["planning_quality"] == 1.0 and 0.75 < m["optimality"] <= 1.0
    check = check_p1(env.unwrapped.instance, {"route": info["solution"]["route"]}, m["reference"])
    assert check.feasible and check.cost == m["travel_minutes"]
    metrics_match(m, check.metrics)
    assert ret == pytest.approx(0.5 + 0.5 * m["optimality"])
    assert steps == env.unwrapped.instance.n


@pytest.mark.parametrize("seed", range(6))
def test_p1random_masked_rollouts_agree_with_the_checker(seed):
    env = gym.make(P1_ID, instance="p1_medium_01")
    info, ret, _ = run_policy(env, random_masked(env, seed), seed=seed)
    check = check_p1(env.unwrapped.instance, info["solution"], info["metrics"]["reference"])
    metrics_match(info["metrics"], check.metrics)
    assert check.constraints["route_shape"] and 0.0 <= ret <= 1.0


def test_p1_small_generated_episode_scores_against_brute_force():
    env = gym.make(P1_ID, generator=5)
    env.reset(seed=8)
    inst = env.unwrapped.instance
    best, route = brute_force_p1(inst)
    *_, info = env.unwrapped.submit_plan({"route": route})
    metrics = finished_metrics(env, info)  # the runner's metrics
    assert metrics["reference"] == best and metrics["optimality"] == 1.0


def test_renders():
    env = gym.make(P1_ID, instance="p1_medium_00", render_mode="rgb_array")
    env.reset(seed=0)
    blank = env.render()
    first = env.unwrapped.codec.flat_to_call(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    env.step(first)
    frame = env.render()
    assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8 and not np.array_equal(blank, frame)
    text = gym.make(P1_ID, render_mode="ansi")
    text.reset(seed=0)
    assert "greenhouse [08:30-09:40], dormitory_north [09:15-10:45]" in text.render()
