"""Independent checks of job-shop schedules and plans, written apart from the env's engine.

:mod:`crab_gym.envs.realm.jobshop.sim` places operations one by one (with left-shift
insertion); these functions judge the result from the data alone: whether a schedule given
by start times keeps every constraint (:func:`constraint_satisfaction`, the env's final
metric) and what a whole plan costs (:func:`plan_makespan`, used to build and test the
stored reference plans).

P11's ``check`` role (:func:`check`): the checker above on a plan given as
``submit_plan`` arguments.

Plan: ``{"sequence": [[job, ...] per machine]}``, each machine's job order, listing each of
its operations once (REALM's shape; what ``Reference.plan`` stores and ``OraclePolicy``
submits). It is read as the env reads it: the plan's semi-active schedule, each operation as
early as its job and machine predecessors allow (:func:`plan_starts`).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.jobshop.model import JSSPInstance


def constraint_satisfaction(instance: JSSPInstance, start: list[list[int]]) -> float:
    """Share of the schedule's constraints that hold, checked from the start times alone:
    each job's operation order, and no two operations overlapping on a machine."""
    ok = total = 0
    per_machine: list[list[tuple[int, int]]] = [[] for _ in range(instance.n_machines)]
    for j, (drow, mrow) in enumerate(zip(instance.durations, instance.machines)):
        for k, (p, mc) in enumerate(zip(drow, mrow)):
            t = start[j][k]
            if t < 0:
                continue
            per_machine[mc].append((t, t + p))
            if k:
                total += 1
                ok += start[j][k - 1] >= 0 and start[j][k - 1] + drow[k - 1] <= t
    for ivs in per_machine:
        ivs.sort()
        for (_a0, a1), (b0, _) in zip(ivs, ivs[1:]):
            total += 1
            ok += a1 <= b0
    return ok / total if total else 1.0


def plan_makespan(instance: JSSPInstance, sequence: Sequence[Sequence[int]]) -> int:
    """Makespan of the plan's semi-active schedule; ``ValueError`` if it deadlocks or does not
    list every operation (each job once per operation it has on the machine)."""
    starts = plan_starts(instance, sequence)
    return max(
        (starts[j][-1] + instance.durations[j][-1] for j in range(instance.n_jobs) if instance.n_ops),
        default=0,
    )


def plan_starts(instance: JSSPInstance, sequence: Sequence[Sequence[int]]) -> list[list[int]]:
    """Start times of the plan's semi-active schedule (``starts[j][k]``: operation k of job j),
    each operation as early as its job and machine predecessors allow; ``ValueError`` as
    :func:`plan_makespan`. Used to seed the solver with a stored plan."""
    n, n_ops, m = instance.n_jobs, instance.n_ops, instance.n_machines
    if len(sequence) != m:
        raise ValueError(f"{len(sequence)} machine rows for {m} machines")
    for mc in range(m):
        want = sorted(j for j in range(n) for k in range(n_ops) if instance.machines[j][k] == mc)
        if sorted(sequence[mc]) != want:
            raise ValueError(f"machine {mc} does not list each of its operations once")
    ptr = [0] * m
    nxt = [0] * n
    job_end = [0] * n
    mach_end = [0] * m
    starts = [[0] * n_ops for _ in range(n)]
    placed, total = 0, n * n_ops
    while placed < total:
        before = placed
        for mc in range(m):
            row = sequence[mc]
            while ptr[mc] < len(row):
                j = row[ptr[mc]]
                k = nxt[j]
                if k >= n_ops or instance.machines[j][k] != mc:
                    break
                starts[j][k] = max(job_end[j], mach_end[mc])
                job_end[j] = mach_end[mc] = starts[j][k] + instance.durations[j][k]
                nxt[j] += 1
                ptr[mc] += 1
                placed += 1
        if placed == before:
            raise ValueError("the plan deadlocks (machine orders contradict job orders)")
    return starts


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
