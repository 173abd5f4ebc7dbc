"""The out-of-space elements and end-of-episode crashes reported by the fuzz run (issue 9):
each is refused with a reason and leaves the env as it was, or ends the episode cleanly."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.checks.contract import state_snapshot


def _refused(env, action):
    before = state_snapshot(env)
    obs, reward, terminated, truncated, info = env.step(action)
    assert info["valid"] is False, action
    assert "outside the action space" in info["error"] or "action" in info["error"]
    assert state_snapshot(env) == before
    assert reward == 0.0 and not terminated
    return info["error"]


def test_p1_negative_location_is_not_the_last_location():
    env = gym.make("Realm-P1-v0")
    env.reset(seed=0)
    error = _refused(env, (0, {"location": -1}))
    assert "location: -1 is out of range 0.." in error


def test_p1_float_action_index_is_not_truncated():
    env = gym.make("Realm-P1-v0")
    env.reset(seed=0)
    assert "action index must be an int, got float 1.5" in _refused(env, (1.5, {"location": 0}))


def test_p3_negative_stop_is_refused():
    env = gym.make("Realm-P3-v0")
    env.reset(seed=0)
    index = env.unwrapped.codec.index["dispatch"]
    error = _refused(env, (index, {"vehicle": 0, "stop": -7}))
    assert "stop: -7 is out of range" in error


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ((None, {"job": 0}), "action index must be an int"),
        ((0, {"job": float("inf")}), "job: expected an integer"),
        ((0, {"job": 2**64}), "out of range"),
        ((0, {"job": np.array([0, 1])}), "job: expected an integer"),
        ((0, {}), "missing key 'job'"),
    ],
)
def test_p11_malformed_elements(action, fragment):
    env = gym.make("Realm-P11-v0", instance="ft06")
    env.reset(seed=0)
    assert fragment in _refused(env, action)


def test_p4_overloaded_plan_ends_the_episode_without_a_solver_failure():
    """An overloaded vehicle at a disruption used to give the re-solve a start load above its
    capacity ("CP Solver fail"); the episode now ends with metrics that report the overload."""
    # the earlier default instance (kept as test data since the shipped P4 set was regenerated)
    env = gym.make("Realm-P4-v0", instance=str(Path(__file__).parent / "ridesharing" / "data" / "issue22_p4_small_01.json"))
    env.reset(seed=0)
    calls = [
        {"name": "dispatch", "arguments": {"vehicle": "v2", "stop": "pickup:p1"}},
        {"name": "park", "arguments": {"vehicle": "v1"}},
        {"name": "submit_plan", "arguments": {"assignments": {
            "v1": [], "v2": ["pickup:p3", "pickup:p2", "dropoff:p3", "dropoff:p1", "dropoff:p2"]}}},
        {"name": "submit_plan", "arguments": {"assignments": {"v1": [], "v2": ["dropoff:p1", "dropoff:p2", "dropoff:p3"]}}},
    ]
    for call in calls:
        obs, reward, terminated, truncated, info = env.step(call)
        assert info["valid"], info["error"]
    assert terminated
    metrics = env.unwrapped.finish_metrics()  # the re-solve that used to fail runs here now
    assert any("over capacity" in v for v in metrics["violations"])
    assert metrics["optimality"] == 0.0  # infeasible plans score 0
    assert metrics["disruptions_applied"] >= 1
    assert 0.0 <= metrics["adaptation"] <= 1.0
