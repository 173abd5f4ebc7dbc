"""The independent P7 checker: a whole plan's cost and every declared constraint, computed
from the instance, the disruptions faced and the trips alone (apart from the env's
:mod:`.sim`, so the tests can compare the two).

A plan is ``{"trips": [{"vehicle", "region", "load": {resource: units}, "depart"}]}``.
Trips are taken in order of departure (ties: plan order). Each trip declares five
constraints -- ``capacity``, ``stock``, ``weather``, ``one_at_a_time``, ``horizon`` -- each
checked on its own (``constraint_satisfaction`` counts every one broken); a trip that breaks
any is not carried out (it delivers nothing and drives nothing): the plan is then infeasible. Disruptions strike before the departures of their minute.
``coordination`` needs a baseline plan and the reference: :mod:`.coordination`.

P7's ``check`` role (:func:`check`): the checker above on a plan given
as ``submit_plan`` arguments, facing the instance's own disruptions.

Plan: ``{"trips": [{"vehicle", "region", "load": {resource: units}, "depart": minute}]}``
(what ``Reference.plan`` stores and ``OraclePolicy`` submits), taken in order of departure.
It is judged as the env plays it when the same plan is submitted again at each pause: weather
blocks and resource shortages strike at their minutes, before the departures of that minute.

Cost: ``minute_weight`` x severity-weighted shortfall points + transport minutes of the
trips carried out, the unit of the reference value (``check(inst, ref.plan).cost ==
ref.value``; the reference plan is found knowing the instance's disruptions). Constraints:
``trips[k].<capacity|stock|weather|one_at_a_time|horizon>`` for each trip. ``metrics``
holds ``need_met_share`` and ``constraint_satisfaction``; planning quality, optimality and
coordination are measured against the reference and are the env's. A plan naming an unknown
vehicle, region or resource, a negative load or a departure that is not a minute is
infeasible: its only constraint, ``plan_shape``, fails.

An episode's own plan (``info["solution"]``) lists the trips carried out under ``trips`` and
every trip the agent sent or submitted, in order, under ``attempted``: a refused trip breaks a
constraint, so ``attempted``, when there, is what is judged (as the env judges it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    lost_units,
    shortfall_points,
)

#: The constraints each trip declares.
TRIP_CONSTRAINTS = ("capacity", "stock", "weather", "one_at_a_time", "horizon")


class PlanShapeError(ValueError):
    """A plan naming an unknown vehicle, region or resource, or a negative load."""


@dataclass
class ReliefCheck(PlanCheck):
    """The checker's verdict, plus what P7 measures besides.

    Attributes:
        points: severity-weighted shortfall points.
        minutes: transport minutes of the trips carried out.
        on_time, late: units received per region and resource, by the deadline / after it.
        delivered: units delivered in all (counted or not).
        refused: ``(trip index, constraint)`` of each constraint a trip not carried out broke
            (a trip breaking two constraints appears twice).
    """

    points: int = 0
    minutes: int = 0
    on_time: list[dict[str, int]] = field(default_factory=list)
    late: list[dict[str, int]] = field(default_factory=list)
    delivered: int = 0
    refused: list[tuple[int, str]] = field(default_factory=list)


def normal_trip(inst: P7Instance, trip: Mapping[str, Any], k: int) -> tuple[int, int, dict[str, int], int]:
    """``(vehicle index, region index, load, depart)`` of a plan trip; raises
    :class:`PlanShapeError` naming trip ``k`` when it names something unknown."""
    vehicles, regions = inst.vehicle_ids, inst.region_ids
    vid, rid = trip.get("vehicle"), trip.get("region")
    if vid not in vehicles:
        raise PlanShapeError(f"trips[{k}]: unknown vehicle {vid!r}; vehicles: {', '.join(vehicles)}")
    if rid not in regions:
        raise PlanShapeError(f"trips[{k}]: unknown region {rid!r}; regions: {', '.join(regions)}")
    load = {str(res): int(q) for res, q in dict(trip.get("load") or {}).items()}
    for res, q in load.items():
        if res not in RESOURCES:
            raise PlanShapeError(f"trips[{k}].load: unknown resource {res!r}; resources: {', '.join(RESOURCES)}")
        if q < 0:
            raise PlanShapeError(f"trips[{k}].load.{res}: negative load {q}")
    depart = trip.get("depart")
    if not isinstance(depart, int) or isinstance(depart, bool):
        raise PlanShapeError(f"trips[{k}].depart: expected a minute (int), got {depart!r}")
    return vehicles.index(vid), regions.index(rid), {r: q for r, q in load.items() if q > 0}, depart


def broken_constraints(
    inst: P7Instance, trip: tuple[int, int, dict[str, int], int], stock: Mapping[str, int],
    blocks: Sequence[WeatherEvent], busy_until: int,
) -> list[str]:
    """Every constraint of :data:`TRIP_CONSTRAINTS` the trip ``(vehicle, region, load, depart)``
    breaks, given the stock at its departure and when its vehicle is back (each counts)."""
    v, r, load, depart = trip
    region = inst.regions[r].id
    checks = {
        "capacity": sum(load.values()) > inst.vehicles[v].capacity,
        "stock": any(q > stock[res] for res, q in load.items()),
        "weather": any(b.region == region and b.start <= depart < b.end for b in blocks),
        "one_at_a_time": depart < busy_until,
        "horizon": depart + inst.one_way[v][r] > inst.horizon,
    }
    return [c for c in TRIP_CONSTRAINTS if checks[c]]


def check_plan(inst: P7Instance, plan: Mapping[str, Any], schedule: Sequence[Any] | None = None) -> ReliefCheck:
    """Score ``plan`` on ``inst`` facing ``schedule`` (default: the instance's disruptions)."""
    schedule = list(inst.disruptions if schedule is None else schedule)
    trips = [normal_trip(inst, t, k) for k, t in enumerate(plan.get("trips", []))]
    order = sorted(range(len(trips)), key=lambda k: (trips[k][3], k))
    stock = {res: inst.stock.get(res, 0) for res in RESOURCES}
    shortages = sorted((d for d in schedule if isinstance(d, ResourceShortage)), key=lambda d: d.start)
    blocks = [d for d in schedule if isinstance(d, WeatherEvent)]
    on_time = [dict.fromkeys(RESOURCES, 0) for _ in inst.regions]
    late = [dict.fromkeys(RESOURCES, 0) for _ in inst.regions]
    busy_until = [inst.start] * len(inst.vehicles)
    refused: list[tuple[int, str]] = []
    minutes = delivered = 0
    next_shortage = 0
    for k in order:
        v, r, load, depart = trips[k]
        while next_shortage < len(shortages) and shortages[next_shortage].start <= depart:
            d = shortages[next_shortage]
            stock[d.resource] -= lost_units(stock[d.resource], d.fraction)
            next_shortage += 1
        leg = inst.one_way[v][r]
        broken = broken_constraints(inst, trips[k], stock, blocks, busy_until[v])
        if broken:
            refused += [(k, c) for c in broken]
            continue
        region = inst.regions[r]
        for res, q in load.items():
            stock[res] -= q
            (on_time if depart + leg <= region.deadline else late)[r][res] += q
            delivered += q
        busy_until[v] = depart + 2 * leg
        minutes += 2 * leg
    points = shortfall_points(inst, on_time, late)
    declared = len(TRIP_CONSTRAINTS) * len(trips)
    kept_out = set(refused)
    constraints = {f"trips[{k}].{c}": (k, c) not in kept_out for k in range(len(trips)) for c in TRIP_CONSTRAINTS}
    metrics = {
        "need_met_share": 1.0 - points / inst.total_points if inst.total_points else 1.0,
        "constraint_satisfaction": 1.0 - len(refused) / declared if declared else 1.0,
    }
    return ReliefCheck(
        feasible=not refused,
        cost=float(inst.minute_weight * points + minutes),
        constraints=constraints,
        metrics=metrics,
        points=points,
        minutes=minutes,
        on_time=on_time,
        late=late,
        delivered=delivered,
        refused=refused,
    )


def check(instance: P7Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`ReliefCheck`)."""
    try:
        trips = plan["attempted"] if "attempted" in plan else plan.get("trips", [])
        return check_plan(instance, {"trips": list(trips)}, instance.disruptions)
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a malformed trip
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"need_met_share": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
