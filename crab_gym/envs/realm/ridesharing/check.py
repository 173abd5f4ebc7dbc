"""P3's and P4's ``check`` role: the independent checker (:func:`.checker.check_plan`) on a
plan given as ``submit_plan`` arguments, facing the instance's own disruptions (P4).

Plan: ``{"assignments": {vehicle_id: ["pickup:<id>", "dropoff:<id>", ...]}}`` (what
``Reference.plan`` stores and ``OraclePolicy`` submits); vehicles not listed park. On a P4
instance the plan is judged as the env plays it when the same plan is submitted again at
each pause: every trip at the network's minutes in force when it departs, under the
instance's scheduled disruptions.

Cost: travel minutes plus ``unserved_penalty`` per request left unserved, the unit of the
reference value. P3: ``check(inst, ref.plan).cost == ref.value``. P4: the reference plan is
the best plan known *facing the instance's disruptions* (found with hindsight), and its
check cost is the reference value too (``ref.extra["adaptive_oracle_value"]`` is the
adaptive oracle's own cost, which the reference may beat).

Constraints, named from the checker's violations: ``window:<request>`` (picked up by the
window's close), ``deadline:<request>`` (dropped off by the latest dropoff),
``service:<request>`` (both stops, once each, one vehicle, pickup first -- or neither),
``capacity:<vehicle>``, and ``plan_shape`` (every vehicle and stop known). A violation the
names do not cover is kept under its own text. Optimality and coordination need the
reference (and the best one-vehicle plan) and are left out of ``metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.ridesharing.checker import check_plan
from crab_gym.envs.realm.ridesharing.model import P3Instance

#: The checker's violation texts -> the constraint each breaks (``{}``: the id it names).
_VIOLATED = (
    (re.compile(r"^unknown vehicle "), "plan_shape"),
    (re.compile(r"^.+: unknown stop "), "plan_shape"),
    (re.compile(r"^(.+) picked up late \("), "window:{}"),
    (re.compile(r"^(.+) dropped off late \("), "deadline:{}"),
    (re.compile(r"^(.+) (?:picked up|dropped off) twice$"), "service:{}"),
    (re.compile(r"^.+ drops (.+) who is not on board$"), "service:{}"),
    (re.compile(r"^(.+) is never dropped off$"), "service:{}"),
    (re.compile(r"^(.+) carries \d+ > capacity \d+$"), "capacity:{}"),
)


@dataclass
class RideCheck(PlanCheck):
    """The verdict, plus the checker's travel minutes, requests served, schedule per vehicle
    and violations in words."""

    travel: int = 0
    served: int = 0
    schedule: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    violations_text: list[str] = field(default_factory=list)


def _constraint(violation: str) -> str:
    """The declared constraint a violation breaks (its own text when none matches)."""
    for pattern, name in _VIOLATED:
        found = pattern.match(violation)
        if found:
            return name.format(*found.groups())
    return violation


def _constraints(instance: P3Instance, violations: list[str]) -> dict[str, bool]:
    names = ["plan_shape"]
    for r in instance.requests:
        names += [f"window:{r.passenger_id}", f"deadline:{r.passenger_id}", f"service:{r.passenger_id}"]
    names += [f"capacity:{v.vehicle_id}" for v in instance.vehicles]
    held = dict.fromkeys(names, True)
    for text in violations:
        held[_constraint(text)] = False
    return held


def check(instance: P3Instance, plan: Mapping[str, Any]) -> RideCheck:
    """The verdict of :func:`check_plan` on ``plan`` facing ``instance``'s disruptions."""
    assignments = {str(vid): [str(s) for s in stops] for vid, stops in dict(plan.get("assignments") or {}).items()}
    report = check_plan(instance, {"assignments": assignments})
    metrics = {k: report["metrics"][k] for k in ("planning_quality", "constraint_satisfaction")}
    return RideCheck(
        feasible=bool(report["feasible"]),
        cost=float(report["cost"]),
        constraints=_constraints(instance, report["violations"]),
        metrics=metrics,
        travel=int(report["travel"]),
        served=int(report["served"]),
        schedule=report["schedule"],
        violations_text=list(report["violations"]),
    )
