"""The P8 oracle (wedding logistics with disruptions): re-solve from the state at each
disruption, keeping what is done.

The adaptive oracle drives a plan until a disruption is applied (the clock reaches it), then
re-solves what is left with the routing model of :mod:`crab_gym.envs.realm.wedding.oracle`
from that state: stops served and trips under way are kept; each vehicle starts where and
when it is free, with what it carries pinned to it. It plans once with the travel times in
force now and once with the undisrupted ones, and goes on with whichever of those, the plan
it was following and the greedy completion does best when simulated with what is known then
(the disruptions that have started; nothing about later ones), then improves that choice
by a short local search (:mod:`crab_gym.envs.realm.wedding.local_search`) judged the same
way. Re-solves and the search are deterministic (solution and candidate limits), so the
reference is the same on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crab_gym.envs.realm.common.fleet.routing import drive_adaptively
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.wedding.heuristics import greedy_completion
from crab_gym.envs.realm.wedding.local_search import improve
from crab_gym.envs.realm.wedding.model import WeddingInstance
from crab_gym.envs.realm.wedding.oracle import RouteVehicle, solve_routes
from crab_gym.envs.realm.wedding.sim import WAITING, WeddingSim, plan_codes

#: Solutions a re-solve's guided local search may visit, and its wall-clock guard (s).
RESOLVE_SOLUTION_LIMIT = 100
RESOLVE_TIME_GUARD = 5.0
#: Candidates the local search tries after each re-solve.
RESOLVE_SEARCH_TRIES = 1000


def resolve_from_state(sim: WeddingSim, travel: str = "now") -> dict[int, list[int]]:
    """A plan (stop codes per vehicle index) for what is left, from the state of ``sim``;
    ``travel="now"`` plans with the minutes in force at the clock, ``"static"`` without disruptions."""
    clock = sim.clock
    if clock is None:
        return {}
    vehicles = [
        RouteVehicle(index=k, loc=v.loc, free=v.free, capacity=v.capacity, end_by=sim.inst.end_by(k),
                     guests=list(v.guests), goods=list(v.goods))
        for k, v in enumerate(sim.vehicles)
        if not v.finished
    ]
    todo = [s for s in range(sim.N) if sim.status[s] == WAITING]
    matrix = sim.matrix(clock) if travel == "now" else sim.net.static
    res = solve_routes(sim.inst, matrix, vehicles, todo, soft=True,
                       solution_limit=RESOLVE_SOLUTION_LIMIT, time_limit=RESOLVE_TIME_GUARD)
    return res.routes


def _outlook(sim: WeddingSim, plan: Mapping[int, Sequence[int]]) -> tuple[bool, int]:
    """(breaks a constraint, cost) of finishing ``plan`` knowing only the disruptions applied."""
    trial = sim.copy()
    trial.pending = []
    trial.run_plan(plan)
    verdict = trial.check()
    return not verdict.feasible, int(verdict.cost)


def _best_of(sim: WeddingSim, keep: Mapping[int, Sequence[int]] | None) -> tuple[dict[int, list[int]], str]:
    candidates: list[tuple[dict[int, list[int]], str]] = []
    if keep is not None:
        candidates.append(({k: list(v) for k, v in keep.items()}, "previous plan"))
    candidates += [(resolve_from_state(sim, "now"), "re-solve (travel now)"),
                   (resolve_from_state(sim, "static"), "re-solve (travel undisrupted)"),
                   (greedy_completion(sim), "greedy")]
    scores = [_outlook(sim, plan) for plan, _ in candidates]
    best = min(range(len(candidates)), key=lambda i: (scores[i], i))
    plan, chosen = candidates[best]
    moving = [k for k, v in enumerate(sim.vehicles) if not v.finished]
    better, score = improve(plan, lambda p: _outlook(sim, p), moving, sim.N, tries=RESOLVE_SEARCH_TRIES)
    return (better, chosen + " + local search") if score < scores[best] else (plan, chosen)


def continue_adaptively(sim: WeddingSim, plan: Mapping[int, Sequence[int]]) -> list[dict[str, Any]]:
    """Drive ``plan``; at every disruption pick the plan to go on with, until every vehicle ends."""
    def choose(s: WeddingSim, remaining: dict[int, list[int]]) -> tuple[dict[int, list[int]], dict[str, Any]]:
        current, chosen = _best_of(s, remaining)
        return current, {"clock": s.clock, "after": [], "chosen": chosen}  # "after": filled in

    return drive_adaptively(sim, plan, choose)


#: What plays the adaptive oracle.
RESOLVE_SEARCH = "RoutingModel re-solve at each disruption (deterministic), best of it, the plan followed, greedy"


def routes_result(routes: Mapping[str, Sequence[str]], cost: float, feasible: bool, *, status: str = "ADAPTIVE",
                  log: Sequence[dict[str, Any]] = ()) -> OracleResult:
    """A day's plan as driven (stop names per vehicle id) as a result: ``cost`` and
    ``feasible`` the checker's verdict facing the disruptions, ``plan`` the ``submit_plan``
    arguments, ``detail["resolves"]`` the adaptive oracle's decisions (one per disruption)."""
    return OracleResult(int(cost), status, {"routes": {k: list(v) for k, v in routes.items()}},
                        time_limit_s=RESOLVE_TIME_GUARD, workers=1, solver=RESOLVE_SEARCH,
                        detail={"resolves": list(log)}, feasible=feasible)


def _result(sim: WeddingSim, log: list[dict[str, Any]]) -> OracleResult:
    verdict = sim.check()
    return routes_result(sim.routes(), verdict.cost, verdict.feasible, log=log)


def adaptive_oracle(instance: WeddingInstance, initial: Mapping[str, Sequence[str]], schedule: Sequence[Any]) -> OracleResult:
    """Follow ``initial`` (made before any disruption) and re-solve at each disruption."""
    sim = WeddingSim(instance, schedule)
    log = continue_adaptively(sim, plan_codes(instance, initial))
    return _result(sim, log)


def adaptive_from_state(snapshot: WeddingSim, keep: Mapping[int, Sequence[int]] | None = None) -> OracleResult:
    """The adaptive oracle taking over from a state (``snapshot`` is not changed)."""
    sim = snapshot.copy()
    plan, chosen = _best_of(sim, keep)
    log = [{"clock": sim.clock, "chosen": chosen}] + continue_adaptively(sim, plan)
    return _result(sim, log)


def kept_from_state(snapshot: WeddingSim, keep: Mapping[int, Sequence[int]]) -> OracleResult:
    """Keeping the plan followed at a state, facing what is still to come (``snapshot`` is
    not changed): what ignoring the disruptions costs."""
    sim = snapshot.copy()
    sim.run_plan({k: list(v) for k, v in keep.items()})
    return _result(sim, [{"clock": snapshot.clock, "chosen": "previous plan, kept to the end"}])


def better(a: OracleResult, b: OracleResult) -> OracleResult:
    """The better of two results: feasible first, then cheaper (``a`` on a tie)."""
    return b if (not b.feasible, b.cost) < (not a.feasible, a.cost) else a
