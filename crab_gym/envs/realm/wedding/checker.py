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
"""

from __future__ import annotations

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
    net = inst.network
    guests = {f"pickup:{g.guest_id}": g for g in inst.guests}
    errands = {f"errand:{e.errand_id}": e for e in inst.errands}
    venue = inst.index[inst.venue]
    ok: dict[str, bool] = {}
    for g in inst.guests:
        ok[f"landed:{g.guest_id}"] = False
        ok[f"photo:{g.guest_id}"] = False
    for e in inst.errands:
        ok[f"window:{e.errand_id}"] = False
        ok[f"photo:{e.errand_id}"] = False
    out = WeddingCheck(feasible=False, cost=0.0, constraints=ok, metrics={})
    seen: set[str] = set()
    for v, veh in enumerate(inst.vehicles):
        stops = list(routes.get(veh.vehicle_id, ()))
        waits = list((departs or {}).get(veh.vehicle_id, ())) + [None] * (len(stops) + 1)
        t, loc = veh.available, inst.index[veh.place]
        guests_on: list[str] = []
        goods_on: list[str] = []
        seats_ok = True

        def unload(now: int, aboard: list[list[str]]) -> None:
            for items in aboard:
                for item in items:
                    out.delivered[item] = now
                    ok[f"photo:{item}"] = now <= inst.photo_time
                items.clear()

        for k, stop in enumerate(stops + [None]):
            if waits[k] is not None:
                t = max(t, int(waits[k]))
            place = venue if stop is None or stop == VENUE_STOP else inst.index[
                guests[stop].place if stop in guests else errands[stop].shop
            ]
            leg = int(net.matrix_at(disruptions, t)[loc, place])
            out.travel += leg
            t, loc = t + leg, place
            if stop is None or stop == VENUE_STOP:
                unload(t, [guests_on, goods_on])
                continue
            if stop in seen:
                ok[f"once:{stop}"] = False
            seen.add(stop)
            if stop in guests:
                g = guests[stop]
                t = max(t, g.arrival)
                guests_on.append(g.guest_id)
                ok[f"landed:{g.guest_id}"] = True
                seats_ok &= len(guests_on) <= veh.capacity
                out.pickups.append({"guest": g.guest_id, "vehicle": veh.vehicle_id, "time": t})
            else:
                e = errands[stop]
                t = max(t, e.opens)
                ok[f"window:{e.errand_id}"] = t <= e.latest_start
                t += e.service
                goods_on.append(e.errand_id)
                out.errands_done.append({"errand": e.errand_id, "vehicle": veh.vehicle_id, "time": t - e.service})
        out.ends[veh.vehicle_id] = t
        ok[f"seats:{veh.vehicle_id}"] = seats_ok
        ok[f"back:{veh.vehicle_id}"] = t <= inst.end_by(v)
    out.served = len(out.delivered)
    unserved = inst.n_items - out.served
    out.cost = float(out.travel + inst.unserved_penalty * unserved)
    out.feasible = all(ok.values())
    out.metrics = {
        "planning_quality": out.served / inst.n_items,
        "constraint_satisfaction": sum(ok.values()) / len(ok),
    }
    return out
