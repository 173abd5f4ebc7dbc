"""A second, independent P5 model in CP-SAT: it proves small instances optimal and
cross-checks the RoutingModel oracle (:mod:`crab_gym.envs.realm.wedding.oracle`).

Per vehicle ``k`` a circuit (``AddCircuit``) over a depot node (leave the vehicle's place,
come back = end at the venue) and two nodes per guest or errand (the pickup, the delivery at
the venue); a skipped node has its self-loop. Arc literals imply the time (service + driving
minutes, waiting allowed) and the load (+1 per guest); windows, the photo time and the
vehicle's end are bounds. The objective is the driving minutes plus ``unserved_penalty`` per
guest or errand no vehicle takes. One worker and a deterministic time limit, so a result does
not depend on the machine's load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from crab_gym.envs.realm.wedding.model import WeddingInstance

#: Deterministic seconds of search per size class (CP-SAT's ``max_deterministic_time``).
DETERMINISTIC_LIMITS = {"small": 30.0, "medium": 60.0, "large": 60.0}
SOLVER = "ortools CP-SAT (AddCircuit per vehicle, one worker, deterministic time limit)"


@dataclass
class CpsatResult:
    """The CP-SAT plan (stop codes per vehicle index), its value, the proven bound, the status."""

    routes: dict[int, list[int]] | None
    value: int | None
    bound: float
    status: str
    deterministic_limit: float
    workers: int = 1
    solver: str = SOLVER


def solve_cpsat(inst: WeddingInstance, deterministic_limit: float | None = None) -> CpsatResult:
    """Minimise driving minutes + penalties over every vehicle's circuit (see the module)."""
    limit = DETERMINISTIC_LIMITS.get(inst.size or "", 30.0) if deterministic_limit is None else float(deterministic_limit)
    G, N = inst.n_guests, inst.n_items
    tr = inst.travel
    venue = inst.index[inst.venue]
    place = [inst.stop_place(s) for s in range(N)]
    ready = [g.arrival for g in inst.guests] + [e.opens for e in inst.errands]
    latest = [inst.photo_time] * G + [e.latest_start for e in inst.errands]
    service = [0] * G + [e.service for e in inst.errands]
    horizon = inst.deadline + 24 * 60
    # node 0: depot; node 2s+1: pickup or errand s; node 2s+2: its delivery at the venue
    loc = [-1] + [x for s in range(N) for x in (place[s], venue)]
    serv = [0] + [x for s in range(N) for x in (service[s], 0)]
    dem = [0] + [x for s in range(N) for x in ((1, -1) if s < G else (0, 0))]
    n = len(loc)
    m = cp_model.CpModel()
    cost_terms: list[Any] = []
    visit: dict[tuple[int, int], Any] = {}
    arcs_of: dict[int, list[tuple[int, int, Any]]] = {}
    for k, veh in enumerate(inst.vehicles):
        start = inst.index[veh.place]
        t = [m.NewIntVar(0, horizon, f"t{k}_{i}") for i in range(n)]
        load = [m.NewIntVar(0, veh.capacity, f"l{k}_{i}") for i in range(n)]
        end = m.NewIntVar(0, inst.end_by(k), f"end{k}")
        m.Add(t[0] == veh.available)
        m.Add(load[0] == 0)
        arcs: list[tuple[int, int, Any]] = []
        empty = m.NewBoolVar(f"empty{k}")
        arcs.append((0, 0, empty))
        m.Add(end >= veh.available + int(tr[start, venue])).OnlyEnforceIf(empty)
        cost_terms.append(int(tr[start, venue]) * empty)
        for i in range(1, n):
            skip = m.NewBoolVar(f"skip{k}_{i}")
            arcs.append((i, i, skip))
            visit[k, i] = skip.Not()
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                lit = m.NewBoolVar(f"x{k}_{i}_{j}")
                arcs.append((i, j, lit))
                a = start if i == 0 else loc[i]
                b = venue if j == 0 else loc[j]
                minutes = int(tr[a, b])
                cost_terms.append(minutes * lit)
                if j == 0:
                    m.Add(end >= t[i] + serv[i] + minutes).OnlyEnforceIf(lit)
                else:
                    m.Add(t[j] >= t[i] + serv[i] + minutes).OnlyEnforceIf(lit)
                    m.Add(load[j] == load[i] + dem[j]).OnlyEnforceIf(lit)
        m.AddCircuit([(i, j, lit) for i, j, lit in arcs])
        for s in range(N):
            p, d = 2 * s + 1, 2 * s + 2
            m.Add(visit[k, p] == visit[k, d])
            m.Add(t[p] >= ready[s]).OnlyEnforceIf(visit[k, p])
            m.Add(t[p] <= latest[s]).OnlyEnforceIf(visit[k, p])
            m.Add(t[d] <= inst.photo_time).OnlyEnforceIf(visit[k, d])
            m.Add(t[p] <= t[d]).OnlyEnforceIf(visit[k, p])
        arcs_of[k] = arcs
    served = []
    for s in range(N):
        taken = sum(visit[k, 2 * s + 1] for k in range(len(inst.vehicles)))
        m.Add(taken <= 1)
        served.append(taken)
    m.Minimize(sum(cost_terms) + int(inst.unserved_penalty) * (N - sum(served)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = limit
    solver.parameters.random_seed = 0
    code = solver.Solve(m)
    status = solver.StatusName(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return CpsatResult(None, None, float(solver.BestObjectiveBound()), status, limit)
    routes: dict[int, list[int]] = {}
    for k, arcs in arcs_of.items():
        succ = {i: j for i, j, lit in arcs if i != j and solver.Value(lit)}
        out: list[int] = []
        node = succ.get(0, 0)
        while node != 0:
            s = (node - 1) // 2
            stop = s if node % 2 == 1 else N
            if not (stop == N and out and out[-1] == N):
                out.append(stop)
            node = succ[node]
        while out and out[-1] == N:
            out.pop()
        routes[k] = out
    return CpsatResult(routes, int(round(solver.ObjectiveValue())), float(solver.BestObjectiveBound()), status, limit)
