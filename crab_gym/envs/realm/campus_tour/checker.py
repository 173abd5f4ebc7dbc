"""Independent checker for P1 plans: recomputes the REALM metrics from ``{"route": [...]}``.

It shares no code with the env's state machine, so tests can compare the env's
``info["metrics"]`` with a second, separate computation from ``info["solution"]`` alone.

Declared constraints (``constraint_satisfaction`` is the share that hold):

* ``route_shape``: the route starts at ``start``, ends at ``end``, names each target at most
  once and passes through neither ``start`` nor ``end`` on the way;
* ``window:<location>`` for each target: visited, and reached no later than it closes
  (arriving early means waiting until it opens);
* ``return_window``: the route ends at ``end`` no later than ``end`` closes;
* ``max_travel``: the travel minutes add up to at most ``max_travel`` (if the instance has one).

``planning_quality`` is the share of targets visited inside their windows; the plan is
feasible when every declared constraint holds, and only then is ``optimality`` positive:
``min(1, reference / travel)``.

P1's ``check`` role (:func:`check`): the checker above on a plan given
as ``submit_plan`` arguments.

Plan: ``{"route": [location, ...]}``, ``start`` first, ``end`` last, each target at most once
(what ``Reference.plan`` stores and ``OraclePolicy`` submits). Cost: the route's total travel
minutes, the unit of the reference value (``check(inst, ref.plan).cost == ref.value``).
Optimality needs the reference and is left out of ``metrics``
(``optimality_ratio(ref.measure, c.cost, c.feasible)`` gives it). A route naming an unknown
location is infeasible: its only constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.references import optimality_ratio


@dataclass
class P1Check(PlanCheck):
    """``cost`` is the total travel minutes of the route as written; ``schedule`` the arrival
    and start minute at every stop."""

    schedule: list[dict[str, Any]] = field(default_factory=list)


def check_p1(instance: P1Instance, plan: dict, reference: float | None) -> P1Check:
    """Score a plan in REALM's P1 shape. Unknown location names raise ``ValueError``."""
    if not isinstance(plan, dict) or not isinstance(plan.get("route"), list):
        raise ValueError('a P1 plan is {"route": [location, ...]}')
    route = plan["route"]
    pos = {name: i for i, name in enumerate(instance.locations)}
    for k, loc in enumerate(route):
        if loc not in pos:
            raise ValueError(f"plan['route'][{k}]: unknown location {loc!r}")
    targets = instance.targets

    middle = route[1:-1]
    shape_ok = (
        len(route) >= 2
        and route[0] == instance.start
        and route[-1] == instance.end
        and instance.start not in middle
        and instance.end not in middle
        and len(set(middle)) == len(middle)
    )

    # Walk the route as written: leave start when it opens, wait whenever early.
    clock = instance.windows[pos[route[0]]][0] if route else 0
    walked = 0
    first_arrival: dict[str, int] = {}
    schedule = []
    if route:
        schedule.append({"location": route[0], "arrival": clock, "start": clock})
    for a, b in zip(route, route[1:]):
        leg = instance.travel[pos[a]][pos[b]]
        walked += leg
        arrival = clock + leg
        opens = instance.windows[pos[b]][0]
        clock = max(arrival, opens)
        first_arrival.setdefault(b, arrival)
        schedule.append({"location": b, "arrival": arrival, "start": clock})

    constraints: dict[str, bool] = {"route_shape": shape_ok}
    served = 0
    for loc in targets:
        ok = loc in first_arrival and first_arrival[loc] <= instance.windows[pos[loc]][1]
        constraints[f"window:{loc}"] = ok
        served += ok
    ends_ok = len(route) >= 2 and route[-1] == instance.end
    end_arrival = schedule[-1]["arrival"] if ends_ok else None
    constraints["return_window"] = ends_ok and end_arrival <= instance.windows[pos[instance.end]][1]
    if instance.max_travel is not None:
        constraints["max_travel"] = walked <= instance.max_travel

    feasible = all(constraints.values())
    metrics = {
        "planning_quality": served / len(targets) if targets else 1.0,
        "optimality": optimality_ratio(reference, walked, feasible),
        "constraint_satisfaction": sum(constraints.values()) / len(constraints),
    }
    return P1Check(feasible, walked, constraints, metrics, schedule=schedule)


def check(instance: P1Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_p1` on ``plan`` (a :class:`P1Check`)."""
    try:
        verdict = check_p1(instance, {"route": list(plan["route"])}, None)
    except (KeyError, ValueError, TypeError) as err:  # no route, an unknown location
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
