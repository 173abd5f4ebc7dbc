"""P7 coordination: the share of the gain of the vehicles working together that a plan realises.

The agents are the vehicles. The baseline is **one vehicle doing the whole relief alone**
(:func:`solo_plan`): from the start, each time it is back at the base it takes the trip that
spares the most shortfall points (a load filling its capacity with what the region still
needs and the base still has, resources in their fixed order; ``2 w`` per unit arriving by the
deadline, ``w`` after it), shorter trips first among equals, then the lower region index; with
no such trip it waits for a weather block to lift, and stops when none will. Shortages strike
and blocks hold exactly as in the checker. :func:`solo_cost` is the cheapest of these plans
over the vehicles, scored by the independent checker.

``coordination = (solo - cost) / (solo - reference)``, clipped to [0, 1]
(:func:`~crab_gym.envs.realm.common.coordination.savings_share`): 1 at the reference's cost, 0 for a plan no better than the best
vehicle working alone (two vehicles duplicating a delivery waste stock and score lower),
0 for an infeasible plan. When nothing is to be gained (``solo <= reference``) a feasible
plan scores 1 if it costs no more than the reference, else 0; without a reference value, 1 if
it costs no more than the solo plan, else 0.

Cheap (one pass per trip over the regions, per vehicle) and deterministic: no solver runs at
the end of an episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    lost_units,
)


def solo_plan(inst: P7Instance, v: int, schedule: Sequence[Any] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Vehicle ``v`` alone, facing ``schedule`` (default: the instance's disruptions), as
    ``submit_plan`` arguments."""
    schedule = list(inst.disruptions if schedule is None else schedule)
    shortages = sorted((d for d in schedule if isinstance(d, ResourceShortage)), key=lambda d: d.start)
    blocks = [d for d in schedule if isinstance(d, WeatherEvent)]
    stock = {res: inst.stock.get(res, 0) for res in RESOURCES}
    left = [{res: inst.need(r, res) for res in RESOURCES} for r in range(len(inst.regions))]
    capacity, legs = inst.vehicles[v].capacity, inst.one_way[v]
    trips: list[dict[str, Any]] = []
    now, struck = inst.start, 0
    while now < inst.horizon:
        while struck < len(shortages) and shortages[struck].start <= now:
            d = shortages[struck]
            stock[d.resource] -= lost_units(stock[d.resource], d.fraction)
            struck += 1
        blocked = {b.region for b in blocks if b.start <= now < b.end}
        best, key = None, None
        for r, reg in enumerate(inst.regions):
            if reg.id in blocked or now + legs[r] > inst.horizon:
                continue
            load, room = {}, capacity
            for res in RESOURCES:
                q = min(room, left[r][res], stock[res])
                if q > 0:
                    load[res], room = q, room - q
            worth = (2 if now + legs[r] <= reg.deadline else 1) * reg.weight * (capacity - room)
            if worth > 0 and (key is None or (worth, -legs[r], -r) > key):
                best, key = (r, load), (worth, -legs[r], -r)
        if best is not None:
            r, load = best
            for res, q in load.items():
                stock[res] -= q
                left[r][res] -= q
            trips.append({"vehicle": inst.vehicle_ids[v], "region": inst.region_ids[r], "load": load, "depart": now})
            now += 2 * legs[r]
            continue
        lifts = [b.end for b in blocks if b.start <= now < b.end]
        if not lifts:
            break
        now = min(lifts)
    return {"trips": trips}


def solo_cost(inst: P7Instance, schedule: Sequence[Any] | None = None) -> float:
    """The cost of the best vehicle doing the whole relief alone (:func:`solo_plan`)."""
    return min(check_plan(inst, solo_plan(inst, v, schedule), schedule).cost for v in range(len(inst.vehicles)))

