"""OR-Tools oracle for P3 (urban ride-sharing, a dial-a-ride problem).

Formulation (RoutingModel):

* one start node per vehicle (its place, its free minute) and one shared dummy end node that
  every node reaches at zero cost, so routes are open;
* a pickup node and a dropoff node per request, tied with ``AddPickupAndDelivery``, the same
  vehicle (``VehicleVar`` equality) and pickup-before-dropoff (time cumuls);
* arc cost = shortest-path travel minutes (the objective is the total travel time);
* a ``Time`` dimension whose slack is waiting: the pickup's cumul (the minute the passenger
  boards) lies in the pickup window, the dropoff's cumul is at most the latest dropoff;
* a ``Load`` dimension with each vehicle's capacity (+passengers at pickup, - at dropoff);
* each pickup sits in a disjunction with the instance's ``unserved_penalty``, so a request
  may be dropped at that stated price and the solver always returns a plan.

The same builder serves the P4 re-solve (:mod:`crab_gym.envs.realm.ridesharing.oracle_disruptions`):
vehicles then start where and when they become free, passengers already on board are
dropoff-only nodes pinned to their vehicle, and their deadlines become soft (a large cost
per minute late) so that a plan always comes back.

Reference values: parallel cheapest insertion, then guided local search for a time budget.
Re-solves inside an episode use a deterministic variant (see :func:`solve_darp`). Neither
proves optimality, so the status is OR-Tools' routing status; tests compare the values with
brute force on small instances. The routing solver is single-threaded (``workers = 1``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.constraint_solver import pywrapcp

from crab_gym.envs.realm.common import solver_budget
from crab_gym.envs.realm.common.fleet.routing import (
    STARTS,
    Attempt,
    RoutingParts,
    best_attempt,
    deterministic_attempts,
    fix_start,
    optional_pair,
    route_codes,
    routing_status_name,
    search_parameters,
    tie_pair,
)
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.sim import DELIVERED, simulate_plan

#: Default search budget in seconds per size class.
TIME_LIMITS: dict[str, float] = {"small": 2.0, "medium": 5.0, "large": 20.0}

#: Solver description recorded with every value.
SOLVER = "ortools RoutingModel (PARALLEL_CHEAPEST_INSERTION + GUIDED_LOCAL_SEARCH)"

#: Budget in seconds for an instance without a size class, by its number of requests.
TIME_LIMITS_BY_REQUESTS: tuple[tuple[float, float], ...] = ((5, 1.0), (12, 5.0), (math.inf, 20.0))

#: Cost per minute late for on-board passengers in a re-solve (soft deadlines).
LATE_COST = 10_000


def default_time_limit(instance: P3Instance) -> float:
    """The search budget (s): by size class, else by the number of requests."""
    return solver_budget.time_limit(instance.size, instance.n_requests, TIME_LIMITS, TIME_LIMITS_BY_REQUESTS)


@dataclass
class DarpVehicle:
    """A vehicle as the solver sees it: where and when it is free, what it carries."""

    index: int
    loc: int
    free: int
    capacity: int
    load: int = 0
    onboard: list[int] = field(default_factory=list)


@dataclass
class DarpRoutes:
    """One routing search's stop codes per vehicle index, and how the search ended (what
    :func:`solve_p3` and the P4 re-solves read; not an oracle's result)."""

    routes: dict[int, list[int]]
    status: str
    objective: int | None
    time_limit_s: float
    solution_limit: int | None = None
    workers: int = 1
    solver: str = SOLVER
    solve_seconds: float = field(default=0.0, compare=False)


#: A built routing model (kept under its old name for the disruption oracle).
_Model = RoutingParts


@dataclass
class _Nodes:
    """The model's nodes: vehicle starts, the shared end, a (pickup, dropoff) pair per waiting
    request, then a dropoff per passenger on board (pinned to its vehicle)."""

    loc: list[int]
    stop: list[int]
    pairs: list[tuple[int, int, int]]  # (request, pickup node, dropoff node)
    pinned: list[tuple[int, int, int]]  # (model vehicle, request, node)


def _nodes(instance: P3Instance, vehicles: list[DarpVehicle], waiting: list[int]) -> _Nodes:
    reqs, index = instance.requests, instance.index
    nv = len(vehicles)
    nodes = _Nodes([v.loc for v in vehicles] + [-1], [-1] * (nv + 1), [], [])
    for r in waiting:
        p = len(nodes.loc)
        nodes.loc += [index[reqs[r].pickup], index[reqs[r].dropoff]]
        nodes.stop += [2 * r, 2 * r + 1]
        nodes.pairs.append((r, p, p + 1))
    for mv, v in enumerate(vehicles):
        for r in v.onboard:
            nodes.loc.append(index[reqs[r].dropoff])
            nodes.stop.append(2 * r + 1)
            nodes.pinned.append((mv, r, len(nodes.loc) - 1))
    return nodes


def _transit(matrix: np.ndarray, node_loc: list[int]) -> list[list[int]]:
    """Minutes between nodes; every node reaches the end (place -1) for free."""
    n = len(node_loc)
    transit = [[0] * n for _ in range(n)]
    for i in range(n):
        if node_loc[i] < 0:
            continue
        row = matrix[node_loc[i]]
        for j in range(n):
            if node_loc[j] >= 0:
                transit[i][j] = int(row[node_loc[j]])
    return transit


def build_model(instance: P3Instance, matrix: np.ndarray, vehicles: list[DarpVehicle], waiting: list[int]) -> _Model:
    """The DARP as a RoutingModel (see the module docstring)."""
    reqs = instance.requests
    nv = len(vehicles)
    nodes = _nodes(instance, vehicles, waiting)
    n = len(nodes.loc)
    big = int(matrix.max()) if matrix.size else 0
    horizon = max([instance.horizon] + [v.free for v in vehicles]) + 2 * big + 60
    manager = pywrapcp.RoutingIndexManager(n, nv, list(range(nv)), [nv] * nv)
    routing = pywrapcp.RoutingModel(manager)
    parts = RoutingParts(routing, manager, nodes.stop)
    transit_cb = routing.RegisterTransitMatrix(_transit(matrix, nodes.loc))
    routing.SetArcCostEvaluatorOfAllVehicles(transit_cb)
    routing.AddDimension(transit_cb, horizon, horizon, False, "Time")
    tdim = routing.GetDimensionOrDie("Time")
    demand = [0] * n
    for r, p, d in nodes.pairs:
        demand[p], demand[d] = reqs[r].passengers, -reqs[r].passengers
    for _, r, node in nodes.pinned:
        demand[node] = -reqs[r].passengers
    load_cb = routing.RegisterUnaryTransitVector(demand)
    # A vehicle already carrying more than its capacity (an overloaded plan earlier in the
    # episode) can only drop off: its model capacity is its current load, never less.
    capacities = [max(v.capacity, v.load) for v in vehicles]
    routing.AddDimensionWithVehicleCapacity(load_cb, 0, capacities, False, "Load")
    ldim = routing.GetDimensionOrDie("Load")
    for mv, v in enumerate(vehicles):
        fix_start(routing, tdim, ldim, mv, v.free, v.load)
    for r, p, d in nodes.pairs:
        lo, hi = reqs[r].pickup_window
        pi, di = tie_pair(parts, tdim, p, d)
        tdim.CumulVar(pi).SetRange(lo, max(lo, min(hi, horizon)))
        tdim.CumulVar(di).SetRange(0, max(0, min(reqs[r].latest_dropoff, horizon)))
        optional_pair(routing, pi, di, instance.unserved_penalty)
    for mv, r, node in nodes.pinned:
        idx = manager.NodeToIndex(node)
        # Pin the passenger to its vehicle. VehicleVar().SetValue works on every OR-Tools
        # release; SetAllowedVehiclesForIndex rejects Python lists from 9.15 on.
        routing.VehicleVar(idx).SetValue(mv)
        tdim.SetCumulVarSoftUpperBound(idx, reqs[r].latest_dropoff, LATE_COST)
    return parts


def _read_routes(vehicles: list[DarpVehicle]) -> Callable[[RoutingParts, Any], dict[int, list[int]]]:
    """Stop codes per vehicle index, read from a solution."""
    return lambda parts, assignment: {v.index: route_codes(parts, assignment, mv) for mv, v in enumerate(vehicles)}


def solve_once(
    model: _Model, vehicles: list[DarpVehicle], first: str, meta: str, time_limit: float, solution_limit: int | None
) -> tuple[dict[int, list[int]] | None, int | None, str]:
    """One search of a built model: (stop codes per vehicle index, objective, status)."""
    routing = model.routing
    assignment = routing.SolveWithParameters(search_parameters(first, meta, time_limit, solution_limit))
    status = routing_status_name(routing.status())
    if assignment is None:
        return None, None, status
    return _read_routes(vehicles)(model, assignment), int(assignment.ObjectiveValue()), status


#: First-solution strategies tried by the deterministic search (greedy descent from each).
DETERMINISTIC_STARTS = STARTS


def solve_darp(
    instance: P3Instance,
    matrix: np.ndarray,
    vehicles: list[DarpVehicle],
    waiting: list[int],
    *,
    time_limit: float,
    solution_limit: int | None = None,
) -> DarpRoutes:
    """Route ``waiting`` requests (and the passengers on board) with the given vehicles.

    ``matrix`` holds the place-to-place minutes to use. Without ``solution_limit``: guided
    local search until ``time_limit`` seconds. With it, a *deterministic* search: greedy
    descent from each of :data:`DETERMINISTIC_STARTS`, then (when at least three requests are
    left to place, so that the search has room to move) guided local search stopped after
    ``solution_limit`` solutions; ``time_limit`` then only guards against a runaway search.
    The best plan wins (ties: the first found).
    """
    t0 = time.perf_counter()
    if not vehicles:
        return DarpRoutes({}, "NO_VEHICLE", None, time_limit, solution_limit)
    if solution_limit is None:
        attempts: list[Attempt] = [("PARALLEL_CHEAPEST_INSERTION", "GUIDED_LOCAL_SEARCH", None)]
    else:
        attempts = deterministic_attempts(len(waiting), 3, solution_limit)
    routes, objective, status = best_attempt(
        attempts, lambda: build_model(instance, matrix, vehicles, waiting), _read_routes(vehicles), time_limit
    )
    return DarpRoutes(
        routes or {},
        status,
        objective,
        time_limit,
        solution_limit,
        solve_seconds=time.perf_counter() - t0,
    )


def p3_record(result: OracleResult) -> dict[str, Any]:
    """The reference record of a :func:`solve_p3` result (``references.json``'s shape:
    ``value`` is the cost, ``plan`` REALM's assignments mapping, the detail's figures beside;
    no wall-clock values)."""
    return {
        "plan": {k: list(v) for k, v in result.plan["assignments"].items()},
        "value": result.cost,
        "status": result.status,
        "time_limit_s": result.time_limit_s,
        "workers": result.workers,
        "solver": result.solver,
        **{k: result.detail[k] for k in ("travel", "served", "unserved", "solution_limit")},
    }


def solve_p3(
    instance: P3Instance, *, time_limit: float | None = None, solution_limit: int | None = None
) -> OracleResult:
    """Solve a P3 instance from its start (no disruptions) and score the plan by simulation:
    ``cost`` is travel + penalties (minutes), ``plan`` the ``submit_plan`` arguments
    (``{"assignments": ...}``); ``detail``: ``travel`` (minutes), ``served`` (requests
    delivered), ``unserved`` (their passenger ids), ``solution_limit`` (None: a time budget)."""
    limit = default_time_limit(instance) if time_limit is None else float(time_limit)
    vehicles = [
        DarpVehicle(index=k, loc=instance.index[v.location], free=instance.start_time, capacity=v.capacity)
        for k, v in enumerate(instance.vehicles)
    ]
    res = solve_darp(
        instance,
        instance.network.static,
        vehicles,
        list(range(instance.n_requests)),
        time_limit=limit,
        solution_limit=solution_limit,
    )
    names = instance.stop_names()
    plan = {v.vehicle_id: [names[s] for s in res.routes.get(k, [])] for k, v in enumerate(instance.vehicles)}
    sim = simulate_plan(instance, plan)
    unserved = [r.passenger_id for r, st in zip(instance.requests, sim.status) if st != DELIVERED]
    return OracleResult(
        sim.cost(),
        res.status,
        {"assignments": plan},
        time_limit_s=limit,
        workers=1,
        solver=SOLVER,
        solve_seconds=res.solve_seconds,
        detail={"travel": sim.travel_minutes(), "served": sim.served(), "unserved": unserved,
                "solution_limit": solution_limit},
    )
