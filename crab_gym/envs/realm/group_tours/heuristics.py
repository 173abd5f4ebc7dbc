"""Greedy baseline policies for Realm-P1-v0 (campus tour) and Realm-P2-v0 (group tours).

Both follow the policy protocol of :mod:`crab_gym.baselines.random_policy`:
``policy = Cls(env); action = policy(observation, info)``, returning a tool call.

* :class:`InsertionTourPolicy` (P1) plans a route by *cheapest feasible insertion* at the
  start of an episode (targets are inserted one at a time where they add the least travel
  while every window, the return window and the travel budget still hold; several
  insertion orders are tried and the best route kept), then walks it
  with ``visit`` actions. A target with no feasible insertion is left out. If the planned
  step is ever masked it falls back to the legal visit that can start soonest.
* :class:`EarliestStartPolicy` (P2) takes the unassigned group with the earliest preferred
  start (then arrival, then id order) and gives it to the legal guide who can start it
  soonest, ties to the guide with fewer tours (then id order).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.campus_tour.model import P1Instance


# ---------------------------------------------------------------------------------------
# P1
# ---------------------------------------------------------------------------------------
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


def insertion_route_p1(instance: P1Instance, restarts: int = 16) -> list[str]:
    """A feasible route (maybe missing targets) by cheapest feasible insertion.

    Several insertion orders are tried -- always the cheapest target next; targets by
    closing time, opening time, window midpoint and window width; and ``restarts`` shuffled
    orders (a fixed seed, so the result is deterministic) -- and the route serving most
    targets, then walking least, is kept.
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


class InsertionTourPolicy:
    """Plans a route by cheapest feasible insertion, then visits it stop by stop."""

    name = "p1_insertion"

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        self._route: list[str] = []

    def reset(self, env: gym.Env | None = None) -> None:
        if env is not None:
            self.env = env
        self._route = []

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


# ---------------------------------------------------------------------------------------
# P2
# ---------------------------------------------------------------------------------------
class EarliestStartPolicy:
    """Earliest-preferred group first, to the guide who can start it soonest."""

    name = "p2_earliest_start"

    def __init__(self, env: gym.Env) -> None:
        self.env = env

    def reset(self, env: gym.Env | None = None) -> None:
        if env is not None:
            self.env = env

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict:
        base = self.env.unwrapped
        inst, sched = base.instance, base.schedule
        mask = np.asarray(base.action_masks(), dtype=bool).reshape(sched.G, sched.K)
        open_groups = np.flatnonzero(mask.any(axis=1))
        if open_groups.size == 0:  # nothing legal: the env reports it as invalid
            return {"name": "assign", "arguments": {"group": inst.group_ids[0], "guide": inst.guide_ids[0]}}
        g = min(open_groups, key=lambda g: (inst.groups[g].preferred, inst.groups[g].arrival, g))
        loads = [len(t) for t in sched.tours]
        k = min(np.flatnonzero(mask[g]), key=lambda k: (sched.earliest(int(g), int(k)), loads[k], k))
        return {"name": "assign", "arguments": {"group": inst.group_ids[g], "guide": inst.guide_ids[k]}}


def earliest_start_plan(instance: Any) -> dict:
    """The :class:`EarliestStartPolicy` rule run on a P2 instance directly (no env):
    a plan in REALM's shape ``{"assignments": {...}}``; groups it cannot place are left out."""
    G, K, D = len(instance.groups), len(instance.guides), instance.tour_duration
    tours: list[list[int]] = [[] for _ in range(K)]  # sorted starts per guide
    plan: dict[str, list[dict]] = {gid: [] for gid in instance.guide_ids}

    def earliest(g: int, k: int) -> int | None:
        gd = instance.guides[k]
        s = max(instance.groups[g].arrival, gd.available_from)
        for a in tours[k]:
            if s + D <= a:
                break
            if s < a + D:
                s = a + D
        return s if s + D <= gd.available_to else None

    order = sorted(range(G), key=lambda g: (instance.groups[g].preferred, instance.groups[g].arrival, g))
    for g in order:
        options = [
            (s, len(tours[k]), k)
            for k in range(K)
            if instance.compatible(g, k) and (s := earliest(g, k)) is not None
        ]
        if not options:
            continue
        s, _, k = min(options)
        tours[k] = sorted([*tours[k], s])
        plan[instance.guide_ids[k]].append({"group": instance.group_ids[g], "start": s})
    for items in plan.values():
        items.sort(key=lambda t: t["start"])
    return {"assignments": plan}
