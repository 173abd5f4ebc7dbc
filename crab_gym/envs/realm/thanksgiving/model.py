"""REALM-Bench P6/P9, Thanksgiving dinner: the instance types and their validation.

* **Decision**: which car fetches which family member from the airport and when it leaves
  (``pickups``), and for every cooking task its cook and its start (``cooking_schedule``).
* **Hard constraints**: a cook works only once home; one task at a time per cook; a cook has
  the task's skill; precedences (``end(a) <= start(b)``); at most ``kitchen_capacity`` tasks
  at once; one oven task at a time; a car does one trip at a time and carries at most
  ``seats`` passengers; a pickup leaves the airport no earlier than the flight lands.
* **The deadline is soft**: dinner served (every task done, every traveller home) after
  ``deadline`` is allowed but costly (:data:`LATE_WEIGHT`), so that plans are still ranked on a dinner no plan
  can have ready in time (every upstream P9 file under the reader's defaults).
* **Car trips**: a car leaving home at ``depart`` reaches the airport at ``depart +
  travel_minutes`` (a car that starts at the airport is there already), waits until its
  passengers' flights have landed, and is home ``travel_minutes`` after leaving the airport.
  Every trip after the first starts at home. Drivers are not cooks (upstream names none).
* **Objective**: minimise :func:`dinner_cost`: with ``ready`` when the last task ends and
  ``served = max(ready, last traveller home)``, an afternoon served by the deadline costs
  ``(ready - start_time) + DRIVE_WEIGHT x driving_minutes`` (dinner as early as possible, then
  as little driving as possible: each driving minute weighs 0.01 minute of dinner time); a
  late one costs ``(served - start_time) + LATE_WEIGHT x late + DRIVE_WEIGHT x
  driving_minutes`` with ``late = served - deadline``: every minute until dinner is served,
  and each minute late 10 more. So a late afternoon costs more than ``deadline - start_time +
  11``, more than any afternoon served by the deadline (unless that one drives 1100 minutes
  more). The CP-SAT oracle minimises the integer ``100 x cost``.

Units: every time is an integer minute from midnight; durations are minutes. P9 adds flight
delays (:class:`FlightDelay`): a flight lands ``delay`` minutes late, which the family learns
at minute ``announced``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem, RealmRepairWarning
from crab_gym.envs.realm.common.limits import NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique

#: Where the shipped instances live: ``instances/p6`` and ``instances/p9``, each with its
#: ``references.json``.
INSTANCE_DIRS: dict[str, Path] = {p: Path(__file__).with_name("instances") / p for p in ("p6", "p9")}

#: Cost minutes per minute of driving (dinner time weighs 1 per minute).
DRIVE_WEIGHT = 0.01
#: Cost minutes per minute that dinner is late (on top of the minute of dinner time itself):
#: a late minute costs 11 minutes in all. An integer, so that ``SCALE x cost`` stays whole.
LATE_WEIGHT = 10
#: The integer scale of the oracle's objective: ``SCALE x cost`` is a whole number.
SCALE = 100

HOME, AIRPORT = "home", "airport"


class Car(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    car_id: str = Field(min_length=1)
    seats: PosInt = Field(description="passengers a trip carries (the driver is not counted)")
    start: Literal["home", "airport"] = Field(default=HOME, description="where the car is at start_time")


class Member(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    member_id: str = Field(min_length=1)
    skills: list[str] = Field(default_factory=list, description="the tasks this member can cook")
    flight: str | None = Field(default=None, description="the flight they arrive on; None: home from the start")


class Flight(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    flight_id: str = Field(min_length=1)
    arrival: NonNegInt = Field(description="scheduled landing, minute from midnight")


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    task_id: str = Field(min_length=1)
    duration: PosInt = Field(description="minutes")
    oven: bool = Field(default=False, description="uses the oven (one oven task at a time)")


class FlightDelay(BaseModel):
    """P9: ``flight`` lands ``delay`` minutes after its scheduled arrival; the family learns
    it at minute ``announced``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["flight_delay"] = "flight_delay"
    flight: str
    delay: NonNegInt
    announced: NonNegInt

    def describe(self) -> str:
        return f"{self.flight} delayed by {self.delay} min"


class ThanksgivingInstance(BaseModel):
    """One Thanksgiving dinner (P6); with ``delays`` also a P9 instance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    size: str | None = None
    start_time: NonNegInt = Field(default=12 * 60, description="first minute of the plan")
    deadline: NonNegInt = Field(default=18 * 60, description="dinner deadline, minute from midnight (soft: each "
                                "minute late costs LATE_WEIGHT more)")
    travel_minutes: PosInt = Field(description="home <-> airport, one way")
    kitchen_capacity: PosInt = Field(description="tasks that may run at once (at most the number of tasks)")
    cars: list[Car] = Field(min_length=1)
    members: list[Member] = Field(min_length=1)
    flights: list[Flight] = Field(min_length=1)
    tasks: list[Task] = Field(min_length=1)
    dependencies: list[tuple[str, str]] = Field(default_factory=list, description="(before, after) pairs")
    delays: list[FlightDelay] = Field(default_factory=list, description="P9 only; a flight's delays add up")

    @model_validator(mode="before")
    @classmethod
    def _kitchen_room(cls, data: Any) -> Any:
        """A kitchen with more places than there are tasks is read as one place per task: the
        same kitchen (no more tasks can run at once), and the observation's ``kitchen_free``
        stays within its bounds (0 .. the number of tasks)."""
        if not isinstance(data, dict):
            return data
        room, tasks = data.get("kitchen_capacity"), data.get("tasks")
        if type(room) is int and isinstance(tasks, list) and tasks and room > len(tasks):
            warnings.warn(f"kitchen_capacity {room} is above the number of tasks ({len(tasks)}); read as "
                          f"{len(tasks)}, since no more tasks can run at once", RealmRepairWarning, stacklevel=2)
            data = {**data, "kitchen_capacity": len(tasks)}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ThanksgivingInstance:
        check_unique(self.car_ids, "cars[{}].car_id", "car id", "ids must be unique")
        check_unique(self.member_ids, "members[{}].member_id", "member id", "ids must be unique")
        check_unique(self.task_ids, "tasks[{}].task_id", "task id", "ids must be unique")
        check_unique([f.flight_id for f in self.flights], "flights[{}].flight_id", "flight id", "ids must be unique")
        tasks, flights = set(self.task_ids), {f.flight_id for f in self.flights}
        if self.deadline <= self.start_time:
            raise FieldProblem("deadline", f"minute {self.deadline} is not after start_time {self.start_time}")
        for i, m in enumerate(self.members):
            for j, skill in enumerate(m.skills):
                if skill not in tasks:
                    raise FieldProblem(f"members[{i}].skills[{j}]", f"{skill!r} is not a task")
            if m.flight is not None and m.flight not in flights:
                raise FieldProblem(f"members[{i}].flight", f"{m.flight!r} is not a flight")
        if not self.travellers:
            raise FieldProblem("members", "no member arrives by flight: there is nothing for the cars to do")
        for i, t in enumerate(self.task_ids):
            if not any(t in m.skills for m in self.members):
                raise FieldProblem(f"tasks[{i}]", f"no member has the skill to cook {t!r}")
        for i, (a, b) in enumerate(self.dependencies):
            for k, x in enumerate((a, b)):
                if x not in tasks:
                    raise FieldProblem(f"dependencies[{i}][{k}]", f"{x!r} is not a task")
        if _has_cycle(self.task_ids, self.dependencies):
            raise FieldProblem("dependencies", "the precedences form a cycle")
        for i, d in enumerate(self.delays):
            if d.flight not in flights:
                raise FieldProblem(f"delays[{i}].flight", f"{d.flight!r} is not a flight")
        return self

    # ------------------------------------------------------------------ ids and lookups
    @property
    def car_ids(self) -> list[str]:
        return [c.car_id for c in self.cars]

    @property
    def member_ids(self) -> list[str]:
        return [m.member_id for m in self.members]

    @property
    def task_ids(self) -> list[str]:
        return [t.task_id for t in self.tasks]

    @cached_property
    def travellers(self) -> list[str]:
        """The members who arrive by flight, in member order (the cars fetch them)."""
        return [m.member_id for m in self.members if m.flight is not None]

    @cached_property
    def task_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.task_ids)}

    @cached_property
    def member_index(self) -> dict[str, int]:
        return {m: i for i, m in enumerate(self.member_ids)}

    @cached_property
    def car_index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.car_ids)}

    @cached_property
    def flight_arrival(self) -> dict[str, int]:
        """Scheduled landing of each flight."""
        return {f.flight_id: f.arrival for f in self.flights}

    def landing(self, member: str, delays: list[FlightDelay] | tuple[FlightDelay, ...] = ()) -> int:
        """When ``member``'s flight lands, given the ``delays`` in force."""
        flight = self.members[self.member_index[member]].flight
        if flight is None:
            raise ValueError(f"{member} is home from the start")
        extra = sum(d.delay for d in delays if d.flight == flight)
        return self.flight_arrival[flight] + extra

    def landings(self, delays: Sequence[FlightDelay] = ()) -> dict[str, int]:
        """:meth:`landing` of every traveller, given the ``delays`` in force (each flight's
        delays summed once)."""
        extra: dict[str, int] = {}
        for d in delays:
            extra[d.flight] = extra.get(d.flight, 0) + d.delay
        return {m.member_id: self.flight_arrival[m.flight] + extra.get(m.flight, 0)
                for m in self.members if m.flight is not None}

    def skilled(self, task: str) -> list[str]:
        """The members who can cook ``task``, in member order."""
        return [m.member_id for m in self.members if task in m.skills]

    def predecessors(self, task: str) -> list[str]:
        return [a for a, b in self.dependencies if b == task]

    @cached_property
    def cooks_of(self) -> dict[str, list[str]]:
        """:meth:`skilled` of every task, worked out once (the mask reads it on every step)."""
        return {t: self.skilled(t) for t in self.task_ids}

    @cached_property
    def task_rows(self) -> list[tuple[str, list[str], bool, list[str]]]:
        """Per task in order: its id, :meth:`skilled` cooks, whether it needs the oven, and
        its :meth:`predecessors`, worked out once (the mask reads them on every step)."""
        return [(t.task_id, self.cooks_of[t.task_id], t.oven, self.predecessors(t.task_id)) for t in self.tasks]

    def static(self) -> ThanksgivingInstance:
        """This dinner without its flight delays (the P6 problem of a P9 instance)."""
        if not self.delays:
            return self
        return ThanksgivingInstance.model_validate({**self.model_dump(), "delays": []})

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name)."""
        core = self.model_dump(exclude={"name", "description", "size"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)


def dinner_cost(inst: ThanksgivingInstance, ready: int, served: int, driving: int) -> float:
    """The cost of an afternoon whose last task ends at ``ready``, with dinner served (the
    last task done, every traveller home) at ``served`` (>= ``ready``), after ``driving``
    minutes of driving: ``(ready - start_time)`` when served by the deadline, else ``(served -
    start_time) + LATE_WEIGHT x (served - deadline)``; plus ``DRIVE_WEIGHT x driving``."""
    late = max(0, served - inst.deadline)
    dinner = served if late else ready
    return (dinner - inst.start_time) + LATE_WEIGHT * late + DRIVE_WEIGHT * driving


def _has_cycle(nodes: list[str], edges: list[tuple[str, str]]) -> bool:
    """Whether the precedence pairs contain a cycle (Kahn's algorithm)."""
    indeg = {n: 0 for n in nodes}
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        if a in succ and b in indeg:
            succ[a].append(b)
            indeg[b] += 1
    ready = [n for n, d in indeg.items() if d == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
    return seen < len(nodes)
