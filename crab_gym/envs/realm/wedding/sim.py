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

import copy
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import clock as hhmm  # minutes from midnight as HH:MM
from crab_gym.envs.realm.wedding.checker import WeddingCheck, check_plan
from crab_gym.envs.realm.wedding.model import WeddingInstance

WAITING, ONBOARD, DELIVERED = 0, 1, 2


class PlanError(ValueError):
    """A submitted plan that cannot be carried out from the current state (says why)."""


@dataclass
class Visit:
    """One served stop: when the vehicle left for it, arrived, began and ended service."""

    stop: int
    depart: int
    arrive: int
    start: int
    end: int


@dataclass
class VehicleState:
    """One vehicle's state: where and from when it is free, what it carries."""

    loc: int
    free: int
    capacity: int
    guests: list[int] = field(default_factory=list)
    goods: list[int] = field(default_factory=list)
    route: list[Visit] = field(default_factory=list)
    finished: bool = False
    end_depart: int | None = None
    end_time: int | None = None

    @property
    def empty(self) -> bool:
        return not self.guests and not self.goods


class WeddingSim:
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
        self.vehicles = [
            VehicleState(loc=instance.index[v.place], free=v.available, capacity=v.capacity) for v in instance.vehicles
        ]
        self.status = [WAITING] * self.N
        self.assigned = [-1] * self.N
        self.delivered_at: list[int | None] = [None] * self.N
        self.served_at: list[int | None] = [None] * self.N  # pickup / errand service start
        self.pending = sorted(schedule, key=lambda d: d.start)
        self.applied: list[Any] = []

    def copy(self) -> WeddingSim:
        """An independent copy (the instance and network are shared, read-only)."""
        new = copy.copy(self)
        new.vehicles = copy.deepcopy(self.vehicles)
        for name in ("status", "assigned", "delivered_at", "served_at", "pending", "applied"):
            setattr(new, name, list(getattr(self, name)))
        return new

    # ------------------------------------------------------------------ time
    @property
    def clock(self) -> int | None:
        free = [v.free for v in self.vehicles if not v.finished]
        return min(free) if free else None

    @property
    def done(self) -> bool:
        return all(v.finished for v in self.vehicles)

    def acting(self) -> list[int]:
        c = self.clock
        return [k for k, v in enumerate(self.vehicles) if not v.finished and v.free == c]

    def matrix(self, t: int | None = None) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``t`` (default: the clock)."""
        if t is None:
            t = self.clock if self.clock is not None else max(v.free for v in self.vehicles)
        return self.net.matrix_at(self.applied, t)

    def inject(self, disruption: Any) -> None:
        """Schedule a disruption (``start=None``: now)."""
        if disruption.start is None:
            disruption = disruption.with_start(self.clock if self.clock is not None else 0)
        self.pending.append(disruption)
        self.pending.sort(key=lambda d: d.start)

    def advance(self) -> list[Any]:
        """Apply every pending disruption whose start the clock has reached; return them (one
        given with a start in the past takes effect now and ends when it would have)."""
        now, fired = self.clock, []
        while now is not None and self.pending and self.pending[0].start <= now:
            given = self.pending.pop(0)
            d = given.with_start(now) if given.start < now else given
            self.applied.append(d)
            fired.append(d)
        return fired

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
        if veh.finished:
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

    def legal_stops(self, v: int) -> list[int]:
        """Stops vehicle ``v`` may take next under the mask."""
        veh = self.vehicles[v]
        if veh.finished:
            return []
        m = self.matrix(veh.free)
        out = [s for s in range(self.N) if self.status[s] == WAITING and self.feasibility_reason(v, s, m) is None]
        if not veh.empty:
            out.append(self.N)
        return out

    def next_event(self, v: int) -> int | None:
        """The next minute after the clock when something changes (another vehicle is free,
        a guest lands, a shop opens, a disruption starts); None if nothing is left to wait for."""
        now = self.vehicles[v].free
        times = [w.free for w in self.vehicles if not w.finished and w.free > now]
        times += [self.ready[s] for s in range(self.N) if self.status[s] == WAITING and self.ready[s] > now]
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
        veh.loc, veh.free, veh.end_time, veh.finished = self.venue, arrive, arrive, True
        return arrive

    # ------------------------------------------------------------------ plans
    def parse_plan(self, routes: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
        """Stop names per vehicle id -> stop codes still to do per vehicle index, checked
        against the state. A list may repeat the stops the vehicle has served (skipped)."""
        vid_index = {v.vehicle_id: k for k, v in enumerate(self.inst.vehicles)}
        names = self.inst.stop_names()
        stop_index = {name: k for k, name in enumerate(names)}
        plan: dict[int, list[int]] = {}
        seen: set[int] = set()
        for vid, stops in routes.items():
            if vid not in vid_index:
                raise PlanError(f"unknown vehicle {vid!r}; vehicles: {', '.join(vid_index)}")
            v = vid_index[vid]
            codes = []
            for s in stops:
                if s not in stop_index:
                    raise PlanError(f"vehicle {vid}: unknown stop {s!r}; stops: {', '.join(names)}")
                codes.append(stop_index[s])
            done = [x.stop for x in self.vehicles[v].route]
            if done and codes[: len(done)] == done:
                codes = codes[len(done) :]
            if codes and self.vehicles[v].finished:
                raise PlanError(f"vehicle {vid} has ended its route and cannot take more stops")
            for s in codes:
                if s == self.N:
                    continue
                if s in seen:
                    raise PlanError(f"stop {names[s]} appears twice in the plan")
                if self.status[s] != WAITING:
                    raise PlanError(f"vehicle {vid}: {names[s]} is already done")
                seen.add(s)
            plan[v] = codes
        return plan

    def run_plan(
        self, plan: Mapping[int, Sequence[int]], *, pause_on_disruption: bool = False, on_disruption: Any = None
    ) -> tuple[dict[int, list[int]], list[Any]]:
        """Drive the vehicles through ``plan`` in time order; a vehicle whose list runs out
        ends its route. With ``pause_on_disruption``, stop as soon as a disruption still in
        force is applied while stops remain. Returns (what is left, the disruptions applied)."""
        queues = {v: deque(plan.get(v, ())) for v in range(len(self.vehicles))}
        fired: list[Any] = []
        while True:
            new = self.advance()
            fired += new
            if new and on_disruption is not None:
                on_disruption(self, new)
            live = [d for d in new if d.duration > 0]
            if live and pause_on_disruption and any(q for v, q in queues.items() if not self.vehicles[v].finished):
                break
            acting = self.acting()
            if not acting:
                break
            v = acting[0]
            if queues[v]:
                self.drive(v, queues[v].popleft())
            else:
                self.finish(v)
        return {v: list(q) for v, q in queues.items() if q}, fired

    # ------------------------------------------------------------------ results
    def routes(self) -> dict[str, list[str]]:
        names = self.inst.stop_names()
        return {
            self.inst.vehicles[k].vehicle_id: [names[x.stop] for x in veh.route] for k, veh in enumerate(self.vehicles)
        }

    def departs(self) -> dict[str, list[int | None]]:
        """Each vehicle's departure minutes (last: its drive to the venue at the end)."""
        return {
            self.inst.vehicles[k].vehicle_id: [x.depart for x in veh.route] + [veh.end_depart]
            for k, veh in enumerate(self.vehicles)
        }

    def travel_minutes(self) -> int:
        total = sum(x.arrive - x.depart for veh in self.vehicles for x in veh.route)
        return total + sum(v.end_time - v.end_depart for v in self.vehicles if v.finished)

    def served(self) -> int:
        return sum(1 for s in self.status if s == DELIVERED)

    def cost(self) -> int:
        """Driving minutes + the penalty per guest or errand not brought to the venue."""
        return self.travel_minutes() + self.inst.unserved_penalty * (self.N - self.served())

    def check(self) -> WeddingCheck:
        """The independent checker's verdict on what was driven (departures as they were)."""
        return check_plan(self.inst, self.routes(), disruptions=self.applied, departs=self.departs())


def plan_codes(instance: WeddingInstance, routes: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
    """Stop names per vehicle id -> stop codes per vehicle index (no state checks)."""
    vid_index = {v.vehicle_id: k for k, v in enumerate(instance.vehicles)}
    stop_index = {name: k for k, name in enumerate(instance.stop_names())}
    return {vid_index[vid]: [stop_index[s] for s in stops] for vid, stops in routes.items()}


def simulate_plan(instance: WeddingInstance, routes: Mapping[str, Sequence[str]], schedule: Sequence[Any] = ()) -> WeddingSim:
    """Run a whole plan from the start (no pauses) and return the final state."""
    sim = WeddingSim(instance, schedule)
    sim.run_plan(plan_codes(instance, routes))
    return sim
