"""Greedy baseline for Realm-P1-v0 (campus tour): cheapest feasible insertion.

:class:`InsertionTourPolicy` follows the policy protocol of
:mod:`crab_gym.baselines.random_policy`: ``policy = InsertionTourPolicy(env); action =
policy(observation, info)``, returning a tool call. It plans a route by *cheapest feasible
insertion* at the start of an episode (targets are inserted one at a time where they add the
least travel while every window, the return window and the travel budget still hold; five
deterministic insertion orders are tried and the best route kept), then walks it with
``visit`` actions. A target with no feasible insertion is left out. It is a greedy, not a
search: ``insertion_route_p1(instance, restarts=16)`` adds shuffled orders (a multi-start
search that was the default until the instances got harder; it scored 0.99 of the
optimum on the old shipped set). If the planned step is ever masked it falls
back to the legal visit that can start soonest. :func:`greedy_p1_plan` is the same route
without an env.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.common.policy_fit import EnvFit, FittedPolicy

#: The env the policy reads.
FIT = EnvFit("InsertionTourPolicy", "crab_gym.envs.realm.campus_tour.env.CampusTourEnv", ("Realm-P1-v0",))


def _route_ok(inst: P1Instance, route: list[int], travel: list[list[int]], budget: float) -> tuple[bool, int]:
    clock, walked = inst.windows[route[0]][0], 0
    for a, b in zip(route, route[1:]):
        walked += travel[a][b]
        clock += travel[a][b]
        if clock > inst.windows[b][1] or walked > budget:
            return False, walked
        clock = max(clock, inst.windows[b][0])
    return True, walked


def _insert_all(instance: P1Instance, order: list[int] | None) -> list[int]:
    """Insert targets at their cheapest feasible position: in ``order`` if given, else
    always the target whose insertion adds least travel. Targets that fit nowhere stay out."""
    idx = instance.index
    travel = instance.travel
    budget = instance.max_travel if instance.max_travel is not None else math.inf
    route = [idx[instance.start], idx[instance.end]]
    left = list(order) if order is not None else [idx[t] for t in instance.targets]
    while left:
        best: tuple[int, int, int] | None = None  # (travel, target, position)
        for j in left if order is None else left[:1]:
            for pos in range(1, len(route)):
                cand = route[:pos] + [j] + route[pos:]
                ok, walked = _route_ok(instance, cand, travel, budget)
                if ok and (best is None or (walked, j, pos) < best):
                    best = (walked, j, pos)
        if best is None:
            if order is None:
                break
            left.pop(0)  # this target fits nowhere: leave it out
            continue
        _, j, pos = best
        route.insert(pos, j)
        left.remove(j)
    return route


def insertion_route_p1(instance: P1Instance, restarts: int = 0) -> list[str]:
    """A feasible route (maybe missing targets) by cheapest feasible insertion.

    Five insertion orders are tried -- always the cheapest target next; targets by closing
    time, opening time, window midpoint and window width -- plus ``restarts`` shuffled
    orders (a fixed seed, so the result is deterministic; 0 by default: the baseline is a
    greedy, not a random multi-start search), and the route serving most targets, then
    walking least, is kept.
    """
    idx, win = instance.index, instance.windows
    targets = [idx[t] for t in instance.targets]
    orders: list[list[int] | None] = [
        None,
        sorted(targets, key=lambda j: (win[j][1], win[j][0], j)),
        sorted(targets, key=lambda j: (win[j][0], win[j][1], j)),
        sorted(targets, key=lambda j: (win[j][0] + win[j][1], j)),
        sorted(targets, key=lambda j: (win[j][1] - win[j][0], j)),
    ]
    rng = np.random.default_rng(0)
    orders += [list(rng.permutation(targets)) for _ in range(restarts)]
    best: tuple[int, int, list[int]] | None = None
    for order in orders:
        route = _insert_all(instance, order)
        key = (-len(route), sum(instance.travel[a][b] for a, b in zip(route, route[1:])))
        if best is None or key < best[:2]:
            best = (*key, route)
    assert best is not None
    return [instance.locations[i] for i in best[2]]


def greedy_p1_plan(instance: P1Instance) -> dict:
    """The insertion route in REALM's plan shape ``{"route": [...]}``."""
    return {"route": insertion_route_p1(instance)}


class InsertionTourPolicy(FittedPolicy):
    """Plans a route by cheapest feasible insertion, then visits it stop by stop."""

    name = "p1_insertion"
    fit = FIT

    def _restart(self) -> None:
        self._route: list[str] = []

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict:
        base = self.env.unwrapped
        inst, tour = base.instance, base.tour
        done = len(tour.route)
        if done == 1 or [inst.index[x] for x in self._route[:done]] != tour.route:
            self._route = insertion_route_p1(inst)
        if done < len(self._route):
            nxt = self._route[done]
            if tour.why_not(inst.index[nxt]) is None:
                return {"name": "visit", "arguments": {"location": nxt}}
        # fallback: the legal target whose visit can start soonest, else go back
        legal = [
            j for j in range(inst.n)
            if tour.target_mask[j] and not tour.visited[j] and tour.why_not(j) is None
        ]
        if not legal:
            return {"name": "visit", "arguments": {"location": inst.end}}
        soonest = min(
            legal, key=lambda j: (max(tour.clock + inst.travel[tour.pos][j], inst.windows[j][0]), j)
        )
        return {"name": "visit", "arguments": {"location": inst.locations[soonest]}}
