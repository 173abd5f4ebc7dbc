"""Independent checker for P2 plans: recomputes the REALM metrics from
``{"assignments": {guide: [{"group": ..., "start": minute}, ...]}}``.

It shares no code with the env's state, so tests can compare the env's ``info["metrics"]``
with a second, separate computation from ``info["solution"]`` alone.

Declared constraints (``constraint_satisfaction`` is the share that hold):

* ``group:<id>`` for each group: toured exactly once, starting no earlier than it arrives,
  by a guide whose cap (and the campus-wide cap) it fits, inside that guide's availability;
* ``no_overlap:<id>`` for each guide: its tours do not overlap in time.

``planning_quality`` is the share of groups whose ``group:`` constraint holds.
``coordination`` treats each guide as an agent: the share of groups toured cleanly (valid,
no double claim, no overlap) within fair, even shares of the tours, scaled down by the share
of listings in conflict (:mod:`crab_gym.envs.realm.group_tours.coordination`).
Cost = total waiting beyond preferred starts + ``balance_weight`` x (max - min tours per
guide); ``optimality = min(1, reference / cost)`` for a feasible plan, else 0.

P2's ``check`` role (:func:`check`): the checker above on a plan given
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
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.group_tours.coordination import guide_coordination, reported_coordination
from crab_gym.envs.realm.group_tours.model import P2Instance


@dataclass
class P2Check(PlanCheck):
    """``cost`` is ``waiting + balance_weight * imbalance`` (minutes)."""

    waiting: int = 0
    imbalance: int = 0


def check_p2(instance: P2Instance, plan: dict, reference: float | None) -> P2Check:
    """Score a plan in REALM's P2 shape. Unknown ids or malformed entries raise ``ValueError``."""
    if not isinstance(plan, dict) or not isinstance(plan.get("assignments"), dict):
        raise ValueError('a P2 plan is {"assignments": {guide: [{"group": ..., "start": ...}]}}')
    groups = {g.group_id: g for g in instance.groups}
    guides = {g.guide_id: g for g in instance.guides}
    D = instance.tour_duration

    tours: list[tuple[str, str, int]] = []  # (guide, group, start)
    for gid, items in plan["assignments"].items():
        if gid not in guides:
            raise ValueError(f"plan['assignments']: unknown guide {gid!r}")
        if not isinstance(items, list):
            raise ValueError(f"plan['assignments'][{gid!r}]: expected a list of tours")
        for k, item in enumerate(items):
            if not isinstance(item, dict) or item.get("group") not in groups:
                raise ValueError(f"plan['assignments'][{gid!r}][{k}]: expected {{'group': known id, 'start': minute}}")
            start = item.get("start")
            if isinstance(start, bool) or not isinstance(start, (int, float)):
                raise ValueError(f"plan['assignments'][{gid!r}][{k}]['start']: expected minutes, got {start!r}")
            tours.append((gid, item["group"], start))

    constraints: dict[str, bool] = {}
    valid_group: dict[str, bool] = {}
    for grp in instance.groups:
        mine = [(gid, s) for gid, g, s in tours if g == grp.group_id]
        ok = len(mine) == 1
        if ok:
            gid, s = mine[0]
            gd = guides[gid]
            ok = (
                s >= grp.arrival
                and grp.size <= gd.max_group_size
                and grp.size <= instance.max_group_size
                and s >= gd.available_from
                and s + D <= gd.available_to
            )
        constraints[f"group:{grp.group_id}"] = ok
        valid_group[grp.group_id] = ok
    for gid in guides:
        starts = sorted(s for g2, _, s in tours if g2 == gid)
        ok = all(b >= a + D for a, b in zip(starts, starts[1:]))
        constraints[f"no_overlap:{gid}"] = ok

    pref = {g.group_id: g.preferred for g in instance.groups}
    waiting = int(sum(max(0, s - pref[g]) for _, g, s in tours))
    loads = [sum(1 for g2, _, _ in tours if g2 == gid) for gid in guides]
    imbalance = max(loads) - min(loads)
    cost = waiting + instance.balance_weight * imbalance
    feasible = all(constraints.values())

    valid = {g for g, ok in valid_group.items() if ok}
    metrics: dict[str, Any] = {
        "planning_quality": sum(valid_group.values()) / len(instance.groups),
        "optimality": optimality_ratio(reference, cost, feasible),
        "constraint_satisfaction": sum(constraints.values()) / len(constraints),
        "coordination": reported_coordination(guide_coordination(instance, plan, valid), feasible),
    }
    return P2Check(feasible, cost, constraints, metrics, waiting=waiting, imbalance=imbalance)


def check(instance: P2Instance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_p2` on ``plan`` (a :class:`P2Check`)."""
    try:
        verdict = check_p2(instance, {"assignments": dict(plan["assignments"])}, None)
    except (KeyError, ValueError, TypeError) as err:  # no assignments, an unknown id, a malformed tour
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
