"""The event clock of a vehicle fleet: the core that ride-sharing and wedding simulations share.

Each vehicle is *free* from the minute it has served its last stop. The **clock** is the
earliest free minute among the vehicles whose route has not ended; the vehicles free then
act. Disruptions wait in ``pending`` until the clock reaches their start, so a disruption
strikes every trip that departs from then on and none that departed before. A family's
simulation says what a stop does (:meth:`FleetSim.go`), how a route ends
(:meth:`FleetSim.end_route`) and which vehicle state marks an ended route
(:attr:`FleetVehicle.ended`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.common.fleet.roads import in_force

#: What happens to a stop: still to do, on board (or done, goods loaded), delivered.
WAITING, ONBOARD, DELIVERED = 0, 1, 2


class PlanError(ValueError):
    """A submitted plan that cannot be carried out from the current state (says why)."""


@dataclass
class FleetVehicle:
    """Where a vehicle is, from which minute it is free, its seats and the stops it served."""

    loc: int
    free: int
    capacity: int
    #: Its route has ended (a family also names it in its own words: parked, finished); a plain
    #: attribute, since a step reads it for every vehicle several times.
    ended: bool = False

    def copy(self) -> Any:
        """An independent copy: its lists (passengers, goods, the route) are copied, their
        items shared (stop codes, and served visits, which are never changed once recorded).
        Several times faster than ``copy.deepcopy`` (a snapshot is taken mid-step)."""
        new = object.__new__(type(self))
        fields = self.__dict__.copy()
        for name, value in fields.items():
            if type(value) is list:
                fields[name] = value.copy()
        new.__dict__.update(fields)
        return new


class FleetSim:
    """The mutable state of one fleet episode: vehicles, the clock and the disruptions.

    A subclass sets ``inst``, ``net``, ``vehicles`` and calls :meth:`_start_schedule`; it
    names in :attr:`copied` the lists of its own that a copy must not share.
    """

    inst: Any
    net: Any
    vehicles: list[Any]
    #: Attributes holding lists that :meth:`copy` copies (the vehicles are deep-copied).
    copied: tuple[str, ...] = ("pending", "applied")

    def _start_schedule(self, schedule: Sequence[Any]) -> None:
        """Disruptions still to come (by start) and those applied (as in force)."""
        self.pending: list[Any] = sorted(schedule, key=lambda d: d.start)
        self.applied: list[Any] = []

    def copy(self) -> Any:
        """An independent copy (the instance and network are shared, read-only)."""
        new = object.__new__(type(self))  # copy.copy's result, without its generic protocol
        new.__dict__.update(self.__dict__)
        new.vehicles = [v.copy() for v in self.vehicles]
        for name in self.copied:
            setattr(new, name, type(getattr(self, name))(getattr(self, name)))
        return new

    # ------------------------------------------------------------------ time
    @property
    def clock(self) -> int | None:
        """The earliest free minute among vehicles still driving (None: every route ended)."""
        free = [v.free for v in self.vehicles if not v.ended]
        return min(free) if free else None

    @property
    def done(self) -> bool:
        return all(v.ended for v in self.vehicles)

    def acting(self) -> list[int]:
        """Vehicles that decide now (free at the clock), in index order."""
        c = self.clock
        return [k for k, v in enumerate(self.vehicles) if not v.ended and v.free == c]

    def idle_minute(self) -> int:
        """The minute standing for "now" when every route has ended (a family's choice)."""
        raise NotImplementedError

    def _matrix(self, t: int) -> Any:
        """The network's shortest-path minutes for a trip departing at ``t`` under the
        disruptions applied and in force then (read only), remembered for the last minute
        asked until another disruption is applied: a step asks for the same one several times."""
        applied = self.applied
        last = self.__dict__.get("_last_matrix")
        if last is not None and last[0] == t and last[1] is applied and last[2] == len(applied):
            return last[3]
        m = self.net.disrupted(in_force(applied, t), t)
        self._last_matrix = (t, applied, len(applied), m)
        return m

    def now(self) -> int:
        """The clock, or :meth:`idle_minute` once every route has ended."""
        c = self.clock
        return c if c is not None else self.idle_minute()

    def inject(self, disruption: Any) -> None:
        """Schedule a disruption (``start=None``: at the current clock)."""
        if disruption.start is None:
            disruption = disruption.with_start(self.now())
        self.pending.append(disruption)
        self.pending.sort(key=lambda d: d.start)

    def advance(self) -> list[Any]:
        """Apply every pending disruption whose start the clock has reached; return them.

        A disruption applied after its start (possible only for injected ones) takes effect
        from the current clock and still ends when it would have ended.
        """
        now = self.clock
        fired: list[Any] = []
        while now is not None and self.pending and self.pending[0].start <= now:
            given = self.pending.pop(0)
            d = given.with_start(now) if given.start < now else given
            self.applied.append(d)
            self._applied(given, d)
            fired.append(d)
        return fired

    def _applied(self, given: Any, in_force: Any) -> None:
        """A disruption was applied (``given`` as scheduled, ``in_force`` as it acts)."""

    # ------------------------------------------------------------------ moves
    def go(self, v: int, stop: int) -> Any:
        """Send vehicle ``v`` to ``stop`` now (a family's dispatch)."""
        raise NotImplementedError

    def end_route(self, v: int) -> Any:
        """End vehicle ``v``'s route (a family's park or finish)."""
        raise NotImplementedError

    def run_plan(
        self,
        plan: Mapping[int, Sequence[int]],
        *,
        pause_on_disruption: bool = False,
        on_disruption: Callable[[Any, list[Any]], None] | None = None,
    ) -> tuple[dict[int, list[int]], list[Any]]:
        """Drive the vehicles through ``plan`` in time order; a vehicle whose list runs out
        ends its route. With ``pause_on_disruption``, stop as soon as a disruption still in
        force is applied while stops remain. ``on_disruption(sim, fired)`` is called right
        after any disruption is applied. Returns (what is left of the plan, the disruptions
        applied)."""
        queues = {v: deque(plan.get(v, ())) for v in range(len(self.vehicles))}
        fired: list[Any] = []
        while True:
            new = self.advance()
            fired += new
            if new and on_disruption is not None:
                on_disruption(self, new)
            live = [d for d in new if d.duration > 0]  # one that already ended changes nothing
            if live and pause_on_disruption and any(q for v, q in queues.items() if not self.vehicles[v].ended):
                break
            acting = self.acting()
            if not acting:
                break
            v = acting[0]
            if queues[v]:
                self.go(v, queues[v].popleft())
            else:
                self.end_route(v)
        return {v: list(q) for v, q in queues.items() if q}, fired

    # ------------------------------------------------------------------ results
    def route_names(self) -> dict[str, list[str]]:
        """Each vehicle's served stops by name, per vehicle id (REALM's plan shape)."""
        names = self.inst.stop_names()
        return {
            self.inst.vehicles[k].vehicle_id: [names[x.stop] for x in veh.route] for k, veh in enumerate(self.vehicles)
        }

    def delivered(self) -> int:
        """How many stops' passengers or goods reached their destination."""
        return sum(1 for s in self.status if s == DELIVERED)


def stop_indices(instance: Any) -> tuple[dict[str, int], dict[str, int]]:
    """(vehicle id -> index, stop name -> code) of an instance."""
    vid_index = {v.vehicle_id: k for k, v in enumerate(instance.vehicles)}
    stop_index = {name: k for k, name in enumerate(instance.stop_names())}
    return vid_index, stop_index


def plan_codes(instance: Any, plan: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
    """Stop names per vehicle id -> stop codes per vehicle index (no state checks)."""
    vid_index, stop_index = stop_indices(instance)
    return {vid_index[vid]: [stop_index[s] for s in stops] for vid, stops in plan.items()}


def vehicle_codes(vid: str, stops: Sequence[str], stop_index: Mapping[str, int], hint: str) -> list[int]:
    """One vehicle's stop names -> stop codes; :class:`PlanError` for an unknown stop
    (``hint`` ends the message: what the stops look like)."""
    codes = []
    for s in stops:
        if s not in stop_index:
            raise PlanError(f"vehicle {vid}: unknown stop {s!r}; {hint}")
        codes.append(stop_index[s])
    return codes


def unknown_vehicle(vid: str, vid_index: Mapping[str, int]) -> PlanError:
    """The error for a vehicle id the instance does not have."""
    return PlanError(f"unknown vehicle {vid!r}; vehicles: {', '.join(vid_index)}")


def skip_served(codes: list[int], served: Sequence[int]) -> list[int]:
    """A vehicle's list without the stops it has already served, when it repeats them first
    (a resubmitted plan may, or may hold only what comes next)."""
    done = list(served)
    if done and codes[: len(done)] == done:
        return codes[len(done) :]
    return codes
