"""A local search over P7 plans, priced by the independent checker: the check that a reference
is not beaten by a plan next to it, and the polish of the build's CP-SAT plans.

From a feasible plan it tries random neighbours -- shift a departure by a few grid slots,
hand a trip to another vehicle or region, move units between two trips, swap units of one
resource for another, top a load up from the stock left, trim it, add a trip, drop one --
keeping a neighbour when the checker finds it feasible and no dearer (plateau moves let the
search walk along equal costs). No solver: thousands of neighbours a second.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.model import RESOURCES, P7Instance

Plan = dict[str, Any]


def _shift(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    t = rng.choice(trips)
    t["depart"] = max(inst.start, t["depart"] + inst.slot_minutes * rng.choice((-3, -2, -1, 1, 2, 3)))


def _revehicle(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    rng.choice(trips)["vehicle"] = rng.choice(inst.vehicle_ids)


def _reregion(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    rng.choice(trips)["region"] = rng.choice(inst.region_ids)


def _transfer(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    a, b = rng.choice(trips), rng.choice(trips)
    kinds = sorted(k for k, q in a["load"].items() if q > 0)
    if not kinds:
        return
    k = rng.choice(kinds)
    n = rng.randint(1, a["load"][k])
    a["load"][k] -= n
    b["load"][k] = b["load"].get(k, 0) + n


def _retype(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    t = rng.choice(trips)
    kinds = sorted(k for k, q in t["load"].items() if q > 0)
    if not kinds:
        return
    k, k2 = rng.choice(kinds), rng.choice(RESOURCES)
    n = rng.randint(1, t["load"][k])
    t["load"][k] -= n
    t["load"][k2] = t["load"].get(k2, 0) + n


def _resize(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    t = rng.choice(trips)
    k = rng.choice(RESOURCES)
    have = t["load"].get(k, 0)
    n = rng.choice((1, 2, 5, 10, 50, 100, 500))
    t["load"][k] = max(0, have + rng.choice((-n, n)))


def _add(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    v = rng.randrange(len(inst.vehicles))
    r = rng.randrange(len(inst.regions))
    depart = inst.start + inst.slot_minutes * rng.randrange(inst.n_slots)
    room, load = inst.vehicles[v].capacity, {}
    for k in rng.sample(list(inst.regions[r].needs), len(inst.regions[r].needs)):
        load[k] = rng.randint(0, min(room, inst.need(r, k)))
        room -= load[k]
    trips.append({"vehicle": inst.vehicle_ids[v], "region": inst.region_ids[r], "load": load, "depart": depart})


def _drop(inst: P7Instance, trips: list[dict[str, Any]], rng: random.Random) -> None:
    trips.pop(rng.randrange(len(trips)))


MOVES = (_shift, _revehicle, _reregion, _transfer, _transfer, _retype, _resize, _resize, _add, _drop)


def neighbour(inst: P7Instance, plan: Plan, rng: random.Random) -> Plan:
    """A random neighbour of ``plan`` (one or two moves; loads of zero removed)."""
    trips = copy.deepcopy(list(plan["trips"]))
    for _ in range(rng.choice((1, 1, 2))):
        move = rng.choice(MOVES) if trips else _add
        move(inst, trips, rng)
    for t in trips:
        t["load"] = {k: q for k, q in t["load"].items() if q > 0}
    return {"trips": trips}


def improve(
    inst: P7Instance, plan: Plan, schedule: Sequence[Any] | None = None, *, iterations: int = 2000, seed: int = 0
) -> tuple[float, Plan]:
    """``(cost, plan)``: the cheapest feasible plan the search met from ``plan`` (itself if
    none is cheaper), facing ``schedule`` (default: the instance's disruptions)."""
    rng = random.Random(seed)
    start = check_plan(inst, plan, schedule)
    if not start.feasible:
        raise ValueError("the local search starts from a feasible plan")
    cur, cur_cost = plan, start.cost
    best, best_cost = plan, start.cost
    for _ in range(iterations):
        cand = neighbour(inst, cur, rng)
        verdict = check_plan(inst, cand, schedule)
        if verdict.feasible and verdict.cost <= cur_cost:
            cur, cur_cost = cand, verdict.cost
            if cur_cost < best_cost:
                best, best_cost = cur, cur_cost
    return best_cost, best
