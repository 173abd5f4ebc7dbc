"""P1's ``check`` role: the independent checker (:func:`.checker.check_p1`) on a plan given
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
from typing import Any

from crab_gym.envs.realm.campus_tour.checker import check_p1
from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.common.plan_check import PlanCheck


def check(instance: P1Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_p1` on ``plan`` (a :class:`~.checker.P1Check`)."""
    try:
        verdict = check_p1(instance, {"route": list(plan["route"])}, None)
    except (KeyError, ValueError, TypeError) as err:  # no route, an unknown location
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
