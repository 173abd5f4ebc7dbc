"""P11's ``check`` role: the independent checker (:mod:`.checker`) on a plan given as
``submit_plan`` arguments.

Plan: ``{"sequence": [[job, ...] per machine]}``, each machine's job order, listing each of
its operations once (REALM's shape; what ``Reference.plan`` stores and ``OraclePolicy``
submits). It is read as the env reads it: the plan's semi-active schedule, each operation as
early as its job and machine predecessors allow (:func:`.checker.plan_starts`).

Cost: the schedule's makespan. It is *not* always the reference value: the yardstick of a
shipped instance is the literature's best known makespan (``ref.value``), while the stored
plan is the project's CP-SAT schedule, whose makespan is ``ref.extra["plan_makespan"]``
(``check(inst, ref.plan).cost == ref.extra["plan_makespan"] >= ref.value``, equal where the
plan reaches the best known). Constraints: ``sequence`` (each machine lists each of its
operations once, in orders that do not deadlock) and ``schedule`` (job order kept, no two
operations overlapping on a machine, checked from the start times alone). A plan failing
``sequence`` has no schedule: its cost is infinite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.jobshop.checker import constraint_satisfaction, plan_makespan, plan_starts
from crab_gym.envs.realm.jobshop.model import JSSPInstance


@dataclass
class JobShopCheck(PlanCheck):
    """The verdict, plus the start minute of every operation (``starts[j][k]``: operation k
    of job j; empty when the plan has no schedule)."""

    starts: list[list[int]] = field(default_factory=list)


def check(instance: JSSPInstance, plan: Mapping[str, Any]) -> JobShopCheck:
    """The makespan and constraints of ``plan``'s semi-active schedule."""
    try:
        sequence = [[int(j) for j in row] for row in plan["sequence"]]
        starts, makespan = plan_starts(instance, sequence), plan_makespan(instance, sequence)
    except (KeyError, ValueError, TypeError) as err:  # no sequence, an operation missing or twice, a deadlock
        return JobShopCheck(False, math.inf, {"sequence": False, "schedule": False},
                            {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    share = constraint_satisfaction(instance, starts)
    return JobShopCheck(
        feasible=share == 1.0,
        cost=float(makespan),
        constraints={"sequence": True, "schedule": share == 1.0},
        metrics={"planning_quality": 1.0, "constraint_satisfaction": share, "makespan": makespan},
        starts=starts,
    )
