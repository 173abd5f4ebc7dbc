"""Realm-P2-v0: Gymnasium contract, masks, plans, metrics and rendering."""


import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.envs.realm.group_tours.checker import check_p2
from crab_gym.envs.realm.group_tours.formats import load_p2
from crab_gym.envs.realm.group_tours.heuristics import EarliestStartPolicy
from crab_gym.envs.realm.group_tours.oracle import brute_force_p2
from crab_gym.envs.realm.group_tours.references import shipped_p2_references
from tests.realm_helpers import P2_ID, ensure_registered, metrics_match, random_masked, run_policy

ensure_registered()


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        (P2_ID, {}),
        (P2_ID, {"instance": "p2_medium_04", "render_mode": "rgb_array"}),
        (P2_ID, {"instance": "p2_large_01", "render_mode": "ansi"}),
        (P2_ID, {"generator": {"n_groups": 5, "n_guides": 2}, "reference": 100}),
    ],
)
def test_check_env_through_gym_make(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped)
    env.close()


def test_p2_spaces_and_first_observation():
    env = gym.make(P2_ID)
    obs, info = env.reset(seed=0)
    base = env.unwrapped
    assert base.instance.name == "p2_small_00"
    assert [t["function"]["name"] for t in base.tools()] == ["assign", "submit_plan"]
    plan_schema = base.tools()[1]["function"]["parameters"]["properties"]["assignments"]
    assert set(plan_schema["properties"]) == {"guide1", "guide2"}
    assert base.codec.n_flat == 6 * 2 and obs["action_mask"].all()
    assert obs["group_arrival"].tolist() == [g.arrival for g in base.instance.groups]


def test_generator_mode_is_fixed_by_the_seed():
    env2 = gym.make(P2_ID, generator={"n_groups": 6, "n_guides": 3})
    env2.reset(seed=11)
    first = env2.unwrapped.instance
    env2.reset(seed=11)
    assert env2.unwrapped.instance == first


def test_p2_assign_uses_the_earliest_free_slot_and_masks():
    env = gym.make(P2_ID, instance="p2_small_00")
    env.reset(seed=0)
    base = env.unwrapped
    inst = base.instance
    g1 = inst.groups[0]
    *_, info = env.step({"name": "assign", "arguments": {"group": "group1", "guide": "guide1"}})
    assert info["valid"] and base.schedule.start[0] == max(g1.arrival, inst.guides[0].available_from)
    *_, info = env.step({"name": "assign", "arguments": {"group": "group1", "guide": "guide2"}})
    assert not info["valid"] and "already has a guide" in info["error"]
    mask = base.action_masks().reshape(6, 2)
    assert not mask[0].any() and mask[1:].all()
    # group2 goes to guide1 after group1's tour (or before it, if it fits)
    env.step({"name": "assign", "arguments": {"group": "group2", "guide": "guide1"}})
    a, b = sorted(base.schedule.start[:2])
    assert b - a >= inst.tour_duration


@pytest.mark.parametrize(
    ("name", "coordination"), [("p2_small_03", 1.0), ("p2_medium_01", 7 / 8), ("p2_large_04", 1.0)]
)
def test_p2_oracle_plan_scores_one(name, coordination):
    env = gym.make(P2_ID, instance=name)
    env.reset(seed=0)
    rec = shipped_p2_references()[name]
    obs, reward, term, trunc, info = env.unwrapped.submit_plan(rec["plan"])
    m = info["metrics"]
    assert term and m["optimality"] == 1.0 and m["cost"] == rec["value"]
    assert m["planning_quality"] == m["constraint_satisfaction"] == 1.0
    assert m["coordination"] == pytest.approx(coordination)
    assert reward == pytest.approx(1.0)
    metrics_match(m, check_p2(env.unwrapped.instance, info["solution"], rec["value"]).metrics)


def test_p2_plan_must_keep_earlier_assignments_and_list_groups_once():
    env = gym.make(P2_ID, instance="p2_small_00")
    env.reset(seed=0)
    plan = shipped_p2_references()["p2_small_00"]["plan"]
    first = plan["assignments"]["guide2"][0]  # group3 with guide2
    env.step({"name": "assign", "arguments": {"group": "group3", "guide": "guide1"}})
    *_, info = env.unwrapped.submit_plan(plan)
    assert not info["valid"] and "group3 is already assigned to guide1" in info["error"]
    env.reset(seed=0)
    doubled = {"assignments": {"guide1": [first], "guide2": [first]}}
    *_, info = env.unwrapped.submit_plan(doubled)
    assert not info["valid"] and "listed more than once" in info["error"]


def test_p2_infeasible_plan_is_scored_with_its_violations():
    env = gym.make(P2_ID, instance="p2_small_00")
    env.reset(seed=0)
    inst = env.unwrapped.instance
    early = inst.groups[0].arrival - 30
    plan = {"assignments": {"guide1": [{"group": "group1", "start": early}, {"group": "group2", "start": early + 10}]}}
    *_, info = env.unwrapped.submit_plan(plan)
    m = info["metrics"]
    assert info["valid"] and not m["feasible"] and m["optimality"] == 0.0
    check = check_p2(inst, plan, 45)
    assert set(check.violations) >= {"group:group1", "no_overlap:guide1", "group:group3"}
    metrics_match(m, check.metrics)
    assert m["coordination"] == 0.0  # guide1's two tours overlap: both listings conflict


@pytest.mark.parametrize("name", ["p2_small_05", "p2_medium_04", "p2_large_00"])
def test_p2_greedy_policy_is_feasible_and_checked_independently(name):
    env = gym.make(P2_ID, instance=name)
    info, ret, steps = run_policy(env, EarliestStartPolicy(env))
    m = info["metrics"]
    assert m["feasible"] and m["planning_quality"] == 1.0
    check = check_p2(env.unwrapped.instance, {"assignments": info["solution"]["assignments"]}, m["reference"])
    assert check.feasible and check.cost == m["cost"]
    metrics_match(m, check.metrics)
    assert 0.0 < m["optimality"] <= 1.0 and steps == len(env.unwrapped.instance.groups)


@pytest.mark.parametrize("seed", range(6))
def test_p2random_masked_rollouts_agree_with_the_checker(seed):
    env = gym.make(P2_ID, instance="p2_medium_02")
    info, ret, _ = run_policy(env, random_masked(env, seed), seed=seed)
    check = check_p2(env.unwrapped.instance, info["solution"], info["metrics"]["reference"])
    metrics_match(info["metrics"], check.metrics)
    assert 0.0 <= ret <= 1.0


def test_p2_step_wise_oracle_order_reaches_the_optimum():
    env = gym.make(P2_ID, instance="p2_small_01")
    env.reset(seed=0)
    best, plan = brute_force_p2(env.unwrapped.instance)
    for guide, tours in plan.items():
        for tour in tours:
            *_, info = env.step({"name": "assign", "arguments": {"group": tour["group"], "guide": guide}})
    assert info["metrics"]["cost"] == best and info["metrics"]["optimality"] == 1.0


def test_reference_is_looked_up_again_for_a_new_instance():
    env = gym.make(P2_ID, instance="p2_small_01")
    env.reset(seed=0)
    assert env.unwrapped.reference.source == "shipped"
    edited = load_p2("p2_small_01").model_copy(update={"balance_weight": 0})
    env.reset(seed=0, options={"instance": edited})
    assert env.unwrapped.reference.status == "PENDING"  # not shipped: not solved by reading it (deferred)
    ref = env.unwrapped.solved_reference()
    assert ref.source == "solved" and ref.value == brute_force_p2(edited)[0]
    *_, info = env.step({"name": "submit_plan", "arguments": ref.plan})
    assert info["metrics"]["optimality"] == 1.0
    env.reset(seed=0)  # the same instance again: the reference is kept, not solved again
    assert env.unwrapped.reference is ref


def test_p2_reset_after_a_submitted_plan_starts_afresh():
    env = gym.make(P2_ID)
    env.reset(seed=0)
    env.step({"name": "submit_plan", "arguments": env.unwrapped.reference.plan})
    assert not env.unwrapped.action_masks().any()
    for options in (None, {"instance": "p2_small_00"}):
        obs, _ = env.reset(seed=0, options=options)
        assert obs["action_mask"].all() and env.unwrapped.action_masks().all()
        *_, term, _, info = env.step({"name": "assign", "arguments": {"group": "group1", "guide": "guide1"}})
        assert info["valid"] and not term


def test_renders():
    env = gym.make(P2_ID, instance="p2_small_00", render_mode="rgb_array")
    env.reset(seed=0)
    blank = env.render()
    env.step({"name": "assign", "arguments": {"group": "group1", "guide": "guide1"}})
    assert not np.array_equal(blank, env.render())
    text = gym.make(P2_ID, render_mode="ansi")
    text.reset(seed=0)
    text.step({"name": "assign", "arguments": {"group": "group1", "guide": "guide1"}})
    assert "guide1 [09:00-17:00, cap 15]: group1@09:00" in text.render()
