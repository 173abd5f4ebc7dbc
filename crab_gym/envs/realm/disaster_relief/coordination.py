"""P7 coordination: the share of the gain of the vehicles working together that a plan realises.

The agents are the vehicles. The baseline is **the best plan one vehicle alone can make**:
CP-SAT (:func:`~.oracle.solve_p7` restricted to one vehicle, priced with the instance's own
``K``), once per vehicle, seeded with :func:`solo_plan`. :func:`solo_record` keeps each
vehicle's best plan and proven bound; the baseline ``solo`` is the smallest *bound* over the
vehicles, a lower bound of the cost of every plan whose trips one vehicle makes, so such a
plan scores 0 even where a solve stopped before its proof.

``coordination = (solo - cost) / (solo - reference)``, clipped to [0, 1]
(:func:`~crab_gym.envs.realm.common.coordination.savings_share`): 1 at the reference's cost,
0 for every plan no better than one vehicle alone could do (one vehicle doing everything,
two vehicles duplicating a delivery while a deadline passes, sending nothing), 0 for an
infeasible plan. A function of the cost alone, so plans of equal cost score the same.
It does not apply (``None``, :data:`~crab_gym.envs.realm.common.references.NOT_APPLICABLE`)
to an instance with one vehicle, or when working together is not known to gain anything
(``solo <= reference``: one vehicle alone may do as well as the team).

The shipped instances carry their solo record in ``references.json`` (``solo``); any other
instance (or schedule faced) is solved once, one deterministic second per vehicle, and
cached on disk like a reference (:func:`~.references.solo_reference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.common.references import NOT_APPLICABLE
from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    lost_units,
)
from crab_gym.envs.realm.disaster_relief.oracle import SOLVER, solve_p7

#: CP-SAT's deterministic budget per vehicle for an instance solved on demand (the build
#: gives the shipped instances more: :data:`~.build.SOLO_LIMIT`).
SOLO_LIMIT = 1.0


def coordination(cost: float, feasible: bool, solo: float | None, reference: float | None, n_vehicles: int) -> float | None:
    """The coordination score (see the module docstring); ``solo`` is the solo baseline (a
    lower bound of every one-vehicle plan's cost), ``reference`` the best known cost."""
    if n_vehicles < 2:
        return NOT_APPLICABLE
    if not feasible:
        return 0.0
    if solo is None or reference is None or solo <= reference:
        return NOT_APPLICABLE
    return savings_share(cost, True, solo, reference)


def solo_record(inst: P7Instance, limit: float = SOLO_LIMIT) -> dict[str, Any]:
    """Each vehicle alone, solved by CP-SAT from :func:`solo_plan` (one worker, ``limit``
    deterministic seconds): ``value`` and ``plan`` of the best, ``bound`` the smallest proven
    bound over the vehicles (the baseline), and the rows per vehicle."""
    rows, plans = [], []
    for v, vid in enumerate(inst.vehicle_ids):
        hint = solo_plan(inst, v)
        res = solve_p7(inst, deterministic_limit=limit, vehicles=[v], hint=hint)
        plan = res.plan if res.cost is not None else hint
        value = res.cost if res.cost is not None else check_plan(inst, hint).cost
        rows.append({"vehicle": vid, "value": value, "bound": res.bound, "status": res.status})
        plans.append(plan)
    best = min(range(len(rows)), key=lambda i: rows[i]["value"])
    bounds = [r["bound"] for r in rows]
    return {
        "value": rows[best]["value"],
        "bound": None if None in bounds else min(bounds),
        "status": "OPTIMAL" if all(r["status"] == "OPTIMAL" for r in rows) else "FEASIBLE",
        "vehicle": rows[best]["vehicle"],
        "solver": f"{SOLVER}, one vehicle at a time, hinted with solo_plan",
        "time_limit_s": limit,
        "workers": 1,
        "plan": plans[best],
        "per_vehicle": rows,
        "fingerprint": inst.fingerprint(),
    }


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
