"""The seeded P6/P9 generator: Thanksgiving dinners of three size classes, on time by
construction.

Everything is drawn relative to the start of the plan; the greedy policy
(:mod:`.heuristics`) then plays the afternoon, learning each P9 delay when it is announced,
and the start is set so that it finishes at least :data:`SLACK` minutes before 18:00. So every
drawn instance has a plan served by the deadline that needs no foresight (the greedy one). Ids are stable for given
counts (``mom``, ``dad``, ...; the first dishes of :data:`DISHES`; ``car1``, ...), so an env
that draws a fresh instance per episode keeps its spaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from crab_gym.envs.realm.thanksgiving.heuristics import greedy_play
from crab_gym.envs.realm.thanksgiving.model import (
    Car,
    Flight,
    FlightDelay,
    Member,
    Task,
    ThanksgivingInstance,
)
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

Size = Literal["small", "medium", "large"]

#: (members low, high, tasks low, high, cars low, high) per size class.
SIZE_COUNTS: dict[str, tuple[int, int, int, int, int, int]] = {
    "small": (3, 4, 4, 6, 1, 2),
    "medium": (5, 6, 8, 10, 2, 2),
    "large": (8, 10, 12, 14, 2, 3),
}
MEMBER_NAMES = ("mom", "dad", "sister", "brother", "grandma", "grandpa", "aunt", "uncle", "cousin", "niece",
                "nephew", "friend")
#: (dish, shortest, longest minutes, uses the oven), in the order the generator takes them.
DISHES: tuple[tuple[str, int, int, bool], ...] = (
    ("turkey", 120, 180, True), ("gravy", 15, 25, False), ("potatoes", 25, 40, False),
    ("mashed_potatoes", 15, 25, False), ("stuffing", 30, 50, True), ("vegetables", 20, 35, False),
    ("dessert", 40, 70, False), ("cranberry_sauce", 15, 25, False), ("rolls", 20, 30, True),
    ("pie", 45, 70, True), ("salad", 10, 20, False), ("green_beans", 20, 35, False),
    ("soup", 30, 45, False), ("table_setting", 15, 25, False),
)
#: Precedences that hold whenever both dishes are drawn.
FIXED_DEPENDENCIES = (("turkey", "gravy"), ("potatoes", "mashed_potatoes"))
DINNER = 18 * 60
#: Chance that a dish has a second skilled cook.
SECOND_COOK = 0.25
#: Flights land 5 x (a number drawn in FLIGHT_WINDOW) minutes after the start: 30 min to 3 h.
FLIGHT_WINDOW = (6, 37)
#: The kitchen holds 2 .. MAX_CAPACITY tasks at once.
MAX_CAPACITY = 3
#: Minutes the greedy plan finishes before the deadline, at least.
SLACK = 45


def generate(
    size: Size = "small",
    seed: int = 0,
    name: str | None = None,
    n_members: int | None = None,
    n_tasks: int | None = None,
    n_cars: int | None = None,
    delays: bool = False,
) -> ThanksgivingInstance:
    """Draw a Thanksgiving instance that can be served by the deadline; the same arguments
    give the same instance.

    ``n_members`` (at least 2), ``n_tasks`` (1 .. 14) and ``n_cars`` override the counts
    drawn for the size class. With ``delays`` (P9), one flight (two or more in large
    instances, when there are) is delayed by 30-120 minutes, announced 30-90 minutes before
    its scheduled landing (never before the start).
    """
    if size not in SIZE_COUNTS:
        raise ValueError(f"size must be one of {sorted(SIZE_COUNTS)}, got {size!r}")
    rng = np.random.default_rng([6, seed, list(SIZE_COUNTS).index(size), int(delays)])
    m_lo, m_hi, t_lo, t_hi, c_lo, c_hi = SIZE_COUNTS[size]
    drawn = (int(rng.integers(m_lo, m_hi + 1)), int(rng.integers(t_lo, t_hi + 1)), int(rng.integers(c_lo, c_hi + 1)))
    n_members = drawn[0] if n_members is None else int(n_members)
    n_tasks = drawn[1] if n_tasks is None else int(n_tasks)
    n_cars = drawn[2] if n_cars is None else int(n_cars)
    if not 2 <= n_members <= len(MEMBER_NAMES) or not 1 <= n_tasks <= len(DISHES) or n_cars < 1:
        raise ValueError(
            f"need 2..{len(MEMBER_NAMES)} members, 1..{len(DISHES)} tasks and 1+ cars; "
            f"got {n_members}, {n_tasks}, {n_cars}"
        )
    members = list(MEMBER_NAMES[:n_members])
    tasks, deps = _tasks(rng, n_tasks)
    task_ids = [t.task_id for t in tasks]
    skills = _skills(rng, members, task_ids)
    flights, flight_of = _flights(rng, members)
    travel = 5 * int(rng.integers(6, 13))
    cars = [
        Car(car_id=f"car{c + 1}", seats=int(rng.integers(2, 5)), start="home" if c == 0 or rng.random() < 0.5 else "airport")
        for c in range(n_cars)
    ]
    capacity = int(rng.integers(2, min(MAX_CAPACITY, n_members) + 1))
    delay_list = _delays(rng, flights, size) if delays else []
    draft = _Draft(
        name=name or f"p{9 if delays else 6}_{size}_{seed:02d}",
        description=f"seeded Thanksgiving dinner ({size}, seed {seed})",
        size=size,
        travel=travel,
        capacity=capacity,
        cars=cars,
        members=[Member(member_id=m, skills=sorted(skills[m], key=task_ids.index), flight=flight_of.get(m))
                 for m in members],
        flights=flights,
        tasks=tasks,
        deps=deps,
        delay_list=delay_list,
    )
    return draft.at(_start_minute(draft, seed), DINNER)


def _tasks(rng: np.random.Generator, n_tasks: int) -> tuple[list[Task], list[tuple[str, str]]]:
    """The first ``n_tasks`` dishes with drawn durations, and their precedences (the fixed
    ones, and a few more forward in dish order, so acyclic)."""
    tasks = [
        Task(task_id=d, duration=int(rng.integers(lo, hi + 1)), oven=oven) for d, lo, hi, oven in DISHES[:n_tasks]
    ]
    task_ids = [t.task_id for t in tasks]
    deps = [(a, b) for a, b in FIXED_DEPENDENCIES if a in task_ids and b in task_ids]
    for _ in range(int(rng.integers(0, n_tasks // 4 + 1))):  # a few more, forward in dish order (acyclic)
        i, j = sorted(int(x) for x in rng.choice(n_tasks, size=2, replace=False)) if n_tasks > 1 else (0, 0)
        if i != j and (task_ids[i], task_ids[j]) not in deps:
            deps.append((task_ids[i], task_ids[j]))
    return tasks, deps


def _skills(rng: np.random.Generator, members: list[str], task_ids: list[str]) -> dict[str, set[str]]:
    """Every task has one or two cooks; everyone cooks something when possible."""
    n_members = len(members)
    skills: dict[str, set[str]] = {m: set() for m in members}
    for k, t in enumerate(task_ids):
        skills[members[k % n_members]].add(t)
        if rng.random() < SECOND_COOK:
            skills[members[int(rng.integers(n_members))]].add(t)
    return skills


def _flights(rng: np.random.Generator, members: list[str]) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """(flight id, minutes after the start) per flight and each traveller's flight: all but
    mom may fly, at least one does, some share a flight."""
    n_members = len(members)
    n_travel = max(1, min(n_members - 1, int(round(n_members * rng.uniform(0.35, 0.6)))))
    travellers = sorted(int(x) for x in rng.choice(np.arange(1, n_members), size=n_travel, replace=False))
    flights: list[tuple[str, int]] = []
    flight_of: dict[str, str] = {}
    for idx in travellers:
        if flights and rng.random() < 0.3:
            flight_of[members[idx]] = flights[int(rng.integers(len(flights)))][0]
        else:
            fid = f"flight{len(flights) + 1}"
            flights.append((fid, 5 * int(rng.integers(*FLIGHT_WINDOW))))  # minutes after the start, 5-min steps
            flight_of[members[idx]] = fid
    return flights, flight_of


def _delays(rng: np.random.Generator, flights: list[tuple[str, int]], size: str) -> list[tuple[str, int, int]]:
    """P9's (flight, delay, announced minute after the start): one flight, two in large instances."""
    delay_list: list[tuple[str, int, int]] = []
    order = [fid for fid, _ in flights]
    rng.shuffle(order)
    for fid in order[: 1 if size != "large" else max(1, min(2, len(order)))]:
        arrival = dict(flights)[fid]
        delay_list.append((fid, 5 * int(rng.integers(6, 25)), max(15, arrival - 5 * int(rng.integers(6, 19)))))
    return delay_list


@dataclass
class _Draft:
    """A drawn instance with its times relative to a start not fixed yet."""

    name: str
    description: str
    size: str
    travel: int
    capacity: int
    cars: list[Car]
    members: list[Member]
    flights: list[tuple[str, int]]
    tasks: list[Task]
    deps: list[tuple[str, str]]
    delay_list: list[tuple[str, int, int]]

    def at(self, start: int, deadline: int) -> ThanksgivingInstance:
        """The instance starting at minute ``start``."""
        return ThanksgivingInstance(
            name=self.name,
            description=self.description,
            size=self.size,
            start_time=start,
            deadline=deadline,
            travel_minutes=self.travel,
            kitchen_capacity=self.capacity,
            cars=self.cars,
            members=self.members,
            flights=[Flight(flight_id=f, arrival=start + a) for f, a in self.flights],
            tasks=self.tasks,
            dependencies=self.deps,
            delays=[FlightDelay(flight=f, delay=d, announced=start + a) for f, d, a in self.delay_list],
        )


def _start_minute(draft: _Draft, seed: int) -> int:
    """The start at which the greedy policy (learning each delay when it is announced) ends
    its afternoon at least SLACK minutes before dinner, on a quarter hour."""
    relative = draft.at(0, 10**6)
    played = greedy_play(Kitchen.start_of(relative, relative.delays))
    if not played.complete:  # cannot happen: every task has a cook and every traveller a car
        raise RuntimeError(f"the greedy plan of seed {seed} does not finish")
    start = 15 * ((DINNER - SLACK - played.now) // 15)
    if start < 0:
        raise ValueError(f"seed {seed}: the afternoon takes {played.now} minutes, more than a day before dinner")
    return start


def generate_p6(
    size: Size = "small", seed: int = 0, name: str | None = None, n_members: int | None = None,
    n_tasks: int | None = None, n_cars: int | None = None,
) -> ThanksgivingInstance:
    """A P6 instance (no delays); see :func:`generate`."""
    return generate(size, seed, name, n_members, n_tasks, n_cars, delays=False)


def generate_p9(
    size: Size = "small", seed: int = 0, name: str | None = None, n_members: int | None = None,
    n_tasks: int | None = None, n_cars: int | None = None,
) -> ThanksgivingInstance:
    """A P9 instance (flight delays announced during the afternoon); see :func:`generate`."""
    return generate(size, seed, name, n_members, n_tasks, n_cars, delays=True)
