"""A clairvoyant local search for P3/P4 plans: it knows every disruption in advance.

Why: the P4 optimality yardstick is the best plan *known* for an instance facing its
disruptions. The adaptive oracle does not see disruptions coming, so a plan made knowing
them (or even the undisrupted plan, kept unchanged) can beat it; the yardstick takes the best
of all of them, and this search improves on that best.

How: a plan's cost splits by vehicle. In the env's simulator
(:class:`~crab_gym.envs.realm.ridesharing.sim.RideSim`) a vehicle departs only when it is the
one to act (its free minute is the clock), so every disruption that has started is applied
by then and none that has not: a trip's minutes depend only on its departure minute and the
schedule, never on the other vehicles. :class:`RouteCost` prices one vehicle's route that
way (the same rules: wait for the window, late pickup, late dropoff, over capacity), and the
search moves one request at a time (take its pickup and dropoff out, put them back at the best
pair of positions of any vehicle, or leave it unserved at ``unserved_penalty``) while that
lowers (violations, cost). It is deterministic: no clock, a fixed number of passes, ties
keep the earlier candidate. :func:`check_with_sim` is the test that the prices agree with
the simulator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.network import active_at
from crab_gym.envs.realm.ridesharing.sim import plan_codes, simulate_plan

#: Passes over every request (each pass tries every request once); the search stops earlier
#: when a pass improves nothing.
MAX_PASSES = 12

Score = tuple[int, int]  # (violations, travel minutes + penalties)
State = tuple[int, int, int, int, int]  # (place, free minute, load, violations, travel)


class RouteCost:
    """Prices single-vehicle routes of an instance facing a disruption schedule."""

    def __init__(self, instance: P3Instance, schedule: Sequence[Any] = ()) -> None:
        self.inst = instance
        self.net = instance.network
        self.schedule = tuple(d for d in schedule if d.start is not None)
        idx = instance.index
        self.loc = [idx[r.pickup] if s % 2 == 0 else idx[r.dropoff] for r in instance.requests for s in (0, 1)]
        self.home = [idx[v.location] for v in instance.vehicles]
        self.cap = [v.capacity for v in instance.vehicles]
        self.req = instance.requests
        self._m: dict[int, np.ndarray] = {}

    def minutes(self, a: int, b: int, t: int) -> int:
        """Minutes from place ``a`` to ``b`` for a trip departing at minute ``t``."""
        m = self._m.get(t)
        if m is None:
            m = self.net.matrix_at(active_at(self.schedule, t), t)
            self._m[t] = m
        return int(m[a, b])

    def start(self, v: int) -> State:
        """Vehicle ``v`` before its first stop."""
        return (self.home[v], self.inst.start_time, 0, 0, 0)

    def step(self, v: int, state: State, s: int) -> State:
        """The state after vehicle ``v`` in ``state`` drives to stop ``s`` and serves it."""
        here, t, load, bad, travel = state
        r = self.req[s // 2]
        there = self.loc[s]
        dt = self.minutes(here, there, t)
        arrive = t + dt
        if s % 2 == 0:
            load += r.passengers
            bad += (arrive > r.pickup_window[1]) + (load > self.cap[v])
            return there, max(arrive, r.pickup_window[0]), load, bad, travel + dt
        bad += arrive > r.latest_dropoff
        return there, arrive, load - r.passengers, bad, travel + dt

    def route(self, v: int, stops: Sequence[int]) -> Score:
        """(violations, travel minutes) of vehicle ``v`` driving ``stops`` from its start."""
        state = self.start(v)
        for s in stops:
            state = self.step(v, state, s)
        return state[3], state[4]


@dataclass
class SearchedRoutes:
    """The local or exact search's best plan: stop codes per vehicle index, its score and the
    moves made (a step of the reference search, not an oracle's result)."""

    routes: dict[int, list[int]]
    violations: int
    cost: int
    moves: int

    def assignments(self, instance: P3Instance) -> dict[str, list[str]]:
        names = instance.stop_names()
        return {v.vehicle_id: [names[s] for s in self.routes.get(k, [])] for k, v in enumerate(instance.vehicles)}


def _total(pricer: RouteCost, routes: Mapping[int, Sequence[int]], scores: Mapping[int, Score]) -> Score:
    served = sum(len(r) for r in routes.values()) // 2
    penalty = pricer.inst.unserved_penalty * (pricer.inst.n_requests - served)
    return sum(s[0] for s in scores.values()), sum(s[1] for s in scores.values()) + penalty


def _finish(pricer: RouteCost, v: int, state: State, rest: Sequence[int], bound: Score) -> Score | None:
    """The score of driving ``rest`` from ``state``; None as soon as it cannot beat ``bound``
    (violations and travel only grow along a route)."""
    for s in rest:
        state = pricer.step(v, state, s)
        if (state[3], state[4]) >= bound:
            return None
    return state[3], state[4]


def _best_insertion(pricer: RouteCost, v: int, route: list[int], r: int) -> tuple[Score, list[int]]:
    """The cheapest way to put request ``r``'s pickup and dropoff into ``route`` (the first
    found on a tie), pricing each candidate from shared prefix states."""
    n = len(route)
    prefix = [pricer.start(v)]
    for s in route:
        prefix.append(pricer.step(v, prefix[-1], s))
    best: Score = (1 << 30, 1 << 60)
    where = (0, 0)
    for i in range(n + 1):
        state = pricer.step(v, prefix[i], 2 * r)
        for j in range(i, n + 1):
            if j > i:
                state = pricer.step(v, state, route[j - 1])
            if (state[3], state[4]) >= best:
                break
            score = _finish(pricer, v, pricer.step(v, state, 2 * r + 1), route[j:], best)
            if score is not None and score < best:
                best, where = score, (i, j)
    i, j = where
    return best, route[:i] + [2 * r] + route[i:j] + [2 * r + 1] + route[j:]


def _relocate(pricer: RouteCost, routes: dict[int, list[int]], scores: dict[int, Score], r: int,
              vehicles: Sequence[int]) -> bool:
    """Move request ``r`` to its best place (any of ``vehicles``, or unserved); True if that
    lowers the plan's (violations, cost)."""
    penalty = pricer.inst.unserved_penalty
    home = next((v for v, route in routes.items() if 2 * r in route), None)
    before = _total(pricer, routes, scores)
    out_routes = dict(routes)
    out_scores = dict(scores)
    if home is not None:
        out_routes[home] = [s for s in routes[home] if s // 2 != r]
        out_scores[home] = pricer.route(home, out_routes[home])
    base = _total(pricer, out_routes, out_scores)
    best: tuple[Score, int | None, list[int] | None] = ((base[0], base[1]), None, None)  # unserved
    for v in vehicles:
        score, cand = _best_insertion(pricer, v, out_routes[v], r)
        old = out_scores[v]
        total = (base[0] - old[0] + score[0], base[1] - old[1] + score[1] - penalty)
        if total < best[0]:
            best = (total, v, cand)
    if not best[0] < before:
        return False
    if home is not None:
        routes[home], scores[home] = out_routes[home], out_scores[home]
    if best[1] is not None:
        routes[best[1]] = best[2]
        scores[best[1]] = pricer.route(best[1], best[2])
    return True


def improve(
    instance: P3Instance,
    plan: Mapping[str, Sequence[str]],
    schedule: Sequence[Any] = (),
    *,
    vehicles: Sequence[str] | None = None,
    max_passes: int = MAX_PASSES,
) -> SearchedRoutes:
    """Local search from ``plan`` (REALM shape) facing ``schedule``, known in advance.

    ``vehicles``: the vehicle ids that may serve (default all; others keep no stops), so
    that the same search finds the best plan of one vehicle alone."""
    pricer = RouteCost(instance, schedule)
    allowed = [k for k, v in enumerate(instance.vehicles) if vehicles is None or v.vehicle_id in vehicles]
    codes = plan_codes(instance, {k: v for k, v in plan.items() if vehicles is None or k in vehicles})
    routes = {k: list(codes.get(k, [])) for k in allowed}
    scores = {k: pricer.route(k, routes[k]) for k in allowed}
    moves = 0
    for _ in range(max_passes):
        moved = False
        for r in range(instance.n_requests):
            if _relocate(pricer, routes, scores, r, allowed):
                moved, moves = True, moves + 1
        if not moved:
            break
    bad, cost = _total(pricer, routes, scores)
    return SearchedRoutes(routes, bad, cost, moves)


def check_with_sim(instance: P3Instance, plan: Mapping[str, Sequence[str]], schedule: Sequence[Any] = ()) -> bool:
    """Whether :class:`RouteCost` prices ``plan`` as the simulator does (cost, feasibility)."""
    pricer = RouteCost(instance, schedule)
    codes = plan_codes(instance, plan)
    scores = {k: pricer.route(k, codes.get(k, [])) for k in range(instance.n_vehicles)}
    bad, cost = _total(pricer, codes, scores)
    sim = simulate_plan(instance, plan, schedule)
    return cost == sim.cost() and (bad == 0) == (not sim.violations)


#: Largest number of requests :func:`exact` enumerates (every order of every subset).
EXACT_MAX_REQUESTS = 5


def _best_orders(pricer: RouteCost, v: int, n: int) -> dict[int, tuple[int, list[int]]]:
    """For every subset (bitmask) of the ``n`` requests, vehicle ``v``'s cheapest on-time
    route serving exactly it: {mask: (travel, stops)} (subsets it cannot serve are absent).
    A depth-first walk over partial routes, cut at the first violation."""
    best: dict[int, tuple[int, list[int]]] = {}

    def walk(state: State, stops: list[int], picked: int, aboard: int) -> None:
        if not aboard:
            mask = picked
            if mask not in best or state[4] < best[mask][0]:
                best[mask] = (state[4], list(stops))
        for r in range(n):
            bit = 1 << r
            for s, ok in ((2 * r, not picked & bit), (2 * r + 1, bool(aboard & bit))):
                if not ok:
                    continue
                nxt = pricer.step(v, state, s)
                if nxt[3]:
                    continue
                stops.append(s)
                if s % 2 == 0:
                    walk(nxt, stops, picked | bit, aboard | bit)
                else:
                    walk(nxt, stops, picked, aboard & ~bit)
                stops.pop()

    walk(pricer.start(v), [], 0, 0)
    return best


def exact(instance: P3Instance, schedule: Sequence[Any] = (), *, vehicles: Sequence[str] | None = None) -> SearchedRoutes:
    """The optimum facing ``schedule`` (known in advance) of an instance with at most
    :data:`EXACT_MAX_REQUESTS` requests, by enumeration: every vehicle's cheapest on-time
    route for every subset of requests, then the cheapest split of the requests among the
    vehicles (a request in no subset is unserved). ``vehicles`` restricts who may serve."""
    n = instance.n_requests
    if n > EXACT_MAX_REQUESTS:
        raise ValueError(f"exact search is for at most {EXACT_MAX_REQUESTS} requests, not {n}")
    pricer = RouteCost(instance, schedule)
    allowed = [k for k, v in enumerate(instance.vehicles) if vehicles is None or v.vehicle_id in vehicles]
    tables = [_best_orders(pricer, k, n) for k in allowed]
    full = (1 << n) - 1
    # f[mask]: (travel, routes) serving exactly ``mask`` with the vehicles handled so far
    f: dict[int, tuple[int, dict[int, list[int]]]] = {0: (0, {})}
    for k, table in zip(allowed, tables):
        g: dict[int, tuple[int, dict[int, list[int]]]] = {}
        for mask, (cost, routes) in f.items():
            for sub, (travel, stops) in table.items():
                if sub & mask:
                    continue
                key = mask | sub
                total = cost + travel
                if key not in g or total < g[key][0]:
                    g[key] = (total, {**routes, k: stops})
        f = g
    penalty = instance.unserved_penalty
    mask = min(f, key=lambda m: (f[m][0] + penalty * (n - bin(m & full).count("1")), m))
    travel, routes = f[mask]
    cost = travel + penalty * (n - bin(mask).count("1"))
    return SearchedRoutes({k: routes.get(k, []) for k in allowed}, 0, cost, 0)
