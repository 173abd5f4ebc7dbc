"""Event simulation of P3/P4 ride-sharing: the state the envs and the P4 re-solve oracle share.

Time moves by events. Each vehicle is *free* from the minute it has served its last stop
(``start_time`` at first). The **clock** is the earliest free minute among the vehicles that
have not parked; the vehicles free at that minute are the ones to act. A dispatched vehicle
leaves at once (the clock), arrives after the travel time of the network *at that minute*,
and at a pickup waits for the window to open. So decisions are taken in time order, which is
what lets a disruption be applied "when the clock reaches it": every trip that departs from
then on sees it, no trip that departed before does.

Stops are coded ``2 r`` (pickup of request ``r``) and ``2 r + 1`` (its dropoff).
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import clock as hhmm  # minutes from midnight as HH:MM
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.network import active_at

WAITING, ONBOARD, DELIVERED = 0, 1, 2


@dataclass
class Visit:
    """One served stop: when the vehicle left for it, arrived, and served it."""

    stop: int
    depart: int
    arrive: int
    service: int

    @property
    def travel(self) -> int:
        return self.arrive - self.depart


@dataclass
class VehicleState:
    loc: int
    free: int
    capacity: int
    load: int = 0
    onboard: list[int] = field(default_factory=list)
    route: list[Visit] = field(default_factory=list)
    parked: bool = False


class PlanError(ValueError):
    """A submitted plan that does not fit the current state (unknown or misplaced stops)."""


class RideSim:
    """The mutable state of one ride-sharing episode.

    Args:
        instance: the P3 (or P4) instance.
        schedule: disruptions to apply when the clock reaches their start (each has a start).
    """

    def __init__(self, instance: P3Instance, schedule: Sequence[Any] = ()) -> None:
        self.inst = instance
        self.net = instance.network
        self.R = instance.n_requests
        self.V = instance.n_vehicles
        self.req = instance.requests
        self.pick_loc = np.array([instance.index[r.pickup] for r in self.req], dtype=np.int64)
        self.drop_loc = np.array([instance.index[r.dropoff] for r in self.req], dtype=np.int64)
        self.vehicles = [
            VehicleState(loc=instance.index[v.location], free=instance.start_time, capacity=v.capacity)
            for v in instance.vehicles
        ]
        self.status = [WAITING] * self.R
        self.assigned = [-1] * self.R
        self.pending: list[Any] = sorted(schedule, key=lambda d: d.start)
        self.applied: list[Any] = []  # as in force (effective start)
        self.applied_as_given: list[Any] = []  # as scheduled or injected
        self.violations: list[str] = []
        self.broken: set[tuple[str, int]] = set()  # ("window" | "deadline", request) / ("capacity", vehicle)

    # ------------------------------------------------------------------ copying
    def copy(self) -> RideSim:
        """An independent copy (the instance and network are shared, read-only)."""
        new = copy.copy(self)
        new.vehicles = copy.deepcopy(self.vehicles)
        new.status = list(self.status)
        new.assigned = list(self.assigned)
        new.pending = list(self.pending)
        new.applied = list(self.applied)
        new.applied_as_given = list(self.applied_as_given)
        new.violations = list(self.violations)
        new.broken = set(self.broken)
        return new

    # ------------------------------------------------------------------ time
    @property
    def clock(self) -> int | None:
        """The earliest free minute among vehicles still driving (None: all parked)."""
        free = [v.free for v in self.vehicles if not v.parked]
        return min(free) if free else None

    @property
    def done(self) -> bool:
        return all(v.parked for v in self.vehicles)

    def acting(self) -> list[int]:
        """Vehicles that decide now (free at the clock), in index order."""
        c = self.clock
        return [k for k, v in enumerate(self.vehicles) if not v.parked and v.free == c]

    def matrix(self, t: int | None = None) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``t`` (default: the clock)."""
        if t is None:
            t = self.clock if self.clock is not None else self.inst.start_time
        return self.net.matrix_at(active_at(self.applied, t), t)

    def inject(self, disruption: Any) -> None:
        """Schedule a disruption (``start=None``: at the current clock)."""
        if disruption.start is None:
            now = self.clock if self.clock is not None else self.inst.start_time
            disruption = disruption.with_start(now)
        self.pending.append(disruption)
        self.pending.sort(key=lambda d: d.start)

    def advance(self) -> list[Any]:
        """Apply every pending disruption whose start the clock has reached; return them.

        A disruption applied after its start (possible only for injected ones) takes
        effect from the current clock and still ends when it would have ended.
        """
        now = self.clock
        fired: list[Any] = []
        while now is not None and self.pending and self.pending[0].start <= now:
            given = self.pending.pop(0)
            d = given.with_start(now) if given.start < now else given
            self.applied.append(d)
            self.applied_as_given.append(given)
            fired.append(d)
        return fired

    # ------------------------------------------------------------------ stops
    def stop_loc(self, stop: int) -> int:
        r = stop // 2
        return int(self.drop_loc[r] if stop % 2 else self.pick_loc[r])

    def timing(self, v: int, stop: int, m: np.ndarray | None = None) -> tuple[int, int]:
        """(arrival, service) minutes if vehicle ``v`` went to ``stop`` now."""
        veh = self.vehicles[v]
        m = self.matrix(veh.free) if m is None else m
        arrive = veh.free + int(m[veh.loc, self.stop_loc(stop)])
        if stop % 2 == 0:
            return arrive, max(arrive, self.req[stop // 2].pickup_window[0])
        return arrive, arrive

    def structural_reason(self, v: int, stop: int) -> str | None:
        """Why ``stop`` can never be vehicle ``v``'s next stop now (None: it can)."""
        veh = self.vehicles[v]
        r = stop // 2
        pid = self.req[r].passenger_id
        if veh.parked:
            return f"vehicle {self.inst.vehicles[v].vehicle_id} has finished its route"
        if stop % 2 == 0:
            if self.status[r] != WAITING:
                return f"passenger {pid} has already been picked up"
        elif r not in veh.onboard:
            return f"passenger {pid} is not on board vehicle {self.inst.vehicles[v].vehicle_id}"
        return None

    def _can_finish(self, loc: int, t: int, onboard: Sequence[int], m: np.ndarray) -> bool:
        """Whether the passengers on board can all be dropped on time in some order."""
        if not onboard:
            return True
        order = sorted(onboard, key=lambda r: self.req[r].latest_dropoff)
        for k, r in enumerate(order):
            arrive = t + int(m[loc, self.drop_loc[r]])
            if arrive <= self.req[r].latest_dropoff and self._can_finish(
                int(self.drop_loc[r]), arrive, order[:k] + order[k + 1 :], m
            ):
                return True
        return False

    def feasibility_reason(self, v: int, stop: int, m: np.ndarray | None = None) -> str | None:
        """Why going to ``stop`` now would break a constraint, judged with today's travel times
        (None: it keeps every passenger on board deliverable on time)."""
        veh = self.vehicles[v]
        m = self.matrix(veh.free) if m is None else m
        r = stop // 2
        req = self.req[r]
        arrive, service = self.timing(v, stop, m)
        if stop % 2 == 0:
            if veh.load + req.passengers > veh.capacity:
                return f"vehicle {self.inst.vehicles[v].vehicle_id} is full"
            if arrive > req.pickup_window[1]:
                return f"passenger {req.passenger_id}'s pickup window closed at {hhmm(req.pickup_window[1])} (arrival {hhmm(arrive)})"
            if not self._can_finish(int(self.pick_loc[r]), service, veh.onboard + [r], m):
                return "some passenger on board could no longer be dropped off on time"
            return None
        if arrive > req.latest_dropoff:
            return f"passenger {req.passenger_id} would arrive at {hhmm(arrive)}, after {hhmm(req.latest_dropoff)}"
        rest = [x for x in veh.onboard if x != r]
        if not self._can_finish(int(self.drop_loc[r]), service, rest, m):
            return "some other passenger on board could no longer be dropped off on time"
        return None

    def legal_stops(self, v: int) -> list[int]:
        """Stops vehicle ``v`` may take next under the masks: structurally possible and keeping
        everyone on time; if nothing is, the dropoffs of its passengers (late, but not stuck)."""
        veh = self.vehicles[v]
        if veh.parked:
            return []
        m = self.matrix(veh.free)
        out = []
        for r in range(self.R):
            if self.status[r] == WAITING:
                if self.feasibility_reason(v, 2 * r, m) is None:
                    out.append(2 * r)
            elif r in veh.onboard and self.feasibility_reason(v, 2 * r + 1, m) is None:
                out.append(2 * r + 1)
        if not out and veh.onboard:
            out = sorted(2 * r + 1 for r in veh.onboard)
        return out

    # ------------------------------------------------------------------ moves
    def dispatch(self, v: int, stop: int) -> Visit:
        """Send vehicle ``v`` to ``stop`` now (the caller checked it is structurally possible)."""
        veh = self.vehicles[v]
        r = stop // 2
        req = self.req[r]
        arrive, service = self.timing(v, stop)
        visit = Visit(stop=stop, depart=veh.free, arrive=arrive, service=service)
        if stop % 2 == 0:
            if arrive > req.pickup_window[1]:
                self.violations.append(f"{req.passenger_id} picked up late ({hhmm(arrive)} > {hhmm(req.pickup_window[1])})")
                self.broken.add(("window", r))
            veh.load += req.passengers
            veh.onboard.append(r)
            self.status[r] = ONBOARD
            self.assigned[r] = v
            if veh.load > veh.capacity:
                self.violations.append(f"vehicle {self.inst.vehicles[v].vehicle_id} over capacity ({veh.load} > {veh.capacity})")
                self.broken.add(("capacity", v))
        else:
            if arrive > req.latest_dropoff:
                self.violations.append(f"{req.passenger_id} dropped off late ({hhmm(arrive)} > {hhmm(req.latest_dropoff)})")
                self.broken.add(("deadline", r))
            veh.load -= req.passengers
            veh.onboard.remove(r)
            self.status[r] = DELIVERED
        veh.loc = self.stop_loc(stop)
        veh.free = service
        veh.route.append(visit)
        return visit

    def park(self, v: int) -> None:
        """End vehicle ``v``'s route (it must be empty: the caller checks)."""
        self.vehicles[v].parked = True

    # ------------------------------------------------------------------ plans
    def parse_plan(self, assignments: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
        """A REALM-shape plan -> remaining stop codes per vehicle, checked against the state.

        Each vehicle's list may start with the stops it has already served (they are
        skipped) or hold only what comes next. Raises :class:`PlanError` saying what is wrong.
        """
        vid_index = {v.vehicle_id: k for k, v in enumerate(self.inst.vehicles)}
        stop_index = {name: k for k, name in enumerate(self.inst.stop_names())}
        plan: dict[int, list[int]] = {}
        for vid, stops in assignments.items():
            if vid not in vid_index:
                raise PlanError(f"unknown vehicle {vid!r}; vehicles: {', '.join(vid_index)}")
            codes = []
            for s in stops:
                if s not in stop_index:
                    raise PlanError(f"vehicle {vid}: unknown stop {s!r}; stops look like 'pickup:<id>' / 'dropoff:<id>'")
                codes.append(stop_index[s])
            done = [visit.stop for visit in self.vehicles[vid_index[vid]].route]
            if done and codes[: len(done)] == done:
                codes = codes[len(done) :]
            plan[vid_index[vid]] = codes
        seen: dict[int, int] = {}
        names = self.inst.stop_names()
        for v, codes in plan.items():
            veh = self.vehicles[v]
            vid = self.inst.vehicles[v].vehicle_id
            if codes and veh.parked:
                raise PlanError(f"vehicle {vid} has finished its route and cannot take more stops")
            aboard = set(veh.onboard)
            for s in codes:
                r, name = s // 2, names[s]
                if s in seen:
                    raise PlanError(f"stop {name} appears twice in the plan")
                seen[s] = v
                if s % 2 == 0:
                    if self.status[r] != WAITING:
                        raise PlanError(f"vehicle {vid}: {name} is already done")
                    aboard.add(r)
                else:
                    if r not in aboard:
                        raise PlanError(
                            f"vehicle {vid}: {name} comes before the passenger is picked up by this vehicle"
                        )
                    aboard.discard(r)
            if aboard:
                missing = ", ".join(f"dropoff:{self.req[r].passenger_id}" for r in sorted(aboard))
                raise PlanError(f"vehicle {vid}: passengers picked up but never dropped off ({missing})")
        for v, veh in enumerate(self.vehicles):
            if veh.onboard and v not in plan:
                missing = ", ".join(f"dropoff:{self.req[r].passenger_id}" for r in veh.onboard)
                raise PlanError(
                    f"vehicle {self.inst.vehicles[v].vehicle_id} carries passengers; the plan must drop them ({missing})"
                )
        return plan

    def run_plan(
        self,
        plan: Mapping[int, Sequence[int]],
        *,
        pause_on_disruption: bool = False,
        on_disruption: Any = None,
    ) -> tuple[dict[int, list[int]], list[Any]]:
        """Drive the vehicles through ``plan`` in time order; a vehicle whose list runs out
        parks. With ``pause_on_disruption``, stop as soon as a disruption still in force is
        applied while stops remain. ``on_disruption(sim, fired)`` is called right after any
        disruption is applied. Returns (what is left of the plan, the disruptions applied)."""
        queues = {v: deque(plan.get(v, ())) for v in range(self.V)}
        fired: list[Any] = []
        while True:
            new = self.advance()
            fired += new
            if new and on_disruption is not None:
                on_disruption(self, new)
            live = [d for d in new if d.duration > 0]  # one that already ended changes nothing
            if live and pause_on_disruption and any(queues[v] for v in range(self.V) if not self.vehicles[v].parked):
                break
            acting = self.acting()
            if not acting:
                break
            v = acting[0]
            if queues[v]:
                self.dispatch(v, queues[v].popleft())
            else:
                self.park(v)
        return {v: list(q) for v, q in queues.items() if q}, fired

    # ------------------------------------------------------------------ results
    def travel_minutes(self) -> int:
        return sum(visit.travel for veh in self.vehicles for visit in veh.route)

    def served(self) -> int:
        return sum(1 for s in self.status if s == DELIVERED)

    def cost(self) -> int:
        """Objective: travel minutes + penalty per request not delivered."""
        return self.travel_minutes() + self.inst.unserved_penalty * (self.R - self.served())

    def assignments(self) -> dict[str, list[str]]:
        names = self.inst.stop_names()
        return {
            self.inst.vehicles[k].vehicle_id: [names[visit.stop] for visit in veh.route]
            for k, veh in enumerate(self.vehicles)
        }

    def schedule(self) -> dict[str, list[dict[str, Any]]]:
        """Per vehicle, each stop with its departure, arrival and service minutes."""
        names = self.inst.stop_names()
        return {
            self.inst.vehicles[k].vehicle_id: [
                {"stop": names[x.stop], "depart": x.depart, "arrive": x.arrive, "service": x.service}
                for x in veh.route
            ]
            for k, veh in enumerate(self.vehicles)
        }


def plan_codes(instance: P3Instance, assignments: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
    """A REALM-shape plan -> stop codes per vehicle index (no state checks)."""
    vid_index = {v.vehicle_id: k for k, v in enumerate(instance.vehicles)}
    stop_index = {name: k for k, name in enumerate(instance.stop_names())}
    return {vid_index[vid]: [stop_index[s] for s in stops] for vid, stops in assignments.items()}


def simulate_plan(instance: P3Instance, assignments: Mapping[str, Sequence[str]], schedule: Sequence[Any] = ()) -> RideSim:
    """Run a whole plan from the start (no pauses) and return the final state."""
    sim = RideSim(instance, schedule)
    sim.run_plan(sim.parse_plan(assignments))
    return sim
