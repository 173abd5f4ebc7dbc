"""P6's and P9's ``check`` role: the independent checker (:func:`.checker.check_plan`) on a
plan given as ``submit_plan`` arguments, against the travellers' real landings (P9: every
flight delay of the instance in force).

Plan: ``{"pickups": [{"car", "member", "depart"}], "cooking_schedule": [{"task", "cook",
"start"}]}`` (what ``Reference.plan`` stores and ``OraclePolicy`` submits); pickups with the
same car and ``depart`` are one shared trip. On a P9 instance the plan is judged as the env
plays it when the same plan is submitted again at each delay announcement: trips wait at the
airport for the delayed landings.

Cost, in minutes: from ``start_time`` until dinner is served (the last task done, every
traveller home), plus 10 per minute after the deadline, plus 0.01 x driving minutes
(:func:`.model.dinner_cost`); infinite while a task is not scheduled. It is the unit of the
reference value, and ``check(inst, ref.plan).cost == ref.value`` on both. On P9 the reference
plan is the schedule solved knowing every delay in advance (hindsight; the adaptive oracle's
or greedy's afternoon where cheaper, ``ref.extra["policy"]`` says which), so it may cost
less than any agent that learns the delays as announced (``ref.extra["adaptive_value"]``). Optimality (normalised from dinner at
the deadline) and coordination need the reference and are left out of ``metrics``. A plan
naming an unknown task, member or car, or missing a field, is infeasible: its only
constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance


def check(instance: ThanksgivingInstance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`~.checker.ThanksgivingCheck`)."""
    try:
        verdict = check_plan(instance, dict(plan), landings_of(instance, instance.delays))
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a missing field
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
