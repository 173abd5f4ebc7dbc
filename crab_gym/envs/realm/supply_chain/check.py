"""P10's ``check`` role: the independent checker (:func:`.checker.check_plan`) on a plan given
as ``submit_plan`` arguments, facing every disruption of the instance's schedule.

Plan: ``{"orders": [{"component", "supplier", "quantity", "day"}], "production":
[{"facility", "day", "quantity"}]}``, every entry from day 0 (what ``Reference.plan`` stores
and ``OraclePolicy`` submits). It is judged as the env plays it to the end when the same plan
is submitted again at each pause: shortages and breakdowns limit the capacities of the days
they are active.

Cost: purchases + production + holding + lateness + ``shortfall_penalty`` per GPU not
packaged by the horizon, in currency units, the unit of the reference value. The reference
plan is one solve from day 0 knowing every disruption of the schedule (foresight), and
``check(inst, ref.plan).cost == ref.value``; an agent that learns the disruptions as they
strike may not reach it (``ref.extra["adaptive_value"]``: the oracle re-solving at each
disruption). Constraints: the checker's eight (``delivery`` is soft: it is priced in the
cost and does not make the plan infeasible). A plan naming an unknown component, supplier or
facility, missing a field, or with a quantity below 1 or a day before 0 (``submit_plan``
refuses them; the checker alone would price a negative order) is infeasible: its only
constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.supply_chain.checker import check_plan
from crab_gym.envs.realm.supply_chain.model import P10Instance


def check(instance: P10Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`~.checker.P10Check`)."""
    entries = {"orders": list(plan.get("orders", [])), "production": list(plan.get("production", []))}
    try:
        for entry in entries["orders"] + entries["production"]:
            if int(entry["quantity"]) < 1 or int(entry["day"]) < 0:  # the checker would take them
                raise ValueError(f"{entry}: submit_plan takes quantities from 1 and days from 0")
        return check_plan(instance, list(instance.disruptions), entries)
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a missing field
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
