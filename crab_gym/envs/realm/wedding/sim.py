"""Event simulation of P5/P8 wedding logistics: the state the envs and the P8 re-solve share.

Each vehicle is *free* from the minute it has served its last stop (its ``available`` minute
at first). The **clock** is the earliest free minute among the vehicles still on the road; the
vehicles free then act. A vehicle sent to a stop leaves at once, arrives after the travel
time in force at that minute, waits for the guest to land or the shop to open, and serves.
So decisions happen in time order, and a disruption applies when the clock reaches it: every
trip that departs from then on sees it, none that departed before does.

Stop codes: guests ``0..G-1``, errands ``G..G+E-1``, the venue drop ``G+E``
(see :mod:`crab_gym.envs.realm.wedding.model`). Vehicles act by index; their ids are stable
names (``van``, ``car1``) so that a multi-agent env can name its agents by them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import hhmm  # minutes from midnight as HH:MM
from crab_gym.envs.realm.common.fleet.sim import (
    DELIVERED,
    ONBOARD,
    WAITING,
    FleetSim,
    FleetVehicle,
    PlanError,
    plan_codes,
    skip_served,
    stop_indices,
    unknown_vehicle,
    vehicle_codes,
)
from crab_gym.envs.realm.wedding.checker import WeddingCheck, check_plan
from crab_gym.envs.realm.wedding.model import WeddingInstance

__all__ = ["DELIVERED", "ONBOARD", "WAITING", "PlanError", "VehicleState", "Visit", "WeddingSim", "hhmm",
           "plan_codes", "simulate_plan"]


@dataclass
class Visit:
    """One served stop: when the vehicle left for it, arrived, began and ended service."""

    stop: int
    depart: int
    arrive: int
    start: int
    end: int


@dataclass
class VehicleState(FleetVehicle):
    """One vehicle's state: where and from when it is free, what it carries."""

    guests: list[int] = field(default_factory=list)
    goods: list[int] = field(default_factory=list)
    route: list[Visit] = field(default_factory=list)
    end_depart: int | None = None
    end_time: int | None = None

    @property
    def empty(self) -> bool:
        return not self.guests and not self.goods

    @property
    def finished(self) -> bool:
        """At the venue for good: its route has ended (the kit's :attr:`ended`)."""
        return self.ended

    @finished.setter
    def finished(self, value: bool) -> None:
        self.ended = value


class WeddingSim(FleetSim):
    """The state of one episode (see the module docstring)."""

    def __init__(self, instance: WeddingInstance, schedule: Sequence[Any] = ()) -> None:
        self.inst = instance
        self.net = instance.network
        self.G, self.E = instance.n_guests, instance.n_errands
        self.N = self.G + self.E
        self.venue = instance.index[instance.venue]
        self.place = np.array([instance.stop_place(s) for s in range(self.N + 1)], dtype=np.int64)
        self.ready = [g.arrival for g in instance.guests] + [e.opens for e in instance.errands]
        self.latest = [instance.photo_time] * self.G + [e.latest_start for e in instance.errands]
        self.service = [0] * self.G + [e.service for e in instance.errands]
        self._places = self.place.tolist()  # the stops' places as a list, for the masks' checks
        self.vehicles = [
            VehicleState(loc=instance.index[v.place], free=v.available, capacity=v.capacity) for v in instance.vehicles
        ]
        self.status = [WAITING] * self.N
        self.assigned = [-1] * self.N
        self.delivered_at: list[int | None] = [None] * self.N
        self.served_at: list[int | None] = [None] * self.N  # pickup / errand service start
        self._start_schedule(schedule)

    #: Lists a copy must not share with the original.
    copied = ("status", "assigned", "delivered_at", "served_at", "pending", "applied")

    # ------------------------------------------------------------------ time
    def idle_minute(self) -> int:
        """A disruption injected for "now" after every route ended starts at minute 0."""
        return 0

    def matrix(self, t: int | None = None) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``t`` (default: the clock)."""
        if t is None:
            clock = self.clock
            t = clock if clock is not None else max(v.free for v in self.vehicles)
        return self._matrix(t)  # net.matrix_at(applied, t), remembered

    # ------------------------------------------------------------------ legality
    def timing(self, v: int, stop: int, m: np.ndarray | None = None) -> tuple[int, int, int]:
        """(arrival, service start, service end) if vehicle ``v`` went to ``stop`` now."""
        veh = self.vehicles[v]
        m = self.matrix(veh.free) if m is None else m
        arrive = veh.free + int(m[veh.loc, self.place[stop]])
        if stop == self.N:
            return arrive, arrive, arrive
        start = max(arrive, self.ready[stop])
        return arrive, start, start + self.service[stop]

    def structural_reason(self, v: int, stop: int) -> str | None:
        """Why ``stop`` can never be vehicle ``v``'s next stop now (None: it can)."""
        veh = self.vehicles[v]
        vid = self.inst.vehicles[v].vehicle_id
        if veh.ended:
            return f"vehicle {vid} has ended its route at the venue"
        if stop == self.N:
            return None if not veh.empty else f"vehicle {vid} carries nothing to unload"
        if self.status[stop] != WAITING:
            return f"{self.inst.stop_names()[stop]} is already done"
        return None

    def feasibility_reason(self, v: int, stop: int, m: np.ndarray | None = None) -> str | None:
        """Why going to ``stop`` now would break a constraint with the travel times in force
        now (None: everything on board can still reach the venue by the photo time)."""
        veh = self.vehicles[v]
        m = self.matrix(veh.free) if m is None else m
        _, start, end = self.timing(v, stop, m)
        inst = self.inst
        if stop == self.N:
            return None
        name = inst.stop_names()[stop]
        if stop < self.G and len(veh.guests) + 1 > veh.capacity:
            return f"vehicle {inst.vehicles[v].vehicle_id} is full ({veh.capacity} seats)"
        if start > self.latest[stop]:
            return f"{name}: service would start at {hhmm(start)}, after {hhmm(self.latest[stop])}"
        at_venue = end + int(m[self.place[stop], self.venue])
        if at_venue > inst.photo_time:
            return f"{name}: the venue would be reached at {hhmm(at_venue)}, after the photo at {hhmm(inst.photo_time)}"
        return None

    def feasible(self, v: int, stop: int, m: np.ndarray) -> bool:
        """Whether :meth:`feasibility_reason` allows ``stop`` (the mask's hot path: the same
        rules, no reasons built)."""
        if stop == self.N:
            return True
        veh = self.vehicles[v]
        _, start, end = self.timing(v, stop, m)
        if (stop < self.G and len(veh.guests) + 1 > veh.capacity) or start > self.latest[stop]:
            return False
        return end + int(m[self.place[stop], self.venue]) <= self.inst.photo_time

    def legal_stops(self, v: int) -> list[int]:
        """Stops vehicle ``v`` may take next under the mask: those :meth:`feasible` allows
        (its checks written out over the travel minutes as lists: the mask's hot path)."""
        veh = self.vehicles[v]
        if veh.ended:
            return []
        rows = self.net.rows(self.matrix(veh.free))
        here, places, venue, photo = rows[veh.loc], self._places, self.venue, self.inst.photo_time
        full = len(veh.guests) + 1 > veh.capacity  # no seat for one more guest
        out = []
        for s, (status, ready, latest, service) in enumerate(zip(self.status, self.ready, self.latest, self.service)):
            if status != WAITING or (full and s < self.G):
                continue
            start = max(veh.free + here[places[s]], ready)
            if start <= latest and start + service + rows[places[s]][venue] <= photo:
                out.append(s)
        if not veh.empty:
            out.append(self.N)
        return out

    def next_event(self, v: int) -> int | None:
        """The next minute after the clock when something changes (another vehicle is free,
        a guest lands, a shop opens, a disruption starts); None if nothing is left to wait for."""
        now = self.vehicles[v].free
        times = [w.free for w in self.vehicles if not w.ended and w.free > now]
        times += [ready for ready, status in zip(self.ready, self.status) if status == WAITING and ready > now]
        times += [d.start for d in self.pending if d.start > now]
        return min(times) if times else None

    # ------------------------------------------------------------------ moves
    def drive(self, v: int, stop: int) -> Visit:
        """Send vehicle ``v`` to ``stop`` now (the caller checked it is structurally possible)."""
        veh = self.vehicles[v]
        arrive, start, end = self.timing(v, stop)
        visit = Visit(stop=stop, depart=veh.free, arrive=arrive, start=start, end=end)
        if stop == self.N:
            self._unload(veh, arrive)
        else:
            self.status[stop] = ONBOARD
            self.assigned[stop] = v
            self.served_at[stop] = start
            (veh.guests if stop < self.G else veh.goods).append(stop)
        veh.loc = int(self.place[stop])
        veh.free = end
        veh.route.append(visit)
        return visit

    def _unload(self, veh: VehicleState, t: int) -> None:
        for s in veh.guests + veh.goods:
            self.status[s] = DELIVERED
            self.delivered_at[s] = t
        veh.guests.clear()
        veh.goods.clear()

    def wait(self, v: int) -> int:
        """Let vehicle ``v`` wait until :meth:`next_event`; returns that minute."""
        t = self.next_event(v)
        if t is None:
            raise ValueError("nothing to wait for")
        self.vehicles[v].free = t
        return t

    def finish(self, v: int) -> int:
        """Vehicle ``v`` drives to the venue, unloads and ends its route; returns its end minute."""
        veh = self.vehicles[v]
        arrive = veh.free + int(self.matrix(veh.free)[veh.loc, self.venue])
        veh.end_depart = veh.free
        self._unload(veh, arrive)
        veh.loc, veh.free, veh.end_time, veh.ended = self.venue, arrive, arrive, True
        return arrive

    def go(self, v: int, stop: int) -> Visit:
        return self.drive(v, stop)

    def end_route(self, v: int) -> int:
        return self.finish(v)

    # ------------------------------------------------------------------ plans
    def parse_plan(self, routes: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
        """Stop names per vehicle id -> stop codes still to do per vehicle index, checked
        against the state. A list may repeat the stops the vehicle has served (skipped)."""
        vid_index, stop_index = stop_indices(self.inst)
        hint = f"stops: {', '.join(self.inst.stop_names())}"
        plan: dict[int, list[int]] = {}
        seen: set[int] = set()
        for vid, stops in routes.items():
            if vid not in vid_index:
                raise unknown_vehicle(vid, vid_index)
            v = vid_index[vid]
            codes = skip_served(vehicle_codes(vid, stops, stop_index, hint), [x.stop for x in self.vehicles[v].route])
            self._check_route(v, codes, seen)
            plan[v] = codes
        return plan

    def _check_route(self, v: int, codes: Sequence[int], seen: set[int]) -> None:
        """Vehicle ``v``'s stops to come fit the state: its route has not ended, each guest or
        errand is still to do and appears once in the whole plan (``seen`` so far)."""
        vid, names = self.inst.vehicles[v].vehicle_id, self.inst.stop_names()
        if codes and self.vehicles[v].ended:
            raise PlanError(f"vehicle {vid} has ended its route and cannot take more stops")
        for s in codes:
            if s == self.N:
                continue
            if s in seen:
                raise PlanError(f"stop {names[s]} appears twice in the plan")
            if self.status[s] != WAITING:
                raise PlanError(f"vehicle {vid}: {names[s]} is already done")
            seen.add(s)

    # ------------------------------------------------------------------ results
    def routes(self) -> dict[str, list[str]]:
        return self.route_names()

    def departs(self) -> dict[str, list[int | None]]:
        """Each vehicle's departure minutes (last: its drive to the venue at the end)."""
        return {
            self.inst.vehicles[k].vehicle_id: [x.depart for x in veh.route] + [veh.end_depart]
            for k, veh in enumerate(self.vehicles)
        }

    def travel_minutes(self) -> int:
        total = sum(x.arrive - x.depart for veh in self.vehicles for x in veh.route)
        return total + sum(v.end_time - v.end_depart for v in self.vehicles if v.ended)

    def served(self) -> int:
        return self.delivered()

    def cost(self) -> int:
        """Driving minutes + the penalty per guest or errand not brought to the venue."""
        return self.travel_minutes() + self.inst.unserved_penalty * (self.N - self.served())

    def check(self) -> WeddingCheck:
        """The independent checker's verdict on what was driven (departures as they were)."""
        return check_plan(self.inst, self.routes(), disruptions=self.applied, departs=self.departs())


def simulate_plan(instance: WeddingInstance, routes: Mapping[str, Sequence[str]], schedule: Sequence[Any] = ()) -> WeddingSim:
    """Run a whole plan from the start (no pauses) and return the final state."""
    sim = WeddingSim(instance, schedule)
    sim.run_plan(plan_codes(instance, routes))
    return sim
