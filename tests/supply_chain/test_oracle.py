"""The P10 oracle against exhaustive search, the simulation and the independent checker."""

from __future__ import annotations

import numpy as np
import pytest

from crab_gym.envs.realm.supply_chain import oracle
from crab_gym.envs.realm.supply_chain.checker import CONSTRAINTS, check_plan
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.model import (
    Breakdown,
    Shortage,
    facility_capacity,
    supplier_capacity,
    with_derived_penalty,
)
from crab_gym.envs.realm.supply_chain.oracle import brute_force_p10, carry_out_day, solve_from
from crab_gym.envs.realm.supply_chain.sim import SupplySim

from .tiny import tiny_instance

TINY_SEEDS = range(60)


def follow(inst, sol, schedule=()):
    """Carry a solution out in a fresh simulation facing ``schedule``; the final state."""
    sim = SupplySim(inst, list(schedule))
    while not sim.done:
        carry_out_day(sim, sol.orders, sol.runs)
        sim.next_day()
    return sim


@pytest.mark.parametrize("seed", TINY_SEEDS)
def test_cp_sat_matches_exhaustive_search_on_tiny_instances(seed):
    inst = tiny_instance(seed)
    sol = solve_from(SupplySim(inst, []), known=list(inst.disruptions))
    assert sol.status == "OPTIMAL"
    assert sol.cost == brute_force_p10(inst)
    # the plan is what it claims: the simulation (facing the same disruptions) costs the same
    sim = follow(inst, sol, inst.disruptions)
    assert sim.cost() == sol.cost
    verdict = check_plan(inst, list(inst.disruptions), oracle.plan_arguments(sim))
    assert verdict.cost == sol.cost and verdict.feasible, verdict.violations  # a short plan is feasible, at a cost


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_with_the_derived_penalty_cp_sat_exhaustive_search_sim_and_checker_agree(seed):
    # a GPU short costs more than anything else a plan can: the exhaustive optimum is the
    # cheapest plan among those that deliver the most; CP-SAT, the simulation and the checker agree
    inst = with_derived_penalty(tiny_instance(seed))
    assert inst.shortfall_penalty > inst.cost_ceiling
    sol = solve_from(SupplySim(inst, []), known=list(inst.disruptions))
    assert sol.status == "OPTIMAL" and sol.cost == brute_force_p10(inst)
    sim = follow(inst, sol, inst.disruptions)
    verdict = check_plan(inst, list(inst.disruptions), oracle.plan_arguments(sim))
    assert sim.cost() == verdict.cost == sol.cost and verdict.feasible
    # nothing cheaper delivers fewer: the optimum's non-shortfall part is below one penalty
    assert sol.cost - inst.shortfall_penalty * sim.shortfall() < inst.shortfall_penalty


def test_tiny_instances_exercise_full_partial_and_no_delivery():
    outcomes = set()
    for seed in TINY_SEEDS:
        inst = tiny_instance(seed)
        sim = follow(inst, solve_from(SupplySim(inst, []), known=list(inst.disruptions)), inst.disruptions)
        outcomes.add("full" if sim.shortfall() == 0 else "none" if sim.delivered == 0 else "partial")
    assert outcomes == {"full", "partial", "none"}


def test_disruptions_cost_more_with_foresight_and_more_again_without():
    inst = generate_p10("medium", seed=0)
    calm = solve_from(SupplySim(inst, []))
    hindsight = solve_from(SupplySim(inst, []), known=list(inst.disruptions))
    adaptive = oracle.adaptive(SupplySim(inst))
    assert calm.status == hindsight.status == "OPTIMAL"
    assert calm.cost < hindsight.cost <= adaptive.sim.cost()
    assert adaptive.status == "ADAPTIVE_OPTIMAL" and len(adaptive.statuses) == 3  # a solve per disruption


def test_adaptive_without_disruptions_is_one_optimal_solve():
    inst = generate_p10("small", seed=3).model_copy(update={"disruptions": []})
    run = oracle.adaptive(SupplySim(inst))
    assert run.status == "OPTIMAL" and len(run.statuses) == 1
    assert run.sim.cost() == solve_from(SupplySim(inst)).cost


def test_re_solve_from_a_mid_episode_state_keeps_what_is_done():
    inst = generate_p10("small", seed=1)
    sim = SupplySim(inst, [])  # no disruption: the plan runs as solved
    sim.order(0, 1, 3)  # three chips from the dear supplier, paid now
    spent = sim.spent
    sol = solve_from(sim)
    assert sol.cost >= spent
    done = follow_from(sim, sol)
    assert done.orders[0].quantity == 3 and done.cost() == sol.cost


def follow_from(sim, sol):
    sim = sim.copy()
    while not sim.done:
        carry_out_day(sim, sol.orders, sol.runs)
        sim.next_day()
    return sim


@pytest.mark.parametrize("seed", range(8))
def test_checker_agrees_with_the_simulation_on_random_play(seed):
    rng = np.random.default_rng(seed)
    inst = generate_p10("small", seed=seed)
    sim = SupplySim(inst)
    while not sim.done:
        for _ in range(int(rng.integers(0, 6))):
            c, s, k = int(rng.integers(len(inst.components))), int(rng.integers(len(inst.suppliers))), int(rng.integers(3))
            if rng.random() < 0.5:
                left = sim.order_limit(c, s)[0]
                if left:
                    sim.order(c, s, int(rng.integers(1, left + 1)))
            else:
                left = sim.produce_limit(k)[0]
                if left:
                    sim.produce(k, int(rng.integers(1, left + 1)))
        sim.next_day()
    verdict = check_plan(inst, sim.fired, oracle.plan_arguments(sim))
    assert verdict.cost == sim.cost()
    assert (verdict.purchase, verdict.production, verdict.holding, verdict.delivered) == (
        sim.purchase, sim.production, sim.holding, sim.delivered)
    assert verdict.lateness == sim.lateness
    broken = set(verdict.violations)
    assert broken <= {"delivery"} and verdict.feasible  # the simulation keeps every hard constraint
    assert ("delivery" in broken) == (sim.shortfall() > 0)  # falling short is soft: it costs


def test_checker_names_each_broken_constraint():
    inst = generate_p10("small", seed=2)
    gpu, sup = inst.component_names[0], inst.supplier_ids[0]
    cap = inst.suppliers[0].capacity[gpu]
    plan = {
        "orders": [{"component": gpu, "supplier": sup, "quantity": cap + 1, "day": 0},  # over capacity
                   {"component": gpu, "supplier": sup, "quantity": 1, "day": inst.end_day}],  # too late
        "production": [{"facility": "testing", "day": 0, "quantity": 1},  # nothing assembled yet
                       {"facility": "assembly", "day": 1, "quantity": 10_000}],  # no parts, over capacity
    }
    verdict = check_plan(inst, [], plan)
    assert set(verdict.violations) == {"supplier_capacity", "lead_time", "component_deadlines", "component_balance",
                                       "stage_order", "facility_capacity", "delivery", "budget"}
    assert verdict.metrics["constraint_satisfaction"] == 0.0
    assert set(CONSTRAINTS) == set(verdict.constraints)


def test_capacity_under_disruptions():
    inst = generate_p10("small", seed=0)
    base = inst.base_capacity[0][0]
    cut = Shortage(component=inst.component_names[0], supplier=inst.supplier_ids[0], shortage=0.5, start=2, duration=2)
    assert [supplier_capacity(inst, [cut], 0, 0, d) for d in range(5)] == [base, base, base // 2, base // 2, base]
    assert supplier_capacity(inst, [cut, cut], 0, 0, 2) == int(base * 0.25 + 1e-9)
    assert supplier_capacity(inst, [cut], 1, 0, 2) == inst.base_capacity[1][0]  # another supplier
    down = Breakdown(facility="testing", start=1, duration=2)
    assert [facility_capacity(inst, [down], 1, d) for d in range(4)] == [inst.facilities[1].capacity, 0, 0,
                                                                        inst.facilities[1].capacity]
