"""P6/P9 coordination: the share of the gain of working together that a plan realises.

The agents are the cars and the cooks. Without coordination the family does one thing at a
time: **one car** fetches every traveller, one per trip, and the kitchen cooks **one task at a
time**. The **solo afternoon** is the cheapest such afternoon (:func:`solo_record`: CP-SAT on
the instance with one car of one seat and a kitchen of one place, for each choice of that car;
its proven lower bound is ``solo_bound``), solved with the reference and stored in its record.
No plan that takes turns this way costs less than ``solo_bound``.

``coordination = (solo - cost) / (solo - reference)`` clipped to [0, 1]
(:func:`~crab_gym.envs.realm.common.coordination.savings_share`) with the baseline ``solo``
capped at the optimality baseline (:func:`~.scoring.coordination_baseline`): 1 at the
reference's cost, 0 for a plan no better than taking turns, 0 for any plan that optimality
scores 0 (a bad plan, dinner at or after the deadline), 0 for a plan that breaks a rule. When
taking turns loses nothing (``solo <= reference``) coordination does not apply (``None``).

:func:`solo_plan` and :func:`solo_cost` are a heuristic solo afternoon (a few list passes, no
solver): the stand-in when a reference carries no ``solo_bound`` (a reference value given to
the env).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.thanksgiving import oracle
from crab_gym.envs.realm.thanksgiving.checker import check_plan, trip_times
from crab_gym.envs.realm.thanksgiving.model import AIRPORT, ThanksgivingInstance


def solo_pickups(inst: ThanksgivingInstance, car: str, landings: Mapping[str, int]) -> list[dict[str, Any]]:
    """``car`` fetches every traveller alone, one per trip, in order of landing (ties:
    member order); a trip leaves when the car is home, or later so as to reach the airport
    as the flight lands."""
    start = next(c.start for c in inst.cars if c.car_id == car)
    T, free = inst.travel_minutes, inst.start_time
    pickups = []
    for k, member in enumerate(sorted(inst.travellers, key=lambda m: (landings[m], inst.member_index[m]))):
        out = 0 if k == 0 and start == AIRPORT else T
        depart = max(free, landings[member] - out)
        pickups.append({"car": car, "member": member, "depart": depart})
        free = max(depart + out, landings[member]) + T
    return pickups


def serial_cooking(inst: ThanksgivingInstance, home: Mapping[str, int]) -> list[dict[str, Any]]:
    """The kitchen cooking one task at a time, given when each member is ``home``."""
    done: set[str] = set()
    free = inst.start_time
    schedule = []
    while len(done) < len(inst.tasks):
        options = []
        for t in inst.task_ids:
            if t in done or any(p not in done for p in inst.predecessors(t)):
                continue
            cook = min(inst.skilled(t), key=lambda m: (home[m], inst.member_index[m]))
            options.append((max(free, home[cook]), inst.task_index[t], t, cook))
        start, _, task, cook = min(options)
        schedule.append({"task": task, "cook": cook, "start": start})
        free = start + inst.tasks[inst.task_index[task]].duration
        done.add(task)
    return schedule


def solo_plan(inst: ThanksgivingInstance, car: str, landings: Mapping[str, int]) -> dict[str, list[dict[str, Any]]]:
    """The solo afternoon with ``car`` doing every pickup (REALM's plan shape)."""
    pickups = solo_pickups(inst, car, landings)
    home, _ = trip_times(inst, pickups, dict(landings))
    home.update({m: inst.start_time for m in inst.member_ids if m not in inst.travellers})
    return {"pickups": pickups, "cooking_schedule": serial_cooking(inst, home)}


def solo_cost(inst: ThanksgivingInstance, landings: Mapping[str, int]) -> float:
    """The cost of the solo afternoon, with the one car that makes it cheapest."""
    return min(check_plan(inst, solo_plan(inst, car, landings), dict(landings)).cost for car in inst.car_ids)



def solo_instance(inst: ThanksgivingInstance, car: str) -> ThanksgivingInstance:
    """``inst`` with ``car`` alone, one seat, and a kitchen of one place (delays kept)."""
    one = inst.cars[inst.car_index[car]].model_copy(update={"seats": 1})
    data = {**inst.model_dump(), "name": f"{inst.name}_solo_{car}", "cars": [one.model_dump()], "kitchen_capacity": 1}
    return ThanksgivingInstance.model_validate(data)


def solo_record(inst: ThanksgivingInstance, delays: Any = (), limit: float | None = None) -> dict[str, Any]:
    """The cheapest one-at-a-time afternoon facing ``delays`` (known from the start):
    ``solo_value`` (its cost), ``solo_bound`` (a proven lower bound: ``solo_value`` when every
    solve is optimal), ``solo_status``, ``solo_car``; CP-SAT once per car."""
    results = {car: oracle.solve(solo_instance(inst.static(), car), limit, delays=list(delays)) for car in inst.car_ids}
    feasible = {c: r for c, r in results.items() if r.cost is not None}
    if not feasible:  # cannot happen: with a soft deadline every instance has a plan
        return {"solo_value": None, "solo_bound": None, "solo_status": "INFEASIBLE", "solo_car": None}
    car = min(feasible, key=lambda c: feasible[c].cost)
    proved = all(r.status == "OPTIMAL" for r in results.values())
    return {
        "solo_value": feasible[car].cost,
        "solo_bound": min(r.bound for r in feasible.values()),
        "solo_status": "OPTIMAL" if proved else "FEASIBLE",
        "solo_car": car,
    }
