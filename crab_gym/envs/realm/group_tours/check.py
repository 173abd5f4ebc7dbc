"""P2's ``check`` role: the independent checker (:func:`.checker.check_p2`) on a plan given
as ``submit_plan`` arguments.

Plan: ``{"assignments": {guide: [{"group": id, "start": minute}, ...]}}`` (what
``Reference.plan`` stores and ``OraclePolicy`` submits). Cost: waiting minutes beyond the
preferred starts plus ``balance_weight`` x (most - fewest tours per guide), the unit of the
reference value (``check(inst, ref.plan).cost == ref.value``). Optimality needs the
reference and is left out of ``metrics``; ``coordination`` (fair shares, no conflicts) needs
none and stays. A plan naming an unknown guide or group, or a start that is not a minute, is
infeasible: its only constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.group_tours.checker import check_p2
from crab_gym.envs.realm.group_tours.model import P2Instance


def check(instance: P2Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_p2` on ``plan`` (a :class:`~.checker.P2Check`)."""
    try:
        verdict = check_p2(instance, {"assignments": dict(plan["assignments"])}, None)
    except (KeyError, ValueError, TypeError) as err:  # no assignments, an unknown id, a malformed tour
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
