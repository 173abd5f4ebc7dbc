"""Exhaustive P3 solver for tiny instances (up to 3-4 requests): the oracle's yardstick.

Written independently of the oracle and of the env's simulation: shortest paths come from
networkx, and every vehicle's every stop order (pickups before their dropoffs) is tried for
every split of the requests among the vehicles (or left unserved).
"""

from __future__ import annotations

import itertools
import math

import networkx as nx

from crab_gym.envs.realm.ridesharing.model import P3Instance


def _orders(requests: tuple[int, ...]):
    """Every sequence of (request, is_dropoff) with each pickup before its dropoff."""
    stops = [(r, 0) for r in requests] + [(r, 1) for r in requests]
    for perm in itertools.permutations(stops):
        pos = {s: k for k, s in enumerate(perm)}
        if all(pos[(r, 0)] < pos[(r, 1)] for r in requests):
            yield perm


def _route_travel(inst: P3Instance, dist: dict, v: int, order: tuple) -> float:
    """Minutes vehicle ``v`` drives to serve ``order`` (inf if a window, deadline or its
    capacity is broken on the way)."""
    veh, reqs = inst.vehicles[v], inst.requests
    here, t, load, travel = veh.location, inst.start_time, 0, 0
    for r, drop in order:
        target = reqs[r].dropoff if drop else reqs[r].pickup
        leg = dist[here][target]
        arrive = t + leg
        travel += leg
        if drop:
            load -= reqs[r].passengers
            if arrive > reqs[r].latest_dropoff:
                return math.inf
            t = arrive
        else:
            load += reqs[r].passengers
            if arrive > reqs[r].pickup_window[1] or load > veh.capacity:
                return math.inf
            t = max(arrive, reqs[r].pickup_window[0])
        here = target
    return travel


def brute_force_p3(inst: P3Instance) -> tuple[int, dict[str, list[str]]]:
    """(optimal cost, an optimal plan) by exhaustive search."""
    assert inst.n_requests <= 4, "brute force is for tiny instances"
    g = nx.DiGraph()
    for i, a in enumerate(inst.locations):
        for j, b in enumerate(inst.locations):
            if i != j and inst.roads[i][j] is not None:
                g.add_edge(a, b, w=inst.roads[i][j])
    dist = dict(nx.all_pairs_dijkstra_path_length(g, weight="w"))
    for a in inst.locations:
        dist.setdefault(a, {})[a] = 0
    reqs = inst.requests

    def best_route(v: int, subset: tuple[int, ...]) -> tuple[float, list]:
        best: tuple[float, list] = (math.inf, [])
        for order in _orders(subset):
            travel = _route_travel(inst, dist, v, order)
            if travel < best[0]:
                best = (travel, list(order))
        return best

    cache: dict = {}
    best_total, best_plan = math.inf, {}
    for owners in itertools.product(range(-1, inst.n_vehicles), repeat=inst.n_requests):
        total = inst.unserved_penalty * sum(1 for o in owners if o < 0)
        plan = {}
        for v in range(inst.n_vehicles):
            subset = tuple(r for r, o in enumerate(owners) if o == v)
            if (v, subset) not in cache:
                cache[(v, subset)] = best_route(v, subset) if subset else (0, [])
            cost, order = cache[(v, subset)]
            total += cost
            plan[inst.vehicles[v].vehicle_id] = [
                f"{'dropoff' if drop else 'pickup'}:{reqs[r].passenger_id}" for r, drop in order
            ]
        if total < best_total:
            best_total, best_plan = total, plan
    return int(best_total), best_plan
