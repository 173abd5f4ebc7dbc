"""Realm-P5-v0: the contract, the oracle plan scoring 1, masks, invalid actions, renders."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.coordination import fleet_coordination
from crab_gym.envs.realm.wedding.env import WeddingEnv
from crab_gym.envs.realm.wedding.generator import generate_p5
from crab_gym.envs.realm.wedding.heuristics import greedy_action

REALM_KEYS = {"planning_quality", "optimality", "constraint_satisfaction", "coordination"}


def play(env, policy, limit=500):
    obs, info = env.reset(seed=0)
    total, done = 0.0, False
    for _ in range(limit):
        obs, reward, done, _, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        total += reward
        if done:
            break
    assert done
    return total, info


def test_check_env_and_renders(tmp_path):
    check_env(gym.make("Realm-P5-v0", instance="p5_medium_01").unwrapped)
    env = WeddingEnv("p5_large_02", render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(6):
        env.step(greedy_action(env))
    frame = env.render()
    assert frame.shape == (420, 640, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 8
    text = WeddingEnv("p5_large_02", render_mode="ansi")
    text.reset()
    assert "photo at" in text.render() and "errand" in text.render()


@pytest.mark.parametrize("name", ["p5_small_00", "p5_medium_03", "p5_large_01"])
def test_oracle_policy_scores_one(name):
    env = gym.make("Realm-P5-v0", instance=name)
    total, info = play(env, OraclePolicy(env))
    m = info["metrics"]
    assert m["optimality"] == 1.0 and m["planning_quality"] == 1.0 and m["constraint_satisfaction"] == 1.0
    assert m["cost"] == env.unwrapped.reference.value
    # the oracle realises the whole gain of working together over the best single-vehicle
    # plan; not applicable where one vehicle alone reaches the best plan
    solo = env.unwrapped.reference.extra["solo_value"]
    assert m["coordination"] == (1.0 if solo > m["cost"] else None)
    assert total == pytest.approx(1.0)
    sol = info["solution"]
    assert {p["guest"] for p in sol["pickups"]} == {g.guest_id for g in env.unwrapped.instance.guests}
    assert {e["errand"] for e in sol["errands_done"]} == {e.errand_id for e in env.unwrapped.instance.errands}


def test_greedy_is_feasible_and_metrics_match_the_checker():
    env = WeddingEnv("p5_medium_02")
    total, info = play(env, lambda o, i: greedy_action(env))
    m = info["metrics"]
    verdict = check_plan(env.instance, info["solution"]["routes"])
    assert verdict.feasible and m["cost"] == verdict.cost
    assert 0 < m["optimality"] < 1 and m["optimality"] == pytest.approx(env.reference.value / m["cost"])
    ref = env.reference
    expected = fleet_coordination(env.instance, info["solution"]["routes"], feasible=True,
                                  solo=ref.extra["solo_value"], best=ref.value)
    assert m["coordination"] == expected.score and 0 <= m["coordination"] < 1 and expected.actors >= 2
    assert 0 <= total <= 1


def test_invalid_actions_change_nothing_and_say_why():
    env = WeddingEnv("p5_small_00")
    env.reset(seed=0)
    cases = [
        ({"name": "drive", "arguments": {"vehicle": "van", "stop": "dropoff:venue"}}, "carries nothing"),
        ({"name": "drive", "arguments": {"vehicle": "bus", "stop": "dropoff:venue"}}, "bus"),
        ({"name": "submit_plan", "arguments": {"routes": {"van": ["errand:cake", "errand:cake"]}}}, "twice"),
        ({"name": "submit_plan", "arguments": {"routes": {"van": ["pickup:nobody"]}}}, "nobody"),
        ({"name": "teleport", "arguments": {}}, "teleport"),
    ]
    for action, word in cases:
        before = copy.deepcopy(env.sim.__dict__)
        _, reward, done, _, info = env.step(action)
        assert not info["valid"] and word in info["error"], (action, info["error"])
        assert reward == 0.0 and not done
        assert env.sim.__dict__.keys() == before.keys()
        assert env.sim.status == before["status"] and env.sim.vehicles == before["vehicles"]


def test_masked_drive_is_refused_with_the_reason():
    inst = generate_p5("small", 0)
    late = inst.model_copy(update={"photo_time": 600, "deadline": 1080})  # the photo is at 10:00
    env = WeddingEnv(late, reference=1.0)
    env.reset(seed=0)
    stop = f"pickup:{inst.guests[0].guest_id}"
    mask = env.action_masks()
    flat = env.codec.flat_offsets["drive"] + env.stop_names.index(stop)
    assert not mask[flat]
    _, _, _, _, info = env.step({"name": "drive", "arguments": {"vehicle": "van", "stop": stop}})
    assert not info["valid"] and "after 10:00" in info["error"]


def test_mask_matches_validity_and_wait_moves_time_forward():
    env = WeddingEnv("p5_small_03")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        mask = env.action_masks()
        if not mask.any():
            break
        for flat in rng.choice(env.codec.n_flat, size=6, replace=False):
            probe = copy.deepcopy(env)
            _, _, _, _, info = probe.step(env.codec.flat_to_call(int(flat)))
            assert info["valid"] == bool(mask[flat]), (env.codec.flat_to_call(int(flat)), info["error"])
        clock = env.sim.clock
        legal = np.flatnonzero(mask)
        _, _, done, _, info = env.step(env.codec.flat_to_call(int(rng.choice(legal))))
        assert info["valid"]
        if done:
            break
        assert env.sim.clock >= clock


def test_generator_draws_fresh_instances_and_seed_fixes_everything():
    env = WeddingEnv(generator={"n_guests": 2, "n_errands": 2, "n_vehicles": 2}, reference=100.0)
    env.reset(seed=1)
    first = env.instance.model_dump()
    env.reset(seed=2)
    assert env.instance.model_dump() != first
    env.reset(seed=1)
    assert env.instance.model_dump() == first


def test_reference_of_a_generated_instance_is_solved_and_cached():
    inst = generate_p5("small", 11, n_guests=2, n_errands=1, n_vehicles=2)
    env = WeddingEnv(inst)
    assert env.reference.status == "PENDING"  # reference_solve="deferred": reading it solves nothing
    ref = env.solved_reference()
    assert ref.source == "solved" and ref.status == "OPTIMAL" and ref.extra["solo_value"] >= ref.value
    assert env.reference is ref  # kept
    assert WeddingEnv(inst).solved_reference().source == "cache"
