"""Realm-P3-v0: Gymnasium contract, masks, plan submission, metrics checked independently."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.envs.realm.common.errors import RealmRepairWarning
from crab_gym.envs.realm.ridesharing.checker import check_plan
from crab_gym.envs.realm.ridesharing.env import RideSharingEnv
from crab_gym.envs.realm.ridesharing.generator import generate_p3
from crab_gym.envs.realm.ridesharing.heuristics import greedy_action, run_greedy
from crab_gym.envs.realm.ridesharing.references import shipped_references, solo_reference
from crab_gym.evaluation.episode_runner import finished_metrics

from . import upstream_files as up

REALM_KEYS = {"planning_quality", "optimality", "constraint_satisfaction", "coordination"}


def test_check_env_shipped_and_rendering():
    env = gym.make("Realm-P3-v0", instance="p3_medium_02", render_mode="rgb_array")
    check_env(env.unwrapped)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (360, 480, 3) and frame.dtype == np.uint8 and frame.std() > 0
    text = RideSharingEnv("p3_small_01", render_mode="ansi")
    text.reset(seed=0)
    assert "clock 07:00" in text.render() and "pickup" in text.render()


def test_make_with_upstream_path(tmp_path):
    path = up.write(tmp_path, "p3_hand.json", up.p3_mapping())
    with pytest.warns(RealmRepairWarning):
        env = gym.make("Realm-P3-v0", instance=str(path))
    check_env(env.unwrapped)
    obs, info = env.reset(seed=1)
    assert obs["request_times"].tolist()[1] == [525.0, 565.0, 610.0]  # repaired window, our deadline reading
    _, info = run_greedy(env, seed=1)
    assert finished_metrics(env, info)["constraint_satisfaction"] == 1.0  # the runner's metrics


@pytest.mark.parametrize("name", ["p3_small_02", "p3_medium_03", "p3_large_01"])
def test_greedy_is_feasible_and_checker_recomputes_metrics(name):
    env = RideSharingEnv(name)
    total, info = run_greedy(env, seed=0)
    metrics, solution = info["metrics"], info["solution"]
    assert REALM_KEYS <= set(metrics)
    assert all(0.0 <= metrics[k] <= 1.0 for k in REALM_KEYS if metrics[k] is not None)  # coordination may be None
    assert metrics["violations"] == [] and metrics["constraint_satisfaction"] == 1.0
    solo = solo_reference(env.instance)["value"]
    report = check_plan(env.instance, solution, reference_cost=metrics["reference_cost"], solo_cost=solo)
    assert report["feasible"]
    assert report["cost"] == metrics["cost"] and report["served"] == metrics["served"]
    for key in REALM_KEYS:
        mine, env_value = report["metrics"][key], metrics[key]
        assert mine is env_value is None or mine == pytest.approx(env_value)
    assert 0.0 < total <= 1.0 + 1e-9


def test_submitting_the_oracle_plan_scores_one():
    ref = shipped_references("p3")["p3_medium_01"]
    env = RideSharingEnv("p3_medium_01")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step({"name": "submit_plan", "arguments": {"assignments": ref["plan"]}})
    assert terminated and info["valid"]
    assert info["metrics"]["optimality"] == 1.0 and info["metrics"]["cost"] == ref["value"]
    assert info["solution"] == {"assignments": ref["plan"]}
    assert reward == pytest.approx(1.0)  # every sub-goal at optimal cost
    assert info["completeness"] == 1.0


def test_a_worse_plan_scores_below_one_and_late_stops_count_as_violations():
    env = RideSharingEnv("p3_small_02")
    env.reset(seed=0)
    inst = env.instance
    # one vehicle takes everyone in id order: legal structure, but slow and late
    order = [s for r in inst.requests for s in (f"pickup:{r.passenger_id}", f"dropoff:{r.passenger_id}")]
    plan = {inst.vehicles[0].vehicle_id: order}
    _, _, done, _, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
    assert done and info["valid"]
    report = check_plan(inst, info["solution"], reference_cost=info["metrics"]["reference_cost"])
    assert report["feasible"] == (info["metrics"]["violations"] == [])
    assert report["metrics"]["constraint_satisfaction"] == pytest.approx(info["metrics"]["constraint_satisfaction"])
    assert info["metrics"]["optimality"] < 1.0


@pytest.mark.parametrize(
    "plan, message",
    [
        ({"v1": ["dropoff:p1"]}, "before the passenger is picked up"),
        ({"v1": ["pickup:p1"]}, "never dropped off"),
        ({"v1": ["pickup:p1", "dropoff:p1"], "v2": ["pickup:p1", "dropoff:p1"]}, "appears twice"),
        ({"v9": []}, "v9"),
        ({"v1": ["pickup:zz"]}, "zz"),
    ],
)
def test_malformed_plans_are_invalid_and_change_nothing(plan, message):
    env = RideSharingEnv("p3_small_01")
    obs, _ = env.reset(seed=0)
    _, reward, done, _, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
    assert not info["valid"] and message in info["error"] and not done and reward == 0.0
    after = env._get_obs()
    for key in obs:
        assert np.array_equal(obs[key], after[key])


def test_masks_agree_with_validation_and_time_moves_forward():
    env = RideSharingEnv("p3_medium_02")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    clock = env.sim.clock
    while True:
        mask = env.action_masks()
        assert mask.any()
        bad = rng.choice(np.flatnonzero(~mask))
        _, _, _, _, info = env.step(env.codec.flat_to_call(bad))
        assert not info["valid"] and info["error"]
        _, _, done, _, info = env.step(env.codec.flat_to_call(rng.choice(np.flatnonzero(mask))))
        assert info["valid"], info["error"]
        assert info["clock"] == -1 or info["clock"] >= clock
        clock = info["clock"]
        if done:
            break
    assert info["metrics"]["constraint_satisfaction"] == 1.0  # masked play never breaks a rule


def test_busy_vehicle_is_refused_with_a_reason():
    env = RideSharingEnv("p3_small_01")
    env.reset(seed=0)
    call = greedy_action(env)
    env.step(call)
    busy = call["arguments"]["vehicle"]
    if busy in [env.vehicle_ids[v] for v in env.sim.acting()]:
        pytest.skip("the same vehicle decides again")
    _, _, _, _, info = env.step({"name": "park", "arguments": {"vehicle": busy}})
    assert not info["valid"] and "busy until" in info["error"]


def test_generated_instance_reference_is_solved_once_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path))
    inst = generate_p3("small", 123)
    lazy = RideSharingEnv(inst)  # the default, reference_solve="deferred": no solve inside the episode
    _, lazy_info = run_greedy(lazy, seed=0)
    assert lazy_info["metrics"]["optimality_pending"] and not list(tmp_path.rglob("*.json"))
    env = RideSharingEnv(inst, reference_solve="inline")
    _, info = run_greedy(env, seed=0)
    assert list((tmp_path / "realm" / "p3").glob("*.json"))  # the common store
    assert 0.0 < info["metrics"]["optimality"] <= 1.0
    assert env.reference.source == "solved"
    again = RideSharingEnv(inst, reference_solve="inline")
    assert again.reference.source == "cache" and again.reference.value == env.reference.value


def test_seed_fixes_everything():
    a, b = RideSharingEnv("p3_small_03"), RideSharingEnv("p3_small_03")
    ra, ia = run_greedy(a, seed=5)
    rb, ib = run_greedy(b, seed=5)
    assert ra == rb and ia["solution"] == ib["solution"] and ia["metrics"] == ib["metrics"]
