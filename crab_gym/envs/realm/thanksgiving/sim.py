"""The Thanksgiving kitchen and its cars in event time: the env's dynamics.

:class:`Kitchen` holds what has happened: car trips under way or done, tasks started, the
flight delays announced. Time jumps from event to event (a task ends, a car is home, a delay
is announced) on a :class:`~crab_gym.envs.realm.common.event_clock.EventClock`; every state
question (is a cook free, is a member home) is answered from the recorded times, so an event
is only a moment at which the agent decides again.

Step-wise play (:meth:`Kitchen.send`, :meth:`Kitchen.start`, :meth:`Kitchen.wait`) is always
legal when the ``why_not_*`` checks say so. A whole plan (:meth:`Kitchen.run_plan`) is carried
out as written, rule-breaking included (the checker then says what it broke), and pauses when
a delay is announced while entries remain, so that the agent can replan.

The world knows every delay (``true_delays``); the agent sees those announced so far. Per-actor
state (a car's trips, a cook's tasks) is kept by stable actor id for the multi-agent env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crab_gym.envs.realm.common.env import hhmm
from crab_gym.envs.realm.common.event_clock import EventClock
from crab_gym.envs.realm.thanksgiving.model import AIRPORT, HOME, FlightDelay, ThanksgivingInstance


@dataclass
class Trip:
    """One car trip: leaves ``depart``, at the airport ``airport``, leaves it ``leave`` (once
    every passenger has landed), home ``home``."""

    car: str
    members: list[str]
    depart: int
    airport: int
    leave: int = 0
    home: int = 0
    driving: int = 0


@dataclass
class CookedTask:
    task: str
    cook: str
    start: int
    end: int


@dataclass
class PlanEntry:
    """One entry of a submitted plan, carried out when the clock reaches ``time``."""

    time: int
    kind: str  # "depart" | "start"
    actor: str  # car or cook
    what: tuple[str, ...]  # the members of a trip, or (task,)


@dataclass
class Kitchen:
    """The state of one Thanksgiving afternoon."""

    inst: ThanksgivingInstance
    true_delays: tuple[FlightDelay, ...] = ()
    clock: EventClock = field(default_factory=EventClock)
    trips: list[Trip] = field(default_factory=list)
    cooked: dict[str, CookedTask] = field(default_factory=dict)
    announced: list[FlightDelay] = field(default_factory=list)
    #: The state just after the first delay was announced (the adaptation metric replans from it).
    first_announcement: Kitchen | None = None
    #: Each member's landing under a set of delays (:meth:`_landings`), per set: the observation
    #: and the mask ask for them on every step; the delays change a few times an episode.
    _landing_memo: dict[tuple[FlightDelay, ...], dict[str, int]] = field(
        default_factory=dict, compare=False, repr=False)

    @classmethod
    def start_of(cls, inst: ThanksgivingInstance, delays: list[FlightDelay] | tuple[FlightDelay, ...] = ()) -> Kitchen:
        """The afternoon at ``start_time``; ``delays`` will be announced at their minutes."""
        k = cls(inst, tuple(delays), EventClock(inst.start_time))
        for d in sorted(delays, key=lambda d: d.announced):
            k.clock.schedule(d.announced, ("announce", d))
        k._process(k.clock.due())
        return k

    def copy(self) -> Kitchen:
        """An independent copy; the instance and the delays (frozen models) are shared. Written
        out (not ``deepcopy``): the first announcement takes one per episode."""
        return Kitchen(
            self.inst, self.true_delays, self.clock.copy(),
            [replace(t, members=list(t.members)) for t in self.trips], {t: replace(c) for t, c in self.cooked.items()},
            list(self.announced), None if self.first_announcement is None else self.first_announcement.copy(),
            dict(self._landing_memo),
        )

    # ================================================================== questions
    @property
    def now(self) -> int:
        return self.clock.now

    def version(self) -> tuple[int, ...]:
        """Changes whenever the state does (the clock moves, a trip, passenger, task or
        delay is added): a key for caches of derived values."""
        return (self.now, len(self.trips), sum(len(t.members) for t in self.trips), len(self.cooked),
                len(self.announced), len(self.true_delays))

    def landing(self, member: str) -> int:
        """When ``member`` really lands (delays included, announced or not)."""
        return self._landings(self.true_delays).get(member) or self.inst.landing(member, self.true_delays)

    def known_landing(self, member: str) -> int:
        """When ``member`` lands as far as the family knows now."""
        return self._landings(self.announced).get(member) or self.inst.landing(member, self.announced)

    def known_landings(self) -> dict[str, int]:
        """:meth:`known_landing` of every traveller (read only)."""
        return self._landings(self.announced)

    def _landings(self, delays: Sequence[FlightDelay]) -> dict[str, int]:
        """``inst.landing(m, delays)`` of every traveller ``m``, worked out once per set of delays."""
        key = tuple(delays)
        known = self._landing_memo.get(key)
        if known is None:
            if len(self._landing_memo) > 8:  # delays come a few at a time: keep the recent sets
                self._landing_memo.clear()
            known = self._landing_memo[key] = self.inst.landings(delays)
        return known

    def trip_of(self, member: str) -> Trip | None:
        return next((t for t in self.trips if member in t.members), None)

    def home_at(self, member: str) -> int | None:
        """When ``member`` is (or will be) home; None: not fetched yet."""
        if self.inst.members[self.inst.member_index[member]].flight is None:
            return self.inst.start_time
        trip = self.trip_of(member)
        return None if trip is None else trip.home

    def known_times(self, trip: Trip) -> tuple[int, int]:
        """``(leave, home)`` of a trip as far as the family knows now (an unannounced delay is
        not known; a car that has left the airport is)."""
        if trip.leave <= self.now:
            return trip.leave, trip.home
        leave = max([trip.airport, self.now] + [self.known_landing(m) for m in trip.members])
        return leave, leave + self.inst.travel_minutes

    def expected_home(self, member: str) -> int | None:
        """When ``member`` is home as far as the family knows now (None: not fetched yet)."""
        trip = self.trip_of(member)
        return self.home_at(member) if trip is None else self.known_times(trip)[1]

    def expected_homes(self, members: Sequence[str]) -> list[int | None]:
        """:meth:`expected_home` of each of ``members``, finding the trips in one pass (the
        observation asks for every member on every step)."""
        trip_of, inst = self._first_trips(), self.inst
        start, at = inst.start_time, inst.member_index
        return [self.known_times(trip_of[m])[1] if m in trip_of  # else home_at(m), found no trip
                else start if inst.members[at[m]].flight is None else None for m in members]

    def _first_trips(self) -> dict[str, Trip]:
        """:meth:`trip_of` of every member fetched, in one pass over the trips."""
        trip_of: dict[str, Trip] = {}
        for t in self.trips:
            for m in t.members:
                trip_of.setdefault(m, t)  # the first trip, as trip_of() finds it
        return trip_of

    def busy_untils(self, cooks: Sequence[str]) -> list[int]:
        """:meth:`busy_until` of each of ``cooks``, in one pass over the tasks cooked."""
        ends: dict[str, int] = {}
        for c in self.cooked.values():
            ends[c.cook] = max(ends.get(c.cook, c.end), c.end)
        return [ends.get(cook, self.inst.start_time) for cook in cooks]

    def is_home(self, member: str) -> bool:
        at = self.home_at(member)
        return at is not None and at <= self.now

    def car_trips(self, car: str) -> list[Trip]:
        return [t for t in self.trips if t.car == car]

    def car_free_at(self, car: str) -> int:
        trips = self.car_trips(car)
        return trips[-1].home if trips else self.inst.start_time

    def known_free_at(self, car: str) -> int:
        """When the car is back home, as far as the family knows now."""
        trips = self.car_trips(car)
        return self.known_times(trips[-1])[1] if trips else self.inst.start_time

    def car_views(self, cars: Sequence[str]) -> tuple[list[int], list[bool]]:
        """Per car, :meth:`known_free_at` and whether it waits idle at the airport
        (:meth:`car_place` is the airport and :meth:`car_free_at` is past): one pass over the
        trips for the observation."""
        last: dict[str, Trip] = {t.car: t for t in self.trips}
        inst, now, start = self.inst, self.now, self.inst.start_time
        free = [self.known_times(last[c])[1] if c in last else start for c in cars]
        idle_there = [c not in last and inst.cars[inst.car_index[c]].start == AIRPORT and start <= now for c in cars]
        return free, idle_there

    def car_place(self, car: str) -> str:
        """Where the car waits when idle: its start place until its first trip, then home."""
        return HOME if self.car_trips(car) else self.inst.cars[self.inst.car_index[car]].start

    def busy_until(self, cook: str) -> int:
        ends = [c.end for c in self.cooked.values() if c.cook == cook]
        return max(ends, default=self.inst.start_time)

    def running(self) -> list[CookedTask]:
        return [c for c in self.cooked.values() if c.start <= self.now < c.end]

    def task_done(self, task: str) -> bool:
        c = self.cooked.get(task)
        return c is not None and c.end <= self.now

    @property
    def ready(self) -> int | None:
        """When dinner is ready (the last task's end); None until every task is started."""
        if len(self.cooked) < len(self.inst.tasks):
            return None
        return max(c.end for c in self.cooked.values())

    @property
    def driving(self) -> int:
        return sum(t.driving for t in self.trips)

    @property
    def complete(self) -> bool:
        """Every task cooked and every traveller home."""
        return all(self.task_done(t) for t in self.inst.task_ids) and all(
            self.is_home(m) for m in self.inst.travellers
        )

    # ================================================================== step-wise play
    def joinable(self, car: str) -> Trip | None:
        """The car's trip still at (or on its way to) the airport, which may take more passengers."""
        trips = self.car_trips(car)
        if trips and trips[-1].leave >= self.now and trips[-1].depart <= self.now:
            return trips[-1]
        return None

    def why_not_send(self, car: str, member: str) -> str | None:
        """Why ``car`` cannot fetch ``member`` now (None: it can)."""
        if member not in self.inst.travellers:
            return f"{member} is home from the start"
        if self.trip_of(member) is not None:
            return f"{member} is already fetched by {self.trip_of(member).car}"
        trip = self.joinable(car)
        if trip is not None:
            seats = self.inst.cars[self.inst.car_index[car]].seats
            return None if len(trip.members) < seats else f"{car} is full ({seats} seats)"
        free = self.car_free_at(car)
        if free > self.now:
            return f"{car} is on a trip (it went for {', '.join(self.car_trips(car)[-1].members)})"
        return None

    def can_send(self, car: str, member: str) -> bool:
        """Whether :meth:`why_not_send` allows it (the mask's hot path: the same rules, no
        reasons built)."""
        if member not in self.inst.travellers or self.trip_of(member) is not None:
            return False
        trip = self.joinable(car)
        if trip is not None:
            return len(trip.members) < self.inst.cars[self.inst.car_index[car]].seats
        return self.car_free_at(car) <= self.now

    def sendable(self, cars: Sequence[str], members: Sequence[str]) -> list[list[bool]]:
        """:meth:`can_send` of every car (rows) and member (columns), the lookups done once."""
        fetched = {m for t in self.trips for m in t.members}
        fetchable = [m in self.inst.travellers and m not in fetched for m in members]
        rows = []
        for car in cars:
            trip = self.joinable(car)
            if trip is not None:
                free = len(trip.members) < self.inst.cars[self.inst.car_index[car]].seats
            else:
                free = self.car_free_at(car) <= self.now
            rows.append([free and ok for ok in fetchable])
        return rows

    def send(self, car: str, member: str) -> Trip:
        """``car`` fetches ``member``: joins the car's trip still at the airport, else leaves now."""
        trip = self.joinable(car)
        if trip is not None:
            trip.members.append(member)
            self._settle_trip(trip)
        else:
            trip = self._new_trip(car, [member], self.now)
        return trip

    def why_not_start(self, task: str, cook: str) -> str | None:
        """Why ``cook`` cannot start ``task`` now (None: they can)."""
        inst = self.inst
        if task in self.cooked:
            return f"{task} is already cooked by {self.cooked[task].cook}"
        if task not in inst.members[inst.member_index[cook]].skills:
            return f"{cook} cannot cook {task}"
        if not self.is_home(cook):
            at = self.expected_home(cook)
            return f"{cook} is not home yet" + ("" if at is None else f" (home at {hhmm(at)})")
        if self.busy_until(cook) > self.now:
            return f"{cook} is busy until {hhmm(self.busy_until(cook))}"
        waiting = [p for p in inst.predecessors(task) if not self.task_done(p)]
        if waiting:
            return f"{task} comes after {', '.join(waiting)}"
        running = self.running()
        if len(running) >= inst.kitchen_capacity:
            return f"the kitchen is full ({inst.kitchen_capacity} tasks at once)"
        if inst.tasks[inst.task_index[task]].oven and any(self._oven(c.task) for c in running):
            return "the oven is in use"
        return None

    def can_start(self, task: str, cook: str, running: list[CookedTask] | None = None) -> bool:
        """Whether :meth:`why_not_start` allows it (the mask's hot path: the same rules, no
        reasons built; ``running``: :meth:`running`, when the caller has it already)."""
        inst = self.inst
        if task in self.cooked or task not in inst.members[inst.member_index[cook]].skills:
            return False
        if not self.is_home(cook) or self.busy_until(cook) > self.now:
            return False
        if any(not self.task_done(p) for p in inst.predecessors(task)):
            return False
        running = self.running() if running is None else running
        if len(running) >= inst.kitchen_capacity:
            return False
        return not (inst.tasks[inst.task_index[task]].oven and any(self._oven(c.task) for c in running))

    def startable(self) -> list[bool]:
        """:meth:`can_start` of every task and each of its cooks, in the order of
        ``inst.task_rows`` (the cooks: :meth:`~.model.ThanksgivingInstance.skilled`, so the
        skill holds), the lookups done once."""
        inst, now, cooked = self.inst, self.now, self.cooked
        running = self.running()
        full = len(running) >= inst.kitchen_capacity
        oven_busy = any(self._oven(c.task) for c in running)
        done = {t for t, c in cooked.items() if c.end <= now}
        free = self._home_now()
        free -= {c.cook for c in cooked.values() if c.end > now}  # busy_until(cook) > now
        out: list[bool] = []
        for task, cooks, oven, preds in inst.task_rows:
            if full or task in cooked or (oven and oven_busy) or not all(p in done for p in preds):
                out += [False] * len(cooks)
            else:
                out += [cook in free for cook in cooks]
        return out

    def _home_now(self) -> set[str]:
        """The members :meth:`is_home` says are home, in one pass."""
        inst, now, trip_of = self.inst, self.now, self._first_trips()
        home = {m for m, t in trip_of.items() if t.home <= now}
        if inst.start_time <= now:
            home.update(m.member_id for m in inst.members if m.flight is None)
        return home

    def start(self, task: str, cook: str) -> CookedTask:
        """``cook`` starts ``task`` now."""
        return self._start(task, cook, self.now)

    def can_wait(self) -> bool:
        """Whether anything is still to happen (a task ending, a car coming home, a delay)."""
        return any(not self._stale(e) for _, _, e in self.clock._queue)  # pending(), unsorted: order is moot

    def wait(self) -> list[str]:
        """Advance to the next event and carry it out; what happened, in words."""
        while True:
            events = [e for e in self.clock.advance() if not self._stale(e)]
            if events or not self.clock.pending():
                return self._process(events)

    # ================================================================== injected delays
    def delay_flight(self, delay: FlightDelay) -> None:
        """A delay that becomes real now (its flight has not landed): cars waiting for that
        flight wait longer; the family learns it at ``delay.announced``."""
        self.true_delays = (*self.true_delays, delay)
        for trip in self.trips:
            if trip.leave > self.now and any(self.inst.members[self.inst.member_index[m]].flight == delay.flight
                                             for m in trip.members):
                self._settle_trip(trip)
        self.clock.schedule(delay.announced, ("announce", delay))

    def catch_up(self) -> list[str]:
        """Carry out the events due now (an announcement injected for the current minute)."""
        return self._process(self.clock.due())

    # ================================================================== whole plans
    def run_plan(self, entries: list[PlanEntry]) -> tuple[list[PlanEntry], list[str]]:
        """Carry out ``entries`` at their times (the earliest first), then let everything
        finish. Pauses when a delay is announced while entries remain; returns the entries not
        carried out (empty unless paused) and what happened, in words."""
        todo = sorted(entries, key=lambda e: (e.time, e.kind != "depart"))
        log: list[str] = []
        while True:
            while todo and todo[0].time <= self.now:
                self._carry_out(todo.pop(0))
            if not todo and (self.complete or not self.can_wait()):
                return todo, log
            announced = len(self.announced)
            events = [e for e in self.clock.advance(todo[0].time if todo else None) if not self._stale(e)]
            log += self._process(events)
            if todo and len(self.announced) > announced:
                return todo, log

    def _carry_out(self, entry: PlanEntry) -> None:
        if entry.kind == "depart":
            self._new_trip(entry.actor, list(entry.what), self.now)
        else:
            self._start(entry.what[0], entry.actor, self.now)

    # ================================================================== results
    def pickups(self) -> list[dict[str, Any]]:
        """REALM's ``pickups``: ``{"car", "member", "depart"}`` (plus the times it implies)."""
        return [
            {"car": t.car, "member": m, "depart": t.depart, "pickup": t.leave, "home": t.home}
            for t in self.trips
            for m in t.members
        ]

    def cooking_schedule(self) -> list[dict[str, Any]]:
        """REALM's ``cooking_schedule``: ``{"task", "cook", "start"}`` (plus ``end``)."""
        return [
            {"task": c.task, "cook": c.cook, "start": c.start, "end": c.end}
            for c in sorted(self.cooked.values(), key=lambda c: (c.start, self.inst.task_index[c.task]))
        ]

    def plan(self) -> dict[str, list[dict[str, Any]]]:
        """What happened as ``submit_plan`` arguments (pickups and cooking starts only)."""
        return {
            "pickups": [{k: p[k] for k in ("car", "member", "depart")} for p in self.pickups()],
            "cooking_schedule": [{k: c[k] for k in ("task", "cook", "start")} for c in self.cooking_schedule()],
        }

    # ================================================================== internals
    def _oven(self, task: str) -> bool:
        return self.inst.tasks[self.inst.task_index[task]].oven

    def _new_trip(self, car: str, members: list[str], depart: int) -> Trip:
        out = 0 if self.car_place(car) == AIRPORT else self.inst.travel_minutes
        trip = Trip(car, list(members), depart, depart + out, driving=out + self.inst.travel_minutes)
        self.trips.append(trip)
        self._settle_trip(trip)
        return trip

    def _settle_trip(self, trip: Trip) -> None:
        trip.leave = max([trip.airport] + [self.landing(m) for m in trip.members])
        trip.home = trip.leave + self.inst.travel_minutes
        self.clock.schedule(trip.home, ("home", trip.car, trip.depart, trip.home))

    def _start(self, task: str, cook: str, start: int) -> CookedTask:
        done = CookedTask(task, cook, start, start + self.inst.tasks[self.inst.task_index[task]].duration)
        self.cooked[task] = done
        self.clock.schedule(done.end, ("end", task, done.end))
        return done

    def _stale(self, event: tuple) -> bool:
        """A car-home event whose trip took on a passenger since (and so comes home later)."""
        if event[0] != "home":
            return False
        _, car, depart, home = event
        return not any(t.car == car and t.depart == depart and t.home == home for t in self.trips)

    def _process(self, events: list[tuple]) -> list[str]:
        out = []
        for event in events:
            if event[0] == "announce":
                d = event[1]
                if d not in self.announced:
                    self.announced.append(d)
                if self.first_announcement is None and d.delay > 0:
                    self.first_announcement = self.copy()
                out.append(f"{hhmm(self.now)} {d.describe()}")
            elif event[0] == "end":
                out.append(f"{hhmm(self.now)} {event[1]} done")
            elif event[0] == "home":
                trip = next(t for t in self.trips if t.car == event[1] and t.depart == event[2])
                out.append(f"{hhmm(self.now)} {trip.car} home with {', '.join(trip.members)}")
        return out


def plan_entries(k: Kitchen, plan: dict[str, Any]) -> tuple[str | None, list[PlanEntry]]:
    """The entries of ``plan`` (``submit_plan`` arguments) still to carry out from ``k``, or
    why the plan cannot be carried out from here (an id listed twice, a start in the past, a
    change to a trip or task already under way). Pickups with the same car and departure
    are one trip. Entries for what is already under way must match it, or be left out."""
    inst = k.inst
    by_trip: dict[tuple[str, int], list[str]] = {}
    seen: set[str] = set()
    for p in plan.get("pickups", []):
        car, member, depart = str(p["car"]), str(p["member"]), int(p["depart"])
        if member not in inst.travellers:
            return f"{member} is not a traveller (home from the start)", []
        if member in seen:
            return f"{member} is picked up more than once", []
        seen.add(member)
        trip = k.trip_of(member)
        if trip is not None:
            if (trip.car, trip.depart) != (car, depart):
                return f"{member} is already fetched by {trip.car} leaving {hhmm(trip.depart)}; the plan must keep it", []
            continue
        if depart < k.now:
            return f"the pickup of {member} leaves at {hhmm(depart)}, before now ({hhmm(k.now)})", []
        if any(t.car == car and t.depart == depart for t in k.trips):
            return f"{car} already left at {hhmm(depart)}; add a passenger to a trip under way with send_car", []
        by_trip.setdefault((car, depart), []).append(member)
    entries = [PlanEntry(d, "depart", car, tuple(ms)) for (car, d), ms in by_trip.items()]
    listed: set[str] = set()
    for c in plan.get("cooking_schedule", []):
        task, cook, start = str(c["task"]), str(c["cook"]), int(c["start"])
        if task in listed:
            return f"{task} is listed more than once", []
        listed.add(task)
        done = k.cooked.get(task)
        if done is not None:
            if (done.cook, done.start) != (cook, start):
                return f"{task} is already cooked by {done.cook} from {hhmm(done.start)}; the plan must keep it", []
            continue
        if start < k.now:
            return f"{task} starts at {hhmm(start)}, before now ({hhmm(k.now)})", []
        entries.append(PlanEntry(start, "start", cook, (task,)))
    return None, entries
