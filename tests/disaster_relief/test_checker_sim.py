"""The P7 checker on hand-computed plans, and the env's simulation against the checker."""

from __future__ import annotations

import numpy as np
import pytest

from crab_gym.envs.realm.disaster_relief.checker import PlanShapeError, check_plan, normal_trip
from crab_gym.envs.realm.disaster_relief.generator import generate_p7, tiny_p7
from crab_gym.envs.realm.disaster_relief.model import P7Instance
from crab_gym.envs.realm.disaster_relief.sim import ReliefSim

#: One region 60 km east of the base (critical, due 10:00), one 120 km north (urgent, due
#: 14:00); a truck at 60 km/h: one way 60 and 120 minutes on the 30-minute grid.
HAND = {
    "name": "hand", "start": 480, "horizon": 960, "slot_minutes": 30,
    "stock": {"medical_supplies": 10, "food": 20, "water": 0, "shelter": 0},
    "regions": [
        {"id": "east", "severity": "critical", "population": 10, "x": 60.0, "y": 0.0,
         "needs": {"medical_supplies": 8}, "deadline": 600},
        {"id": "north", "severity": "urgent", "population": 10, "x": 0.0, "y": 120.0,
         "needs": {"food": 15}, "deadline": 840},
    ],
    "vehicles": [{"id": "truck1", "type": "truck", "capacity": 12, "speed_kmh": 60.0}],
    "disruptions": [
        {"type": "weather_event", "region": "north", "start": 600, "duration": 60},
        {"type": "resource_shortage", "resource": "food", "start": 660, "fraction": 0.5},
    ],
}


def hand() -> P7Instance:
    return P7Instance.model_validate(HAND)


def trip(region, load, depart, vehicle="truck1"):
    return {"vehicle": vehicle, "region": region, "load": load, "depart": depart}


def test_hand_computed_plan_cost_and_metrics():
    inst = hand()
    assert inst.one_way == [[60, 120]]
    # east 8 med at 08:00 (arrives 09:00, on time); north 12 food at 10:00 is blocked (refused);
    # north 12 food at 11:00: the 11:00 shortage first halves the food (20 -> 10), so only 10 fit
    plan = {"trips": [trip("east", {"medical_supplies": 8}, 480), trip("north", {"food": 12}, 600),
                      trip("north", {"food": 10}, 660)]}
    res = check_plan(inst, plan)
    assert res.refused == [(1, "weather")]
    assert not res.feasible
    # north gets 10 of 15 food, arriving 13:00 (on time): 5 units unmet at weight 2 -> 2*2*5 = 20 points
    assert res.points == 20
    assert res.minutes == 2 * 60 + 2 * 120
    assert res.cost == inst.minute_weight * 20 + 360
    assert res.metrics["constraint_satisfaction"] == pytest.approx(1 - 1 / 15)
    assert res.metrics["need_met_share"] == pytest.approx(1 - 20 / inst.total_points)


def test_late_units_earn_half_and_surplus_is_waste():
    inst = hand().model_copy(update={"disruptions": []})
    # north due 14:00: leaving at 12:30 arrives 14:30, late: 12 late units cost 2 each, 3 unmet cost 4 each
    res = check_plan(inst, {"trips": [trip("north", {"food": 12}, 750)]})
    assert res.feasible and res.points == 2 * 12 + 4 * 3 + 2 * 4 * 8
    # 12 medical to a need of 8: the stock (10) is short
    res = check_plan(inst, {"trips": [trip("east", {"medical_supplies": 12}, 480)]})
    assert res.refused == [(0, "stock")]
    # 6 + 4 medical to a need of 8: all 10 are delivered, the 2 beyond the need earn nothing:
    # 6 on time, 2 of the late 4 count at half (2 x weight 4 = 8 points); north's food unmet (60)
    res = check_plan(inst, {"trips": [trip("east", {"medical_supplies": 6}, 480), trip("east", {"medical_supplies": 4}, 600)]})
    assert res.feasible and res.delivered == 10
    assert res.on_time[0]["medical_supplies"] == 6 and res.late[0]["medical_supplies"] == 4
    assert res.points == 4 * 2 + 2 * 2 * 15


@pytest.mark.parametrize(("plan", "broken"), [
    ({"trips": [trip("east", {"medical_supplies": 8, "food": 5}, 480)]}, "capacity"),
    ({"trips": [trip("east", {"medical_supplies": 1}, 480), trip("east", {"medical_supplies": 1}, 510)]}, "one_at_a_time"),
    ({"trips": [trip("north", {"food": 1}, 900)]}, "horizon"),
])
def test_each_constraint_is_checked(plan, broken):
    res = check_plan(hand(), plan)
    assert [c for _, c in res.refused] == [broken]
    assert res.violations == [f"trips[{len(plan['trips']) - 1}].{broken}"]


def test_a_trip_breaking_two_constraints_counts_two():
    """Issue 22: a refused trip that broke several constraints counted one."""
    inst = hand().model_copy(update={"disruptions": []})
    plan = {"trips": [trip("north", {"food": 13}, 900)]}  # 13 > 12 units, and arrives 17:00 > 16:00
    res = check_plan(inst, plan)
    assert res.refused == [(0, "capacity"), (0, "horizon")]
    assert res.violations == ["trips[0].capacity", "trips[0].horizon"]
    assert res.metrics["constraint_satisfaction"] == pytest.approx(1 - 2 / 5)  # was 1 - 1/5
    sim = ReliefSim.start(inst, inst.disruptions)
    sim.run_plan([normal_trip(inst, t, k) for k, t in enumerate(plan["trips"])])
    assert len(sim.violations) == 1
    assert "exceed the capacity" in sim.violations[0] and "after the horizon" in sim.violations[0]
    # with the 11:00 shortage the food left (10) is short too: three broken
    res = check_plan(hand(), plan)
    assert [c for _, c in res.refused] == ["capacity", "stock", "horizon"]
    assert res.metrics["constraint_satisfaction"] == pytest.approx(1 - 3 / 5)


def test_malformed_trips_are_named():
    inst = hand()
    for bad, words in [(trip("west", {}, 480), "unknown region 'west'"), (trip("east", {"fuel": 1}, 480), "fuel"),
                       (trip("east", {"food": -1}, 480), "negative"), (trip("east", {}, 480, "car"), "unknown vehicle")]:
        with pytest.raises(PlanShapeError, match=words):
            normal_trip(inst, bad, 0)


def random_trips(inst, rng, n):
    out = []
    for _ in range(n):
        v, r = int(rng.integers(len(inst.vehicles))), int(rng.integers(len(inst.regions)))
        res = list(inst.regions[r].needs)
        load = {str(rng.choice(res)): int(rng.integers(1, inst.vehicles[v].capacity + 1))}
        out.append(trip(inst.region_ids[r], load, inst.start + inst.slot_minutes * int(rng.integers(inst.n_slots)),
                        inst.vehicle_ids[v]))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_simulation_carrying_out_a_plan_agrees_with_the_checker(seed):
    inst = generate_p7("small", seed) if seed % 2 else tiny_p7(seed, 2, 2, 6)
    rng = np.random.default_rng(seed)
    plan = {"trips": random_trips(inst, rng, 8)}
    sim = ReliefSim.start(inst, inst.disruptions)
    sim.run_plan([normal_trip(inst, t, k) for k, t in enumerate(plan["trips"])])
    sim.finish()
    res = check_plan(inst, plan)
    assert len(sim.violations) == len({k for k, _ in res.refused})
    assert sum(v.count(";") + 1 for v in sim.violations) == len(res.refused)
    assert sim.cost() == res.cost
    assert sim.on_time == res.on_time and sim.late == res.late
    # the trips the simulation made, resubmitted, are feasible and cost the same
    again = check_plan(inst, sim.plan())
    assert again.feasible and again.cost == res.cost
