"""The P7 relief operation as a state machine on an event clock: the env's dynamics.

Vehicles at the base decide when they are free; time then jumps to the next event (a vehicle
back at the base, a load arriving, a disruption firing, a weather block lifting), so an
episode has as many steps as decisions. Every actor's state is kept per vehicle (named by
its id), so a multi-agent env can drive the same simulation.

Written apart from :mod:`.checker`, which scores a whole plan on its own; the tests compare
the two.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.event_clock import EventClock
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    lost_units,
    shortfall_points,
)


@dataclass
class VehicleState:
    """One vehicle: when it is free at the base, and whether it has stood down."""

    free_at: int
    busy_until: int
    retired: bool = False
    trips: int = 0
    waiting: bool = False  # waits for the next event, whenever it comes


@dataclass
class Trip:
    """A trip carried out: who, where, what, when."""

    vehicle: int
    region: int
    load: dict[str, int]
    depart: int
    arrive: int
    back: int


@dataclass
class ReliefSim:
    """The operation so far.

    Attributes:
        inst: the instance.
        clock: the event clock (``clock.now`` is the current minute).
        vehicles: per vehicle, in the instance's order.
        stock: units at the base now.
        committed: units sent to each region per resource (arrived or under way).
        on_time, late: units arrived per region and resource, by the deadline / after it.
        trips: the trips made, in order.
        applied: the disruptions fired so far.
        violations: the refused trips of a submitted plan, in words.
        arrivals: the number of loads arrived so far.
    """

    inst: P7Instance
    clock: EventClock
    vehicles: list[VehicleState]
    stock: dict[str, int]
    committed: list[dict[str, int]]
    on_time: list[dict[str, int]]
    late: list[dict[str, int]]
    trips: list[Trip] = field(default_factory=list)
    applied: list[Any] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    #: Loads arrived so far (``on_time``/``late`` change only then): a key for caches.
    arrivals: int = 0

    @classmethod
    def start(cls, inst: P7Instance, schedule: Sequence[Any] = ()) -> ReliefSim:
        """The operation at the instance's start, facing the disruptions in ``schedule``."""
        sim = cls(
            inst=inst, clock=EventClock(inst.start), vehicles=[VehicleState(inst.start, inst.start) for _ in inst.vehicles],
            stock={k: inst.stock.get(k, 0) for k in RESOURCES},
            committed=[dict.fromkeys(RESOURCES, 0) for _ in inst.regions],
            on_time=[dict.fromkeys(RESOURCES, 0) for _ in inst.regions],
            late=[dict.fromkeys(RESOURCES, 0) for _ in inst.regions],
        )
        for d in schedule:
            sim.inject(d)
        return sim

    def copy(self) -> ReliefSim:
        """An independent copy; the instance and the disruptions (frozen models) are shared."""
        memo: dict[int, Any] = {id(self.inst): self.inst}
        frozen = [*self.applied, *(what for _, (_, what) in self.clock.pending())]
        memo.update((id(d), d) for d in frozen if isinstance(d, (WeatherEvent, ResourceShortage)))
        return copy.deepcopy(self, memo)

    # ------------------------------------------------------------------ reading the state
    @property
    def now(self) -> int:
        return self.clock.now

    def blocked(self, r: int, at: int | None = None) -> bool:
        """Whether a weather block in force at ``at`` (default: now) covers region ``r``."""
        at = self.now if at is None else at
        rid = self.inst.regions[r].id
        return any(isinstance(d, WeatherEvent) and d.region == rid and d.start <= at < d.end for d in self.applied)

    def block_end(self, r: int) -> int | None:
        """When the blocks in force on region ``r`` lift (None: not blocked)."""
        ends = [d.end for d in self.applied if isinstance(d, WeatherEvent) and d.region == self.inst.regions[r].id
                and d.start <= self.now < d.end]
        return max(ends) if ends else None

    def remaining(self, r: int, resource: str) -> int:
        """Need of region ``r`` not yet sent (arrived or under way)."""
        return max(0, self.inst.need(r, resource) - self.committed[r][resource])

    def acting(self) -> list[int]:
        """The vehicles that decide now."""
        return [v for v, s in enumerate(self.vehicles) if not s.retired and s.free_at <= self.now]

    @property
    def done(self) -> bool:
        return all(s.retired for s in self.vehicles) and not any(kind == "arrive" for _, (kind, _) in self.clock.pending())

    def send_load(self, v: int, r: int, resource: str) -> int:
        """Units ``send`` would load: the need left, capped by capacity and stock."""
        return min(self.inst.vehicles[v].capacity, self.stock[resource], self.remaining(r, resource))

    def why_not_send(self, v: int, r: int, resource: str) -> str | None:
        """Why ``send(v, r, resource)`` is masked now (None: allowed)."""
        inst = self.inst
        vid, reg = inst.vehicle_ids[v], inst.regions[r]
        state = self.vehicles[v]
        if state.retired:
            return f"{vid} has stood down"
        if state.free_at > self.now:
            return f"{vid} is away until minute {state.free_at}"
        if self.blocked(r):
            return f"weather blocks {reg.id} until minute {self.block_end(r)}"
        if self.remaining(r, resource) <= 0:
            return f"{reg.id} needs no more {resource}"
        if self.stock[resource] <= 0:
            return f"no {resource} left at the base"
        if self.now + inst.one_way[v][r] > inst.horizon:
            return f"{vid} would reach {reg.id} after the horizon (minute {inst.horizon})"
        return None

    def legal_sends(self, v: int) -> list[tuple[int, str]]:
        """Every ``(region, resource)`` that :meth:`why_not_send` allows for ``v`` (the mask's
        hot path: the same rules, without building the reasons)."""
        state, inst, now = self.vehicles[v], self.inst, self.now
        if state.retired or state.free_at > now:
            return []
        blocked = self._blocked_now()
        out = []
        for r, reg in enumerate(inst.regions):
            if reg.id in blocked or now + inst.one_way[v][r] > inst.horizon:
                continue
            sent = self.committed[r]
            out += [(r, k) for k, need in reg.needs.items() if need > sent[k] and self.stock[k] > 0]
        return sorted(out, key=lambda rk: (rk[0], RESOURCES.index(rk[1])))

    def blocked_regions(self) -> set[str]:
        """The ids of the regions a weather block covers now (what :meth:`blocked` says of each)."""
        return self._blocked_now()

    def _blocked_now(self) -> set[str]:
        now = self.now
        return {d.region for d in self.applied if isinstance(d, WeatherEvent) and d.start <= now < d.end}

    def could_send_later(self, v: int) -> bool:
        """Whether a weather block alone keeps ``v`` from a useful trip (it may wait for it to lift)."""
        inst = self.inst
        for r in range(len(inst.regions)):
            end = self.block_end(r)
            if end is None or end + inst.one_way[v][r] > inst.horizon:
                continue
            if any(self.remaining(r, k) > 0 and self.stock[k] > 0 for k in RESOURCES):
                return True
        return False

    def next_event_after_now(self) -> int | None:
        later = [t for t, _ in self.clock.pending() if t > self.now]
        return min(later) if later else None

    # ------------------------------------------------------------------ changing it
    def inject(self, d: Any) -> None:
        """Schedule a disruption (it fires when the clock reaches its start; at once if past)."""
        self.clock.schedule(d.start, ("fire", d))

    def depart(self, v: int, r: int, load: dict[str, int]) -> Trip:
        """Carry out a trip now (the caller has checked it)."""
        inst, now = self.inst, self.now
        leg = inst.one_way[v][r]
        trip = Trip(v, r, {k: q for k, q in load.items() if q > 0}, now, now + leg, now + 2 * leg)
        for k, q in trip.load.items():
            self.stock[k] -= q
            self.committed[r][k] += q
        self.trips.append(trip)
        state = self.vehicles[v]
        state.free_at, state.busy_until, state.trips = trip.back, trip.back, state.trips + 1
        self.clock.schedule(trip.arrive, ("arrive", trip))
        self.clock.schedule(trip.back, ("back", v))
        return trip

    def wait(self, v: int) -> None:
        """``v`` waits for the next event (one another vehicle's trip may still create); when
        the clock has nowhere left to go, it stands down."""
        state = self.vehicles[v]
        nxt = self.next_event_after_now()
        state.waiting = True
        state.free_at = nxt if nxt is not None else self.inst.horizon

    def retire(self, v: int) -> None:
        self.vehicles[v].retired = True

    def advance(self) -> list[Any]:
        """Move to the next event and apply what is due then (waiting vehicles wake up); the
        disruptions fired."""
        before = self.now
        fired = self._apply(self.clock.advance())
        if self.now > before:
            for state in self.vehicles:
                if state.waiting:
                    state.waiting, state.free_at = False, min(state.free_at, self.now)
        return fired

    def process_due(self) -> list[Any]:
        """Apply the events due now (the disruptions fired)."""
        return self._apply(self.clock.due())

    def _apply(self, events: list[Any]) -> list[Any]:
        fired = []
        for kind, what in events:
            if kind == "fire":
                d = what
                self.applied.append(d)
                fired.append(d)
                if isinstance(d, ResourceShortage):
                    self.stock[d.resource] -= lost_units(self.stock[d.resource], d.fraction)
                elif d.duration > 0:
                    self.clock.schedule(d.end, ("lift", d.region))
            elif kind == "arrive":
                reg = self.inst.regions[what.region]
                box = self.on_time if what.arrive <= reg.deadline else self.late
                for k, q in what.load.items():
                    box[what.region][k] += q
                self.arrivals += 1
        return fired

    def run_plan(
        self, trips: Sequence[tuple[int, int, dict[str, int], int]], on_fire: Callable[[list[Any]], None] | None = None
    ) -> None:
        """Carry out ``(vehicle, region, load, depart)`` trips in order of departure (ties:
        plan order); a trip that breaks a constraint is refused and recorded in
        :attr:`violations` with every constraint it breaks. ``on_fire`` hears of the
        disruptions fired on the way."""
        inst = self.inst

        def heard(fired: list[Any]) -> None:
            if fired and on_fire is not None:
                on_fire(fired)

        for k in sorted(range(len(trips)), key=lambda k: (trips[k][3], k)):
            v, r, load, depart = trips[k]
            while self.now < depart:
                heard(self._apply(self.clock.advance(until=depart)))
            heard(self.process_due())
            why = self.refusal_reasons(v, r, load, depart)
            if not why:
                self.depart(v, r, load)
                continue
            vid, rid = inst.vehicle_ids[v], inst.region_ids[r]
            self.violations.append(f"trip {k} ({vid} to {rid} at minute {depart}) refused: {'; '.join(why)}")

    def refusal_reasons(self, v: int, r: int, load: dict[str, int], depart: int) -> list[str]:
        """Why a trip leaving now would be refused, one reason per constraint it breaks (the
        checker's :data:`~.checker.TRIP_CONSTRAINTS`, in order); [] when it may leave."""
        inst, vid, rid = self.inst, self.inst.vehicle_ids[v], self.inst.region_ids[r]
        why = []
        if sum(load.values()) > inst.vehicles[v].capacity:
            why.append(f"{sum(load.values())} units exceed the capacity of {vid} ({inst.vehicles[v].capacity})")
        if any(q > self.stock[res] for res, q in load.items()):
            why.append("the base has " + ", ".join(f"{self.stock[res]} {res}" for res in load) + " left")
        if self.blocked(r):
            why.append(f"weather blocks {rid}")
        if depart < self.vehicles[v].busy_until:
            why.append(f"{vid} is away until minute {self.vehicles[v].busy_until}")
        if depart + inst.one_way[v][r] > inst.horizon:
            why.append(f"the load would arrive after the horizon (minute {inst.horizon})")
        return why

    def finish(self) -> list[Any]:
        """Stand every vehicle down and let the loads under way arrive; the disruptions fired."""
        fired = []
        for state in self.vehicles:
            state.retired = True
        while any(kind == "arrive" for _, (kind, _) in self.clock.pending()):
            fired += self.advance()
        return fired

    # ------------------------------------------------------------------ results
    def points(self) -> int:
        return shortfall_points(self.inst, self.on_time, self.late)

    def minutes(self) -> int:
        return sum(t.back - t.depart for t in self.trips)

    def cost(self) -> float:
        return float(self.inst.minute_weight * self.points() + self.minutes())

    def plan(self) -> dict[str, Any]:
        """The trips made, as ``submit_plan`` arguments."""
        vehicle_ids, region_ids = self.inst.vehicle_ids, self.inst.region_ids
        return {"trips": [self.trip_entry(t, vehicle_ids, region_ids) for t in self.trips]}

    def trip_entry(self, t: Trip, vehicle_ids: list[str] | None = None, region_ids: list[str] | None = None) -> dict[str, Any]:
        """One trip as a ``submit_plan`` entry (the ids lists, when the caller has them)."""
        vehicle_ids = self.inst.vehicle_ids if vehicle_ids is None else vehicle_ids
        region_ids = self.inst.region_ids if region_ids is None else region_ids
        return {"vehicle": vehicle_ids[t.vehicle], "region": region_ids[t.region], "load": dict(t.load), "depart": t.depart}

    def allocations(self) -> dict[str, dict[str, int]]:
        """REALM's shape: units sent to each region per resource."""
        return {reg.id: {k: q for k, q in self.committed[r].items() if q} for r, reg in enumerate(self.inst.regions)}
