"""The P7 oracle against exhaustive search, and its plans against the independent checker."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.generator import tiny_p7
from crab_gym.envs.realm.disaster_relief.oracle import ReliefState, brute_force_p7, solve_p7


@pytest.mark.parametrize(("seed", "n_regions", "n_vehicles", "slots"),
                         [(s, 2, 1, 5) for s in range(8)] + [(s, 1, 2, 4) for s in range(4)] + [(9, 2, 2, 3)])
def test_oracle_matches_brute_force_on_tiny_instances(seed, n_regions, n_vehicles, slots):
    inst = tiny_p7(seed, n_regions, n_vehicles, slots)
    best, plan = brute_force_p7(inst)
    res = solve_p7(inst, deterministic_limit=5.0)
    assert res.status == "OPTIMAL"
    assert res.cost == best
    verdict = check_plan(inst, res.plan)
    assert verdict.feasible and verdict.cost == res.cost


def test_tiny_instances_exercise_blocks_and_shortages():
    # the yardstick only means something if the disruptions bind on some of the instances
    binding = 0
    for seed in range(8):
        inst = tiny_p7(seed)
        calm = inst.model_copy(update={"disruptions": []})
        binding += brute_force_p7(inst)[0] > brute_force_p7(calm)[0]
    assert binding >= 3


def test_oracle_continues_from_a_state_and_keeps_its_trips():
    inst = tiny_p7(3, 2, 1, 5)
    first = solve_p7(inst, deterministic_limit=5.0).plan["trips"]
    assert first, "the optimum sends something"
    kept = first[:1]
    leg = inst.one_way[0][inst.region_ids.index(kept[0]["region"])]
    stock = {k: inst.stock[k] - kept[0]["load"].get(k, 0) for k in inst.stock}
    state = ReliefState(kept[0]["depart"], [kept[0]["depart"] + 2 * leg], stock, trips=kept)
    res = solve_p7(inst, state, deterministic_limit=5.0)
    assert res.plan["trips"][:1] == kept
    assert check_plan(inst, res.plan).cost == res.cost
    # keeping the optimum's first trip, the continuation is optimal too
    assert res.cost == solve_p7(inst, deterministic_limit=5.0).cost


@pytest.mark.parametrize("seed", range(4))
def test_one_vehicle_solve_matches_brute_force_on_that_vehicle_alone(seed):
    # the coordination baseline: the oracle restricted to one vehicle, priced with the
    # instance's K (a one-vehicle copy has another K: compare points and minutes)
    inst = tiny_p7(seed, 1, 2, 4)
    for v in range(2):
        alone = inst.model_copy(update={"vehicles": [inst.vehicles[v]]})
        best, _ = brute_force_p7(alone)
        points, minutes = divmod(int(best), alone.minute_weight)
        res = solve_p7(inst, deterministic_limit=5.0, vehicles=[v])
        assert res.status == "OPTIMAL" and res.cost == inst.minute_weight * points + minutes
        assert {t["vehicle"] for t in res.plan["trips"]} <= {inst.vehicle_ids[v]}


def test_a_hint_is_a_plan_to_start_from():
    inst = tiny_p7(9, 2, 2, 3)
    best, plan = brute_force_p7(inst)
    for hint in (plan, {"trips": []}, {"trips": [dict(t, depart=t["depart"] + 1) for t in plan["trips"]]}):
        res = solve_p7(inst, deterministic_limit=5.0, hint=hint)  # off-grid trips are left out
        assert res.cost == best and check_plan(inst, res.plan).cost == best
