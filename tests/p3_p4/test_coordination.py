"""P3/P4 coordination on a hand-made town: the share of the cost of dedicated out-and-back
trips that a plan saves, with every value worked out by hand below."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.ridesharing.checker import check_plan
from crab_gym.envs.realm.ridesharing.coordination import dedicated_trips_cost, ride_coordination
from crab_gym.envs.realm.ridesharing.env import RideSharingEnv
from crab_gym.envs.realm.ridesharing.env_disruptions import RideSharingDisruptionEnv
from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4, shipped_p3_names, shipped_p4_names
from crab_gym.envs.realm.ridesharing.model import P3Instance, P4Instance
from crab_gym.envs.realm.ridesharing.references import p3_reference, p4_reference

# A line a -10- b -10- c (a to c: 20 minutes). v1 waits at a, v2 at c, one seat each.
# p1 rides a -> b, p2 rides b -> c; windows are wide.
TOWN = {
    "name": "hand_p3",
    "locations": ["a", "b", "c"],
    "roads": [[0, 10, None], [10, 0, 10], [None, 10, 0]],
    "requests": [
        {"passenger_id": "p1", "pickup": "a", "dropoff": "b", "pickup_window": [480, 540], "latest_dropoff": 600},
        {"passenger_id": "p2", "pickup": "b", "dropoff": "c", "pickup_window": [480, 600], "latest_dropoff": 660},
    ],
    "vehicles": [{"vehicle_id": "v1", "location": "a", "capacity": 1}, {"vehicle_id": "v2", "location": "c", "capacity": 1}],
    "start_time": 480,
}
INSTANCE = P3Instance.model_validate(TOWN)

# Baseline: p1 from a's base a -> a -> b -> a = 0 + 10 + 10 = 20 (from c: 20 + 10 + 20 = 50);
# p2 from c's base c -> b -> c -> c = 10 + 10 + 0 = 20 (from a: 10 + 10 + 20 = 40). Total 40.
BASELINE = 40
CHAIN = {"v1": ["pickup:p1", "dropoff:p1", "pickup:p2", "dropoff:p2"], "v2": []}  # 0 + 10 + 0 + 10 = 20
SPLIT = {"v1": ["pickup:p1", "dropoff:p1"], "v2": ["pickup:p2", "dropoff:p2"]}  # 0 + 10 and 10 + 10 = 30
CROSSED = {"v1": ["pickup:p2", "dropoff:p2"], "v2": ["pickup:p1", "dropoff:p1"]}  # 10 + 10 and 20 + 10 = 50
# p2 boards at b before p1 leaves: two aboard v1, one seat (same 20 minutes as CHAIN)
OVERLOAD = {"v1": ["pickup:p1", "pickup:p2", "dropoff:p1", "dropoff:p2"], "v2": []}
NOBODY = {"v1": [], "v2": []}


def score(plan: dict) -> float:
    return check_plan(INSTANCE, {"assignments": plan})["metrics"]["coordination"]


def test_the_baseline_is_the_cheapest_dedicated_round_trip_per_request():
    assert dedicated_trips_cost(INSTANCE) == BASELINE


def test_chaining_both_rides_in_one_vehicle_saves_half():
    assert score(CHAIN) == 1 - 20 / 40


def test_a_plain_split_saves_less():
    assert score(SPLIT) == 1 - 30 / 40


def test_giving_each_request_to_the_far_vehicle_saves_nothing():
    check = check_plan(INSTANCE, {"assignments": CROSSED})
    assert check["feasible"] and check["cost"] == 50  # feasible, yet worse than independent taxis
    assert check["metrics"]["coordination"] == 0.0


def test_an_infeasible_plan_scores_zero_even_when_cheap():
    check = check_plan(INSTANCE, {"assignments": OVERLOAD})
    assert not check["feasible"] and check["travel"] == 20
    assert check["metrics"]["coordination"] == 0.0


def test_a_plan_that_serves_nobody_scores_zero():
    check = check_plan(INSTANCE, {"assignments": NOBODY})
    assert check["feasible"] and check["cost"] == 2 * INSTANCE.unserved_penalty
    assert check["metrics"]["coordination"] == 0.0


def test_the_parts_are_reported():
    parts = ride_coordination(INSTANCE, SPLIT, feasible=True)
    assert (parts.baseline, parts.plan_cost, parts.served) == (40, 30, 2)


def test_an_unserved_request_is_priced_at_the_penalty():
    # only p1, by v1: 10 minutes + 1000 for p2 >> 40
    parts = ride_coordination(INSTANCE, {"v1": ["pickup:p1", "dropoff:p1"]}, feasible=True)
    assert (parts.plan_cost, parts.served, parts.score) == (10 + INSTANCE.unserved_penalty, 1, 0.0)


@pytest.mark.parametrize(("plan", "expected"), [(CHAIN, 0.5), (SPLIT, 0.25), (CROSSED, 0.0)])
def test_the_p3_env_reports_the_same_coordination(plan, expected):
    env = RideSharingEnv(INSTANCE, reference=20)
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
    assert info["valid"] and info["metrics"]["coordination"] == expected


def test_p4_prices_the_plan_at_undisrupted_times():
    # 5 more minutes on a-b from 8:00 to 9:00: the chain costs 25 minutes, its coordination
    # is still judged at 20 (delays are adaptation's business)
    delay = {"type": "traffic_delay", "route": "a-b", "start": 480, "duration": 60, "delay": 5}
    inst = P4Instance.model_validate({**TOWN, "disruptions": [delay]})
    env = RideSharingDisruptionEnv(inst, reference=25, adaptation_reference="oracle")
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"assignments": CHAIN}})
    assert info["valid"] and info["metrics"]["cost"] == 25
    assert info["metrics"]["coordination"] == 0.5
    check = check_plan(inst, info["solution"])
    assert check["cost"] == 25 and check["metrics"]["coordination"] == 0.5


def test_shipped_references_save_a_share_of_the_dedicated_trips():
    p3 = [check_plan(i, p3_reference(i).plan)["metrics"]["coordination"] for i in map(load_p3, shipped_p3_names())]
    assert 0.25 < min(p3) and max(p3) < 0.65
    p4 = {
        name: check_plan(i, p4_reference(i).plan)["metrics"]["coordination"]
        for name in shipped_p4_names()
        for i in [load_p4(name)]
    }
    # p4_small_03: every ride ends at the far hospital, so its adaptive plan is dedicated trips
    assert p4.pop("p4_small_03") == 0.0
    assert 0.15 < min(p4.values()) and max(p4.values()) < 0.75
