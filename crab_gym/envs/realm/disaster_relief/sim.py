"""The P7 relief operation as a state machine on an event clock: the env's dynamics.

Vehicles at the base decide when they are free; time then jumps to the next event (a vehicle
back at the base, a load arriving, a disruption firing, a weather block lifting), so an
episode has as many steps as decisions. Every actor's state is kept per vehicle (named by
its id), so a multi-agent env can drive the same simulation.

Written apart from :mod:`.checker`, which scores a whole plan on its own; the tests compare
the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crab_gym.envs.realm.common.event_clock import EventClock
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    lost_units,
    region_credit,
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
    #: Bumped by every method that changes the state: with the minute, the key of the per-state
    #: caches below (change the state through the methods, or call :meth:`changed`).
    version: int = field(default=0, compare=False, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Per region, the shortfall points its arrived loads spare (None: not worked out yet).
    _credits: list[int] | None = field(default=None, compare=False, repr=False)
    _needs: tuple[P7Instance, list[tuple[str, list[tuple[str, int]]]], int] | None = field(
        default=None, compare=False, repr=False)

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
        """An independent copy; the instance and the disruptions (frozen models) are shared.
        Written out (not ``deepcopy``): a disruption's snapshot takes one per episode."""
        trips = {id(t): replace(t, load=dict(t.load)) for t in self.trips}
        queue = [(t, n, (kind, trips[id(what)] if kind == "arrive" else what))  # loads under way: made trips
                 for t, n, (kind, what) in self.clock._queue]
        return ReliefSim(
            inst=self.inst, clock=EventClock(self.clock.now, queue, self.clock._count),
            vehicles=[replace(s) for s in self.vehicles], stock=dict(self.stock),
            committed=[dict(c) for c in self.committed], on_time=[dict(c) for c in self.on_time],
            late=[dict(c) for c in self.late], trips=[trips[id(t)] for t in self.trips], applied=list(self.applied),
            violations=list(self.violations), arrivals=self.arrivals, version=self.version,
            _credits=None if self._credits is None else list(self._credits), _needs=self._needs,
        )

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

    def changed(self) -> None:
        """Drop the per-state caches (the methods that change the state call it)."""
        self.version += 1
        self._memo.clear()

    def _state_memo(self) -> dict[Any, Any]:
        """The caches of the current state (``acting``, ``legal_sends``): the env's settling
        and its mask read the same answers, worked out once."""
        memo, key = self._memo, (self.clock.now, self.version)
        if memo.get("key") != key:
            memo.clear()
            memo["key"] = key
        return memo

    def acting(self) -> list[int]:
        """The vehicles that decide now (a new list; worked out once per state)."""
        memo = self._state_memo()
        known = memo.get("acting")
        if known is None:
            now = self.clock.now
            known = memo["acting"] = [v for v, s in enumerate(self.vehicles) if not s.retired and s.free_at <= now]
        return list(known)

    @property
    def done(self) -> bool:
        return all(s.retired for s in self.vehicles) and not self._loads_under_way()

    def _loads_under_way(self) -> bool:
        """Whether a load is still to arrive (the clock's queue read unsorted: order is moot)."""
        return any(event[0] == "arrive" for _, _, event in self.clock._queue)

    def send_load(self, v: int, r: int, resource: str) -> int:
        """Units ``send`` would load: the need left, capped by capacity and stock."""
        return min(self.inst.vehicles[v].capacity, self.stock[resource], self.remaining(r, resource))

    def why_not_send(self, v: int, r: int, resource: str) -> str | None:
        """Why ``send(v, r, resource)`` is masked now (None: allowed)."""
        inst = self.inst
        vid, reg = inst.vehicles[v].id, inst.regions[r]  # the id as inst.vehicle_ids[v], without the list
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
        hot path: the same rules, without building the reasons), by region then resource in
        :data:`RESOURCES` order. Worked out once per state (a new list each call)."""
        memo = self._state_memo()
        known = memo.get(v)
        if known is None:
            known = memo[v] = self._legal_sends(v)
        return list(known)

    def _legal_sends(self, v: int) -> list[tuple[int, str]]:
        state, inst, now = self.vehicles[v], self.inst, self.clock.now
        if state.retired or state.free_at > now:
            return []
        blocked = self._blocked_now()
        stock, out = self.stock, []
        legs, reach = inst.one_way[v], inst.horizon - now  # now + leg > horizon: too late
        for r, ((rid, needs), sent) in enumerate(zip(self._ordered_needs(), self.committed)):
            if rid in blocked or legs[r] > reach:
                continue
            out += [(r, k) for k, need in needs if need > sent[k] and stock[k] > 0]
        return out

    def _ordered_needs(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """Per region: its id and its needs in :data:`RESOURCES` order (the mask's order)."""
        return self._instance_facts()[1]

    def _instance_facts(self) -> tuple[P7Instance, list[tuple[str, list[tuple[str, int]]]], int]:
        """The instance, its :meth:`_ordered_needs` and its ``total_points``: worked out once
        per instance (instances are frozen)."""
        known = self._needs
        if known is None or known[0] is not self.inst:
            order = {k: i for i, k in enumerate(RESOURCES)}
            rows = [(reg.id, sorted(reg.needs.items(), key=lambda kq: order[kq[0]])) for reg in self.inst.regions]
            known = self._needs = (self.inst, rows, self.inst.total_points)
        return known

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
        self.changed()

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
        self.changed()
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
        self.changed()

    def retire(self, v: int) -> None:
        self.vehicles[v].retired = True
        self.changed()

    def advance(self) -> list[Any]:
        """Move to the next event and apply what is due then (waiting vehicles wake up); the
        disruptions fired."""
        before = self.now
        fired = self._apply(self.clock.advance())
        if self.now > before:
            for state in self.vehicles:
                if state.waiting:
                    state.waiting, state.free_at = False, min(state.free_at, self.now)
        self.changed()
        return fired

    def process_due(self) -> list[Any]:
        """Apply the events due now (the disruptions fired)."""
        return self._apply(self.clock.due())

    def _apply(self, events: list[Any]) -> list[Any]:
        fired = []
        if events:
            self.changed()
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
                self._credit_again(what.region)
        return fired

    def _credit_again(self, r: int) -> None:
        """A load arrived in region ``r``: its credit (in :meth:`points`) is stale."""
        if self._credits is not None:
            self._credits[r] = region_credit(self.inst, r, self.on_time[r], self.late[r])

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
        self.changed()
        while self._loads_under_way():
            fired += self.advance()
        return fired

    # ------------------------------------------------------------------ results
    def points(self) -> int:
        """Shortfall points now (:func:`~.model.shortfall_points`; a region's credit is worked
        out again only when a load arrives there)."""
        credits = self._credits
        if credits is None:
            inst, on_time, late = self.inst, self.on_time, self.late
            credits = self._credits = [region_credit(inst, r, on_time[r], late[r]) for r in range(len(inst.regions))]
        return self._instance_facts()[2] - sum(credits)

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

