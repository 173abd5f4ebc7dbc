"""The independent checker of J2/J3/J4 schedules and plans, written apart from :mod:`.sim`.

* :func:`violations` checks a schedule given by start times: each job's operations in order,
  no two operations overlapping on a machine, none overlapping a machine's down-time or its
  job's hold (every window of the disruptions faced).
* :func:`plan_starts` reads a plan (per machine, the job order) as the env carries it out
  when the plan is resubmitted at every strike: each operation starts as early as its job
  and machine predecessors allow, pushed past every window it would overlap (the windows
  of a disruption that strikes while an operation runs restart that operation after the
  window, which ends where this pushing puts it). It walks the plan's precedence graph in
  topological order (Kahn), where the env places operations machine by machine. A plan
  may say when each operation may start at the earliest (``not_before``, as the env's
  ``info["solution"]`` does: the clock never runs back, so an operation placed at a pause
  or pushed by a strike cannot start before it).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance


def _blocked(inst: ShopInstance) -> tuple[dict[int, list[tuple[int, int]]], dict[int, list[tuple[int, int]]]]:
    """Every window of the instance's disruptions, per machine and per job, sorted."""
    mw: dict[int, list[tuple[int, int]]] = {}
    jw: dict[int, list[tuple[int, int]]] = {}
    for w in inst.windows():
        for m, a, b in w.machines:
            mw.setdefault(m, []).append((a, b))
        for j, a, b in w.jobs:
            jw.setdefault(j, []).append((a, b))
    return ({k: sorted(v) for k, v in mw.items()}, {k: sorted(v) for k, v in jw.items()})


def _push(t: int, p: int, spans: Sequence[tuple[int, int]]) -> int:
    """The earliest start >= t whose ``p`` units overlap none of ``spans``."""
    if p <= 0:
        return t
    moved = True
    while moved:
        moved = False
        for a, b in spans:
            if t < b and t + p > a:
                t, moved = b, True
    return t


def plan_starts(inst: ShopInstance, sequence: Sequence[Sequence[int]],
                not_before: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Start of every operation of the plan (``starts[j][k]``), none before its
    ``not_before[j][k]`` (if given). Raises ValueError if a machine does not list each of
    its operations once, if ``not_before`` is not one number per operation, or if the
    orders deadlock."""
    m, jobs = inst.n_machines, inst.jobs
    if len(sequence) != m:
        raise ValueError(f"a plan lists {m} machines, got {len(sequence)}")
    occurrences: list[list[tuple[int, int]]] = [[] for _ in range(m)]
    for j, row in enumerate(jobs):
        for k, (mc, _) in enumerate(row):
            occurrences[mc].append((j, k))
    mach_order: list[list[tuple[int, int]]] = []
    for mc in range(m):
        seen: dict[int, int] = {}
        ops = []
        for j in sequence[mc]:
            ks = [k for jj, k in occurrences[mc] if jj == j]
            if seen.get(j, 0) >= len(ks):
                raise ValueError(f"machine {mc}: job {j} listed more often than it has operations there")
            ops.append((j, ks[seen.get(j, 0)]))
            seen[j] = seen.get(j, 0) + 1
        if len(ops) != len(occurrences[mc]):
            raise ValueError(f"machine {mc}: lists {len(ops)} operations, has {len(occurrences[mc])}")
        mach_order.append(ops)
    return _longest_paths(inst, mach_order, _release_times(inst, not_before))


def _release_times(inst: ShopInstance, not_before: Sequence[Sequence[int]] | None) -> dict[tuple[int, int], int]:
    if not_before is None:
        return {}
    if len(not_before) != inst.n_jobs or any(len(r) != len(row) for r, row in zip(not_before, inst.jobs)):
        raise ValueError("not_before must list one start per operation, job by job")
    return {(j, k): int(t) for j, row in enumerate(not_before) for k, t in enumerate(row)}


def _longest_paths(inst: ShopInstance, mach_order: list[list[tuple[int, int]]],
                   release: dict[tuple[int, int], int]) -> list[list[int]]:
    succ: dict[tuple[int, int], list[tuple[int, int]]] = {}
    indeg: dict[tuple[int, int], int] = {}
    for j, row in enumerate(inst.jobs):
        for k in range(len(row)):
            indeg.setdefault((j, k), 0)
            if k:
                succ.setdefault((j, k - 1), []).append((j, k))
                indeg[(j, k)] += 1
    for ops in mach_order:
        for a, b in zip(ops, ops[1:]):
            succ.setdefault(a, []).append(b)
            indeg[b] += 1
    mw, jw = _blocked(inst)
    earliest = {op: release.get(op, 0) for op in indeg}
    starts = [[-1] * len(r) for r in inst.jobs]
    queue = deque(op for op, d in indeg.items() if d == 0)
    done = 0
    while queue:
        j, k = queue.popleft()
        mc, p = inst.jobs[j][k]
        t = earliest[(j, k)]
        spans = mw.get(mc, []) + jw.get(j, [])
        t = _push(t, p, spans)
        starts[j][k] = t
        done += 1
        for nxt in succ.get((j, k), ()):
            earliest[nxt] = max(earliest[nxt], t + p)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                queue.append(nxt)
    if done < len(indeg):
        raise ValueError("the plan deadlocks: its machine orders contradict the job orders")
    return starts


def violations(inst: ShopInstance, starts: Sequence[Sequence[int]]) -> tuple[int, int]:
    """``(constraints kept, constraints checked)`` of a schedule: one per job precedence, per
    pair of neighbouring operations on a machine, and per operation against the windows."""
    kept = total = 0
    by_machine: dict[int, list[tuple[int, int]]] = {}
    mw, jw = _blocked(inst)
    for j, row in enumerate(inst.jobs):
        for k, (mc, p) in enumerate(row):
            s = starts[j][k]
            if s < 0:
                continue
            if k:
                total += 1
                kept += starts[j][k - 1] >= 0 and s >= starts[j][k - 1] + row[k - 1][1]
            total += 1
            kept += p <= 0 or not any(s < b and s + p > a for a, b in mw.get(mc, []) + jw.get(j, []))
            by_machine.setdefault(mc, []).append((s, s + p))
    for spans in by_machine.values():
        spans.sort()
        for (_, b0), (a1, _) in zip(spans, spans[1:]):
            total += 1
            kept += a1 >= b0
    return kept, total


def constraint_satisfaction(inst: ShopInstance, starts: Sequence[Sequence[int]]) -> float:
    kept, total = violations(inst, starts)
    return kept / total if total else 1.0


@dataclass
class ShopCheck(PlanCheck):
    """The verdict, plus every operation's start (``starts[j][k]``; empty without a schedule)."""

    starts: list[list[int]] = field(default_factory=list)


def check(instance: ShopInstance, plan: Mapping[str, Any]) -> ShopCheck:
    """The ``check`` role: the makespan and constraints of a plan ``{"sequence": [...]}``
    (optionally ``"not_before"``) carried out with every disruption of ``instance`` striking
    (see :func:`plan_starts`)."""
    try:
        sequence = [[int(j) for j in row] for row in plan["sequence"]]
        starts = plan_starts(instance, sequence, plan.get("not_before"))
    except (KeyError, ValueError, TypeError) as err:
        return ShopCheck(False, math.inf, {"sequence": False, "schedule": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    makespan = max(s + p for row, srow in zip(instance.jobs, starts) for (_, p), s in zip(row, srow))
    share = constraint_satisfaction(instance, starts)
    return ShopCheck(share == 1.0, float(makespan), {"sequence": True, "schedule": share == 1.0},
                     {"planning_quality": 1.0, "constraint_satisfaction": share, "makespan": makespan}, starts)
