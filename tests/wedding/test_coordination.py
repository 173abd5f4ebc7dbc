"""P5/P8 coordination on a hand-made town: the share of the gain from working together (the
best single-vehicle plan -> the best plan) that a plan realises, every value worked out by hand."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.coordination import fleet_coordination, static_plan_cost
from crab_gym.envs.realm.wedding.env import WeddingEnv
from crab_gym.envs.realm.wedding.formats import load_p5
from crab_gym.envs.realm.wedding.oracle import solve_p5
from crab_gym.envs.realm.wedding.references import p5_reference

# Roads: north-airport 5, airport-venue 20, south-shop 5, shop-venue 20, north-venue 25,
# south-venue 25. car1 waits at north, car2 at south. Alex lands at 8:20; the gift shop is
# open all morning (15 minutes of service); photo at 12:00.
N = None
TOWN = {
    "name": "hand_p5",
    "places": ["venue", "airport", "shop", "north", "south"],
    "roads": [[0, 20, 20, 25, 25], [20, 0, N, 5, N], [20, N, 0, N, 5], [25, 5, N, 0, N], [25, N, 5, N, 0]],
    "venue": "venue",
    "guests": [{"guest_id": "alex", "place": "airport", "arrival": 500}],
    "errands": [{"errand_id": "gift", "shop": "shop", "opens": 480, "closes": 720, "service": 15}],
    "vehicles": [
        {"vehicle_id": "car1", "place": "north", "capacity": 3, "available": 480},
        {"vehicle_id": "car2", "place": "south", "capacity": 3, "available": 480},
    ],
    "photo_time": 720,
    "deadline": 780,
}
INSTANCE = WeddingEnv(TOWN, reference=1).instance
# Each on its way in: car1 5 + 20, car2 5 + 20 = 50 (the best plan).
JOINT = {"car1": ["pickup:alex"], "car2": ["errand:gift"]}
BEST = 50
# car1 alone: north -> airport 5 -> venue 20 -> shop 20 -> venue 20 = 65, car2 straight 25: 90.
ALONE = {"car1": ["pickup:alex", "dropoff:venue", "errand:gift"], "car2": []}
SOLO = 90
# Crossed: car1 north -> venue -> shop 45 -> venue 20, car2 south -> venue -> airport 45 -> venue 20: 130.
CROSSED = {"car1": ["errand:gift"], "car2": ["pickup:alex"]}
GIFT_ONLY = {"car1": ["errand:gift"], "car2": []}  # alex is left at the airport


def score(routes: dict) -> float | None:
    feasible = check_plan(INSTANCE, routes).feasible
    return fleet_coordination(INSTANCE, routes, feasible=feasible, solo=SOLO, best=BEST).score


def test_the_hand_worked_costs():
    assert [static_plan_cost(INSTANCE, r) for r in (JOINT, ALONE, CROSSED)] == [50, 90, 130]
    assert all(check_plan(INSTANCE, r).feasible for r in (JOINT, ALONE, CROSSED))


def test_the_best_joint_plan_scores_one_and_one_vehicle_alone_zero():
    assert score(JOINT) == 1.0
    assert score(ALONE) == 0.0


def test_a_dearer_joint_plan_scores_its_share_of_the_gain():
    assert score(CROSSED) == 0.0  # dearer than the solo baseline
    parts = fleet_coordination(INSTANCE, CROSSED, feasible=True, solo=170, best=BEST)
    assert parts.score == pytest.approx((170 - 130) / (170 - 50)) and parts.actors == 2


def test_one_vehicle_alone_scores_zero_even_below_the_solo_baseline():
    assert fleet_coordination(INSTANCE, ALONE, feasible=True, solo=200, best=BEST).score == 0.0


def test_infeasible_and_empty_plans_score_zero():
    assert not check_plan(INSTANCE, GIFT_ONLY).feasible and score(GIFT_ONLY) == 0.0
    assert score({}) == 0.0


def test_not_applicable_when_one_vehicle_reaches_the_best_plan():
    assert fleet_coordination(INSTANCE, JOINT, feasible=True, solo=BEST, best=BEST).score is None


def test_the_env_reports_it_against_the_reference_record():
    env = WeddingEnv(INSTANCE, reference=BEST)
    for routes, expected in ((JOINT, 1.0), (ALONE, 0.0)):
        env.reset(seed=0)
        env.yardstick.fix(Reference(value=BEST, status="GIVEN", extra={"solo_value": SOLO}))
        *_, info = env.step({"name": "submit_plan", "arguments": {"routes": routes}})
        assert info["valid"] and info["metrics"]["coordination"] == expected


def test_the_van_alone_on_p5_medium_00_scores_zero():
    """The audit's case: the van doing everything scored 0.676 (the reference 0.710)."""
    inst = load_p5("p5_medium_00")
    alone = solve_p5(inst, only=0, solution_limit=50, time_limit=5)
    assert alone.feasible
    env = WeddingEnv("p5_medium_00")
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": alone.plan})
    assert info["metrics"]["optimality"] > 0 and info["metrics"]["coordination"] == 0.0
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": {"routes": p5_reference(inst).plan["routes"]}})
    assert info["metrics"]["coordination"] == 1.0
