"""The P4 oracle (ride-sharing with disruptions): re-solve from the state at each disruption,
keeping what is done.

The adaptive oracle drives a plan until a disruption is applied (the clock reaches it), then
re-solves the rest with the P3 model (:func:`~crab_gym.envs.realm.ridesharing.oracle.solve_darp`)
from that state: stops already served and trips already under way are kept; each vehicle
starts where and when it becomes free, with its passengers on board pinned to it. It plans
once with the travel times in force at that minute and once with the undisrupted ones, and
goes on with whichever of those two plans, the current one and a greedy completion does best
when simulated with what is known then (the disruptions that have started, with their durations; nothing about
later ones). The chosen plan is driven on until the next disruption, and so on. Its final
cost, simulated with the real time-dependent travel times, is the reference for the
adaptation metric.

Re-solves are deterministic (greedy descents, which end by themselves at a local optimum;
see :data:`RESOLVE_SEARCH`), so the reference is the same on every run, however loaded the
machine: an agent that follows the oracle's plan scores adaptation 1 exactly.

The adaptation yardstick (:func:`adaptation_yardstick`) is the better of that re-solve and
keeping the plan being followed when the first disruption struck, both simulated from that
same state facing the same disruptions: re-planning is never scored against a yardstick worse
than not re-planning. Realm-P4's adaptation metric now uses a larger portfolio, of which both
are members (:mod:`crab_gym.envs.realm.ridesharing.adaptation`, issue 36).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crab_gym.envs.realm.common.fleet.routing import drive_adaptively
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.ridesharing.heuristics import greedy_completion
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.oracle import (
    DETERMINISTIC_STARTS,
    DarpRoutes,
    DarpVehicle,
    build_model,
    solve_once,
)
from crab_gym.envs.realm.ridesharing.sim import WAITING, RideSim, plan_codes

#: The re-solve search: greedy descent (it stops at a local optimum by itself) from each
#: first-solution strategy, the best wins. No metaheuristic: guided local search ends only on
#: a solution count it may never reach (a re-solve after an injected accident ran for
#: minutes), so it needed a wall-clock limit, and a short one made the yardstick depend on the
#: machine's load (1275 or 5275 for the same state of p4_medium_06).
RESOLVE_SEARCH = "greedy descent from " + ", ".join(DETERMINISTIC_STARTS) + "; the best wins"
#: Runaway guard in seconds (never reached: a greedy descent ends by itself in well under a second).
RESOLVE_TIME_GUARD = 3600.0


def deterministic_darp(
    instance: P3Instance, matrix: Any, vehicles: list[DarpVehicle], waiting: list[int]
) -> DarpRoutes:
    """:func:`~crab_gym.envs.realm.ridesharing.oracle.solve_darp`'s model searched by
    :data:`RESOLVE_SEARCH` (the same result on every machine)."""
    best: tuple[dict[int, list[int]] | None, int | None, str] = (None, None, "ROUTING_NOT_SOLVED")
    for first in DETERMINISTIC_STARTS:
        model = build_model(instance, matrix, vehicles, waiting)
        found = solve_once(model, vehicles, first, "GREEDY_DESCENT", RESOLVE_TIME_GUARD, None)
        if found[0] is not None and (best[1] is None or found[1] < best[1]):
            best = found
    routes, objective, status = best
    return DarpRoutes(routes or {}, status, objective, RESOLVE_TIME_GUARD, None)


def resolve_from_state(sim: RideSim, *, travel: str = "now") -> tuple[dict[int, list[int]], dict[str, Any]]:
    """A new plan (stop codes per vehicle index) for what is left, from the state of ``sim``.

    ``travel="now"`` plans with the travel times in force at the clock (as if the current
    disruptions lasted), ``"static"`` with the undisrupted ones (as if they were over).
    """
    clock = sim.clock
    if clock is None:
        return {}, {"clock": None, "status": "NOTHING_LEFT"}
    vehicles = [
        DarpVehicle(index=k, loc=v.loc, free=v.free, capacity=v.capacity, load=v.load, onboard=list(v.onboard))
        for k, v in enumerate(sim.vehicles)
        if not v.parked
    ]
    waiting = [r for r in range(sim.R) if sim.status[r] == WAITING]
    matrix = sim.matrix(clock) if travel == "now" else sim.net.static
    res = deterministic_darp(sim.inst, matrix, vehicles, waiting)
    if not res.routes:  # no solution at all: keep passengers on board, drop the rest
        res.routes = {v.index: [2 * r + 1 for r in v.onboard] for v in vehicles}
    log = {
        "clock": clock,
        "travel": travel,
        "status": res.status,
        "search": "greedy descent",
        "workers": 1,
    }
    return res.routes, log


def _outlook(sim: RideSim, plan: Mapping[int, Sequence[int]]) -> tuple[int, int]:
    """(violations, cost) of finishing ``plan`` from ``sim`` knowing only the disruptions
    already applied (later ones are unknown to the oracle)."""
    trial = sim.copy()
    trial.pending = []
    trial.run_plan(plan)
    return len(trial.violations), trial.cost()


def _best_of(sim: RideSim, keep: Mapping[int, Sequence[int]] | None, **resolve_kwargs: Any) -> tuple[dict[int, list[int]], dict[str, Any]]:
    """The plan to follow from here: the current one (if any), a re-solve planned with the
    travel times in force now, one with the undisrupted ones, or the greedy completion,
    whichever looks best with what is known (fewer violations, then lower cost; ties keep the
    earlier candidate)."""
    candidates: list[tuple[dict[int, list[int]], dict[str, Any]]] = []
    if keep is not None:
        candidates.append(({k: list(v) for k, v in keep.items()}, {"clock": sim.clock, "travel": "previous plan"}))
    for travel in ("now", "static"):
        candidates.append(resolve_from_state(sim, travel=travel, **resolve_kwargs))
    candidates.append((greedy_completion(sim), {"clock": sim.clock, "travel": "greedy"}))
    scores = [_outlook(sim, plan) for plan, _ in candidates]
    best = min(range(len(candidates)), key=lambda i: (scores[i], i))
    plan, log = candidates[best]
    log = dict(candidates[-1][1], chosen=log["travel"], outlook_cost=scores[best][1])
    return plan, log


def continue_adaptively(sim: RideSim, plan: Mapping[int, Sequence[int]], **resolve_kwargs: Any) -> list[dict[str, Any]]:
    """Drive ``plan``; at every disruption pick the plan to go on with (see :func:`_best_of`),
    until every vehicle parks."""
    return drive_adaptively(sim, plan, lambda s, remaining: _best_of(s, remaining, **resolve_kwargs))


def _result(sim: RideSim, log: list[dict[str, Any]]) -> OracleResult:
    """The adaptive oracle's final plan (``submit_plan`` arguments), its cost simulated with
    the real disruptions, ``feasible`` the simulation's verdict; ``detail``: ``travel``
    (minutes), ``served`` (requests delivered), ``resolves`` (one entry per decision)."""
    return OracleResult(
        sim.cost(),
        "ADAPTIVE",
        {"assignments": sim.assignments()},
        time_limit_s=RESOLVE_TIME_GUARD,
        workers=1,
        solver=RESOLVE_SEARCH,
        detail={"travel": sim.travel_minutes(), "served": sim.served(), "resolves": log},
        feasible=not sim.violations,
    )


def adaptive_oracle(
    instance: P3Instance,
    initial_plan: Mapping[str, Sequence[str]],
    schedule: Sequence[Any] | None = None,
    **resolve_kwargs: Any,
) -> OracleResult:
    """Follow ``initial_plan`` (made before any disruption) and re-solve at each disruption.

    ``schedule`` defaults to the instance's own disruptions.
    """
    if schedule is None:
        schedule = getattr(instance, "disruptions", [])
    sim = RideSim(instance, schedule)
    log = continue_adaptively(sim, plan_codes(instance, initial_plan), **resolve_kwargs)
    return _result(sim, log)


def adaptive_from_state(
    snapshot: RideSim, keep: Mapping[int, Sequence[int]] | None = None, **resolve_kwargs: Any
) -> OracleResult:
    """The adaptive oracle taking over from a state (a copy is used; ``snapshot`` is kept).

    ``keep``: the plan being followed at that state, if any (e.g. the rest of a submitted
    plan), which the oracle may go on with if it looks best.
    """
    sim = snapshot.copy()
    plan, entry = _best_of(sim, keep, **resolve_kwargs)
    log = [entry] + continue_adaptively(sim, plan, **resolve_kwargs)
    return _result(sim, log)


def keep_from_state(snapshot: RideSim, keep: Mapping[int, Sequence[int]]) -> OracleResult:
    """Keep ``keep`` (the plan being followed) from a state to the end, never re-planning,
    facing the disruptions still pending in ``snapshot`` (a copy is used)."""
    sim = snapshot.copy()
    sim.run_plan({k: list(v) for k, v in keep.items()})
    return _result(sim, [{"clock": snapshot.clock, "travel": "previous plan kept"}])


def adaptation_yardstick(
    snapshot: RideSim, keep: Mapping[int, Sequence[int]] | None = None, **resolve_kwargs: Any
) -> tuple[OracleResult, str]:
    """The adaptation yardstick from a state: the better (fewer violations, then lower cost;
    a tie keeps the plan) of keeping ``keep`` and the adaptive oracle's re-solve, both
    simulated from ``snapshot`` with the real disruptions to come. Returns (result, which):
    ``"keep"`` or ``"resolve"``."""
    resolved = adaptive_from_state(snapshot, keep, **resolve_kwargs)
    if keep is None:
        return resolved, "resolve"
    kept = keep_from_state(snapshot, keep)
    if (not resolved.feasible, resolved.cost) < (not kept.feasible, kept.cost):
        return resolved, "resolve"
    return kept, "keep"
