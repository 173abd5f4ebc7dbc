"""OR-Tools oracle for P1 (campus tour, TSP with time windows).

Formulation: one-vehicle RoutingModel; arc cost = travel minutes; a ``time`` dimension whose
slack is waiting (cumul = the minute the visit starts, bounded by the location's window); a
``travel`` dimension without slack bounded by ``max_travel``; every visit sits in its own
disjunction with a penalty larger than any tour, so the solver may drop a visit rather than
return nothing. (With mandatory visits the solver found no first solution on 50-node
instances; with droppable visits it returns full tours in tens of milliseconds.) A returned
tour that drops a visit means the instance is infeasible as far as the search could tell.

Guided local search improves the first solution until the time limit. It proves nothing, so
the status is ``FEASIBLE`` (or ``INFEASIBLE`` when visits were dropped); the tests compare it
with brute force on small instances. The routing solver is single-threaded (``workers = 1``).
"""

from __future__ import annotations

import itertools
import math
import time

from ortools.constraint_solver import pywrapcp, routing_enums_pb2
from ortools.sat.python import cp_model

from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.common import solver_budget
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult

#: Default search budget in seconds per size class (the budget for unknown sizes: by count).
TIME_LIMITS: dict[str, float] = {"small": 0.5, "medium": 2.0, "large": 5.0}
#: ``(most locations, seconds)`` for an instance without a size class.
TIME_LIMITS_BY_LOCATIONS = ((10, 0.5), (20, 2.0), (math.inf, 5.0))


def default_time_limit(instance: P1Instance) -> float:
    return solver_budget.time_limit(instance.size, instance.n, TIME_LIMITS, TIME_LIMITS_BY_LOCATIONS)


#: What produced the plan (recorded with every value).
SOLVER = "ortools RoutingModel (PATH_CHEAPEST_ARC + GUIDED_LOCAL_SEARCH)"


def _result(route: list[str], cost: int | None, dropped: list[str], status: str, limit: float,
            elapsed: float) -> OracleResult:
    """The oracle's result: the tour as ``submit_plan`` arguments, ``detail["dropped"]`` the
    visits it left out."""
    return OracleResult(cost, status, {"route": list(route)}, time_limit_s=limit, workers=1, solver=SOLVER,
                        solve_seconds=elapsed, detail={"dropped": list(dropped)})


def solve_p1(instance: P1Instance, time_limit: float | None = None) -> OracleResult:
    """Best tour the routing solver finds within ``time_limit`` seconds; ``cost`` its travel
    minutes, ``status`` FEASIBLE, INFEASIBLE (``detail["dropped"]``: visits left out) or
    NO_SOLUTION."""
    limit = float(time_limit if time_limit is not None else default_time_limit(instance))
    idx = instance.index
    s, e = idx[instance.start], idx[instance.end]
    n = instance.n
    travel = instance.travel
    manager = pywrapcp.RoutingIndexManager(n, 1, [s], [e])
    routing = pywrapcp.RoutingModel(manager)

    def transit(i: int, j: int) -> int:
        return travel[manager.IndexToNode(i)][manager.IndexToNode(j)]

    cb = routing.RegisterTransitCallback(transit)
    routing.SetArcCostEvaluatorOfAllVehicles(cb)
    horizon = max(hi for _, hi in instance.windows) + 1
    routing.AddDimension(cb, horizon, horizon, False, "time")
    time_dim = routing.GetDimensionOrDie("time")
    for node, (lo, hi) in enumerate(instance.windows):
        if node in (s, e):
            continue
        time_dim.CumulVar(manager.NodeToIndex(node)).SetRange(lo, hi)
    start_var = time_dim.CumulVar(routing.Start(0))
    start_var.SetRange(instance.departure, instance.departure)
    time_dim.CumulVar(routing.End(0)).SetRange(0, instance.windows[e][1])
    if instance.max_travel is not None:
        routing.AddDimension(cb, 0, instance.max_travel, True, "travel")

    penalty = 1 + sum(max(row) for row in travel) * 2
    for node in range(n):
        if node not in (s, e):
            routing.AddDisjunction([manager.NodeToIndex(node)], penalty)

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.time_limit.FromMilliseconds(max(1, int(limit * 1000)))
    tic = time.perf_counter()
    solution = routing.SolveWithParameters(params)
    elapsed = time.perf_counter() - tic
    if solution is None:
        return _result([], None, list(instance.targets), "NO_SOLUTION", limit, elapsed)

    route_nodes, i = [], routing.Start(0)
    while True:
        route_nodes.append(manager.IndexToNode(i))
        if routing.IsEnd(i):
            break
        i = solution.Value(routing.NextVar(i))
    route = [instance.locations[v] for v in route_nodes]
    cost = sum(travel[a][b] for a, b in zip(route_nodes, route_nodes[1:]))
    dropped = [loc for loc in instance.targets if loc not in route]
    status = "FEASIBLE" if not dropped else "INFEASIBLE"
    return _result(route, cost, dropped, status, limit, elapsed)


# ---------------------------------------------------------------------------------------
# Optimality certificate (CP-SAT)
# ---------------------------------------------------------------------------------------
#: Budget of the certificate per size class (seconds, one worker).
CERTIFY_LIMITS: dict[str, float] = {"small": 2.0, "medium": 10.0, "large": 30.0}


def certify_p1(instance: P1Instance, time_limit: float = 5.0, hint: list[str] | None = None) -> dict:
    """A lower bound on the optimal travel from an exact CP-SAT model, to certify a tour.

    Model: one arc literal per ordered pair under ``AddCircuit`` (the arc end -> start
    closes the circuit), a service-start variable per location inside its window with
    ``t[j] >= t[i] + travel[i][j]`` when arc i -> j is used (waiting is free), the return
    before the end closes, and the travel sum within ``max_travel``. Mandatory visits: an
    ``INFEASIBLE`` answer proves that no tour visits everything. One worker with the LP.
    ``value`` is the travel of CP-SAT's own best tour (a cross-check: never below the routing
    reference it was hinted with, or the reference is not the best known).
    """
    n, T, W = instance.n, instance.travel, instance.windows
    s, e = instance.index[instance.start], instance.index[instance.end]
    m = cp_model.CpModel()
    start = [m.NewIntVar(W[i][0], W[i][1], f"t{i}") for i in range(n)]
    m.Add(start[s] == instance.departure)
    back = m.NewIntVar(0, W[e][1], "back")
    lits: dict[tuple[int, int], cp_model.IntVar] = {}
    arcs = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            lit = m.NewBoolVar(f"a{i}_{j}")
            arcs.append((i, j, lit))
            if s != e and (i, j) == (e, s):
                m.Add(lit == 1)  # the closing arc, no travel
                continue
            lits[i, j] = lit
            m.Add((back if j == e else start[j]) >= start[i] + T[i][j]).OnlyEnforceIf(lit)
    m.AddCircuit(arcs)
    travel = sum(T[i][j] * lit for (i, j), lit in lits.items())
    if instance.max_travel is not None:
        m.Add(travel <= instance.max_travel)
    m.Minimize(travel)
    if hint:
        order = [instance.index[x] for x in hint]
        used = set(zip(order, order[1:]))
        for key, lit in lits.items():
            m.AddHint(lit, int(key in used))  # an int: protobuf 7 rejects a bool in old OR-Tools
    solver = new_solver(time_limit, 1, linearization_level=2, random_seed=0)
    code = solver.Solve(m)
    status = solver.StatusName(code)
    bound = value = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = int(math.ceil(solver.BestObjectiveBound() - 1e-6))
        value = int(round(solver.ObjectiveValue()))
    return {
        "solver": "ortools CP-SAT (circuit model)",
        "status": status,
        "bound": bound,
        "value": value,
        "time_limit_s": float(time_limit),
        "workers": 1,
    }


# ---------------------------------------------------------------------------------------
# Exhaustive search (for tests on small instances; independent of the solver)
# ---------------------------------------------------------------------------------------
def brute_force_p1(instance: P1Instance) -> tuple[int | None, list[str]]:
    """The exact optimum by trying every visiting order (use only up to ~8 targets).

    Returns ``(cost, route)``, or ``(None, [])`` if no order visits everything.
    """
    targets = instance.targets
    if len(targets) > 9:
        raise ValueError(f"brute force over {len(targets)}! orders is too slow")
    idx = {loc: i for i, loc in enumerate(instance.locations)}
    travel, windows = instance.travel, instance.windows
    s, e = idx[instance.start], idx[instance.end]
    cap = instance.max_travel if instance.max_travel is not None else float("inf")
    best: tuple[int | None, list[str]] = (None, [])
    for order in itertools.permutations([idx[t] for t in targets]):
        clock, here, walked, ok = windows[s][0], s, 0, True
        for v in (*order, e):
            walked += travel[here][v]
            clock += travel[here][v]
            if clock > windows[v][1] or walked > cap:
                ok = False
                break
            clock = max(clock, windows[v][0]) if v != e else clock
            here = v
        if ok and (best[0] is None or walked < best[0]):
            best = (walked, [instance.locations[v] for v in (s, *order, e)])
    return best
