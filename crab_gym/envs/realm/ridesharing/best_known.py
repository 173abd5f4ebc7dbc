"""The best plans known for a ride-sharing instance facing a disruption schedule: the P4
optimality yardstick and the one-vehicle (solo) plan the coordination metric starts from.

Why several candidates: the adaptive oracle re-plans at each disruption without seeing the
next one coming, so keeping the undisrupted plan, or a plan made knowing the disruptions, can
be cheaper (p4_small_03 of the first shipped set: the undisrupted optimum cost 244 under the
disruptions, the adaptive oracle 248). The yardstick is the cheapest feasible plan among

* the adaptive oracle's (:func:`~crab_gym.envs.realm.ridesharing.oracle_disruptions.adaptive_oracle`),
* the greedy policy's,
* the undisrupted P3 plan kept unchanged through the disruptions,
* the best one-vehicle plan (:func:`solo_plan`),

each also improved by the clairvoyant local search of
:mod:`~crab_gym.envs.realm.ridesharing.plan_search`, every one priced by the env's own
simulator; with at most :data:`~crab_gym.envs.realm.ridesharing.plan_search.EXACT_MAX_REQUESTS`
requests also the exact optimum by enumeration (then the value is proven optimal).
Everything is deterministic (greedy descents, pass counts and enumeration; no clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crab_gym.envs.realm.ridesharing.heuristics import drive_greedily
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.oracle import SOLVER, DarpVehicle
from crab_gym.envs.realm.ridesharing.oracle_disruptions import (
    RESOLVE_SEARCH,
    adaptive_oracle,
    deterministic_darp,
)
from crab_gym.envs.realm.ridesharing.plan_search import EXACT_MAX_REQUESTS, MAX_PASSES, exact, improve
from crab_gym.envs.realm.ridesharing.sim import RideSim, simulate_plan

#: How the yardstick is searched (stored with every record: its provenance).
SEARCH = (
    "best of: adaptive oracle (" + SOLVER + " model, re-solved by greedy descents at each disruption), greedy policy, "
    "undisrupted plan kept, best one-vehicle plan; each improved by a clairvoyant request-relocation "
    "local search priced by the env's simulator"
)

Plan = dict[str, list[str]]


def _priced(instance: P3Instance, plan: Mapping[str, Sequence[str]], schedule: Sequence[Any]) -> tuple[bool, int]:
    """(feasible, cost) of ``plan`` run through the simulator facing ``schedule``."""
    sim = simulate_plan(instance, plan, schedule)
    return not sim.violations, sim.cost()


_SOLVES: dict[tuple[str, int], Plan] = {}


def _one_vehicle_solve(instance: P3Instance, k: int) -> Plan:
    """The deterministic P3 solve with vehicle ``k`` alone (undisrupted travel times; kept in
    memory, since every schedule an instance faces starts from the same solves)."""
    key = (_plain_fingerprint(instance), k)
    if key not in _SOLVES:
        if len(_SOLVES) > 1000:
            _SOLVES.clear()
        _SOLVES[key] = _solve_one_vehicle(instance, k)
    return {vid: list(stops) for vid, stops in _SOLVES[key].items()}


def _plain_fingerprint(instance: P3Instance) -> str:
    """The fingerprint of the instance's P3 problem (its disruptions left out)."""
    plain = instance.model_dump(include=set(P3Instance.model_fields))
    return P3Instance.model_validate(plain).fingerprint()


def _solve_one_vehicle(instance: P3Instance, k: int) -> Plan:
    v = instance.vehicles[k]
    me = DarpVehicle(index=k, loc=instance.index[v.location], free=instance.start_time, capacity=v.capacity)
    res = deterministic_darp(instance, instance.network.static, [me], list(range(instance.n_requests)))
    names = instance.stop_names()
    plan: Plan = {u.vehicle_id: [] for u in instance.vehicles}
    plan[v.vehicle_id] = [names[s] for s in res.routes.get(k, [])]
    return plan


def solo_plan(instance: P3Instance, schedule: Sequence[Any] = ()) -> dict[str, Any]:
    """The cheapest plan known in which one vehicle does all the work (the others idle),
    facing ``schedule``: per vehicle, the exact optimum when there are at most
    :data:`~crab_gym.envs.realm.ridesharing.plan_search.EXACT_MAX_REQUESTS` requests, else the
    best of the one-vehicle solve and cheapest insertion, each improved by the local search
    restricted to that vehicle."""
    best: tuple[tuple[bool, int], str, Plan] | None = None
    proven = instance.n_requests <= EXACT_MAX_REQUESTS
    for k, v in enumerate(instance.vehicles):
        empty: Plan = {u.vehicle_id: [] for u in instance.vehicles}
        starts = [exact(instance, schedule, vehicles=[v.vehicle_id])] if proven else [
            improve(instance, start, schedule, vehicles=[v.vehicle_id])
            for start in (_one_vehicle_solve(instance, k), empty)
        ]
        for result in starts:
            found = result.assignments(instance)
            feasible, cost = _priced(instance, found, schedule)
            key = (not feasible, cost)
            if best is None or key < best[0]:
                best = (key, v.vehicle_id, found)
    assert best is not None
    (infeasible, cost), vid, plan = best
    return {
        "value": cost,
        "vehicle": vid,
        "plan": plan,
        "feasible": not infeasible,
        "status": ("OPTIMAL" if proven else "FEASIBLE") if not infeasible else "INFEASIBLE",
        "bound": cost if proven and not infeasible else None,
        "solver": ("enumeration of every route of every vehicle (at most "
                   f"{EXACT_MAX_REQUESTS} requests); best vehicle") if proven else
                  f"{SOLVER} model restricted to one vehicle ({RESOLVE_SEARCH}) and cheapest "
                  f"insertion, each improved by local search ({MAX_PASSES} passes) on that vehicle; best vehicle",
        "workers": 1,
    }


def best_known(
    instance: P3Instance,
    initial_plan: Mapping[str, Sequence[str]],
    schedule: Sequence[Any],
    solo: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The cheapest feasible plan known facing ``schedule`` (see the module doc), with which
    start it came from (``policy``), and the adaptive oracle's own result."""
    adaptive = adaptive_oracle(instance, initial_plan, schedule)
    greedy = drive_greedily(RideSim(instance, schedule)).assignments()
    starts: dict[str, Plan] = {
        "adaptive_oracle": adaptive.plan["assignments"],
        "undisrupted_plan_kept": {k: list(v) for k, v in initial_plan.items()},
        "greedy": greedy,
    }
    if solo is not None:
        starts["solo"] = {k: list(v) for k, v in solo.items()}
    candidates: list[tuple[str, Plan]] = []
    for label, plan in starts.items():
        candidates.append((label, plan))
        found = improve(instance, plan, schedule).assignments(instance)
        candidates.append((label + "+local_search", found))
    proven = instance.n_requests <= EXACT_MAX_REQUESTS
    if proven:
        candidates.append(("exact", exact(instance, schedule).assignments(instance)))
    scored = [(_priced(instance, plan, schedule), i) for i, (_, plan) in enumerate(candidates)]
    (feasible, cost), i = min(scored, key=lambda x: ((not x[0][0], x[0][1]), x[1]))
    label, plan = candidates[i]
    return {
        "value": cost,
        "plan": plan,
        "feasible": feasible,
        "policy": label,
        "proven_optimal": proven and feasible,
        "adaptive_oracle_value": adaptive.cost,
        "adaptive_oracle_plan": adaptive.plan["assignments"],
        "adaptive_oracle_feasible": adaptive.feasible,
        "resolves": adaptive.detail["resolves"],
        "resolve_search": RESOLVE_SEARCH,
        "local_search_passes": MAX_PASSES,
        "candidates": {lab: _priced(instance, p, schedule)[1] for lab, p in candidates},
    }
