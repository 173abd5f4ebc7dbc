"""Exhaustive P5 optimum for tiny instances, through the independent checker only.

Vehicles never interact in P5 (a trip's time depends on its departure alone), so the optimum
is the best split of the guests and errands among the vehicles (or left undone) of the best
route of each vehicle for its share: every order of its stops, with a venue drop in any
subset of the gaps between them.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance


def brute_force(inst: WeddingInstance) -> tuple[int, dict[str, list[str]]]:
    """(optimal cost, a plan achieving it)."""
    names = inst.stop_names()[:-1]
    venue = inst.index[inst.venue]
    straight = {v.vehicle_id: int(inst.travel[inst.index[v.place], venue]) for v in inst.vehicles}
    total_straight = sum(straight.values())

    @cache
    def best(vid: str, items: frozenset[int]) -> tuple[float, tuple[str, ...]]:
        found: tuple[float, tuple[str, ...]] = (math.inf, ())
        for order in itertools.permutations(sorted(items)):
            for drops in itertools.product((False, True), repeat=max(0, len(order) - 1)):
                route: list[str] = []
                for k, s in enumerate(order):
                    route.append(names[s])
                    if k < len(drops) and drops[k]:
                        route.append(VENUE_STOP)
                verdict = check_plan(inst, {vid: route})
                ok = verdict.constraints
                mine = [f"seats:{vid}", f"back:{vid}"]
                for s in order:
                    if s < inst.n_guests:
                        g = inst.guests[s].guest_id
                        mine += [f"landed:{g}", f"photo:{g}"]
                    else:
                        e = inst.errands[s - inst.n_guests].errand_id
                        mine += [f"window:{e}", f"photo:{e}"]
                if all(ok[c] for c in mine):
                    cost = verdict.travel - (total_straight - straight[vid])
                    found = min(found, (cost, tuple(route)))
        return found

    V = len(inst.vehicles)
    result: tuple[float, dict[str, list[str]]] = (math.inf, {})
    for split in itertools.product(range(V + 1), repeat=inst.n_items):  # V: left undone
        cost = inst.unserved_penalty * sum(1 for x in split if x == V)
        plan = {}
        for k, veh in enumerate(inst.vehicles):
            c, route = best(veh.vehicle_id, frozenset(s for s, x in enumerate(split) if x == k))
            cost += c
            plan[veh.vehicle_id] = list(route)
        if cost < result[0]:
            result = (cost, plan)
    return int(result[0]), result[1]
