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
from crab_gym.envs.realm.ridesharing.model import P3Instance

__all__ = ["DELIVERED", "ONBOARD", "WAITING", "PlanError", "RideSim", "VehicleState", "Visit", "hhmm", "plan_codes",
           "simulate_plan"]


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
class VehicleState(FleetVehicle):
    """A vehicle's place, free minute and seats, what it carries and the stops it served."""

    load: int = 0
    onboard: list[int] = field(default_factory=list)
    route: list[Visit] = field(default_factory=list)

    @property
    def parked(self) -> bool:
        """Parked for good: its route has ended (the kit's :attr:`ended`)."""
        return self.ended

    @parked.setter
    def parked(self, value: bool) -> None:
        self.ended = value


class RideSim(FleetSim):
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
        # the requests' numbers as plain lists, for the masks' checks (read per candidate stop)
        self._pick, self._drop = self.pick_loc.tolist(), self.drop_loc.tolist()
        self._opens = [r.pickup_window[0] for r in self.req]
        self._closes = [r.pickup_window[1] for r in self.req]
        self._latest = [r.latest_dropoff for r in self.req]
        self._seats = [r.passengers for r in self.req]
        self.status = [WAITING] * self.R
        self.assigned = [-1] * self.R
        self._start_schedule(schedule)  # pending; applied: as in force (effective start)
        self.applied_as_given: list[Any] = []  # as scheduled or injected
        self.violations: list[str] = []
        self.broken: set[tuple[str, int]] = set()  # ("window" | "deadline", request) / ("capacity", vehicle)

    #: Lists a copy must not share with the original.
    copied = ("status", "assigned", "pending", "applied", "applied_as_given", "violations", "broken")

    # ------------------------------------------------------------------ time
    def idle_minute(self) -> int:
        """After every vehicle has parked, "now" is the start of the day."""
        return self.inst.start_time

    def matrix(self, t: int | None = None) -> np.ndarray:
        """Shortest-path minutes for a trip departing at ``t`` (default: the clock)."""
        if t is None:
            t = self.now()
        return self._matrix(t)  # net.matrix_at(active_at(applied, t), t), remembered

    def _applied(self, given: Any, in_force: Any) -> None:
        self.applied_as_given.append(given)

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
        if veh.ended:
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
        return self._finishable(loc, t, sorted(onboard, key=self._latest.__getitem__), self.net.rows(m))

    def _finishable(self, loc: int, t: int, order: list[int], rows: list[list[int]]) -> bool:
        """:meth:`_can_finish` over ``order`` (non-empty, by latest dropoff: the first that
        fits is tried first, and a part of a sorted list stays sorted) with ``rows`` the
        travel minutes as lists."""
        here, latest, drop = rows[loc], self._latest, self._drop
        last = len(order) == 1
        for k, r in enumerate(order):
            arrive = t + here[drop[r]]
            if arrive <= latest[r] and (last or self._finishable(drop[r], arrive, order[:k] + order[k + 1 :], rows)):
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

    def feasible(self, v: int, stop: int, m: np.ndarray) -> bool:
        """Whether :meth:`feasibility_reason` allows ``stop`` (the mask's hot path: the same
        rules, no reasons built)."""
        return self._feasible(self.vehicles[v], stop, self.net.rows(m))

    def _feasible(self, veh: VehicleState, stop: int, rows: list[list[int]]) -> bool:
        """:meth:`feasible` for vehicle ``veh`` with ``rows`` the travel minutes as lists."""
        r = stop // 2
        if stop % 2 == 0:
            arrive = veh.free + rows[veh.loc][self._pick[r]]
            if veh.load + self._seats[r] > veh.capacity or arrive > self._closes[r]:
                return False
            return self._can_finish_rows(self._pick[r], max(arrive, self._opens[r]), veh.onboard + [r], rows)
        arrive = veh.free + rows[veh.loc][self._drop[r]]
        if arrive > self._latest[r]:
            return False
        return self._can_finish_rows(self._drop[r], arrive, [x for x in veh.onboard if x != r], rows)

    def _can_finish_rows(self, loc: int, t: int, onboard: list[int], rows: list[list[int]]) -> bool:
        return not onboard or self._finishable(loc, t, sorted(onboard, key=self._latest.__getitem__), rows)

    def legal_stops(self, v: int) -> list[int]:
        """Stops vehicle ``v`` may take next under the masks: structurally possible and keeping
        everyone on time; if nothing is, the dropoffs of its passengers (late, but not stuck)."""
        veh = self.vehicles[v]
        if veh.ended:
            return []
        rows = self.net.rows(self.matrix(veh.free))
        out = []
        for r, status in enumerate(self.status):
            if status == WAITING:
                if self._feasible(veh, 2 * r, rows):
                    out.append(2 * r)
            elif r in veh.onboard and self._feasible(veh, 2 * r + 1, rows):
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
        self.vehicles[v].ended = True

    def go(self, v: int, stop: int) -> Visit:
        return self.dispatch(v, stop)

    def end_route(self, v: int) -> None:
        self.park(v)

    # ------------------------------------------------------------------ plans
    def parse_plan(self, assignments: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
        """A REALM-shape plan -> remaining stop codes per vehicle, checked against the state.

        Each vehicle's list may start with the stops it has already served (they are
        skipped) or hold only what comes next. Raises :class:`PlanError` saying what is wrong.
        """
        vid_index, stop_index = stop_indices(self.inst)
        hint = "stops look like 'pickup:<id>' / 'dropoff:<id>'"
        plan: dict[int, list[int]] = {}
        for vid, stops in assignments.items():
            if vid not in vid_index:
                raise unknown_vehicle(vid, vid_index)
            v = vid_index[vid]
            codes = vehicle_codes(vid, stops, stop_index, hint)
            plan[v] = skip_served(codes, [visit.stop for visit in self.vehicles[v].route])
        seen: set[int] = set()
        for v, codes in plan.items():
            self._check_route(v, codes, seen)
        self._check_carried(plan)
        return plan

    def _check_route(self, v: int, codes: Sequence[int], seen: set[int]) -> None:
        """Vehicle ``v``'s stops to come fit the state: each stop once in the whole plan
        (``seen`` so far), pickups still waiting, every passenger dropped after boarding."""
        veh = self.vehicles[v]
        vid = self.inst.vehicles[v].vehicle_id
        names = self.inst.stop_names()
        if codes and veh.ended:
            raise PlanError(f"vehicle {vid} has finished its route and cannot take more stops")
        aboard = set(veh.onboard)
        for s in codes:
            r, name = s // 2, names[s]
            if s in seen:
                raise PlanError(f"stop {name} appears twice in the plan")
            seen.add(s)
            if s % 2 == 0:
                if self.status[r] != WAITING:
                    raise PlanError(f"vehicle {vid}: {name} is already done")
                aboard.add(r)
            elif r not in aboard:
                raise PlanError(f"vehicle {vid}: {name} comes before the passenger is picked up by this vehicle")
            else:
                aboard.discard(r)
        if aboard:
            missing = ", ".join(f"dropoff:{self.req[r].passenger_id}" for r in sorted(aboard))
            raise PlanError(f"vehicle {vid}: passengers picked up but never dropped off ({missing})")

    def _check_carried(self, plan: Mapping[int, Sequence[int]]) -> None:
        """A vehicle carrying passengers must be in the plan (to drop them)."""
        for v, veh in enumerate(self.vehicles):
            if veh.onboard and v not in plan:
                missing = ", ".join(f"dropoff:{self.req[r].passenger_id}" for r in veh.onboard)
                raise PlanError(
                    f"vehicle {self.inst.vehicles[v].vehicle_id} carries passengers; the plan must drop them ({missing})"
                )

    # ------------------------------------------------------------------ results
    def travel_minutes(self) -> int:
        return sum(visit.travel for veh in self.vehicles for visit in veh.route)

    def served(self) -> int:
        return self.delivered()

    def cost(self) -> int:
        """Objective: travel minutes + penalty per request not delivered."""
        return self.travel_minutes() + self.inst.unserved_penalty * (self.R - self.served())

    def assignments(self) -> dict[str, list[str]]:
        return self.route_names()

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


def simulate_plan(instance: P3Instance, assignments: Mapping[str, Sequence[str]], schedule: Sequence[Any] = ()) -> RideSim:
    """Run a whole plan from the start (no pauses) and return the final state."""
    sim = RideSim(instance, schedule)
    sim.run_plan(sim.parse_plan(assignments))
    return sim
