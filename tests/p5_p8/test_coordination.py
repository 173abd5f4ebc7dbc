"""P5/P8 coordination on a hand-made town: the share of the cost of dedicated out-and-back
trips from the venue that a plan saves, with every value worked out by hand below."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.coordination import dedicated_trips_cost, fleet_coordination
from crab_gym.envs.realm.wedding.env import WeddingEnv
from crab_gym.envs.realm.wedding.env_disruptions import WeddingDisruptionEnv
from crab_gym.envs.realm.wedding.formats import load_p5, load_p8, shipped_p5_names, shipped_p8_names
from crab_gym.envs.realm.wedding.model import P8Instance, WeddingInstance
from crab_gym.envs.realm.wedding.references import p5_reference, p8_reference

# Roads: venue-airport 20, venue-shop 15, airport-shop 10, depot-airport 5, depot-venue 25.
# Shortest minutes: depot-venue 25, depot-airport 5, airport-shop 10, venue-shop 15, venue-airport 20.
# car1 waits at the depot, car2 at the venue. Alex lands at 8:20; the gift shop is open all
# morning (15 minutes of service); photo at 12:00.
N = None
TOWN = {
    "name": "hand_p5",
    "places": ["venue", "airport", "shop", "depot"],
    "roads": [[0, 20, 15, 25], [20, 0, 10, 5], [15, 10, 0, N], [25, 5, N, 0]],
    "venue": "venue",
    "guests": [{"guest_id": "alex", "place": "airport", "arrival": 500}],
    "errands": [{"errand_id": "gift", "shop": "shop", "opens": 480, "closes": 720, "service": 15}],
    "vehicles": [
        {"vehicle_id": "car1", "place": "depot", "capacity": 3, "available": 480},
        {"vehicle_id": "car2", "place": "venue", "capacity": 3, "available": 480},
    ],
    "photo_time": 720,
    "deadline": 780,
}
INSTANCE = WeddingInstance.model_validate(TOWN)

# Baseline: car1 depot -> venue 25, car2 venue -> venue 0; alex venue -> airport -> venue
# 20 + 20; the gift venue -> shop -> venue 15 + 15. Total 95.
BASELINE = 95
ON_THE_WAY = {"car1": ["pickup:alex", "errand:gift"], "car2": []}  # 5 + 10 + 15 = 30; car2 0
FROM_VENUE = {"car1": [], "car2": ["pickup:alex", "errand:gift"]}  # car1 25; car2 20 + 10 + 15 = 45
# car2 makes two dedicated trips (20 + 20, 15 + 15) while car1 drives to the venue (25): 95
DEDICATED = {"car1": [], "car2": ["pickup:alex", "dropoff:venue", "errand:gift"]}
GIFT_ONLY = {"car1": ["errand:gift"], "car2": []}  # alex is left at the airport


def score(routes: dict) -> float:
    return check_plan(INSTANCE, routes).metrics["coordination"]


def test_the_baseline_is_every_vehicle_to_the_venue_and_dedicated_trips_from_it():
    assert dedicated_trips_cost(INSTANCE) == BASELINE


def test_fetching_on_the_way_in_saves_most():
    assert check_plan(INSTANCE, ON_THE_WAY).feasible
    assert score(ON_THE_WAY) == pytest.approx(1 - 30 / 95)  # 13/19


def test_sending_the_car_already_at_the_venue_saves_less():
    assert check_plan(INSTANCE, FROM_VENUE).feasible
    assert score(FROM_VENUE) == pytest.approx(1 - (25 + 45) / 95)  # 5/19


def test_dedicated_trips_save_nothing():
    check = check_plan(INSTANCE, DEDICATED)
    assert check.feasible and check.cost == BASELINE
    assert check.metrics["coordination"] == 0.0


def test_a_plan_that_leaves_a_guest_behind_scores_zero():
    check = check_plan(INSTANCE, GIFT_ONLY)
    assert not check.feasible and check.metrics["coordination"] == 0.0
    parts = fleet_coordination(INSTANCE, GIFT_ONLY, feasible=True)  # as if it were allowed
    assert parts.plan_cost == 15 + 15 + INSTANCE.unserved_penalty and parts.score == 0.0


def test_an_empty_plan_scores_zero():
    assert score({}) == 0.0


@pytest.mark.parametrize(("routes", "expected"), [(ON_THE_WAY, 1 - 30 / 95), (FROM_VENUE, 1 - 70 / 95)])
def test_the_p5_env_reports_the_same_coordination(routes, expected):
    env = WeddingEnv(INSTANCE, reference=30)
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"routes": routes}})
    assert info["valid"] and info["metrics"]["coordination"] == pytest.approx(expected)


def test_p8_prices_the_plan_at_undisrupted_times():
    # 10 more minutes on depot-airport from 8:00 to 9:00: on-the-way costs 40 minutes, its
    # coordination is still judged at 30
    delay = {"type": "traffic_delay", "route": "depot-airport", "start": 480, "duration": 60, "delay": 10}
    inst = P8Instance.model_validate({**TOWN, "disruptions": [delay]})
    env = WeddingDisruptionEnv(inst, reference=40, adaptation_reference="oracle")
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"routes": ON_THE_WAY}})
    m = info["metrics"]
    assert info["valid"] and m["travel_minutes"] == 40 and m["violations"] == []
    assert m["coordination"] == pytest.approx(1 - 30 / 95)


def test_shipped_references_save_most_of_the_dedicated_trips():
    p5 = [check_plan(i, p5_reference(i).plan["routes"]).metrics["coordination"] for i in map(load_p5, shipped_p5_names())]
    assert 0.55 < min(p5) and max(p5) < 0.8
    p8 = [
        check_plan(i, p8_reference(i).plan["routes"], disruptions=i.disruptions).metrics["coordination"]
        for i in map(load_p8, shipped_p8_names())
    ]
    assert 0.55 < min(p8) and max(p8) < 0.8
