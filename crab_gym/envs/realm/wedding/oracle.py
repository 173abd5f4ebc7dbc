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
from ortools.constraint_solver import pywrapcp

from crab_gym.envs.realm.common.fleet.routing import (
    RoutingParts,
    best_attempt,
    deterministic_attempts,
    fix_start,
    optional_pair,
    route_codes,
    tie_pair,
)
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance

#: Solver description recorded with every value.
SOLVER = "ortools RoutingModel (greedy descent x3, then GUIDED_LOCAL_SEARCH to a solution limit)"
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
class _Nodes:
    """The model's nodes: per vehicle a start and an end at the venue, per stop to do a pair
    (its place, a delivery at the venue), per item on board a delivery pinned to its vehicle."""

    loc: list[int]
    service: list[int]
    stop: list[int]
    demand: list[int]
    pairs: list[tuple[int, int, int]] = field(default_factory=list)  # (stop, pickup node, delivery node)
    pinned: list[tuple[int, int]] = field(default_factory=list)  # (model vehicle, node)

    def add(self, loc: int, service: int, stop: int, demand: int) -> int:
        self.loc.append(loc)
        self.service.append(service)
        self.stop.append(stop)
        self.demand.append(demand)
        return len(self.loc) - 1


def _nodes(inst: WeddingInstance, vehicles: list[RouteVehicle], todo: list[int]) -> _Nodes:
    G, N = inst.n_guests, inst.n_items
    venue = inst.index[inst.venue]
    service = [0] * G + [e.service for e in inst.errands]
    nv = len(vehicles)
    nodes = _Nodes([v.loc for v in vehicles] + [venue] * nv, [0] * (2 * nv), [-1] * (2 * nv), [0] * (2 * nv))
    for s in todo:
        p = nodes.add(inst.stop_place(s), service[s], s, 1 if s < G else 0)
        nodes.add(venue, 0, N, -1 if s < G else 0)
        nodes.pairs.append((s, p, p + 1))
    for mv, v in enumerate(vehicles):
        for s in v.guests + v.goods:
            nodes.pinned.append((mv, nodes.add(venue, 0, N, -1 if s < G else 0)))
    return nodes


def _limit(tdim: Any, idx: int, latest: int, soft: bool) -> None:
    """Node ``idx`` by minute ``latest``: a hard limit, or a soft one priced per minute late."""
    if soft:
        tdim.SetCumulVarSoftUpperBound(idx, latest, LATE_COST)
    else:
        tdim.CumulVar(idx).SetMax(latest)


def _build(inst: WeddingInstance, matrix: np.ndarray, vehicles: list[RouteVehicle], todo: list[int], soft: bool) -> RoutingParts:
    ready = [g.arrival for g in inst.guests] + [e.opens for e in inst.errands]
    latest = [inst.photo_time] * inst.n_guests + [e.latest_start for e in inst.errands]
    nv = len(vehicles)
    nodes = _nodes(inst, vehicles, todo)
    n = len(nodes.loc)
    travel = [[int(matrix[nodes.loc[i], nodes.loc[j]]) for j in range(n)] for i in range(n)]
    transit = [[nodes.service[i] + travel[i][j] for j in range(n)] for i in range(n)]
    horizon = max([inst.deadline] + [v.free for v in vehicles]) + 2 * int(matrix.max()) + 24 * 60
    manager = pywrapcp.RoutingIndexManager(n, nv, list(range(nv)), list(range(nv, 2 * nv)))
    routing = pywrapcp.RoutingModel(manager)
    parts = RoutingParts(routing, manager, nodes.stop)
    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitMatrix(travel))
    routing.AddDimension(routing.RegisterTransitMatrix(transit), horizon, horizon, False, "Time")
    tdim = routing.GetDimensionOrDie("Time")
    routing.AddDimensionWithVehicleCapacity(
        routing.RegisterUnaryTransitVector(nodes.demand), 0, [max(v.capacity, len(v.guests)) for v in vehicles], False,
        "Load",
    )
    ldim = routing.GetDimensionOrDie("Load")
    for mv, v in enumerate(vehicles):
        fix_start(routing, tdim, ldim, mv, v.free, len(v.guests))
        _limit(tdim, routing.End(mv), v.end_by if soft else max(v.end_by, v.free), soft)
    for s, p, d in nodes.pairs:
        pi, di = tie_pair(parts, tdim, p, d)
        tdim.CumulVar(pi).SetRange(ready[s], max(ready[s], min(latest[s], horizon)))
        _limit(tdim, di, inst.photo_time, soft)
        optional_pair(routing, pi, di, inst.unserved_penalty)
    for mv, node in nodes.pinned:
        idx = manager.NodeToIndex(node)
        routing.VehicleVar(idx).SetValue(mv)  # works on every OR-Tools release we allow
        tdim.SetCumulVarSoftUpperBound(idx, inst.photo_time, LATE_COST)
    return parts


def _stops(parts: RoutingParts, assignment: Any, mv: int, venue_code: int) -> list[int]:
    """A vehicle's stops: consecutive venue deliveries become one, and a last one goes (the
    route ends at the venue anyway)."""
    out: list[int] = []
    for s in route_codes(parts, assignment, mv):
        if not (s == venue_code and out and out[-1] == venue_code):
            out.append(s)
    while out and out[-1] == venue_code:
        out.pop()
    return out


@dataclass
class SolvedRoutes:
    """One routing search's stop codes per vehicle index, the model's objective and how the
    search ended (what :func:`solve_p5` and the P8 re-solves read; not an oracle's result)."""

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
) -> SolvedRoutes:
    """Route the ``todo`` stops (and what the vehicles carry) with the deterministic search."""
    t0 = time.perf_counter()
    best = SolvedRoutes({}, None, "ROUTING_NOT_SOLVED")
    if not vehicles:
        return best
    routes, objective, status = best_attempt(
        deterministic_attempts(len(todo), 2, solution_limit),
        lambda: _build(inst, matrix, vehicles, todo, soft),
        lambda parts, assignment: {
            v.index: _stops(parts, assignment, mv, inst.venue_code) for mv, v in enumerate(vehicles)
        },
        time_limit,
    )
    best = SolvedRoutes(routes or {}, objective, status)
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


def solve_p5(
    inst: WeddingInstance, *, solution_limit: int = SOLUTION_LIMIT, time_limit: float = TIME_GUARD, only: int | None = None
) -> OracleResult:
    """Solve a P5 instance from the start of the day (``only``: with that vehicle alone, the
    others driving straight to the venue) and score the plan with the checker: ``cost`` and
    ``feasible`` are its verdict, ``plan`` the ``submit_plan`` arguments (``{"routes": ...}``),
    ``detail["solution_limit"]`` the search's solution limit."""
    res = solve_routes(
        inst, inst.travel, start_vehicles(inst, only), list(range(inst.n_items)),
        solution_limit=solution_limit, time_limit=time_limit,
    )
    routes = routes_by_id(inst, res.routes)
    verdict = check_plan(inst, routes)
    return OracleResult(
        int(verdict.cost), res.status, {"routes": routes}, time_limit_s=time_limit, workers=1, solver=SOLVER,
        solve_seconds=res.solve_seconds, detail={"solution_limit": solution_limit}, feasible=verdict.feasible,
    )


def solo_value(inst: WeddingInstance, **kwargs: Any) -> int:
    """The best cost of the vehicles acting alone: the cheapest plan in which one vehicle does
    everything and every other one drives straight to the venue (the coordination baseline)."""
    return min(solve_p5(inst, only=k, **kwargs).cost for k in range(len(inst.vehicles)))


__all__ = ["VENUE_STOP", "RouteVehicle", "routes_by_id", "solve_p5", "solve_routes", "solo_value"]
