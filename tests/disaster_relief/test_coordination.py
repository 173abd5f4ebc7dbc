"""P7 coordination, worked out by hand: the best one-vehicle plan (the baseline), a good, a
padded and two bad joint plans, one vehicle alone, and the env reporting the same numbers.

TWO_DEADLINES: from 08:00 (480); ``east`` is critical (weight 4), 60 km away, needs 8
medical by 09:00 (540); ``north`` is urgent (weight 2), 120 km away, needs 15 food by 10:00
(600). The helicopter (10 units, 120 km/h) takes 30 / 60 minutes one way, the truck (20
units, 60 km/h) 60 / 120. ``K = 2 vehicles x 2 x (480 + 120) + 1 = 2401``.
"""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.coordination import coordination, solo_plan, solo_record
from crab_gym.envs.realm.disaster_relief.env import DisasterReliefEnv
from crab_gym.envs.realm.disaster_relief.model import P7Instance
from crab_gym.envs.realm.disaster_relief.references import shipped_p7_references

TWO_DEADLINES = {
    "name": "two_deadlines", "start": 480, "horizon": 960, "slot_minutes": 30,
    "stock": {"medical_supplies": 10, "food": 20, "water": 0, "shelter": 0},
    "regions": [
        {"id": "east", "severity": "critical", "population": 40, "x": 60.0, "y": 0.0,
         "needs": {"medical_supplies": 8}, "deadline": 540},
        {"id": "north", "severity": "urgent", "population": 15, "x": 0.0, "y": 120.0,
         "needs": {"food": 15}, "deadline": 600},
    ],
    "vehicles": [{"id": "heli", "type": "helicopter", "capacity": 10, "speed_kmh": 120.0},
                 {"id": "truck", "type": "truck", "capacity": 20, "speed_kmh": 60.0}],
}
K = 2401


def trip(vehicle, region, load, depart):
    return {"vehicle": vehicle, "region": region, "load": load, "depart": depart}


#: The optimum: the helicopter to east, the truck with all the food to north, both at 08:00:
#: nothing unmet, 60 + 240 minutes.
GOOD = {"trips": [trip("heli", "east", {"medical_supplies": 8}, 480), trip("truck", "north", {"food": 15}, 480)]}
OPTIMUM = 300.0


@pytest.fixture
def inst() -> P7Instance:
    inst = P7Instance.model_validate(TWO_DEADLINES)
    assert inst.one_way == [[30, 60], [60, 120]] and inst.minute_weight == K
    return inst


SOLO = 10 * K + 300  # the helicopter alone, at best (below)


def score(inst, plan):
    verdict = check_plan(inst, plan)
    return coordination(verdict.cost, verdict.feasible, SOLO, OPTIMUM, len(inst.vehicles))


def test_the_greedy_solo_plan_that_seeds_the_solo_solve(inst):
    # heli: east first (64 points on time beat north's 40), back 09:00; north with 10 food,
    # on time at 10:00; back 11:00 for the last 5, late at 12:00: 5 x 2 = 10 points, 300 min.
    assert solo_plan(inst, 0) == {"trips": [
        trip("heli", "east", {"medical_supplies": 8}, 480),
        trip("heli", "north", {"food": 10}, 540),
        trip("heli", "north", {"food": 5}, 660),
    ]}
    assert check_plan(inst, solo_plan(inst, 0)).cost == SOLO


def test_the_solo_baseline_is_the_best_one_vehicle_plan_proven(inst):
    # heli alone cannot do better than 10 late-unit points (north first leaves east late: 32);
    # truck alone: east on time then all 15 food late (30 points, 360 min) beats north first (32)
    rec = solo_record(inst)
    assert [(r["vehicle"], r["value"], r["bound"], r["status"]) for r in rec["per_vehicle"]] == [
        ("heli", SOLO, SOLO, "OPTIMAL"), ("truck", 30 * K + 360, 30 * K + 360, "OPTIMAL")]
    assert rec["value"] == rec["bound"] == SOLO == 24310 and rec["vehicle"] == "heli"
    assert check_plan(inst, rec["plan"]).cost == SOLO


def test_a_good_joint_plan_realises_the_whole_gain(inst):
    verdict = check_plan(inst, GOOD)
    assert verdict.feasible and verdict.points == 0 and verdict.cost == OPTIMUM
    assert score(inst, GOOD) == 1.0


def test_an_empty_extra_trip_costs_its_minutes(inst):
    # GOOD plus a helicopter flight to north with nothing on board (09:00, 120 minutes):
    # (24310 - 420) / (24310 - 300)
    padded = {"trips": [*GOOD["trips"], trip("heli", "north", {}, 540)]}
    assert check_plan(inst, padded).cost == 420
    assert score(inst, padded) == pytest.approx(23890 / 24010)


def test_duplicating_going_alone_nothing_and_infeasible_score_zero(inst):
    # Both vehicles carry food to north (20 units for a need of 15), so the medical reaches
    # east only at 10:30, late: 8 x 4 = 32 points, 120 + 240 + 60 minutes; worse than alone.
    both_north = {"trips": [trip("heli", "north", {"food": 10}, 480), trip("truck", "north", {"food": 10}, 480),
                            trip("heli", "east", {"medical_supplies": 8}, 600)]}
    verdict = check_plan(inst, both_north)
    assert verdict.feasible and verdict.points == 32 and verdict.cost == 32 * K + 420
    assert score(inst, both_north) == 0.0
    # Every plan one vehicle makes alone costs at least the solo bound: 0, whichever vehicle.
    assert score(inst, solo_plan(inst, 0)) == 0.0
    truck_alone = {"trips": [trip("truck", "east", {"medical_supplies": 8}, 480), trip("truck", "north", {"food": 15}, 600)]}
    assert score(inst, truck_alone) == 0.0
    # An empty plan spares nothing (124 points): 0, as does an infeasible one.
    assert check_plan(inst, {"trips": []}).cost == 124 * K and score(inst, {"trips": []}) == 0.0
    assert coordination(OPTIMUM, False, SOLO, OPTIMUM, 2) == 0.0


def test_coordination_does_not_apply_to_one_vehicle_or_when_alone_is_as_good():
    assert coordination(OPTIMUM, True, SOLO, OPTIMUM, 1) is None
    assert coordination(OPTIMUM, True, OPTIMUM, OPTIMUM, 2) is None  # one vehicle does as well as the team
    assert coordination(OPTIMUM, True, OPTIMUM - 1, OPTIMUM, 2) is None


def test_the_solo_vehicle_waits_out_a_weather_block(inst):
    # north blocked 08:00-10:00: heli goes east (back 09:00), waits for the block to lift at
    # 10:00 and takes north's food in two late trips.
    blocked = [{"type": "weather_event", "region": "north", "start": 480, "duration": 120}]
    stormy = P7Instance.model_validate({**TWO_DEADLINES, "disruptions": blocked})
    assert [(t["region"], t["depart"]) for t in solo_plan(stormy, 0)["trips"]] == [
        ("east", 480), ("north", 600), ("north", 720)]


@pytest.mark.parametrize(("plan", "expected"), [(GOOD, 1.0), ({"trips": []}, 0.0), (solo_plan(
    P7Instance.model_validate(TWO_DEADLINES), 0), 0.0)])
def test_the_env_reports_the_same(plan, expected):
    env = DisasterReliefEnv(TWO_DEADLINES, reference=OPTIMUM, adaptation_reference="oracle", reference_solve="inline")
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": plan})
    assert info["valid"], info.get("error")
    assert info["metrics"]["coordination"] == pytest.approx(expected)
    assert info["metrics"]["solo_cost"] == SOLO


def test_truck1_alone_on_p7_small_00_scores_zero():
    """Issue 22: truck1 alone scored 0.495 against a greedy solo baseline; the baseline is now
    the best one-vehicle plan's proven bound, so every one-vehicle plan scores 0."""
    env = DisasterReliefEnv("p7_small_00", adaptation_reference="oracle")
    rec = shipped_p7_references()["p7_small_00"]
    assert rec["solo"]["status"] == "OPTIMAL" and rec["solo"]["bound"] > rec["value"]
    truck_trips = [t for t in rec["plan"]["trips"] if t["vehicle"] == "truck1"]
    truck_best = next(r for r in rec["solo"]["per_vehicle"] if r["vehicle"] == "truck1")
    for plan in ({"trips": truck_trips}, rec["solo"]["plan"]):
        env.reset(seed=0)
        *_, info = env.step({"name": "submit_plan", "arguments": plan})
        m = info["metrics"]
        assert info["valid"] and m["constraint_satisfaction"] == 1.0
        assert m["cost"] >= truck_best["value"] and m["coordination"] == 0.0
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": rec["plan"]})
    assert info["metrics"]["coordination"] == 1.0
