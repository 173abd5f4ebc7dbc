"""Realm-P8-v0: disruptions change travel times from their minute on, plans pause and
resume, the oracle scores 1, adaptation is scored, injection follows the protocol."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError, missing_members
from crab_gym.envs.realm.wedding.disruptions import RoadClosure, TrafficDelay
from crab_gym.envs.realm.wedding.env_disruptions import WeddingDisruptionEnv
from crab_gym.envs.realm.wedding.model import P8Instance
from crab_gym.wrappers.disruption import DisruptionWrapper


def line_town(disruptions: list) -> P8Instance:
    """hotel - airport - venue in a line, 20 minutes per road; one guest lands at 10:00."""
    return P8Instance(
        name="line_town", places=["hotel", "airport", "venue"], venue="venue",
        roads=[[0, 20, None], [20, 0, 20], [None, 20, 0]],
        guests=[{"guest_id": "ana", "place": "airport", "arrival": 600}],
        vehicles=[{"vehicle_id": "van", "place": "hotel", "capacity": 4, "available": 540}],
        photo_time=900, deadline=1080, disruptions=disruptions,
    )


def test_check_env_p8():
    check_env(gym.make("Realm-P8-v0", instance="p8_medium_01").unwrapped)


def test_disruption_changes_travel_from_its_minute_on_only():
    jam = TrafficDelay(route="airport-venue", start=620, duration=60, delay=30)
    env = WeddingDisruptionEnv(line_town([jam]), reference=1.0)
    obs, info = env.reset(seed=0)
    assert obs["travel_time"][1, 2] == 20 and not obs["disrupted_roads"].any()
    _, _, _, _, info = env.step({"name": "drive", "arguments": {"vehicle": "van", "stop": "pickup:ana"}})
    assert env.sim.clock == 600  # picked up at landing; the jam starts at 10:20
    _, _, _, _, info = env.step({"name": "wait", "arguments": {"vehicle": "van"}})
    assert env.sim.clock == 620 and info["disruptions"][0]["type"] == "traffic_delay"
    obs = env._get_obs()
    assert obs["travel_time"][1, 2] == 50 and obs["disrupted_roads"][1, 2] == 1
    _, _, done, _, info = env.step({"name": "finish", "arguments": {"vehicle": "van"}})
    assert done and info["metrics"]["travel_minutes"] == 20 + 50
    assert info["metrics"]["disruptions_applied"] == 1 and info["solution"]["disruptions"]


def test_closure_makes_traffic_wait_or_go_round():
    shut = RoadClosure(route="airport-venue", start=600, duration=45)
    env = WeddingDisruptionEnv(line_town([shut]), reference=1.0)
    env.reset(seed=0)
    env.step({"name": "drive", "arguments": {"vehicle": "van", "stop": "pickup:ana"}})
    _, _, done, _, info = env.step({"name": "drive", "arguments": {"vehicle": "van", "stop": "dropoff:venue"}})
    assert env.sim.vehicles[0].route[-1].arrive == 600 + 45 + 20  # waits for the reopening


@pytest.mark.parametrize("name, mode", [("p8_small_01", "resolve"), ("p8_medium_00", "resolve"),
                                        ("p8_large_03", "oracle")])
def test_oracle_policy_scores_one_through_the_pauses(name, mode):
    env = gym.make("Realm-P8-v0", instance=name, adaptation_reference=mode)
    policy = OraclePolicy(env)
    obs, info = env.reset(seed=0)
    pauses, total, done = 0, 0.0, False
    while not done:
        obs, reward, done, _, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        pauses += info["paused"]
        total += reward
    base = env.unwrapped
    assert pauses >= 1 if base.instance.disruptions else pauses == 0
    m = info["metrics"]
    assert m["cost"] == base.reference.value
    assert base.reference.extra["feasible"]  # the shipped P8 references keep every constraint
    assert m["optimality"] == 1.0 and total == pytest.approx(1.0)
    assert m["adaptation"] is None if not pauses else m["adaptation_reference_cost"] is not None


def test_injected_disruptions_follow_the_protocol():
    env = WeddingDisruptionEnv("p8_small_00")
    assert missing_members(env) == []
    env.reset(seed=0)
    targets = env.disruption_targets()
    route = targets["routes"][0]
    report = env.apply_disruption({"type": "road_closure", "route": route, "start": None, "duration": 30})
    assert report["applied"] and report["disruption"]["route"] == route
    assert len(env.faced_schedule()) == len(env.instance.disruptions) + 1
    with pytest.raises(InvalidDisruptionError):
        env.apply_disruption({"type": "road_closure", "route": "mars-venus", "duration": 5})
    wrapped = DisruptionWrapper(WeddingDisruptionEnv("p8_small_00", reference=1.0),
                                disruptions=[{"type": "traffic_delay", "route": route, "start": 700,
                                              "duration": 60, "delay": 20}])
    wrapped.reset(seed=0)
    assert len(wrapped.unwrapped.faced_schedule()) == len(wrapped.unwrapped.instance.disruptions) + 1


def test_adaptation_scores_a_step_wise_replan():
    env = WeddingDisruptionEnv("p8_small_02")
    from crab_gym.envs.realm.wedding.heuristics import greedy_action

    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, info = env.step(greedy_action(env))
    m = env.finish_metrics()  # the re-solve runs after the episode, not in step()
    assert m["disruptions_applied"] == len(env.instance.disruptions)
    assert 0 < m["adaptation"] <= 1 and m["adaptation_reference_cost"] is not None
