"""The OR-Tools RoutingModel oracle of P5 (wedding logistics), and its builder for re-solves.

Formulation:

* per vehicle a start node (its place, its free minute) and an end node at the venue, whose
  time is at most the vehicle's end (the deadline; a guest's car: the photo time);
* per guest and per errand a pickup-and-delivery pair: the pickup at the guest's place (time
  window: landing .. photo) or the errand at its shop (window: opening .. closing minus
  service, with the service time on the outgoing arcs), the delivery a node at the venue by
  the photo time; same vehicle, pickup first;
* arc cost = shortest-path driving minutes; a ``Time`` dimension whose slack is waiting; a
  ``Load`` dimension with the seats (+1 per guest on board; goods take no seat);
* each pickup in a disjunction priced at ``unserved_penalty``, so a plan always comes back.

Deliveries at the venue are separate nodes (0 minutes apart); in the plan consecutive ones
become one ``dropoff:venue`` (which unloads everything, never worse than unloading part).

For a re-solve from a state (:mod:`crab_gym.envs.realm.wedding.oracle_disruptions`), vehicles
start where and when they become free, what they carry is a delivery-only node pinned to
them, and the photo time and vehicle ends become soft (a large cost per minute late) so that
a plan always comes back.

Searches are deterministic when given a solution limit: greedy descent from three first
solutions, then guided local search stopped after ``solution_limit`` solutions (the time
limit only guards against a runaway). The routing solver is single-threaded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.constraint_solver import pywrapcp, routing_enums_pb2

from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance

#: Solver description recorded with every value.
SOLVER = "ortools RoutingModel (greedy descent x3, then GUIDED_LOCAL_SEARCH to a solution limit)"
#: First-solution strategies of the deterministic search.
STARTS = ("PARALLEL_CHEAPEST_INSERTION", "LOCAL_CHEAPEST_INSERTION", "PATH_CHEAPEST_ARC")
#: Cost per minute late in a re-solve (soft photo time and vehicle ends).
LATE_COST = 10_000
#: Deterministic search settings: solutions visited by guided local search, wall-clock guard (s).
SOLUTION_LIMIT = 400
TIME_GUARD = 30.0


@dataclass
class RouteVehicle:
    """A vehicle as the solver sees it: where and when it is free, what it carries."""

    index: int
    loc: int
    free: int
    capacity: int
    end_by: int
    guests: list[int] = field(default_factory=list)
    goods: list[int] = field(default_factory=list)


@dataclass
class _Model:
    routing: Any
    manager: Any
    node_stop: list[int]


def _build(inst: WeddingInstance, matrix: np.ndarray, vehicles: list[RouteVehicle], todo: list[int], soft: bool) -> _Model:
    G, N = inst.n_guests, inst.n_items
    venue = inst.index[inst.venue]
    place = [inst.stop_place(s) for s in range(N)]
    ready = [g.arrival for g in inst.guests] + [e.opens for e in inst.errands]
    latest = [inst.photo_time] * G + [e.latest_start for e in inst.errands]
    service = [0] * G + [e.service for e in inst.errands]
    nv = len(vehicles)
    node_loc = [v.loc for v in vehicles] + [venue] * nv
    node_service = [0] * (2 * nv)
    node_stop = [-1] * (2 * nv)
    demand = [0] * (2 * nv)
    pairs: list[tuple[int, int, int]] = []
    for s in todo:
        p = len(node_loc)
        node_loc += [place[s], venue]
        node_service += [service[s], 0]
        node_stop += [s, N]
        demand += [1, -1] if s < G else [0, 0]
        pairs.append((s, p, p + 1))
    pinned: list[tuple[int, int]] = []  # (model vehicle, node)
    for mv, v in enumerate(vehicles):
        for s in v.guests + v.goods:
            node_loc.append(venue)
            node_service.append(0)
            node_stop.append(N)
            demand.append(-1 if s < G else 0)
            pinned.append((mv, len(node_loc) - 1))
    n = len(node_loc)
    travel = [[int(matrix[node_loc[i], node_loc[j]]) for j in range(n)] for i in range(n)]
    transit = [[node_service[i] + travel[i][j] for j in range(n)] for i in range(n)]
    horizon = max([inst.deadline] + [v.free for v in vehicles]) + 2 * int(matrix.max()) + 24 * 60
    manager = pywrapcp.RoutingIndexManager(n, nv, list(range(nv)), list(range(nv, 2 * nv)))
    routing = pywrapcp.RoutingModel(manager)
    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitMatrix(travel))
    routing.AddDimension(routing.RegisterTransitMatrix(transit), horizon, horizon, False, "Time")
    tdim = routing.GetDimensionOrDie("Time")
    routing.AddDimensionWithVehicleCapacity(
        routing.RegisterUnaryTransitVector(demand), 0, [max(v.capacity, len(v.guests)) for v in vehicles], False, "Load"
    )
    ldim = routing.GetDimensionOrDie("Load")
    solver = routing.solver()
    for mv, v in enumerate(vehicles):
        tdim.CumulVar(routing.Start(mv)).SetRange(v.free, v.free)
        ldim.CumulVar(routing.Start(mv)).SetRange(len(v.guests), len(v.guests))
        end = routing.End(mv)
        if soft:
            tdim.SetCumulVarSoftUpperBound(end, v.end_by, LATE_COST)
        else:
            tdim.CumulVar(end).SetMax(max(v.end_by, v.free))
    for s, p, d in pairs:
        pi, di = manager.NodeToIndex(p), manager.NodeToIndex(d)
        routing.AddPickupAndDelivery(pi, di)
        solver.Add(routing.VehicleVar(pi) == routing.VehicleVar(di))
        solver.Add(tdim.CumulVar(pi) <= tdim.CumulVar(di))
        tdim.CumulVar(pi).SetRange(ready[s], max(ready[s], min(latest[s], horizon)))
        if soft:
            tdim.SetCumulVarSoftUpperBound(di, inst.photo_time, LATE_COST)
        else:
            tdim.CumulVar(di).SetMax(inst.photo_time)
        routing.AddDisjunction([pi], int(inst.unserved_penalty))
        routing.AddDisjunction([di], 0)
    for mv, node in pinned:
        idx = manager.NodeToIndex(node)
        routing.VehicleVar(idx).SetValue(mv)  # works on every OR-Tools release we allow
        tdim.SetCumulVarSoftUpperBound(idx, inst.photo_time, LATE_COST)
    return _Model(routing, manager, node_stop)


def _stops(model: _Model, assignment: Any, mv: int, venue_code: int) -> list[int]:
    routing, manager = model.routing, model.manager
    idx, out = routing.Start(mv), []
    while not routing.IsEnd(idx):
        s = model.node_stop[manager.IndexToNode(idx)]
        if s >= 0 and not (s == venue_code and out and out[-1] == venue_code):
            out.append(s)
        idx = assignment.Value(routing.NextVar(idx))
    while out and out[-1] == venue_code:  # the route ends at the venue anyway
        out.pop()
    return out


def routing_status_name(code: int) -> str:
    """OR-Tools' name of a routing status code (the enum arrived in 9.10; before, constants)."""
    enum = getattr(routing_enums_pb2, "RoutingSearchStatus", None)
    if enum is not None:
        return enum.Value.Name(code)
    names = {getattr(pywrapcp.RoutingModel, n): n for n in dir(pywrapcp.RoutingModel) if n.startswith("ROUTING_")}
    return names.get(code, f"ROUTING_STATUS_{code}")


@dataclass
class RouteResult:
    """Stop codes per vehicle index, the model's objective and how the search ended."""

    routes: dict[int, list[int]]
    objective: int | None
    status: str
    solve_seconds: float = 0.0


def solve_routes(
    inst: WeddingInstance,
    matrix: np.ndarray,
    vehicles: list[RouteVehicle],
    todo: list[int],
    *,
    soft: bool = False,
    solution_limit: int = SOLUTION_LIMIT,
    time_limit: float = TIME_GUARD,
) -> RouteResult:
    """Route the ``todo`` stops (and what the vehicles carry) with the deterministic search."""
    t0 = time.perf_counter()
    best = RouteResult({}, None, "ROUTING_NOT_SOLVED")
    if not vehicles:
        return best
    attempts = [(fs, "GREEDY_DESCENT", None) for fs in STARTS]
    if len(todo) >= 2:
        attempts.append(("PARALLEL_CHEAPEST_INSERTION", "GUIDED_LOCAL_SEARCH", solution_limit))
    for first, meta, limit in attempts:
        model = _build(inst, matrix, vehicles, todo, soft)
        params = pywrapcp.DefaultRoutingSearchParameters()
        params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, first)
        params.local_search_metaheuristic = getattr(routing_enums_pb2.LocalSearchMetaheuristic, meta)
        params.time_limit.FromMilliseconds(int(time_limit * 1000))
        if limit is not None:
            params.solution_limit = int(limit)
        assignment = model.routing.SolveWithParameters(params)
        status = routing_status_name(model.routing.status())
        if assignment is None:
            if best.objective is None:
                best.status = status
            continue
        value = int(assignment.ObjectiveValue())
        if best.objective is None or value < best.objective:
            routes = {v.index: _stops(model, assignment, mv, inst.venue_code) for mv, v in enumerate(vehicles)}
            best = RouteResult(routes, value, status)
    best.solve_seconds = time.perf_counter() - t0
    return best


def start_vehicles(inst: WeddingInstance, only: int | None = None) -> list[RouteVehicle]:
    """The vehicles at the start of the day (``only``: just that one)."""
    return [
        RouteVehicle(index=k, loc=inst.index[v.place], free=v.available, capacity=v.capacity, end_by=inst.end_by(k))
        for k, v in enumerate(inst.vehicles)
        if only is None or k == only
    ]


def routes_by_id(inst: WeddingInstance, routes: dict[int, list[int]]) -> dict[str, list[str]]:
    """Stop codes per vehicle index -> stop names per vehicle id (every vehicle listed)."""
    names = inst.stop_names()
    return {v.vehicle_id: [names[s] for s in routes.get(k, [])] for k, v in enumerate(inst.vehicles)}


@dataclass
class P5OracleResult:
    """The routing oracle's plan for a P5 instance, checked by the independent checker."""

    routes: dict[str, list[str]]
    cost: int
    feasible: bool
    status: str
    solution_limit: int
    time_limit_s: float
    workers: int = 1
    solver: str = SOLVER
    solve_seconds: float = 0.0

    def plan(self) -> dict[str, Any]:
        """The ``submit_plan`` arguments."""
        return {"routes": {k: list(v) for k, v in self.routes.items()}}


def solve_p5(
    inst: WeddingInstance, *, solution_limit: int = SOLUTION_LIMIT, time_limit: float = TIME_GUARD, only: int | None = None
) -> P5OracleResult:
    """Solve a P5 instance from the start of the day (``only``: with that vehicle alone, the
    others driving straight to the venue) and score the plan with the checker."""
    res = solve_routes(
        inst, inst.travel, start_vehicles(inst, only), list(range(inst.n_items)),
        solution_limit=solution_limit, time_limit=time_limit,
    )
    routes = routes_by_id(inst, res.routes)
    verdict = check_plan(inst, routes)
    return P5OracleResult(
        routes=routes, cost=int(verdict.cost), feasible=verdict.feasible, status=res.status,
        solution_limit=solution_limit, time_limit_s=time_limit, solve_seconds=res.solve_seconds,
    )


def solo_value(inst: WeddingInstance, **kwargs: Any) -> int:
    """The best cost of the vehicles acting alone: the cheapest plan in which one vehicle does
    everything and every other one drives straight to the venue (the coordination baseline)."""
    return min(solve_p5(inst, only=k, **kwargs).cost for k in range(len(inst.vehicles)))


__all__ = ["VENUE_STOP", "P5OracleResult", "RouteVehicle", "routes_by_id", "solve_p5", "solve_routes", "solo_value"]
