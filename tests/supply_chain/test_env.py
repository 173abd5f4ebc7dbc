"""Realm-P10-v0: contract, actions and masks, plans, disruptions, metrics, policies, renders."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.checks.contract import state_snapshot
from crab_gym.envs.realm.common.disruptions import DisruptiveEnv, InvalidDisruptionError
from crab_gym.envs.realm.supply_chain.env import LEVELS, SupplyChainEnv
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.heuristics import greedy_action
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.wrappers.disruption import DisruptionWrapper

METRICS = {"planning_quality", "optimality", "constraint_satisfaction", "coordination", "adaptation"}


def play(env, choose, max_steps=2000):
    obs, info = env.reset(seed=0)
    total = 0.0
    for _ in range(max_steps):
        obs, reward, terminated, truncated, info = env.step(choose(obs, info))
        assert info["valid"], info["error"]
        total += reward
        if terminated:
            return total, {**info, "metrics": finished_metrics(env, info)}  # the runner's metrics
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("kwargs", [
    {}, {"instance": "p10_medium_02", "render_mode": "rgb_array"}, {"render_mode": "ansi"},
    {"generator": {"n_components": 2, "n_suppliers": 2, "n_days": 7}},
])
def test_check_env(kwargs):
    check_env(SupplyChainEnv(**kwargs))


@pytest.mark.parametrize("name", ["p10_small_00", "p10_medium_03", "p10_large_01"])
def test_oracle_policy_scores_one(name):
    env = SupplyChainEnv(name)
    policy = OraclePolicy(env)
    total, info = play(env, policy)
    m = info["metrics"]
    assert m["optimality"] == 1.0 and m["adaptation"] == 1.0
    assert m["cost"] == m["reference_cost"] == env.reference.value
    assert m["shortfall"] == env.reference.extra["shortfall"] and m["feasible"]
    assert m["constraint_satisfaction"] == 1.0
    assert m["coordination"] == 1.0  # p10_medium_03: the push chain beats the reference, which still scores 1
    # the sub-goals count GPUs packaged: the reference delivers every one
    assert total == pytest.approx(1.0) and info["completeness"] == 1.0 and m["shortfall"] == 0
    assert set(METRICS) <= set(m)


def test_step_actions_move_goods_through_the_stages():
    inst = generate_p10("small", 5).model_copy(update={"disruptions": []})
    env = SupplyChainEnv(inst)
    env.reset()
    sim = env.sim
    lead = inst.suppliers[1].lead_time
    stock = list(sim.on_hand)
    _, _, _, _, info = env.step({"name": "order", "arguments": {"component": "gpu_chips", "supplier": "supplier2",
                                                                "quantity": 1}})
    assert info["valid"] and sim.purchase == inst.prices[1][0] and info["spent"] == sim.purchase
    env.step({"name": "order", "arguments": {"component": "memory", "supplier": "supplier2", "quantity": 5}})
    obs = env.step({"name": "next_day", "arguments": {}})[0]
    assert obs["arrivals"][0, lead] == 1 and obs["arrivals"][1, lead] == 5 and obs["day"][0] == 1
    while sim.day < lead:
        env.step({"name": "next_day", "arguments": {}})
    assert sim.on_hand == [stock[0] + 1, stock[1] + 5]
    info = env.step({"name": "produce", "arguments": {"facility": "assembly", "quantity": 1}})[4]
    assert info["valid"] and sim.made_today[0] == 1
    assert sim.on_hand == [stock[0], stock[1] + 5 - inst.components[1].bom]
    masked = env.step({"name": "produce", "arguments": {"facility": "testing", "quantity": 1}})[4]
    assert not masked["valid"] and "no input" in masked["error"]  # assembled today, testable tomorrow
    env.step({"name": "next_day", "arguments": {}})
    assert env.step({"name": "produce", "arguments": {"facility": "testing", "quantity": 1}})[4]["valid"]


def test_invalid_actions_change_nothing_and_say_why():
    env = SupplyChainEnv("p10_small_01")
    env.reset(seed=0)
    before = state_snapshot(env)
    big = max(LEVELS)
    cases = [
        ({"name": "order", "arguments": {"component": "gpu_chips", "supplier": "supplier1", "quantity": big}},
         "can help today, not 500"),
        ({"name": "produce", "arguments": {"facility": "packaging", "quantity": 1}}, "no input"),
        ({"name": "order", "arguments": {"component": "unobtainium", "supplier": "supplier1", "quantity": 1}}, "component"),
        ({"name": "produce", "arguments": {"facility": "assembly", "quantity": 3}}, "quantity"),
        ({"name": "submit_plan", "arguments": {"orders": [{"component": "gpu_chips", "supplier": "supplier1",
                                                           "quantity": 90, "day": 0}]}}, "orders[0] (day 0)"),
    ]
    for call, words in cases:
        obs, reward, terminated, _, info = env.step(call)
        assert not info["valid"] and words in info["error"], (call, info["error"])
        assert reward == 0.0 and not terminated
        assert state_snapshot(env) == before


def test_mask_lists_exactly_the_useful_quantities():
    env = SupplyChainEnv("p10_small_02")
    env.reset()
    mask = env.action_masks()
    sim = env.sim
    for c, comp in enumerate(env.instance.components):
        for s, sid in enumerate(env.instance.supplier_ids):
            left = sim.order_useful(c, s)[0]
            for q in LEVELS:
                flat = env.codec.call_to_flat({"name": "order", "arguments": {"component": comp.name, "supplier": sid,
                                                                              "quantity": q}})
                assert mask[flat] == (q <= left)
    assert mask[env.codec.call_to_flat({"name": "next_day", "arguments": {}})]


def test_days_without_choices_pass_by_themselves_and_the_episode_ends_on_the_last_day():
    env = SupplyChainEnv("p10_small_03")
    env.reset()
    days = []
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step({"name": "next_day", "arguments": {}})
        days.append(info["day"])
    assert days[-1] == env.instance.end_day > env.instance.due_day  # late GPUs could be packaged until then
    assert len(days) < env.instance.n_days  # some days passed by themselves
    m = info["metrics"]
    assert m["delivered"] == 0 and 0.0 < m["optimality"] <= 0.05 and "delivery" in m["violations"]
    assert m["feasible"]  # short of every GPU, at the shortfall penalty each
    assert m["planning_quality"] == 0.0 and m["constraint_satisfaction"] == pytest.approx(7 / 8)


def test_submit_plan_pauses_at_a_disruption_and_takes_the_same_plan_again():
    env = SupplyChainEnv("p10_small_00")
    env.reset()
    plan = env.reference.plan
    _, _, terminated, _, info = env.step({"name": "submit_plan", "arguments": plan})
    assert not terminated and info["paused"] and info["disruptions"]
    assert info["pending_plan"]["orders"] or info["pending_plan"]["production"]
    assert all(o["day"] >= info["day"] for o in info["pending_plan"]["orders"])
    while not terminated:
        _, _, terminated, _, info = env.step({"name": "submit_plan", "arguments": plan})
    assert info["metrics"]["optimality"] == 1.0
    solution = info["solution"]
    assert {"component", "cost", "eta"} <= set(solution["orders"][0])  # REALM's shape, and more
    assert len(solution["disruptions"]) == 2


def test_greedy_heuristic_plays_valid_episodes_close_to_the_reference():
    scores = []
    for name in ("p10_small_00", "p10_small_04", "p10_medium_00"):
        env = SupplyChainEnv(name, adaptation_reference="oracle")
        _, info = play(env, lambda obs, info, env=env: greedy_action(env))
        scores.append(info["metrics"]["optimality"])
    assert min(scores) > 0.9 and max(scores) < 1.0


def test_random_play_scores_below_the_greedy_one():
    env = SupplyChainEnv("p10_small_00", adaptation_reference="oracle")
    rng = np.random.default_rng(0)
    total, info = play(env, lambda obs, info: env.codec.flat_to_call(int(rng.choice(np.flatnonzero(obs["action_mask"])))))
    assert 0.0 <= total <= 1.0 and info["metrics"]["optimality"] < 0.9


def test_disruption_protocol():
    env = SupplyChainEnv("p10_small_00")
    assert isinstance(env, DisruptiveEnv)
    env.reset()
    targets = env.disruption_targets()
    assert "gpu_chips" in targets["locations"] and "assembly" in targets["locations"]
    assert targets["window"] == (0, env.instance.end_day)
    with pytest.raises(InvalidDisruptionError, match="unknown component"):
        env.parse_disruption({"type": "resource_shortage", "location": "assembly"})
    with pytest.raises(InvalidDisruptionError, match="unknown disruption type"):
        env.parse_disruption({"type": "flood"})
    # now, at the start of a day: in force at once
    report = env.apply_disruption({"type": "machine_breakdown", "location": "packaging", "start": None, "duration": 2})
    assert report["applied"] and report["disruption"]["start"] == 0
    assert env.sim.facility_left(2) == 0 and env.step({"name": "next_day", "arguments": {}})[4]["day"] >= 1
    # after a decision today: from tomorrow, so no decision taken breaks it
    env.reset()
    env.step({"name": "order", "arguments": {"component": "memory", "supplier": "supplier2", "quantity": 1}})
    report = env.apply_disruption({"type": "resource_shortage", "component": "memory", "shortage": 1.0})
    assert report["scheduled"] and report["disruption"]["start"] == 1
    assert len(env.faced_schedule()) == 3


def test_injected_disruptions_change_the_reference_and_are_solved_once():
    env = DisruptionWrapper(SupplyChainEnv("p10_small_01"), disruptions=[
        {"type": "machine_breakdown", "facility": "testing", "start": 3, "duration": 2}])
    base = env.unwrapped
    shipped = base.reference.value
    env.reset(seed=0)
    assert len(base.faced_schedule()) == 3
    policy = OraclePolicy(env)
    total, info = play(env, policy)
    assert base.reference.source in ("solved", "cache") and base.reference.value != shipped
    assert info["metrics"]["optimality"] == 1.0 and info["metrics"]["disruptions_applied"] == 3


def test_reset_swaps_instances_of_the_same_shape_and_generator_draws():
    env = SupplyChainEnv("p10_small_00")
    other = generate_p10("small", 0, name="twin").model_copy(update={"demand": 12})
    env.reset(options={"instance": other})
    assert env.instance.name == "twin"
    with pytest.raises(ValueError, match="does not fit"):
        env.reset(options={"instance": "p10_large_00"})
    drawn = SupplyChainEnv(generator={"n_components": 2, "n_suppliers": 2, "n_days": 7})
    drawn.reset(seed=1)
    first = drawn.instance.fingerprint()
    drawn.reset(seed=2)
    assert drawn.instance.fingerprint() != first
    drawn.reset(seed=1)
    assert drawn.instance.fingerprint() == first


def test_renders_are_readable():
    env = SupplyChainEnv("p10_medium_01", render_mode="ansi")
    env.reset()
    env.step({"name": "next_day", "arguments": {}})
    text = env.render()
    assert "day" in text and "on hand" in text and "gpu_chips" in text and "spent" in text
    env.render_mode = "rgb_array"
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[1] == 760 and frame.shape[2] == 3
    assert (frame != 255).any(axis=2).mean() > 0.05  # drawn, not blank
