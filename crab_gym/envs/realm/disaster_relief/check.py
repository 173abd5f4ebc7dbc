"""P7's ``check`` role: the independent checker (:func:`.checker.check_plan`) on a plan given
as ``submit_plan`` arguments, facing the instance's own disruptions.

Plan: ``{"trips": [{"vehicle", "region", "load": {resource: units}, "depart": minute}]}``
(what ``Reference.plan`` stores and ``OraclePolicy`` submits), taken in order of departure.
It is judged as the env plays it when the same plan is submitted again at each pause: weather
blocks and resource shortages strike at their minutes, before the departures of that minute.

Cost: ``minute_weight`` x severity-weighted shortfall points + transport minutes of the
trips carried out, the unit of the reference value (``check(inst, ref.plan).cost ==
ref.value``; the reference plan is found knowing the instance's disruptions). Constraints:
``trips[k].<capacity|stock|weather|one_at_a_time|horizon>`` for each trip. ``metrics``
holds ``need_met_share`` and ``constraint_satisfaction``; planning quality, optimality and
coordination are measured against the reference and are the env's. A plan naming an unknown
vehicle, region or resource, a negative load or a departure that is not a minute is
infeasible: its only constraint, ``plan_shape``, fails.

An episode's own plan (``info["solution"]``) lists the trips carried out under ``trips`` and
every trip the agent sent or submitted, in order, under ``attempted``: a refused trip breaks a
constraint, so ``attempted``, when there, is what is judged (as the env judges it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.model import P7Instance


def check(instance: P7Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`~.checker.ReliefCheck`)."""
    try:
        trips = plan["attempted"] if "attempted" in plan else plan.get("trips", [])
        return check_plan(instance, {"trips": list(trips)}, instance.disruptions)
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a malformed trip
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"need_met_share": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
