"""The independent P10 checker: a whole plan's cost and each declared constraint, computed
from the plan's entries day by day, apart from the env's simulation (:mod:`.sim`), so that
the tests can hold the two against each other.

The eight declared constraints (``constraint_satisfaction`` is the share that hold):

==================  ==================================================================
``supplier_capacity``  each day's orders of a component at a supplier within its capacity
                       under the disruptions in force that day
``lead_time``          every order arrives (ordering day + lead time) within the plan
``component_deadlines`` every order arrives by its component's hard deadline (a soft one,
                       with a ``late_penalty``, costs instead)
``component_balance``  assembly never uses more components than are on hand
``stage_order``        testing and packaging use only units the previous stage finished on
                       an earlier day
``facility_capacity``  each stage's daily output within its capacity (0 while broken down)
``budget``             purchases plus production within the budget
``delivery``           the whole demand packaged by the plan's last day, the horizon
                       (GPUs packaged after the due day count, and cost
                       ``lateness_penalty`` per GPU per day late). *Soft*: a plan that falls
                       short stays feasible and pays ``shortfall_penalty`` per GPU short
                       (it fails this constraint, so it is no success)
==================  ==================================================================

A plan is feasible when the seven hard constraints hold (and it packages no more than the
demand); ``delivery`` counts in ``constraint_satisfaction`` and in success, not in
feasibility. The cost: purchases + production + holding (components on hand and work in
progress at the end of each day) + lateness (late GPUs; orders arriving after a soft
deadline) + the shortfall penalty per GPU not packaged by the horizon.

P10's ``check`` role (:func:`check`): the checker above on a plan given
as ``submit_plan`` arguments, facing every disruption of the instance's schedule.

Plan: ``{"orders": [{"component", "supplier", "quantity", "day"}], "production":
[{"facility", "day", "quantity"}]}``, every entry from day 0 (what ``Reference.plan`` stores
and ``OraclePolicy`` submits). It is judged as the env plays it to the end when the same plan
is submitted again at each pause: shortages and breakdowns limit the capacities of the days
they are active.

Cost: purchases + production + holding + lateness + ``shortfall_penalty`` per GPU not
packaged by the horizon, in currency units, the unit of the reference value. The reference
plan is one solve from day 0 knowing every disruption of the schedule (foresight), and
``check(inst, ref.plan).cost == ref.value``; an agent that learns the disruptions as they
strike may not reach it (``ref.extra["adaptive_value"]``: the oracle re-solving at each
disruption). Constraints: the checker's eight (``delivery`` is soft: it is priced in the
cost and does not make the plan infeasible). A plan naming an unknown component, supplier or
facility, missing a field, or with a quantity below 1 or a day before 0 (``submit_plan``
refuses them; the checker alone would price a negative order) is infeasible: its only
constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.supply_chain.model import STAGES, P10Instance, facility_capacity, supplier_capacity

CONSTRAINTS = ("supplier_capacity", "lead_time", "component_deadlines", "component_balance", "stage_order",
               "facility_capacity", "budget", "delivery")
#: The constraints a feasible plan keeps: all but ``delivery`` (a GPU short costs instead).
HARD_CONSTRAINTS = CONSTRAINTS[:-1]


@dataclass
class P10Check(PlanCheck):
    """The verdict, plus the cost by kind and what was delivered."""

    purchase: int = 0
    production: int = 0
    holding: int = 0
    lateness: int = 0
    delivered: int = 0
    shortfall: int = 0


def check_plan(inst: P10Instance, disruptions: list[Any], plan: Mapping[str, Any]) -> P10Check:
    """Check ``plan`` (``submit_plan`` arguments from day 0) facing ``disruptions`` (with
    their start days)."""
    ok = dict.fromkeys(CONSTRAINTS, True)
    end = inst.end_day
    purchase, late, arrivals = _orders(inst, disruptions, plan, ok)
    production, made = _production(inst, disruptions, plan, ok)
    delivered, holding, packing_late = _flow(inst, arrivals, made, ok)
    late += packing_late
    ok["stage_order"] &= not any(t > end for _, t in made)
    ok["budget"] &= purchase + production <= inst.budget
    shortfall = max(0, inst.demand - delivered)
    ok["delivery"] &= shortfall == 0 and delivered <= inst.demand
    cost = purchase + production + holding + late + inst.shortfall_penalty * shortfall
    met = sum(ok.values())
    metrics = {
        "planning_quality": min(delivered, inst.demand) / inst.demand,
        "constraint_satisfaction": met / len(CONSTRAINTS),
    }
    feasible = all(ok[name] for name in HARD_CONSTRAINTS) and delivered <= inst.demand
    return P10Check(feasible, float(cost), ok, metrics, purchase, production, holding, late, delivered, shortfall)


def _orders(
    inst: P10Instance, disruptions: list[Any], plan: Mapping[str, Any], ok: dict[str, bool]
) -> tuple[int, int, dict[tuple[int, int], int]]:
    """The orders: (purchase cost, late-arrival cost, units arriving by (day, component));
    ``lead_time``, ``component_deadlines`` and ``supplier_capacity`` updated in ``ok``."""
    C = {name: i for i, name in enumerate(inst.component_names)}
    S = {sid: i for i, sid in enumerate(inst.supplier_ids)}
    ordered: dict[tuple[int, int, int], int] = defaultdict(int)
    arrivals: dict[tuple[int, int], int] = defaultdict(int)
    purchase = late = 0
    for o in plan.get("orders", []):
        c, s, t, q = C[o["component"]], S[o["supplier"]], int(o["day"]), int(o["quantity"])
        ordered[c, s, t] += q
        eta = t + inst.suppliers[s].lead_time
        ok["lead_time"] &= eta <= inst.end_day
        comp = inst.components[c]
        if comp.deadline is not None and eta > comp.deadline:
            if comp.late_penalty is None:
                ok["component_deadlines"] = False
            else:
                late += q * comp.late_penalty * (eta - comp.deadline)
        arrivals[eta, c] += q
        purchase += q * inst.prices[s][c]
    for (c, s, t), q in ordered.items():
        ok["supplier_capacity"] &= q <= supplier_capacity(inst, disruptions, s, c, t)
    return purchase, late, arrivals


def _production(
    inst: P10Instance, disruptions: list[Any], plan: Mapping[str, Any], ok: dict[str, bool]
) -> tuple[int, dict[tuple[int, int], int]]:
    """The production entries: (their cost, units made by (stage, day)); ``facility_capacity``
    updated in ``ok``."""
    K = {stage: k for k, stage in enumerate(STAGES)}
    production = 0
    made: dict[tuple[int, int], int] = defaultdict(int)
    for r in plan.get("production", []):
        k, t, q = K[r["facility"]], int(r["day"]), int(r["quantity"])
        made[k, t] += q
        production += q * inst.facilities[k].cost_per_unit
    for (k, t), q in made.items():
        ok["facility_capacity"] &= q <= facility_capacity(inst, disruptions, k, t)
    return production, made


def _flow(
    inst: P10Instance, arrivals: dict[tuple[int, int], int], made: dict[tuple[int, int], int], ok: dict[str, bool]
) -> tuple[int, int, int]:
    """Day by day, components and work in progress: (GPUs packaged, holding cost, lateness of
    GPUs packaged after the due day); ``component_balance`` and ``stage_order`` updated in ``ok``."""
    on_hand = [comp.stock for comp in inst.components]
    stock = [0] * (len(STAGES) - 1)
    delivered = holding = late = 0
    for t in range(inst.n_days):
        for c, comp in enumerate(inst.components):
            on_hand[c] += arrivals[t, c] - comp.bom * made[0, t]
            ok["component_balance"] &= on_hand[c] >= 0
            holding += comp.holding * max(0, on_hand[c])
        for k in range(1, len(STAGES)):
            ok["stage_order"] &= made[k, t] <= stock[k - 1]
        for k in range(len(STAGES) - 1):
            stock[k] += made[k, t] - made[k + 1, t]
        holding += inst.wip_holding * sum(max(0, w) for w in stock)
        packed = made[len(STAGES) - 1, t]
        delivered += packed
        late += packed * inst.lateness_penalty * max(0, t - inst.due_day)
    return delivered, holding, late


def check(instance: P10Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`P10Check`)."""
    entries = {"orders": list(plan.get("orders", [])), "production": list(plan.get("production", []))}
    try:
        for entry in entries["orders"] + entries["production"]:
            if int(entry["quantity"]) < 1 or int(entry["day"]) < 0:  # the checker would take them
                raise ValueError(f"{entry}: submit_plan takes quantities from 1 and days from 0")
        return check_plan(instance, list(instance.disruptions), entries)
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a missing field
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
