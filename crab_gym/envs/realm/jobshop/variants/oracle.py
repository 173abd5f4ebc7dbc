"""Planners for J2/J3/J4 from any state (:class:`~.sim.PlanState`), and the references.

* :func:`greedy_plan`: list scheduling: again and again, the job whose next operation can
  start earliest (appended after what its machine already runs), ties to the most work
  remaining; its start pushed past the known windows. No solver.
* :func:`solve_from`: CP-SAT: an interval per operation still to place (not before the clock
  nor before what its machine already runs), the placed ones fixed, the known down-times
  and holds as fixed intervals in each machine's and job's no-overlap, makespan minimised.
* :func:`run_adaptively`: a planner in the loop of an episode: plan from the state, submit,
  and at every strike plan again from the state the strike left (the *adaptive* reference).
* :func:`reference_record`: the shipped record: the best plan known for the instance with
  every disruption known from the start (hindsight), its value, CP-SAT's status and bound,
  and the adaptive CP-SAT value for adaptation.

Plans are ``{"sequence": [[job, ...] per machine]}``, the env's ``submit_plan`` arguments.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import ortools
from ortools.sat.python import cp_model

from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.jobshop.variants.checker import check
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance, merged
from crab_gym.envs.realm.jobshop.variants.sim import PlanState, ShopSim

Planner = Callable[[ShopInstance, PlanState], list[list[int]]]

#: The wall-clock guard of a deterministic solve: never the limit that binds (a loaded machine
#: must not change a yardstick: the deterministic time is the budget), only a stop for a
#: pathological run. With 20 x the budget (10 s for 0.5 deterministic s), a load of 5 on two
#: cores once moved j2_medium_00's yardstick (1237 -> 1238), the wall clock the suspect.
WALL_GUARD_S = 120.0


def empty_state(inst: ShopInstance, hindsight: bool) -> PlanState:
    """The start of an episode: nothing placed; with ``hindsight``, every window known."""
    mw, jw = [], []
    if hindsight:
        for w in inst.windows():
            mw += list(w.machines)
            jw += list(w.jobs)
    return PlanState({}, 0, tuple(mw), tuple(jw))


def _prefix(inst: ShopInstance, state: PlanState) -> tuple[list[list[int]], list[int], list[int], list[int]]:
    """(per machine the placed jobs by start, each job's ready time and next operation, each
    machine's free time)."""
    per_machine: list[list[tuple[int, int]]] = [[] for _ in range(inst.n_machines)]
    ready, nxt, free = [0] * inst.n_jobs, [0] * inst.n_jobs, [0] * inst.n_machines
    for (j, k), s in state.fixed.items():
        mc, p = inst.jobs[j][k]
        per_machine[mc].append((s, j))
        if k + 1 > nxt[j]:
            nxt[j], ready[j] = k + 1, s + p
        free[mc] = max(free[mc], s + p)
    return [[j for _, j in sorted(r)] for r in per_machine], ready, nxt, free


def _spans(state: PlanState, inst: ShopInstance) -> tuple[list[list[tuple[int, int]]], list[list[tuple[int, int]]]]:
    mw: list[list[tuple[int, int]]] = [[] for _ in range(inst.n_machines)]
    jw: list[list[tuple[int, int]]] = [[] for _ in range(inst.n_jobs)]
    for m, a, b in state.machine_windows:
        mw[m].append((a, b))
    for j, a, b in state.job_windows:
        jw[j].append((a, b))
    return [merged(s) for s in mw], [merged(s) for s in jw]


def _push(t: int, p: int, spans: list[tuple[int, int]]) -> int:
    moved = p > 0
    while moved:
        moved = False
        for a, b in spans:
            if t < b and t + p > a:
                t, moved = b, True
    return t


def greedy_plan(inst: ShopInstance, state: PlanState) -> list[list[int]]:
    """The list-scheduling plan from ``state`` (earliest start, then most work remaining)."""
    seq, ready, nxt, free = _prefix(inst, state)
    mw, jw = _spans(state, inst)
    lengths = [len(r) for r in inst.jobs]
    work = [sum(p for _, p in r[nxt[j]:]) for j, r in enumerate(inst.jobs)]
    open_jobs = [j for j in range(inst.n_jobs) if nxt[j] < lengths[j]]
    ready_a = np.array([max(r, state.now) for r in ready], dtype=np.int64)
    free_a = np.asarray(free, dtype=np.int64)
    mach = np.array([inst.jobs[j][nxt[j]][0] if nxt[j] < lengths[j] else 0 for j in range(inst.n_jobs)])
    work_a = np.asarray(work, dtype=np.int64)
    alive = np.zeros(inst.n_jobs, dtype=bool)
    alive[open_jobs] = True
    big = np.iinfo(np.int64).max // 4
    while alive.any():
        est = np.where(alive, np.maximum(ready_a, free_a[mach]), big)
        key = est * (int(work_a.max()) + 1) - work_a  # earliest first, then most work remaining
        j = int(np.argmin(np.where(alive, key, big * 4)))
        mc, p = inst.jobs[j][nxt[j]]
        t = _push(int(est[j]), p, mw[mc] + jw[j])
        seq[mc].append(j)
        ready_a[j] = free_a[mc] = t + p
        work_a[j] -= p
        nxt[j] += 1
        if nxt[j] < lengths[j]:
            mach[j] = inst.jobs[j][nxt[j]][0]
        else:
            alive[j] = False
    return seq


def solve_from(inst: ShopInstance, state: PlanState, *, time_limit: float, workers: int = 1,
               hint: list[list[int]] | None = None, deterministic: bool = False,
               interleave: bool | None = None, fill_gaps: bool = False) -> tuple[list[list[int]], dict[str, Any]]:
    """CP-SAT's plan from ``state`` and its record (status, objective, bound, budget).
    ``deterministic``: ``time_limit`` is CP-SAT's deterministic time (one worker; the same
    plan on every machine with the same OR-Tools; a wall-clock cap of 20x guards slow ones).
    ``interleave`` (default: on one worker) runs CP-SAT's portfolio interleaved; off, its
    plain sequential search, which improves a good hint faster (see :func:`reference_record`).
    ``fill_gaps``: an operation may also start in an idle gap before what its machine already
    runs (as a dispatch may; the plan's machine orders then read by start time)."""
    hint = hint or greedy_plan(inst, state)
    upper = int(check(inst.with_disruptions(()), {"sequence": hint}).cost) if not state.machine_windows and not state.job_windows else None
    prefix, ready, nxt, free = _prefix(inst, state)
    mw, jw = _spans(state, inst)
    horizon = sum(p for r in inst.jobs for _, p in r) + max([b for s in mw + jw for _, b in s] + [state.now, 0]) + 1
    model = cp_model.CpModel()
    starts, intervals = {}, {}
    m_ivs: list[list[Any]] = [[] for _ in range(inst.n_machines)]
    j_ivs: list[list[Any]] = [[] for _ in range(inst.n_jobs)]
    ends = []
    for j, row in enumerate(inst.jobs):
        for k, (mc, p) in enumerate(row):
            if (j, k) in state.fixed:
                s = state.fixed[(j, k)]
                starts[(j, k)] = s
                iv = model.NewFixedSizeIntervalVar(s, p, f"f{j}_{k}")
            else:
                low = max(state.now, 0 if fill_gaps else free[mc], ready[j] if k == nxt[j] else 0)
                v = model.NewIntVar(low, horizon, f"s{j}_{k}")
                starts[(j, k)] = v
                iv = model.NewFixedSizeIntervalVar(v, p, f"i{j}_{k}")
                if k:
                    model.Add(v >= starts[(j, k - 1)] + row[k - 1][1])
            intervals[(j, k)] = iv
            m_ivs[mc].append(iv)
            j_ivs[j].append(iv)
        ends.append(starts[(j, len(row) - 1)] + row[-1][1])
    for mc, spans in enumerate(mw):
        extra = [model.NewFixedSizeIntervalVar(a, b - a, f"w{mc}_{a}") for a, b in spans]
        model.AddNoOverlap(m_ivs[mc] + extra)
    for j, spans in enumerate(jw):
        if spans:
            model.AddNoOverlap(j_ivs[j] + [model.NewFixedSizeIntervalVar(a, b - a, f"h{j}_{a}") for a, b in spans])
    makespan = model.NewIntVar(0, horizon, "makespan")
    model.AddMaxEquality(makespan, ends)
    if upper is not None:
        model.Add(makespan <= upper)
    model.Minimize(makespan)
    if not fill_gaps:
        _add_hint(model, inst, state, hint, starts, mw, jw)
    # one worker runs CP-SAT's portfolio (LNS included) interleaved: far better than its plain
    # sequential search on these instances (as for P11, docs/jobshop.md "Oracle")
    interleaved = workers == 1 if interleave is None else interleave
    flags = {"interleave_search": True} if interleaved else {}
    if deterministic:
        solver = new_solver(max(20 * time_limit, WALL_GUARD_S), 1, max_deterministic_time=float(time_limit), **flags)
    else:
        solver = new_solver(time_limit, workers, **flags)
    search = " (interleave_search)" if interleaved else " (sequential search)" if workers == 1 else ""
    began = time.perf_counter()
    status = solver.Solve(model)
    record = {"status": solver.StatusName(status), "time_limit_s": time_limit, "workers": workers,
              "solver": f"ortools-cp-sat {ortools.__version__}" + search,
              "solve_seconds": round(time.perf_counter() - began, 2)}
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return hint, {**record, "status": "HINT", "bound": None}
    record["bound"] = int(solver.BestObjectiveBound())
    if fill_gaps:
        record["schedule"] = [(solver.Value(v), j, k) for (j, k), v in starts.items() if (j, k) not in state.fixed]
    order = [sorted((solver.Value(starts[(j, k)]) if (j, k) not in state.fixed else state.fixed[(j, k)], j, k)
                    for j, row in enumerate(inst.jobs) for k, (m2, _) in enumerate(row) if m2 == mc)
             for mc in range(inst.n_machines)]
    return [[j for _, j, _ in row] for row in order], record


def _add_hint(model: Any, inst: ShopInstance, state: PlanState, hint: list[list[int]], starts: dict,
              mw: list, jw: list) -> None:
    """The greedy plan's starts as CP-SAT's first solution."""
    known = inst.with_disruptions(())
    try:
        times = _hint_times(known, state, hint, mw, jw)
    except ValueError:
        return
    for (j, k), v in starts.items():
        if (j, k) not in state.fixed:
            model.AddHint(v, times[j][k])


def _hint_times(inst: ShopInstance, state: PlanState, seq: list[list[int]], mw: list, jw: list) -> list[list[int]]:
    """Start times of a plan from ``state`` (the same placement as the env's plan check)."""
    _, ready, nxt, free = _prefix(inst, state)
    times = [[state.fixed.get((j, k), -1) for k in range(len(r))] for j, r in enumerate(inst.jobs)]
    ptr = [sum(1 for (j, k) in state.fixed if inst.jobs[j][k][0] == mc) for mc in range(inst.n_machines)]
    left = inst.n_ops - len(state.fixed)
    while left:
        progress = False
        for mc, row in enumerate(seq):
            while ptr[mc] < len(row):
                j = row[ptr[mc]]
                k = nxt[j]
                if k >= len(inst.jobs[j]) or inst.jobs[j][k][0] != mc:
                    break
                p = inst.jobs[j][k][1]
                t = _push(max(ready[j], free[mc], state.now), p, mw[mc] + jw[j])
                times[j][k] = t
                ready[j] = free[mc] = t + p
                nxt[j] += 1
                ptr[mc] += 1
                left -= 1
                progress = True
        if not progress:
            raise ValueError("deadlock")
    return times


def cp_planner(time_limit: float, workers: int = 1, deterministic: bool = False) -> Planner:
    """A planner that re-solves with CP-SAT (hinted with the greedy plan)."""
    return lambda inst, state: solve_from(inst, state, time_limit=time_limit, workers=workers,
                                          deterministic=deterministic)[0]


def run_adaptively(sim: ShopSim, planner: Planner) -> ShopSim:
    """Play ``sim`` to its end with ``planner``: plan, submit, and plan again from the state
    every strike leaves. Returns ``sim`` (finished)."""
    inst = sim.instance
    for _ in range(len(inst.disruptions) + len(sim.injected) + 2):
        if sim.complete:
            break
        reason, order = sim.check_plan(planner(inst, sim.plan_state()))
        if reason:
            raise RuntimeError(f"the planner's plan was refused: {reason}")
        sim.apply_plan(order)
    if not sim.complete:
        raise RuntimeError("the adaptive run did not finish")
    return sim


def adaptive_makespan(inst: ShopInstance, planner: Planner, sim: ShopSim | None = None) -> tuple[int, list[list[int]]]:
    """The makespan of ``planner`` re-planning at every strike (from ``sim``'s state, else
    from the start) and the machine orders it ends with."""
    run = run_adaptively(copy.deepcopy(sim) if sim is not None else ShopSim(inst), planner)
    return run.makespan, run.sequences()


def _polished(inst: ShopInstance, candidates: dict[str, list[list[int]]], seconds: float,
              workers: int) -> tuple[str, dict[str, Any]] | None:
    """CP-SAT's plain sequential search hinted with the cheapest candidate so far, for
    ``seconds``: on J2/J4 medium it improves a good plan where the interleaved portfolio,
    started from the greedy plan, stalls (the audit's finding: 1458 -> 1349 on j2_medium_07).
    Adds its plan to ``candidates`` as "cp-sat (hinted)"; None if CP-SAT gave no status."""
    costs = {k: check(inst, {"sequence": v}).cost for k, v in candidates.items()}
    best = min(costs, key=lambda k: costs[k])
    plan, solved = solve_from(inst, empty_state(inst, hindsight=True), time_limit=seconds, workers=workers,
                              hint=candidates[best], interleave=False)
    if solved["bound"] is None:
        return None
    candidates["cp-sat (hinted)"] = plan
    return best, solved


def _adaptive_runs(inst: ShopInstance, seconds: float, workers: int, record: dict[str, Any],
                   candidates: dict[str, list[list[int]]]) -> None:
    """CP-SAT's and the greedy planner's re-planning at every strike, run through the simulator:
    their values go in ``record``, their final machine orders in ``candidates``."""
    value, orders = adaptive_makespan(inst, cp_planner(seconds, workers))
    record.update(adaptive_value=int(value), adaptive_time_limit_s=seconds)
    candidates["adaptive cp-sat"] = orders
    g_value, g_orders = adaptive_makespan(inst, greedy_plan)
    record["adaptive_greedy_value"] = int(g_value)
    candidates["adaptive greedy"] = g_orders


def reference_record(inst: ShopInstance, time_limit: float, workers: int = 1, *,
                     polish: float = 0.0, adaptive_time_limit: float | None = None,
                     hints: dict[str, list[list[int]]] | None = None) -> dict[str, Any]:
    """The reference of ``inst``: the best plan known with every disruption known from the
    start (the greedy plan, CP-SAT's, and for J2/J4 the final orders of the adaptive runs),
    with CP-SAT's status and bound; J3's greedy plan is certified when it meets the trivial
    lower bound. J2/J4 also store the adaptive CP-SAT value (``adaptive_value``, re-solving
    for ``adaptive_time_limit`` s, default ``time_limit``). ``hints``: more candidate plans
    (named; e.g. a previous build's). ``polish`` > 0: when not yet certified, a second solve
    of that many seconds hinted with the cheapest candidate (:func:`_polished`); its bound
    counts too (``solves`` lists both)."""
    state = empty_state(inst, hindsight=True)
    greedy = greedy_plan(inst, state)
    candidates = {"greedy": greedy}
    trivial = inst.trivial_lower_bound()
    g_cost = check(inst, {"sequence": greedy}).cost
    record: dict[str, Any] = {"trivial_lower_bound": trivial, "greedy_value": int(g_cost)}
    if g_cost <= trivial:
        solved = {"status": "OPTIMAL", "bound": trivial, "time_limit_s": 0.0, "workers": 0,
                  "solver": "greedy list scheduling (earliest start, most work remaining), certified by the trivial lower bound"}
    else:
        candidates["cp-sat"], solved = solve_from(inst, state, time_limit=time_limit, workers=workers, hint=greedy)
    if inst.disruptions:
        _adaptive_runs(inst, adaptive_time_limit or time_limit, workers, record, candidates)
    candidates.update({k: v for k, v in (hints or {}).items() if k not in candidates})  # last: fresh plans win ties
    bound = max(int(solved["bound"] or 0), trivial)
    costs = {k: check(inst, {"sequence": v}).cost for k, v in candidates.items()}
    if polish > 0 and min(costs.values()) > bound:
        polished = _polished(inst, candidates, polish, workers)
        if polished is not None:
            hinted_from, second = polished
            record["solves"] = [{k: solved.get(k) for k in ("solver", "status", "bound", "time_limit_s", "workers")},
                                {**{k: second[k] for k in ("solver", "status", "bound", "time_limit_s", "workers")},
                                 "hint": hinted_from}]
            bound = max(bound, int(second["bound"]))
            costs = {k: check(inst, {"sequence": v}).cost for k, v in candidates.items()}
    best = min(costs, key=lambda k: (costs[k], k != "cp-sat"))
    value = int(costs[best])
    status = "OPTIMAL" if value <= bound else "FEASIBLE"
    return {**record, "value": value, "status": status, "bound": bound, "plan": {"sequence": candidates[best]},
            "plan_from": best, "solver": solved["solver"], "solver_status": solved["status"],
            "time_limit_s": solved["time_limit_s"], "workers": solved["workers"],
            "solve_seconds": solved.get("solve_seconds", 0.0), "fingerprint": inst.fingerprint()}


def schedule_from(inst: ShopInstance, state: PlanState, *, time_limit: float) -> list[tuple[int, int, int]]:
    """CP-SAT's gap-filling schedule from ``state`` (an operation may start in an idle gap
    before what its machine already runs) as ``(start, job, op)`` of the operations still to
    place, by start; deterministic time, one worker. The scoring probes' gap-filling
    re-planner dispatches them in this order. Empty if CP-SAT found nothing."""
    _, record = solve_from(inst, state, time_limit=time_limit, deterministic=True, fill_gaps=True)
    return sorted(tuple(x) for x in record.get("schedule", ()))


def attack_reference(inst: ShopInstance, plan: dict[str, Any], seconds: float) -> tuple[float, dict[str, Any]]:
    """The scoring probes' attack on a reference: CP-SAT's plain sequential search hinted with
    the reference plan, for ``seconds`` of deterministic time on one worker, every window
    known (as the reference was built). Returns ``(cost, plan)``, checked by the checker."""
    seq, _ = solve_from(inst, empty_state(inst, hindsight=True), time_limit=seconds, deterministic=True,
                        hint=[list(r) for r in plan["sequence"]], interleave=False)
    return float(check(inst, {"sequence": seq}).cost), {"sequence": seq}
