"""P10 coordination: the share of the gain of the suppliers and facilities keeping the flow
together that a plan realises.

The agents are the suppliers and the three facilities. Without coordination each acts on its
own, as soon as it can (:func:`solo_plan`, a *push* chain):

1. **suppliers** ship what the demand still needs as early as they can: each day, component
   by component, from the cheapest supplier first (ties: supplier order), up to its capacity
   under the disruptions faced, if the order arrives by the component's last arrival day and
   early enough to be packaged by the plan's last day (two days before it: late GPUs count,
   at their lateness cost); purchases stop where the budget
   would leave too little to produce the whole demand;
2. **facilities** run at full speed on whatever reaches them: each day assembly makes what its
   capacity (0 while broken down) and the kits on hand allow, testing and packaging what the
   previous stage finished on earlier days, up to the demand.

Nobody waits for anybody, so components pile up on the shelf and units in progress wait for
the next stage; a stage that runs dry stalls. :func:`solo_cost` is that plan's cost from the
independent checker.

``coordination = (solo - cost) / (solo - reference)``, clipped to [0, 1]
(:func:`~crab_gym.envs.realm.common.coordination.savings_share`): 1 at the reference's cost, 0 for a plan no better than the push
chain (idle stock, units bought and never used, stalls all cost), 0 for an infeasible plan.
When nothing is to be gained (``solo <= reference``: the push chain may even beat the adaptive
reference, which learns of a shortage only when it strikes) a feasible plan scores 1 if it
costs no more than the reference, else 0; without a reference value, 1 if it costs no more
than the push chain, else 0.

Cheap (a pass over days x components x suppliers) and deterministic: no solver runs at the
end of an episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.supply_chain.checker import check_plan
from crab_gym.envs.realm.supply_chain.model import STAGES, P10Instance, facility_capacity, supplier_capacity


def solo_orders(inst: P10Instance, disruptions: list[Any]) -> list[dict[str, Any]]:
    """Step 1 of :func:`solo_plan`: the suppliers shipping the need as early as they can."""
    orders: list[dict[str, Any]] = []
    left = inst.budget - inst.demand * sum(f.cost_per_unit for f in inst.facilities)
    remaining = [max(0, inst.need(c) - comp.stock) for c, comp in enumerate(inst.components)]
    by_price = [sorted(range(len(inst.suppliers)), key=lambda s: (inst.prices[s][c], s)) for c in range(len(inst.components))]
    for day in range(inst.n_days):
        for c, comp in enumerate(inst.components):
            latest = min(inst.last_arrival(c), inst.end_day - (len(STAGES) - 1))
            for s in by_price[c]:
                if remaining[c] <= 0 or day + inst.suppliers[s].lead_time > latest:
                    continue
                price = inst.prices[s][c]
                q = min(remaining[c], supplier_capacity(inst, disruptions, s, c, day))
                if price > 0:
                    q = min(q, max(0, left) // price)
                if q > 0:
                    orders.append({"component": comp.name, "supplier": inst.supplier_ids[s], "quantity": q, "day": day})
                    remaining[c] -= q
                    left -= q * price
    return orders


def solo_production(inst: P10Instance, disruptions: list[Any], orders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Step 2 of :func:`solo_plan`: every stage at full speed on what reaches it."""
    lead = {s.supplier_id: s.lead_time for s in inst.suppliers}
    arrivals: dict[tuple[int, str], int] = {}
    for o in orders:
        key = (o["day"] + lead[o["supplier"]], o["component"])
        arrivals[key] = arrivals.get(key, 0) + o["quantity"]
    on_hand = {comp.name: comp.stock for comp in inst.components}
    made, waiting = [0] * len(STAGES), [0] * (len(STAGES) - 1)
    runs: list[dict[str, Any]] = []
    for day in range(inst.n_days):
        for comp in inst.components:
            on_hand[comp.name] += arrivals.get((day, comp.name), 0)
        inputs = [min(on_hand[comp.name] // comp.bom for comp in inst.components), *waiting]
        today = [min(facility_capacity(inst, disruptions, k, day), inputs[k], inst.demand - made[k])
                 for k in range(len(STAGES))]
        for k, q in enumerate(today):
            if q > 0:
                runs.append({"facility": STAGES[k], "day": day, "quantity": q})
                made[k] += q
        for comp in inst.components:
            on_hand[comp.name] -= comp.bom * today[0]
        for k in range(len(waiting)):
            waiting[k] += today[k] - today[k + 1]
    return runs


def solo_plan(inst: P10Instance, disruptions: Sequence[Any]) -> dict[str, list[dict[str, Any]]]:
    """The push chain facing ``disruptions`` (with their start days), as ``submit_plan``
    arguments."""
    disruptions = list(disruptions)
    orders = solo_orders(inst, disruptions)
    return {"orders": orders, "production": solo_production(inst, disruptions, orders)}


def solo_cost(inst: P10Instance, disruptions: Sequence[Any]) -> float:
    """The cost of the push chain (:func:`solo_plan`), from the independent checker."""
    return check_plan(inst, list(disruptions), solo_plan(inst, disruptions)).cost
