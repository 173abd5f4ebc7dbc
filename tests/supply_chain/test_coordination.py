"""P10 coordination, worked out by hand: the push chain, a just-in-time plan, a plan that keeps
a unit waiting, an over-purchase and a stall, and the env reporting the same numbers.

FLOW: 2 GPUs by day 4; one component (price 10, holding 5 per unit and day), one supplier
(no lead time, 2 units a day); assembly, testing and packaging make 1 unit a day each at 5, 3
and 2; work in progress costs 1 per unit and day. Purchases and production of 2 GPUs cost
20 + 20 in every plan below, so the plans differ by holding (and shortfall).
"""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.supply_chain.checker import check_plan
from crab_gym.envs.realm.supply_chain.coordination import solo_cost, solo_plan
from crab_gym.envs.realm.supply_chain.env import SupplyChainEnv
from crab_gym.envs.realm.supply_chain.model import P10Instance

FLOW = {
    "name": "flow", "demand": 2, "due_day": 4, "budget": 1000, "shortfall_penalty": 100, "wip_holding": 1,
    "components": [{"name": "gpu_chips", "bom": 1, "price": 10, "holding": 5}],
    "suppliers": [{"supplier_id": "supplier1", "lead_time": 0, "capacity": {"gpu_chips": 2}}],
    "facilities": [{"facility_id": "assembly", "capacity": 1, "cost_per_unit": 5},
                   {"facility_id": "testing", "capacity": 1, "cost_per_unit": 3},
                   {"facility_id": "packaging", "capacity": 1, "cost_per_unit": 2}],
}


def order(day, quantity=1):
    return {"component": "gpu_chips", "supplier": "supplier1", "quantity": quantity, "day": day}


def run(stage, day, quantity=1):
    return {"facility": stage, "day": day, "quantity": quantity}


#: Each unit assembled the day it arrives, tested the next day, packaged the day after.
PIPELINE = [run("assembly", 0), run("assembly", 1), run("testing", 1), run("testing", 2),
            run("packaging", 2), run("packaging", 3)]
#: Just in time: one unit a day, nothing on the shelf; each unit waits two nights in
#: progress (4): 20 + 20 + 4, the optimum.
GOOD = {"orders": [order(0), order(1)], "production": PIPELINE}
OPTIMUM = 44.0


@pytest.fixture
def inst() -> P10Instance:
    return P10Instance.model_validate(FLOW)


def test_the_push_chain(inst):
    # The supplier ships both units on day 0; the second one waits a night on the shelf (5);
    # the stages run at full speed: the same pipeline, 4 in progress. 20 + 20 + 5 + 4 = 49.
    assert solo_plan(inst, []) == {"orders": [order(0, 2)], "production": PIPELINE}
    assert solo_cost(inst, []) == 49


def test_just_in_time_realises_the_whole_gain(inst):
    verdict = check_plan(inst, [], GOOD)
    assert verdict.feasible and verdict.cost == OPTIMUM and verdict.holding == 4
    assert savings_share(verdict.cost, True, solo_cost(inst, []), OPTIMUM) == 1.0


def test_a_unit_left_waiting_between_stages_realises_part(inst):
    # The second unit is tested a day late (day 3) and packaged on day 4: one more night in
    # progress, 45: (49 - 45) / (49 - 44) = 0.8.
    late = {"orders": [order(0), order(1)],
            "production": [run("assembly", 0), run("assembly", 1), run("testing", 1), run("testing", 3),
                           run("packaging", 2), run("packaging", 4)]}
    verdict = check_plan(inst, [], late)
    assert verdict.feasible and verdict.cost == 45
    assert savings_share(verdict.cost, True, solo_cost(inst, []), OPTIMUM) == pytest.approx(0.8)


def test_overbuying_and_stalling_score_zero(inst):
    solo = solo_cost(inst, [])
    # A unit bought on day 4 that no stage uses: 10 more, and a night on the shelf (5): 59.
    wasteful = {"orders": [order(0), order(1), order(4)], "production": PIPELINE}
    verdict = check_plan(inst, [], wasteful)
    assert verdict.feasible and verdict.cost == 59
    assert savings_share(verdict.cost, True, solo, OPTIMUM) == 0.0
    # The supplier ships on day 2, too late for both units to pass three stages by day 4:
    # one GPU short (100): feasible, but dearer than the push chain.
    stalled = {"orders": [order(2, 2)],
               "production": [run("assembly", 2), run("assembly", 3), run("testing", 3), run("testing", 4),
                              run("packaging", 4)]}
    verdict = check_plan(inst, [], stalled)
    assert verdict.feasible and verdict.shortfall == 1 and verdict.violations == ["delivery"]
    assert verdict.cost > solo and savings_share(verdict.cost, verdict.feasible, solo, OPTIMUM) == 0.0


def test_nothing_to_gain_and_no_reference():
    # the push chain no dearer than the reference: a plan at the reference's cost scores 1
    assert savings_share(50.0, True, 49.0, 50.0) == 1.0
    assert savings_share(51.0, True, 49.0, 50.0) == 0.0
    # no reference value: 1 for a feasible plan no dearer than the push chain
    assert savings_share(45.0, True, 49.0, None) == 1.0
    assert savings_share(50.0, True, 49.0, None) == 0.0


def test_a_shortage_cuts_what_the_push_chain_can_order(inst):
    # Half the supplier's capacity on day 0: one unit on day 0, the other on day 1: the
    # just-in-time orders, so the push chain costs the optimum here.
    shortage = {"type": "resource_shortage", "component": "gpu_chips", "shortage": 0.5, "start": 0, "duration": 1}
    hit = P10Instance.model_validate({**FLOW, "disruptions": [shortage]})
    assert solo_plan(hit, hit.disruptions)["orders"] == [order(0), order(1)]
    assert solo_cost(hit, hit.disruptions) == OPTIMUM


@pytest.mark.parametrize(("plan", "expected"), [(GOOD, 1.0), ({"orders": [order(0, 2)], "production": PIPELINE}, 0.0)])
def test_the_env_reports_the_same(plan, expected):
    env = SupplyChainEnv(FLOW, reference=OPTIMUM, adaptation_reference="oracle")
    env.reset(seed=0)
    *_, info = env.step({"name": "submit_plan", "arguments": plan})
    assert info["valid"], info.get("error")
    m = info["metrics"]
    assert m["coordination"] == pytest.approx(expected) and m["solo_cost"] == 49
