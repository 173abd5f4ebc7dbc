"""The P5 oracles against brute force (tiny instances) and against each other (small ones),
and the checker against the event simulation."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.generator import generate_p5
from crab_gym.envs.realm.wedding.oracle import solo_value, solve_p5
from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat
from crab_gym.envs.realm.wedding.sim import WeddingSim, simulate_plan
from tests.wedding.bruteforce import brute_force

TINY = [generate_p5("small", seed, n_guests=2, n_errands=2, n_vehicles=2) for seed in range(6)]


@cache
def _brute(k: int) -> tuple[int, dict]:
    return brute_force(TINY[k])


@cache
def _routing(k: int):
    return solve_p5(TINY[k], solution_limit=100)


@pytest.mark.parametrize("k", range(len(TINY)))
def test_cpsat_proves_the_brute_force_optimum_and_routing_never_beats_it(k):
    inst = TINY[k]
    best, plan = _brute(k)
    assert check_plan(inst, plan).feasible  # the generator is feasible by construction
    cp = solve_cpsat(inst, deterministic_limit=10)
    assert cp.status == "OPTIMAL"
    assert cp.cost == best == cp.bound
    assert check_plan(inst, cp.plan["routes"]).cost == best  # the model's value is the plan's
    routing = _routing(k)
    assert routing.feasible and routing.cost >= best
    assert check_plan(inst, routing.plan["routes"]).cost == routing.cost


def test_routing_reaches_the_optimum_on_most_tiny_instances():
    """The RoutingModel is a heuristic (CP-SAT backs it up); on 6 tiny instances it misses
    the optimum at most once."""
    misses = sum(_routing(k).cost > _brute(k)[0] for k in range(len(TINY)))
    assert misses <= 1


def test_routing_and_cpsat_agree_within_bounds_on_a_small_instance():
    inst = generate_p5("small", 1)
    routing, cp = solve_p5(inst, solution_limit=30), solve_cpsat(inst, deterministic_limit=20)
    assert cp.status == "OPTIMAL"
    assert cp.bound <= cp.cost <= routing.cost
    assert check_plan(inst, cp.plan["routes"]).feasible


def test_solo_baseline_is_never_cheaper_than_the_optimum():
    inst = TINY[4]
    assert solo_value(inst, solution_limit=50) >= _brute(4)[0]


@pytest.mark.parametrize("seed", range(4))
def test_simulation_and_checker_agree_on_random_plans(seed):
    inst = generate_p5("small", seed)
    rng = np.random.default_rng(seed)
    names = inst.stop_names()
    order = [names[s] for s in rng.permutation(inst.n_items)]
    routes = {v.vehicle_id: [] for v in inst.vehicles}
    for stop in order:
        vid = inst.vehicles[int(rng.integers(len(inst.vehicles)))].vehicle_id
        routes[vid].append(stop)
        if rng.random() < 0.4:
            routes[vid].append(names[-1])
    sim = simulate_plan(inst, routes)
    verdict = check_plan(inst, routes)
    assert sim.cost() == verdict.cost == sim.check().cost
    assert sim.served() == verdict.served == inst.n_items


def test_checker_counts_each_broken_constraint():
    inst = generate_p5("small", 0)
    g = inst.guests[0]
    # one vehicle takes only the first guest; everything else is left undone
    verdict = check_plan(inst, {inst.vehicles[0].vehicle_id: [f"pickup:{g.guest_id}"]})
    assert not verdict.feasible
    assert verdict.served == 1
    assert verdict.cost == verdict.travel + inst.unserved_penalty * (inst.n_items - 1)
    broken = set(verdict.violations)
    assert f"landed:{g.guest_id}" not in broken and f"photo:{g.guest_id}" not in broken
    assert {f"photo:{x.guest_id}" for x in inst.guests[1:]} <= broken
    assert {f"window:{e.errand_id}" for e in inst.errands} <= broken


def test_a_late_errand_and_an_overload_are_violations():
    inst = generate_p5("small", 2)
    e = inst.errands[0]
    late = inst.model_copy(update={"errands": [e.model_copy(update={"opens": 540, "closes": 540 + e.service})]
                                   + inst.errands[1:]})
    van = inst.vehicles[0]
    crowded = late.model_copy(update={"vehicles": [van.model_copy(update={"capacity": 1})] + inst.vehicles[1:]})
    stops = [f"pickup:{g.guest_id}" for g in inst.guests] + [f"errand:{x.errand_id}" for x in inst.errands]
    verdict = check_plan(crowded, {van.vehicle_id: stops})
    assert f"seats:{van.vehicle_id}" in verdict.violations
    assert f"window:{e.errand_id}" in verdict.violations


def test_sim_waits_for_landing_and_opening():
    inst = generate_p5("small", 3)
    sim = WeddingSim(inst)
    g = inst.guests[0]
    visit = sim.drive(0, 0)
    assert visit.start == max(visit.arrive, g.arrival)
