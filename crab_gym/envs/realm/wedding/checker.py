"""The independent checker of P5/P8 plans: what a plan costs and which constraints it breaks.

It walks each vehicle's route on its own (vehicles never wait for one another, and a trip's
time depends only on its departure minute and the disruptions applied), so it shares no code
with the env's event simulation (:mod:`crab_gym.envs.realm.wedding.sim`); the tests compare
the two. The env's ``submit_plan`` and its final metrics use this verdict.

Declared constraints (each a name in :attr:`PlanCheck.constraints`):

* ``landed:<guest>`` the guest was picked up (after landing: the vehicle waits);
* ``photo:<guest>`` / ``photo:<errand>`` unloaded at the venue by the photo time;
* ``window:<errand>`` served inside the shop's opening hours;
* ``seats:<vehicle>`` never more passengers on board than seats;
* ``back:<vehicle>`` ended at the venue by the deadline (a guest's car: by the photo time);
* ``once:<stop>`` no stop served twice (only present when one is).

``metrics`` holds ``planning_quality`` and ``constraint_satisfaction``; coordination needs
the reference's yardsticks and is the env's (:mod:`crab_gym.envs.realm.wedding.coordination`).

P5's and P8's ``check`` role (:func:`check`): the checker above on a
plan given as ``submit_plan`` arguments, facing the instance's own disruptions (P8).

Plan: ``{"routes": {vehicle_id: [stop, ...]}}``, stops ``pickup:<guest>``,
``errand:<errand>`` and ``dropoff:venue`` (unload at the venue on the way); a vehicle not
listed drives straight to the venue (what ``Reference.plan`` stores and ``OraclePolicy``
submits). An episode's own plan (``info["solution"]``) also says when each vehicle left
(``"departs": {vehicle_id: [minute, ...]}``, the last for the venue at the end; None: as soon
as it could), since an agent may have waited: the checker then drives each leg at that minute. On a P8 instance the plan is judged as the env plays it when the same plan is
submitted again at each pause: each trip at the minutes in force when it departs, under the
instance's scheduled disruptions.

Cost: travel minutes plus ``unserved_penalty`` per guest or errand not delivered to the
venue, the unit of the reference value. P5: ``check(inst, ref.plan).cost == ref.value``.
P8: the reference plan is the best plan known *facing the instance's disruptions* (found
with hindsight: the adaptive oracle, the P5 plan kept or greedy, then a local search that
knows the disruptions), and its check cost is the reference value too
(``ref.extra["adaptive_value"]`` is the adaptive oracle's own cost).

Constraints: the checker's (``landed:``, ``photo:``, ``window:``, ``seats:``, ``back:``,
``once:``). A plan naming a vehicle or stop the instance does not have (the checker itself
would let an unknown vehicle stay home) is infeasible: its only constraint, ``plan_shape``,
fails. Coordination needs the reference's yardsticks and
is the env's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance


@dataclass
class WeddingCheck(PlanCheck):
    """The verdict, plus what the REALM solution shape reports."""

    travel: int = 0
    served: int = 0
    pickups: list[dict[str, Any]] = field(default_factory=list)
    errands_done: list[dict[str, Any]] = field(default_factory=list)
    delivered: dict[str, int] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)


@dataclass
class _Walk:
    """One vehicle on its route: the minute, the place, what it carries."""

    t: int
    loc: int
    guests_on: list[str] = field(default_factory=list)
    goods_on: list[str] = field(default_factory=list)
    seats_ok: bool = True


def _blank(inst: WeddingInstance) -> dict[str, bool]:
    """Every guest's and errand's constraints, unmet until the plan meets them."""
    ok: dict[str, bool] = {}
    for g in inst.guests:
        ok[f"landed:{g.guest_id}"] = False
        ok[f"photo:{g.guest_id}"] = False
    for e in inst.errands:
        ok[f"window:{e.errand_id}"] = False
        ok[f"photo:{e.errand_id}"] = False
    return ok


def _unload(inst: WeddingInstance, out: WeddingCheck, walk: _Walk) -> None:
    """Everything on board reaches the venue at ``walk.t`` (on time by the photo, or not)."""
    for items in (walk.guests_on, walk.goods_on):
        for item in items:
            out.delivered[item] = walk.t
            out.constraints[f"photo:{item}"] = walk.t <= inst.photo_time
        items.clear()


def _serve(out: WeddingCheck, walk: _Walk, vehicle: Any, stop: str, guests: Mapping[str, Any],
           errands: Mapping[str, Any]) -> None:
    """Pick a guest up (after landing) or run an errand (inside the hours) at ``walk.t``."""
    ok = out.constraints
    if stop in guests:
        g = guests[stop]
        walk.t = max(walk.t, g.arrival)
        walk.guests_on.append(g.guest_id)
        ok[f"landed:{g.guest_id}"] = True
        walk.seats_ok &= len(walk.guests_on) <= vehicle.capacity
        out.pickups.append({"guest": g.guest_id, "vehicle": vehicle.vehicle_id, "time": walk.t})
        return
    e = errands[stop]
    walk.t = max(walk.t, e.opens)
    ok[f"window:{e.errand_id}"] = walk.t <= e.latest_start
    walk.t += e.service
    walk.goods_on.append(e.errand_id)
    out.errands_done.append({"errand": e.errand_id, "vehicle": vehicle.vehicle_id, "time": walk.t - e.service})


def _drive(inst: WeddingInstance, out: WeddingCheck, v: int, stops: list[str], waits: list[int | None],
           seen: set[str], disruptions: Sequence[Any]) -> None:
    """Walk vehicle ``v`` through its stops and on to the venue, recording what it meets."""
    guests = {f"pickup:{g.guest_id}": g for g in inst.guests}
    errands = {f"errand:{e.errand_id}": e for e in inst.errands}
    venue = inst.index[inst.venue]
    veh = inst.vehicles[v]
    walk = _Walk(veh.available, inst.index[veh.place])
    for k, stop in enumerate(stops + [None]):
        if waits[k] is not None:
            walk.t = max(walk.t, int(waits[k]))
        at_venue = stop is None or stop == VENUE_STOP
        place = venue if at_venue else inst.index[guests[stop].place if stop in guests else errands[stop].shop]
        leg = int(inst.network.matrix_at(disruptions, walk.t)[walk.loc, place])
        out.travel += leg
        walk.t, walk.loc = walk.t + leg, place
        if at_venue:
            _unload(inst, out, walk)
            continue
        if stop in seen:
            out.constraints[f"once:{stop}"] = False
        seen.add(stop)
        _serve(out, walk, veh, stop, guests, errands)
    out.ends[veh.vehicle_id] = walk.t
    out.constraints[f"seats:{veh.vehicle_id}"] = walk.seats_ok
    out.constraints[f"back:{veh.vehicle_id}"] = walk.t <= inst.end_by(v)


def check_plan(
    instance: WeddingInstance,
    routes: Mapping[str, Sequence[str]],
    *,
    disruptions: Sequence[Any] = (),
    departs: Mapping[str, Sequence[int | None]] | None = None,
) -> WeddingCheck:
    """Check ``routes`` (stop names per vehicle id; vehicles not listed drive straight to the
    venue). ``departs[vid][k]`` is the earliest minute the vehicle leaves for its k-th stop
    (the last entry: for the venue at the end), as when an agent waited; ``disruptions``
    are those the episode applied, with their start minutes."""
    inst = instance
    ok = _blank(inst)
    out = WeddingCheck(feasible=False, cost=0.0, constraints=ok, metrics={})
    seen: set[str] = set()
    for v, veh in enumerate(inst.vehicles):
        stops = list(routes.get(veh.vehicle_id, ()))
        waits = list((departs or {}).get(veh.vehicle_id, ())) + [None] * (len(stops) + 1)
        _drive(inst, out, v, stops, waits, seen, disruptions)
    out.served = len(out.delivered)
    unserved = inst.n_items - out.served
    out.cost = float(out.travel + inst.unserved_penalty * unserved)
    out.feasible = all(ok.values())
    out.metrics = {
        "planning_quality": out.served / inst.n_items,
        "constraint_satisfaction": sum(ok.values()) / len(ok),
    }
    return out


def check(instance: WeddingInstance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`WeddingCheck`)."""
    try:
        routes = {str(vid): [str(s) for s in stops] for vid, stops in dict(plan["routes"]).items()}
        unknown = sorted(set(routes) - {v.vehicle_id for v in instance.vehicles})
        if unknown:  # the checker would let them stay home
            raise KeyError(f"unknown vehicle(s) {unknown}")
        departs = {str(vid): list(times) for vid, times in dict(plan.get("departs") or {}).items()}
        return check_plan(instance, routes, disruptions=list(getattr(instance, "disruptions", ())), departs=departs)
    except (KeyError, ValueError, TypeError) as err:  # no routes, an unknown vehicle or stop
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
