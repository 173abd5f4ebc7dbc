"""The common core of the fleet families' OR-Tools RoutingModel oracles (P3/P4 ride-sharing,
P5/P8 wedding): search parameters, status names, pickup-and-delivery pairs, fixed starts,
reading a route back, and keeping the best of several deterministic attempts.

Each family builds its own model (its nodes, windows and loads); the calls here are made in
the same order as before they were shared, so the searches and their results are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.constraint_solver import pywrapcp, routing_enums_pb2

#: First-solution strategies of the deterministic searches (greedy descent from each).
STARTS = ("PARALLEL_CHEAPEST_INSERTION", "LOCAL_CHEAPEST_INSERTION", "PATH_CHEAPEST_ARC")

#: One search: (first-solution strategy, metaheuristic, solution limit or None).
Attempt = tuple[str, str, int | None]


@dataclass
class RoutingParts:
    """A built model: the routing model, its index manager, and the stop code of each node
    (-1: a vehicle's start or end)."""

    routing: Any
    manager: Any
    node_stop: list[int]


def routing_status_name(code: int) -> str:
    """OR-Tools' name of a routing status code, e.g. ``"ROUTING_SUCCESS"``.

    The ``RoutingSearchStatus`` enum arrived in OR-Tools 9.10; before it, the codes were
    constants of ``RoutingModel``. Both are read, so that every release we allow works.
    """
    enum = getattr(routing_enums_pb2, "RoutingSearchStatus", None)
    if enum is not None:
        return enum.Value.Name(code)
    names = {getattr(pywrapcp.RoutingModel, n): n for n in dir(pywrapcp.RoutingModel) if n.startswith("ROUTING_")}
    return names.get(code, f"ROUTING_STATUS_{code}")


def search_parameters(first: str, meta: str, time_limit: float, solution_limit: int | None) -> Any:
    """Routing search parameters: a first-solution strategy, a metaheuristic, a time limit
    (s) and, when given, a solution limit (which makes the search deterministic)."""
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, first)
    params.local_search_metaheuristic = getattr(routing_enums_pb2.LocalSearchMetaheuristic, meta)
    params.time_limit.FromMilliseconds(int(time_limit * 1000))
    if solution_limit is not None:
        params.solution_limit = int(solution_limit)
    return params


def deterministic_attempts(n_todo: int, min_todo: int, solution_limit: int | None) -> list[Attempt]:
    """Greedy descent from each of :data:`STARTS`, then guided local search stopped after
    ``solution_limit`` solutions when at least ``min_todo`` stops are left to place."""
    attempts: list[Attempt] = [(fs, "GREEDY_DESCENT", None) for fs in STARTS]
    if n_todo >= min_todo:
        attempts.append(("PARALLEL_CHEAPEST_INSERTION", "GUIDED_LOCAL_SEARCH", solution_limit))
    return attempts


def tie_pair(parts: RoutingParts, time_dim: Any, pickup: int, delivery: int) -> tuple[int, int]:
    """Pickup node ``pickup`` and delivery node ``delivery`` on the same vehicle, pickup
    first; returns their routing indices."""
    routing, manager = parts.routing, parts.manager
    pi, di = manager.NodeToIndex(pickup), manager.NodeToIndex(delivery)
    routing.AddPickupAndDelivery(pi, di)
    solver = routing.solver()
    solver.Add(routing.VehicleVar(pi) == routing.VehicleVar(di))
    solver.Add(time_dim.CumulVar(pi) <= time_dim.CumulVar(di))
    return pi, di


def optional_pair(routing: Any, pi: int, di: int, penalty: int) -> None:
    """A pair the solver may leave out at ``penalty`` (the pickup's price; the delivery
    follows it for free)."""
    routing.AddDisjunction([pi], int(penalty))
    routing.AddDisjunction([di], 0)


def fix_start(routing: Any, time_dim: Any, load_dim: Any, mv: int, free: int, load: int) -> None:
    """Vehicle ``mv`` starts at minute ``free`` carrying ``load``."""
    start = routing.Start(mv)
    time_dim.CumulVar(start).SetRange(free, free)
    load_dim.CumulVar(start).SetRange(load, load)


def route_codes(parts: RoutingParts, assignment: Any, mv: int) -> list[int]:
    """The stop codes along vehicle ``mv``'s route in a solution (starts and ends skipped)."""
    routing, manager = parts.routing, parts.manager
    idx, out = routing.Start(mv), []
    while not routing.IsEnd(idx):
        s = parts.node_stop[manager.IndexToNode(idx)]
        if s >= 0:
            out.append(s)
        idx = assignment.Value(routing.NextVar(idx))
    return out


def best_attempt(
    attempts: Iterable[Attempt],
    build: Callable[[], RoutingParts],
    read: Callable[[RoutingParts, Any], dict[int, list[int]]],
    time_limit: float,
) -> tuple[dict[int, list[int]] | None, int | None, str]:
    """Build and solve a fresh model for each attempt; the cheapest plan wins (ties: the
    first found). Returns (routes read by ``read``, objective, status); without any plan,
    (None, None, the last status)."""
    routes: dict[int, list[int]] | None = None
    objective: int | None = None
    status = "ROUTING_NOT_SOLVED"
    for first, meta, limit in attempts:
        parts = build()
        assignment = parts.routing.SolveWithParameters(search_parameters(first, meta, time_limit, limit))
        found = routing_status_name(parts.routing.status())
        if assignment is None:
            if objective is None:
                status = found
            continue
        value = int(assignment.ObjectiveValue())
        if objective is None or value < objective:
            routes, objective, status = read(parts, assignment), value, found
    return routes, objective, status


def drive_adaptively(sim: Any, plan: Mapping[int, Sequence[int]],
                        choose: Callable[[Any, dict[int, list[int]]], tuple[dict[int, list[int]], dict[str, Any]]],
                        ) -> list[dict[str, Any]]:
    """Drive ``plan`` on ``sim``; at every disruption ``choose(sim, remaining)`` gives the plan to
    go on with and a log entry (the disruptions that fired are added as ``after``), until every
    vehicle is done: the adaptive oracles of P4 and P8."""
    log: list[dict[str, Any]] = []
    current = {k: list(v) for k, v in plan.items()}
    while not sim.done:
        remaining, fired = sim.run_plan(current, pause_on_disruption=True)
        if sim.done:
            break
        current, entry = choose(sim, remaining)
        entry["after"] = [d.describe() for d in fired]
        log.append(entry)
    return log
