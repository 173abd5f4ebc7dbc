"""OR-Tools CP-SAT oracle for P2 (multi-group campus tours).

Main model, *time-indexed*: a boolean ``x[g, k, t]`` says group ``g`` tours with guide ``k``
starting at minute ``t``, for every start on a grid where the whole tour fits the guide's
availability and follows the group's arrival. Each group takes exactly one ``x``; for each
guide and grid minute at most one tour is running; waiting ``max(0, t - preferred)`` is a
constant coefficient of ``x``; loads are sums of ``x``, and ``max_load - min_load`` is
weighted by ``balance_weight``.

Restricting starts to the grid loses nothing: the grid step is the gcd of every arrival,
every availability start and the tour duration, and any plan can be left-shifted, guide by
guide in start order, to starts ``max(arrival, availability start, previous end)`` without
raising its cost; those all lie on the grid. The LP relaxation of this model is tight on
these instances, and CP-SAT with its LP (one worker, ``linearization_level=2``) proves
optimality on every shipped instance in a few seconds. (The interval model -- optional
intervals, ``NoOverlap`` per guide -- kept as the fallback for grids too fine to enumerate,
found the same plans but could not prove them within minutes.)

A greedy plan is given as a hint, so the oracle is never worse than the greedy baseline.
If CP-SAT proves that not every group can be served, the model is solved again with each
group droppable at a penalty larger than any plan's cost, so a plan always comes back.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time

from ortools.sat.python import cp_model

from crab_gym.envs.realm.common import solver_budget
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.group_tours.heuristics import earliest_start_plan
from crab_gym.envs.realm.group_tours.model import P2Instance

TIME_LIMITS: dict[str, float] = {"small": 2.0, "medium": 5.0, "large": 20.0}
#: ``(most groups, seconds)`` for an instance without a size class.
TIME_LIMITS_BY_GROUPS = ((6, 2.0), (15, 5.0), (math.inf, 20.0))
WORKERS = 1  # deterministic, and the single default worker is the one that uses the LP
MAX_GRID_VARS = 150_000


def default_time_limit(instance: P2Instance) -> float:
    return solver_budget.time_limit(instance.size, len(instance.groups), TIME_LIMITS, TIME_LIMITS_BY_GROUPS)


def _p2_result(assignments: dict[str, list[dict]], cost: int | None, dropped: list[str], status: str,
               limit: float, workers: int, solver: str, bound: float | None = None) -> OracleResult:
    """The oracle's result: ``cost`` excludes drop penalties, ``plan`` the tours by guide as
    ``submit_plan`` arguments, ``detail["dropped"]`` the groups left out; ``status`` OPTIMAL,
    FEASIBLE, INFEASIBLE (groups dropped) or NO_SOLUTION."""
    plan = {"assignments": {k: [dict(t) for t in v] for k, v in assignments.items()}}
    return OracleResult(cost, status, plan, bound=bound, time_limit_s=limit, workers=workers, solver=solver,
                        detail={"dropped": list(dropped)})


def plan_cost(instance: P2Instance, assignments: dict[str, list[dict]]) -> int:
    """Objective of a plan (waiting plus weighted imbalance), ignoring feasibility."""
    pref = {g.group_id: g.preferred for g in instance.groups}
    wait = sum(max(0, t["start"] - pref[t["group"]]) for tours in assignments.values() for t in tours)
    loads = [len(assignments.get(k, [])) for k in instance.guide_ids]
    return int(wait + instance.balance_weight * (max(loads) - min(loads)))


def grid_step(instance: P2Instance) -> int:
    """The start-time grid (minutes) on which an optimal plan always exists."""
    step = instance.tour_duration
    for v in [g.arrival for g in instance.groups] + [g.available_from for g in instance.guides]:
        step = math.gcd(step, v)
    return max(step, 1)


def solve_p2(instance: P2Instance, time_limit: float | None = None, workers: int = WORKERS) -> OracleResult:
    """Best plan CP-SAT finds within ``time_limit`` seconds on ``workers`` threads."""
    limit = float(time_limit if time_limit is not None else default_time_limit(instance))
    hint = earliest_start_plan(instance)
    tic = time.perf_counter()
    result = _solve(instance, limit, workers, droppable=False, hint=hint)
    if result.status == "NO_SOLUTION":
        result = _solve(instance, limit, workers, droppable=True, hint=hint)
    return dataclasses.replace(result, solve_seconds=time.perf_counter() - tic)


def _solve(instance: P2Instance, limit: float, workers: int, droppable: bool, hint: dict | None) -> OracleResult:
    """The time-indexed model (the interval model when the grid has too many starts)."""
    G, D = len(instance.groups), instance.tour_duration
    step = grid_step(instance)
    options = _grid_options(instance, step)
    if sum(map(len, options)) > MAX_GRID_VARS:
        return _solve_intervals(instance, limit, workers, droppable, hint)

    m = cp_model.CpModel()
    x: dict[tuple[int, int, int], cp_model.IntVar] = {}
    drops = []
    for g, opts in enumerate(options):
        for k, t in opts:
            x[g, k, t] = m.NewBoolVar(f"x{g}_{k}_{t}")
        u = m.NewBoolVar(f"u{g}") if droppable else None
        m.AddExactlyOne([x[g, k, t] for k, t in opts] + ([u] if u is not None else []))
        drops.append(u)
    _one_tour_at_a_time(m, x, D)
    loads = [sum(v for (g, kk, t), v in x.items() if kk == k) for k in range(len(instance.guides))]
    hi, lo = _load_range(m, loads, G)
    pref = [grp.preferred for grp in instance.groups]
    penalty = 1 + G * instance.horizon + instance.balance_weight * G
    m.Minimize(
        sum(max(0, t - pref[g]) * v for (g, k, t), v in x.items())
        + instance.balance_weight * (hi - lo)
        + penalty * sum(u for u in drops if u is not None)
    )
    if hint is not None:
        _hint_grid(m, instance, x, hint)

    solver = _solver(limit, workers)
    code = solver.Solve(m)
    name = f"ortools CP-SAT, time-indexed ({step}-minute grid)"
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _p2_result({}, None, list(instance.group_ids), "NO_SOLUTION", limit, workers, name)
    assignments: dict[str, list[dict]] = {gid: [] for gid in instance.guide_ids}
    for (g, k, t), var in x.items():
        if solver.Value(var):
            assignments[instance.guide_ids[k]].append({"group": instance.group_ids[g], "start": t})
    dropped = [instance.group_ids[g] for g, u in enumerate(drops) if u is not None and solver.Value(u)]
    return _result(instance, solver, code, assignments, dropped, limit, workers, name)


def _grid_options(instance: P2Instance, step: int) -> list[list[tuple[int, int]]]:
    """Per group, every (guide, start) on the grid where the tour fits the guide and the arrival."""
    D = instance.tour_duration
    options: list[list[tuple[int, int]]] = []  # per group: (guide, start) on the grid
    for g, grp in enumerate(instance.groups):
        opts = []
        for k, gd in enumerate(instance.guides):
            if instance.compatible(g, k):
                first = max(grp.arrival, gd.available_from)
                opts.extend((k, t) for t in range(first, gd.available_to - D + 1, step))
        options.append(opts)
    return options


def _one_tour_at_a_time(m: cp_model.CpModel, x: dict[tuple[int, int, int], cp_model.IntVar], D: int) -> None:
    """At most one tour running per guide at each grid minute where one may start."""
    by_guide: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
    for (_g, k, t), var in x.items():
        by_guide.setdefault(k, []).append((t, var))
    for items in by_guide.values():
        items.sort(key=lambda p: p[0])
        for tau in sorted({t for t, _ in items}):
            running = [v for t, v in items if tau - D < t <= tau]
            if len(running) > 1:
                m.AddAtMostOne(running)


def _load_range(m: cp_model.CpModel, loads: list, G: int) -> tuple[cp_model.IntVar, cp_model.IntVar]:
    """(max load, min load) variables bounding every guide's load (their gap is the imbalance)."""
    hi, lo = m.NewIntVar(0, G, "max_load"), m.NewIntVar(0, G, "min_load")
    for load in loads:
        m.Add(hi >= load)
        m.Add(lo <= load)
    return hi, lo


def _hint_grid(
    m: cp_model.CpModel, instance: P2Instance, x: dict[tuple[int, int, int], cp_model.IntVar], hint: dict
) -> None:
    """Hint the time-indexed model with a plan (every ``x`` set: 1 where the plan has it)."""
    chosen = {
        (instance.group_index[t["group"]], instance.guide_index[gid], int(t["start"]))
        for gid, tours in hint["assignments"].items()
        for t in tours
    }
    for key, var in x.items():
        m.AddHint(var, int(key in chosen))  # an int: protobuf 7 rejects a bool in old OR-Tools


def _solver(limit: float, workers: int) -> cp_model.CpSolver:
    solver = new_solver(limit, workers, linearization_level=2, random_seed=0)
    return solver


def _result(instance, solver, code, assignments, dropped, limit, workers, name) -> OracleResult:
    for tours in assignments.values():
        tours.sort(key=lambda t: (t["start"], t["group"]))
    cost = plan_cost(instance, assignments)
    if dropped:
        status, bound = "INFEASIBLE", None
    else:
        status = "OPTIMAL" if code == cp_model.OPTIMAL else "FEASIBLE"
        bound = max(0.0, float(solver.BestObjectiveBound()))
    return _p2_result(assignments, cost, dropped, status, limit, workers, name, bound)


def _solve_intervals(
    instance: P2Instance, limit: float, workers: int, droppable: bool, hint: dict | None
) -> OracleResult:
    """Fallback for fine grids: start variables, optional intervals, NoOverlap per guide."""
    G, K, D = len(instance.groups), len(instance.guides), instance.tour_duration
    horizon = instance.horizon
    m = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    starts, waits, drops = [], [], []
    per_guide: list[list] = [[] for _ in range(K)]
    for g, grp in enumerate(instance.groups):
        s = m.NewIntVar(grp.arrival, max(grp.arrival, horizon), f"s{g}")
        w = m.NewIntVar(0, max(0, horizon - grp.preferred), f"w{g}")
        m.Add(w >= s - grp.preferred)
        choices = []
        for k, gd in enumerate(instance.guides):
            if not instance.compatible(g, k):
                continue
            b = m.NewBoolVar(f"x{g}_{k}")
            x[g, k] = b
            choices.append(b)
            m.Add(s >= gd.available_from).OnlyEnforceIf(b)
            m.Add(s + D <= gd.available_to).OnlyEnforceIf(b)
            per_guide[k].append(m.NewOptionalIntervalVar(s, D, s + D, b, f"i{g}_{k}"))
        u = m.NewBoolVar(f"u{g}") if droppable else None
        m.AddExactlyOne(choices + ([u] if u is not None else []))
        starts.append(s)
        waits.append(w)
        drops.append(u)
    for k in range(K):
        if len(per_guide[k]) > 1:
            m.AddNoOverlap(per_guide[k])
    hi, lo = _load_range(m, [sum(x[g, k] for g in range(G) if (g, k) in x) for k in range(K)], G)
    penalty = 1 + G * horizon + instance.balance_weight * G
    m.Minimize(sum(waits) + instance.balance_weight * (hi - lo) + penalty * sum(u for u in drops if u is not None))
    if hint is not None:
        _hint_intervals(m, instance, starts, x, hint)
    solver = _solver(limit, workers)
    code = solver.Solve(m)
    name = "ortools CP-SAT, interval model"
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _p2_result({}, None, list(instance.group_ids), "NO_SOLUTION", limit, workers, name)
    assignments, dropped = _read_intervals(instance, solver, starts, x, drops)
    return _result(instance, solver, code, assignments, dropped, limit, workers, name)


def _hint_intervals(
    m: cp_model.CpModel, instance: P2Instance, starts: list, x: dict[tuple[int, int], cp_model.IntVar], hint: dict
) -> None:
    """Hint the interval model with a plan: each group's start and guide choice."""
    K = len(instance.guides)
    for gid, tours in hint["assignments"].items():
        k = instance.guide_index[gid]
        for t in tours:
            g = instance.group_index[t["group"]]
            m.AddHint(starts[g], int(t["start"]))
            for kk in range(K):
                if (g, kk) in x:
                    m.AddHint(x[g, kk], int(kk == k))


def _read_intervals(
    instance: P2Instance, solver: cp_model.CpSolver, starts: list, x: dict[tuple[int, int], cp_model.IntVar],
    drops: list,
) -> tuple[dict[str, list[dict]], list[str]]:
    """The interval model's plan (tours by guide) and the groups it dropped."""
    K = len(instance.guides)
    assignments: dict[str, list[dict]] = {gid: [] for gid in instance.guide_ids}
    dropped = []
    for g, grp in enumerate(instance.groups):
        if drops[g] is not None and solver.Value(drops[g]):
            dropped.append(grp.group_id)
            continue
        k = next(k for k in range(K) if (g, k) in x and solver.Value(x[g, k]))
        assignments[instance.guide_ids[k]].append({"group": grp.group_id, "start": int(solver.Value(starts[g]))})
    return assignments, dropped


# ---------------------------------------------------------------------------------------
# Exhaustive search (for tests on small instances; independent of the solver)
# ---------------------------------------------------------------------------------------
def brute_force_p2(instance: P2Instance) -> tuple[int | None, dict[str, list[dict]]]:
    """The exact optimum by trying every guide assignment and every order per guide.

    For a fixed assignment and order, starting each tour as early as possible is optimal
    (waiting never falls when a start moves later, and an earlier end never delays the next
    tour), so the start minutes follow. Use only for a handful of groups.
    """
    G, K, D = len(instance.groups), len(instance.guides), instance.tour_duration
    if K**G > 50_000:
        raise ValueError("too many assignments for brute force")
    best: tuple[int | None, dict[str, list[dict]]] = (None, {})
    for assign in itertools.product(range(K), repeat=G):
        if any(not instance.compatible(g, k) for g, k in enumerate(assign)):
            continue
        loads = [assign.count(k) for k in range(K)]
        imbalance_cost = instance.balance_weight * (max(loads) - min(loads))
        if best[0] is not None and imbalance_cost >= best[0]:
            continue
        total, plan, ok = imbalance_cost, {}, True
        for k, gd in enumerate(instance.guides):
            mine = [g for g in range(G) if assign[g] == k]
            best_k: tuple[int, list[dict]] | None = None
            for order in itertools.permutations(mine):
                t, wait, tours = gd.available_from, 0, []
                for g in order:
                    grp = instance.groups[g]
                    start = max(t, grp.arrival)
                    if start + D > gd.available_to:
                        break
                    wait += max(0, start - grp.preferred)
                    tours.append({"group": grp.group_id, "start": start})
                    t = start + D
                else:
                    if best_k is None or wait < best_k[0]:
                        best_k = (wait, tours)
            if best_k is None:
                ok = False
                break
            total += best_k[0]
            plan[gd.guide_id] = best_k[1]
        if ok and (best[0] is None or total < best[0]):
            best = (total, plan)
    return best
