"""Realm-P10-v0 scores a user can trust (issue 22): doing nothing scores 0, adaptation is
measured from the state the agent faced when a disruption struck, never as 1.0 by default."""

from __future__ import annotations

import pickle

import pytest

from crab_gym.envs.realm.supply_chain import oracle
from crab_gym.envs.realm.supply_chain.env import SupplyChainEnv
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.sim import SupplySim

EMPTY = {"name": "submit_plan", "arguments": {"orders": [], "production": []}}


def submit_until_done(env, call):
    """Submit ``call`` again after every pause; the last info."""
    while True:
        _, _, terminated, _, info = env.step(call)
        assert info["valid"], info["error"]
        if terminated:
            return info


@pytest.mark.parametrize("name", ["p10_small_00", "p10_small_01", "p10_medium_00", "p10_large_00", "p10_large_03"])
def test_doing_nothing_scores_zero_adaptation(name):
    # issue 22: the empty plan scored adaptation 1.0 (the snapshot was taken after the whole plan ran)
    env = SupplyChainEnv(name)
    env.reset(seed=0)
    m = submit_until_done(env, EMPTY)["metrics"]
    assert m["adaptation"] == 0.0 and m["optimality"] == 0.0 and m["coordination"] == 0.0
    assert m["planning_quality"] == 0.0 and not m["feasible"]


def test_the_snapshot_is_the_state_when_the_first_disruption_struck():
    env = SupplyChainEnv("p10_small_00")
    env.reset(seed=0)
    submit_until_done(env, EMPTY)
    first = min(d.start for d in env.instance.disruptions)
    state = pickle.loads(env._snapshot)
    assert state.day == first and not state.done and state.fired


def test_no_disruption_struck_means_adaptation_does_not_apply():
    inst = generate_p10("small", 3).model_copy(update={"disruptions": []})
    env = SupplyChainEnv(inst)
    env.reset(seed=0)
    m = submit_until_done(env, {"name": "submit_plan", "arguments": env.reference.plan})["metrics"]
    assert m["optimality"] == 1.0 and m["adaptation"] is None and "adaptation" in m


def test_the_adaptive_reference_is_never_worse_than_keeping_the_plan():
    # a plan made with foresight of every disruption, kept unchanged after the first strikes:
    # the re-solve from that state (which does not know the later ones) costs more, so the
    # adaptation reference is the kept plan's cost
    inst = generate_p10("small", 6)
    hindsight = oracle.solve_from(SupplySim(inst, []), known=list(inst.disruptions))
    env = SupplyChainEnv(inst)
    env.reset(seed=0)
    sim = SupplySim(inst)
    plan = oracle.plan_arguments(_follow(sim, hindsight))
    m = submit_until_done(env, {"name": "submit_plan", "arguments": plan})["metrics"]
    resolve = oracle.adaptive(pickle.loads(env._snapshot)).sim.cost()
    assert m["cost"] == hindsight.cost < resolve
    assert m["adaptation_reference_cost"] == hindsight.cost and m["adaptation"] == 1.0


def _follow(sim, sol):
    while not sim.done:
        oracle.carry_out_day(sim, sol.orders, sol.runs)
        sim.next_day()
    return sim


def test_a_late_instance_ranks_plans_and_doing_nothing_scores_zero():
    # issue 22: on upstream files where no supplier can deliver gpu_chips by its deadline,
    # doing nothing was "optimal"; a late shipment now counts, at its lateness cost
    env = SupplyChainEnv("p10_late_00")
    inst = env.instance
    chips = inst.components[0]
    assert all(sup.lead_time > chips.deadline for sup in inst.suppliers) and chips.late_penalty
    assert inst.suppliers[0].lead_time > inst.due_day - 2  # the cheapest supplier's chips make late GPUs
    env.reset(seed=0)
    nothing = submit_until_done(env, EMPTY)["metrics"]
    assert nothing["optimality"] == 0.0 and nothing["adaptation"] == 0.0 and nothing["coordination"] == 0.0
    assert nothing["planning_quality"] == 0.0 and nothing["shortfall"] == inst.demand
    env.reset(seed=0)
    best = submit_until_done(env, {"name": "submit_plan", "arguments": env.reference.plan})["metrics"]
    assert best["optimality"] == 1.0 and best["feasible"] and best["shortfall"] == 0
    assert best["lateness"] > 0 and best["cost"] == 27779  # every chip arrives late
    assert best["cost"] < nothing["cost"]


def test_late_gpus_count_and_cost_per_day():
    inst = generate_p10("small", 0).model_copy(update={"disruptions": []})
    late = inst.due_day + 2
    assert late <= inst.end_day
    sim = SupplySim(inst)
    while sim.day < late:
        for c in range(len(inst.components)):  # buy one GPU's parts from the quickest supplier
            if sim.day == 0:
                sim.order(c, 1, inst.components[c].bom)
        if sim.day == inst.suppliers[1].lead_time:
            sim.produce(0, 1)
        if sim.day == late - 1:
            sim.produce(1, 1)
        sim.next_day()
    sim.produce(2, 1)
    assert sim.lateness == 2 * inst.lateness_penalty
    sim.run_to_end()
    assert sim.delivered == 1 and sim.shortfall() == inst.demand - 1


def test_the_push_chain_scores_no_coordination():
    from crab_gym.envs.realm.supply_chain.coordination import solo_plan
    for name in ("p10_small_00", "p10_late_01"):
        env = SupplyChainEnv(name)
        env.reset(seed=0)
        m = submit_until_done(env, {"name": "submit_plan", "arguments": solo_plan(env.instance,
                                                                               env.instance.disruptions)})["metrics"]
        assert m["feasible"] and m["cost"] == m["solo_cost"] and m["coordination"] == 0.0
