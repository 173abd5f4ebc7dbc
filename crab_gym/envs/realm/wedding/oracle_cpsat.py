"""A second, independent P5 model in CP-SAT: it proves small instances optimal and
cross-checks the RoutingModel oracle (:mod:`crab_gym.envs.realm.wedding.oracle`).

Per vehicle ``k`` a circuit (``AddCircuit``) over a depot node (leave the vehicle's place,
come back = end at the venue) and two nodes per guest or errand (the pickup, the delivery at
the venue); a skipped node has its self-loop. Arc literals imply the time (service + driving
minutes, waiting allowed) and the load (+1 per guest); windows, the photo time and the
vehicle's end are bounds. The objective is the driving minutes plus ``unserved_penalty`` per
guest or errand no vehicle takes. One worker and a deterministic time limit, so a result does
not depend on the machine's load. A known plan can seed the search (``hint``): CP-SAT starts
from it, so the result is never worse than the hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.wedding.model import WeddingInstance
from crab_gym.envs.realm.wedding.oracle import routes_by_id

#: Deterministic seconds of search per size class (CP-SAT's ``max_deterministic_time``).
DETERMINISTIC_LIMITS = {"small": 30.0, "medium": 60.0, "large": 60.0}
SOLVER = "ortools CP-SAT (AddCircuit per vehicle, one worker, deterministic time limit)"


@dataclass
class _Circuits:
    """The model and, per vehicle, its arcs ``(i, j, literal)`` (self-loops: skipped nodes)."""

    model: cp_model.CpModel
    arcs: dict[int, list[tuple[int, int, Any]]] = field(default_factory=dict)
    visit: dict[tuple[int, int], Any] = field(default_factory=dict)
    cost: list[Any] = field(default_factory=list)


def _data(inst: WeddingInstance) -> dict[str, list[int]]:
    """Per node (0: depot; 2s+1: stop s; 2s+2: its delivery): place, service, load change,
    and per stop its earliest and latest service start."""
    G, N = inst.n_guests, inst.n_items
    venue = inst.index[inst.venue]
    place = [inst.stop_place(s) for s in range(N)]
    service = [0] * G + [e.service for e in inst.errands]
    return {
        "loc": [-1] + [x for s in range(N) for x in (place[s], venue)],
        "serv": [0] + [x for s in range(N) for x in (service[s], 0)],
        "dem": [0] + [x for s in range(N) for x in ((1, -1) if s < G else (0, 0))],
        "ready": [g.arrival for g in inst.guests] + [e.opens for e in inst.errands],
        "latest": [inst.photo_time] * G + [e.latest_start for e in inst.errands],
    }


def _vehicle(c: _Circuits, inst: WeddingInstance, k: int, d: dict[str, list[int]]) -> None:
    """Vehicle ``k``'s circuit, times, loads, windows and driving cost."""
    m, tr, veh = c.model, inst.travel, inst.vehicles[k]
    start, venue = inst.index[veh.place], inst.index[inst.venue]
    loc, serv, dem = d["loc"], d["serv"], d["dem"]
    n, horizon = len(loc), inst.deadline + 24 * 60
    t = [m.NewIntVar(0, horizon, f"t{k}_{i}") for i in range(n)]
    load = [m.NewIntVar(0, veh.capacity, f"l{k}_{i}") for i in range(n)]
    end = m.NewIntVar(0, inst.end_by(k), f"end{k}")
    m.Add(t[0] == veh.available)
    m.Add(load[0] == 0)
    empty = m.NewBoolVar(f"empty{k}")
    arcs: list[tuple[int, int, Any]] = [(0, 0, empty)]
    m.Add(end >= veh.available + int(tr[start, venue])).OnlyEnforceIf(empty)
    c.cost.append(int(tr[start, venue]) * empty)
    for i in range(1, n):
        skip = m.NewBoolVar(f"skip{k}_{i}")
        arcs.append((i, i, skip))
        c.visit[k, i] = skip.Not()
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            lit = m.NewBoolVar(f"x{k}_{i}_{j}")
            arcs.append((i, j, lit))
            minutes = int(tr[start if i == 0 else loc[i], venue if j == 0 else loc[j]])
            c.cost.append(minutes * lit)
            if j == 0:
                m.Add(end >= t[i] + serv[i] + minutes).OnlyEnforceIf(lit)
            else:
                m.Add(t[j] >= t[i] + serv[i] + minutes).OnlyEnforceIf(lit)
                m.Add(load[j] == load[i] + dem[j]).OnlyEnforceIf(lit)
    m.AddCircuit(arcs)
    for s in range(inst.n_items):
        p, q = 2 * s + 1, 2 * s + 2
        m.Add(c.visit[k, p] == c.visit[k, q])
        m.Add(t[p] >= d["ready"][s]).OnlyEnforceIf(c.visit[k, p])
        m.Add(t[p] <= d["latest"][s]).OnlyEnforceIf(c.visit[k, p])
        m.Add(t[q] <= inst.photo_time).OnlyEnforceIf(c.visit[k, q])
        m.Add(t[p] <= t[q]).OnlyEnforceIf(c.visit[k, p])
    c.arcs[k] = arcs


def build_model(inst: WeddingInstance) -> _Circuits:
    """The whole CP-SAT model (see the module docstring)."""
    c = _Circuits(cp_model.CpModel())
    d = _data(inst)
    for k in range(len(inst.vehicles)):
        _vehicle(c, inst, k, d)
    N = inst.n_items
    served = []
    for s in range(N):
        taken = sum(c.visit[k, 2 * s + 1] for k in range(len(inst.vehicles)))
        c.model.Add(taken <= 1)
        served.append(taken)
    c.model.Minimize(sum(c.cost) + int(inst.unserved_penalty) * (N - sum(served)))
    return c


def route_nodes(route: Sequence[int], venue_code: int) -> list[int]:
    """A route's stop codes as the circuit's nodes: each stop's node, and at each venue drop
    (and at the end) the delivery nodes of what is on board, in loading order."""
    nodes: list[int] = []
    aboard: list[int] = []
    for s in list(route) + [venue_code]:
        if s == venue_code:
            nodes += [2 * x + 2 for x in aboard]
            aboard.clear()
        else:
            nodes.append(2 * s + 1)
            aboard.append(s)
    return nodes


def add_hint(c: _Circuits, routes: Mapping[int, Sequence[int]], venue_code: int) -> None:
    """Hint every arc literal with the plan ``routes`` (stop codes per vehicle index)."""
    for k, arcs in c.arcs.items():
        nodes = route_nodes(routes.get(k, ()), venue_code)
        used = set(zip([0] + nodes, nodes + [0])) if nodes else {(0, 0)}
        on = set(nodes)
        for i, j, lit in arcs:
            c.model.AddHint(lit, (i, j) in used or (i == j and i != 0 and i not in on))


def _routes(solver: cp_model.CpSolver, c: _Circuits, N: int) -> dict[int, list[int]]:
    routes: dict[int, list[int]] = {}
    for k, arcs in c.arcs.items():
        succ = {i: j for i, j, lit in arcs if i != j and solver.Value(lit)}
        out: list[int] = []
        node = succ.get(0, 0)
        while node != 0:
            stop = (node - 1) // 2 if node % 2 == 1 else N
            if not (stop == N and out and out[-1] == N):
                out.append(stop)
            node = succ[node]
        while out and out[-1] == N:
            out.pop()
        routes[k] = out
    return routes


def solve_cpsat(
    inst: WeddingInstance, deterministic_limit: float | None = None, *,
    hint: Mapping[int, Sequence[int]] | None = None, fix_hint: bool = False,
) -> OracleResult:
    """Minimise driving minutes + penalties over every vehicle's circuit (see the module):
    ``cost`` the model's value, ``plan`` the ``submit_plan`` arguments (None: no plan found),
    ``bound`` CP-SAT's proven bound, ``time_limit_s`` its deterministic budget.
    ``hint``: a plan to start from (stop codes per vehicle index); ``fix_hint``: only check
    it (the model must accept it: a test that the model allows the checker's plans)."""
    limit = DETERMINISTIC_LIMITS.get(inst.size or "", 30.0) if deterministic_limit is None else float(deterministic_limit)
    c = build_model(inst)
    if hint is not None:
        add_hint(c, hint, inst.venue_code)
    solver = new_solver(None, 1, max_deterministic_time=limit, random_seed=0,
                        fix_variables_to_their_hinted_value=bool(fix_hint))
    code = solver.Solve(c.model)
    status = solver.StatusName(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _result(None, None, float(solver.BestObjectiveBound()), status, limit)
    plan = {"routes": routes_by_id(inst, _routes(solver, c, inst.n_items))}
    return _result(plan, int(round(solver.ObjectiveValue())), float(solver.BestObjectiveBound()), status, limit)


def _result(plan: dict[str, Any] | None, value: int | None, bound: float, status: str, limit: float) -> OracleResult:
    return OracleResult(value, status, plan, bound=bound, time_limit_s=limit, workers=1, solver=SOLVER)

