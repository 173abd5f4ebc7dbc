"""P5's and P8's ``check`` role: the independent checker (:func:`.checker.check_plan`) on a
plan given as ``submit_plan`` arguments, facing the instance's own disruptions (P8).

Plan: ``{"routes": {vehicle_id: [stop, ...]}}``, stops ``pickup:<guest>``,
``errand:<errand>`` and ``dropoff:venue`` (unload at the venue on the way); a vehicle not
listed drives straight to the venue (what ``Reference.plan`` stores and ``OraclePolicy``
submits). An episode's own plan (``info["solution"]``) also says when each vehicle left
(``"departs": {vehicle_id: [minute, ...]}``, the last for the venue at the end; None: as soon
as it could), since an agent may have waited: the checker then drives each leg at that minute. On a P8 instance the plan is judged as the env plays it when the same plan is
submitted again at each pause: each trip at the minutes in force when it departs, under the
instance's scheduled disruptions.

Cost: travel minutes plus ``unserved_penalty`` per guest or errand not delivered to the
venue, the unit of the reference value. P5: ``check(inst, ref.plan).cost == ref.value``.
P8: the reference plan is the best plan known *facing the instance's disruptions* (found
with hindsight: the adaptive oracle, the P5 plan kept or greedy, then a local search that
knows the disruptions), and its check cost is the reference value too
(``ref.extra["adaptive_value"]`` is the adaptive oracle's own cost).

Constraints: the checker's (``landed:``, ``photo:``, ``window:``, ``seats:``, ``back:``,
``once:``). A plan naming a vehicle or stop the instance does not have (the checker itself
would let an unknown vehicle stay home) is infeasible: its only constraint, ``plan_shape``,
fails. Coordination needs the reference's yardsticks and
is the env's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.model import WeddingInstance


def check(instance: WeddingInstance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`~.checker.WeddingCheck`)."""
    try:
        routes = {str(vid): [str(s) for s in stops] for vid, stops in dict(plan["routes"]).items()}
        unknown = sorted(set(routes) - {v.vehicle_id for v in instance.vehicles})
        if unknown:  # the checker would let them stay home
            raise KeyError(f"unknown vehicle(s) {unknown}")
        departs = {str(vid): list(times) for vid, times in dict(plan.get("departs") or {}).items()}
        return check_plan(instance, routes, disruptions=list(getattr(instance, "disruptions", ())), departs=departs)
    except (KeyError, ValueError, TypeError) as err:  # no routes, an unknown vehicle or stop
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
