"""Realm-P6-v0 and Realm-P9-v0: the oracle plan scores 1, the greedy baseline, invalid moves
change nothing, infeasible plans score 0, delays and their announcement, the disruption
protocol, adaptation, renders, and the env's metrics against the independent checker."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.registry import policy_specs
from crab_gym.checks.contract import state_snapshot
from crab_gym.envs.realm.common.references import normalised_optimality
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.formats import load_p6
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_action, greedy_play
from crab_gym.envs.realm.thanksgiving.replan import replan_from
from crab_gym.envs.realm.thanksgiving.scoring import coordination, optimality_baseline
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.wrappers.disruption import DisruptionWrapper


def _play(env, policy, seed: int = 0, cap: int = 500):
    obs, info = env.reset(seed=seed)
    total = 0.0
    for _ in range(cap):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        total += reward
        if terminated:
            return total, {**info, "metrics": finished_metrics(env, info)}  # the runner's metrics
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("name", ["p6_small_03", "p6_medium_02", "p6_large_05"])
def test_oracle_policy_scores_one_on_p6(name):
    env = gym.make("Realm-P6-v0", instance=name)
    total, info = _play(env, OraclePolicy(env))
    assert info["metrics"]["optimality"] == 1.0 and info["metrics"]["feasible"]
    assert info["metrics"]["coordination"] == 1.0  # the reference plan realises the whole gain
    assert total == pytest.approx(1.0)
    assert env.unwrapped.reference.source == "shipped"


@pytest.mark.parametrize("name", ["p9_small_01", "p9_medium_02", "p9_large_02"])
def test_oracle_policy_scores_one_on_p9_resubmitting_at_each_pause(name):
    env = gym.make("Realm-P9-v0", instance=name)
    base = env.unwrapped
    total, info = _play(env, OraclePolicy(env))
    m = info["metrics"]
    assert m["optimality"] == 1.0 and m["feasible"] and m["delays_announced"] == len(base.instance.delays)
    assert m["adaptation"] == 1.0 and total == pytest.approx(1.0)
    assert m["coordination"] == 1.0


def test_greedy_is_feasible_and_named_in_the_registry():
    spec = policy_specs()["thanksgiving_greedy"]
    assert spec.fits("Realm-P6-v0") and spec.fits("Realm-P9-v0") and not spec.fits("Realm-P2-v0")
    # p6_large_00: greedy serves dinner at 254 + 17 minutes against the best 254 and the
    # deadline's 315: (315 - 271) / (315 - 254) = 0.721.
    for env_id, name, expected in (("Realm-P6-v0", "p6_large_00", 0.721), ("Realm-P9-v0", "p9_large_05", 0.993)):
        env = gym.make(env_id, instance=name)
        _, info = _play(env, spec.factory(env))
        m = info["metrics"]
        assert m["feasible"] and m["planning_quality"] == 1.0 and m["late_minutes"] == 0
        assert m["optimality"] == pytest.approx(expected, abs=1e-3)


def test_metrics_and_solution_agree_with_the_checker():
    env = gym.make("Realm-P9-v0", instance="p9_medium_01")
    _, info = _play(env, lambda o, i: greedy_action(env))
    base = env.unwrapped
    inst = base.instance
    sol = info["solution"]
    ref = base.reference
    solo = ref.extra["solo_bound"]
    baseline = optimality_baseline(inst, ref.value, solo)
    assert baseline == inst.deadline - inst.start_time  # the reference keeps the deadline
    verdict = check_plan(inst, sol, landings_of(inst, inst.delays), ref.value, baseline)
    for key in ("planning_quality", "optimality", "constraint_satisfaction"):
        assert info["metrics"][key] == pytest.approx(verdict.metrics[key])
    assert info["metrics"]["solo_cost"] == pytest.approx(solo) and info["metrics"]["baseline_cost"] == baseline
    assert info["metrics"]["coordination"] == pytest.approx(
        coordination(inst, ref.value, verdict.cost, verdict.feasible, solo))
    assert info["metrics"]["cost"] == pytest.approx(verdict.cost)
    assert {"pickups", "cooking_schedule", "dinner_ready", "cost", "delays"} <= set(sol)


def test_invalid_moves_change_nothing_and_say_why():
    env = gym.make("Realm-P6-v0", instance="p6_small_00").unwrapped
    env.reset(seed=0)
    env.step({"name": "start_task", "arguments": {"task": "turkey", "cook": "mom"}})
    before = state_snapshot(env)
    cases = [
        ({"name": "send_car", "arguments": {"car": "car1", "member": "mom"}}, "mom is home from the start"),
        ({"name": "start_task", "arguments": {"task": "potatoes", "cook": "sister"}}, "sister is not home yet"),
        ({"name": "start_task", "arguments": {"task": "gravy", "cook": "dad"}}, "gravy comes after turkey"),
        ({"name": "start_task", "arguments": {"task": "turkey", "cook": "mom"}}, "turkey is already cooked by mom"),
        ({"name": "start_task", "arguments": {"task": "soup", "cook": "mom"}}, "soup"),
        ({"name": "submit_plan", "arguments": {"pickups": [{"car": "car1", "member": "sister", "depart": 10}],
                                                "cooking_schedule": []}}, "before now"),
        ((9, {}), "outside the action space"),
    ]
    for action, words in cases:
        _, reward, terminated, _, info = env.step(action)
        assert not info["valid"] and words in info["error"] and reward == 0.0 and not terminated
        assert state_snapshot(env) == before


def test_a_plan_that_breaks_rules_is_scored_infeasible():
    env = gym.make("Realm-P6-v0", instance="p6_small_00")
    base = env.unwrapped
    env.reset(seed=0)
    plan = copy.deepcopy(base.reference.plan)
    plan["cooking_schedule"] = [{**c, "start": base.instance.start_time} for c in plan["cooking_schedule"]]
    _, reward, terminated, _, info = base.submit_plan(plan)
    m = info["metrics"]
    assert terminated and info["valid"] and not m["feasible"] and m["optimality"] == 0.0
    assert m["constraint_satisfaction"] < 1.0 and any(v.startswith("task:") for v in m["violations"])


def test_delays_are_hidden_until_announced_and_a_plan_pauses():
    env = gym.make("Realm-P9-v0", instance="p9_small_00")
    base = env.unwrapped
    obs, info = env.reset(seed=0)
    inst = base.instance
    (delay,) = inst.delays
    flyer = next(m for m in inst.travellers if inst.members[inst.member_index[m]].flight == delay.flight)
    i = inst.member_index[flyer]
    assert obs["member_landing"][i] == inst.flight_arrival[delay.flight] and obs["member_delay"][i] == 0
    obs, _, terminated, _, info = base.submit_plan(base.reference.plan)
    assert not terminated and info["paused"] and info["pending_plan"] and info["clock"] == (
        f"{delay.announced // 60:02d}:{delay.announced % 60:02d}")
    assert obs["member_landing"][i] == inst.flight_arrival[delay.flight] + delay.delay
    assert obs["member_delay"][i] == delay.delay and info["announced"] == [delay.describe()]
    assert info["disruptions"] == [delay.model_dump()]  # reported once, in the info after the announcement
    _, _, _, _, info = base.submit_plan(info["pending_plan"] and base.reference.plan)
    assert info["disruptions"] == []


def test_injected_delay_through_the_disruption_wrapper():
    plain = gym.make("Realm-P9-v0", instance=load_p6("p6_small_00"))  # a P6 instance: no delay of its own
    env = DisruptionWrapper(gym.make("Realm-P9-v0", instance=load_p6("p6_small_00")),
                            [{"type": "flight_delay", "location": "flight1", "start": None, "delay": 45}])
    obs, info = env.reset(seed=0)
    base = env.unwrapped
    inst = base.instance
    (flyer,) = [m for m in inst.travellers if inst.members[inst.member_index[m]].flight == "flight1"]
    assert obs["member_delay"][inst.member_index[flyer]] == 45
    assert base.kitchen.landing(flyer) == inst.landing(flyer) + 45
    assert [d.delay for d in base.faced_schedule()] == [45]
    ref, own = base.solved_reference(), plain.unwrapped.solved_reference()
    assert ref.fingerprint != own.fingerprint and ref.source in ("solved", "cache")  # it faces the delay
    assert ref.value >= own.value
    with pytest.raises(Exception, match="unknown flight"):
        base.apply_disruption({"type": "flight_delay", "location": "flight9", "start": None, "delay": 5})
    _, info = _play(env, OraclePolicy(env))
    assert info["metrics"]["optimality"] == 1.0 and 0.0 <= info["metrics"]["adaptation"] <= 1.0


def test_adaptation_scores_a_poor_replan_below_one():
    env = gym.make("Realm-P9-v0", instance="p9_small_06").unwrapped
    env.reset(seed=0)
    while True:  # greedy, but once the delay is announced, start the last dishes first
        call, k = greedy_action(env), env.kitchen
        if k.announced and call["name"] == "start_task":
            task, cook = next((t, c) for t in env.instance.task_ids[::-1] for c in env.instance.skilled(t)
                              if k.why_not_start(t, c) is None)
            call = {"name": "start_task", "arguments": {"task": task, "cook": cook}}
        _, _, terminated, _, info = env.step(call)
        if terminated:
            break
    m = env.finish_metrics()  # the re-solve runs after the episode, not inside step()
    snapshot = env.kitchen.first_announcement
    replan = replan_from(snapshot)
    greedy = check_plan(env.instance, greedy_play(snapshot.copy()).plan(), landings_of(env.instance, env.instance.delays))
    best = min(c.cost for c in (replan, greedy) if c.feasible)
    assert m["feasible"] and m["adaptation_reference_cost"] == pytest.approx(best)
    on_time = env.instance.deadline - env.instance.start_time  # the continuation keeps the deadline
    assert best < on_time and m["cost"] > best
    assert m["adaptation"] == pytest.approx(normalised_optimality(best, m["cost"], True, on_time))
    assert m["adaptation"] < 0.8


def test_renders_are_readable_sizes():
    env = gym.make("Realm-P9-v0", instance="p9_large_05", render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(10):
        env.step(greedy_action(env))
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[1] == 760 and frame.shape[2] == 3
    assert (frame != 255).any(axis=2).mean() > 0.05  # not blank
    text = gym.make("Realm-P9-v0", instance="p9_large_05", render_mode="ansi")
    text.reset(seed=0)
    out = text.render()
    assert out.startswith("p9_large_05: ") and "car1" in out and "to cook:" in out


def test_generator_draws_a_fresh_seeded_instance_per_reset():
    env = gym.make("Realm-P9-v0", generator={"n_members": 4, "n_tasks": 5, "n_cars": 2})
    obs1, _ = env.reset(seed=3)
    first = env.unwrapped.instance
    obs2, _ = env.reset(seed=4)
    assert env.unwrapped.instance != first and env.unwrapped.instance.member_ids == first.member_ids
    env.reset(seed=3)
    assert env.unwrapped.instance == first and env.unwrapped.instance.delays
    with pytest.raises(ValueError, match="other car/member/task ids"):
        env.reset(options={"instance": "p9_large_00"})
