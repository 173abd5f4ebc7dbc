"""The disruption protocol's ``location`` on J2/J4 (what ``DisruptionWrapper`` sends): each
type gets the fields that place means, fields given explicitly win, a bad place is refused."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError


def _env():
    env = gym.make("Realm-J4-v0", instance="j4_small_00").unwrapped
    env.reset(seed=0)
    return env


def test_a_machine_place_becomes_each_types_own_fields():
    env = _env()
    inst = env.instance
    on_2 = [(j, k) for j, row in enumerate(inst.jobs) for k, (m, _) in enumerate(row) if m == 2]
    weather = env.parse_disruption({"type": "weather_effect", "location": "M2", "start": 5, "duration": 9})
    assert [tuple(op) for op in weather.get("operations")] == on_2 and on_2
    supply = env.parse_disruption({"type": "supply_delay", "location": "M2", "start": 5, "duration": 9})
    assert list(supply.get("jobs")) == sorted({j for j, _ in on_2})
    assert env.parse_disruption({"type": "machine_breakdown", "location": "m2", "duration": 9}).get("machine") == 2
    assert list(env.parse_disruption({"type": "power_outage", "location": "M2"}).get("machines")) == [2]
    own = env.parse_disruption({"type": "supply_delay", "location": "M2", "jobs": [0], "duration": 9})
    assert list(own.get("jobs")) == [0]  # given explicitly: kept


def test_a_job_place_names_the_jobs_operations():
    env = _env()
    weather = env.parse_disruption({"type": "weather_effect", "location": "J3", "duration": 9})
    assert [tuple(op) for op in weather.get("operations")] == [(3, k) for k in range(len(env.instance.jobs[3]))]


@pytest.mark.parametrize("disruption, words", [
    ({"type": "machine_breakdown", "location": "J3"}, "strikes a machine"),
    ({"type": "power_outage", "location": "M99"}, "has machines M0..M4"),
    ({"type": "supply_delay", "location": "J99"}, "has jobs J0..J9"),
    ({"type": "weather_effect", "location": "kitchen"}, "must name a machine (M3) or a job (J5)"),
])
def test_a_place_that_cannot_be_struck_is_refused_with_the_reason(disruption, words):
    with pytest.raises(InvalidDisruptionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        _env().parse_disruption(disruption)
