"""P6/P9 coordination: the share of the gain of working together that a plan realises.

The agents are the cars and the cooks. Without coordination the family does one thing at a
time: the **solo afternoon** (:func:`solo_plan`) sends one car for every traveller, one per
trip in order of landing, each trip leaving as late as lets it meet its flight once the car is
home; and the kitchen cooks one task at a time (of the tasks whose predecessors are done, the
one that can start first, by the skilled cook home first; ties in instance order). Its cost
(:func:`solo_cost`) is the cheaper over the choice of that one car, scored by the independent
checker.

``coordination = (solo - cost) / (solo - reference)``, clipped to [0, 1]
(:func:`~crab_gym.envs.realm.common.coordination.savings_share`): 1 at the reference's cost, 0 for a plan no better than the solo
afternoon, 0 for an infeasible plan. When nothing is to be gained (``solo <= reference``)
a feasible plan scores 1 if it costs no more than the reference, else 0; without a reference
value, 1 if it costs no more than the solo afternoon, else 0.

Cheap (a few list passes) and deterministic: no solver runs at the end of an episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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

