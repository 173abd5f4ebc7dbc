"""P9's yardstick: the oracle that replans whenever a flight delay is announced.

It follows the CP-SAT plan made with what is known at the start (flights on schedule) and,
at each announcement, re-solves the rest of the afternoon from the state reached (trips and
tasks under way stay; :func:`~.oracle.solve_from`), exactly as an agent that resubmits a plan
would. The better of this chain and the greedy policy, both taking over from an episode's own
state at its first announcement (:func:`best_continuation`), is the reference of the
adaptation metric.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_play
from crab_gym.envs.realm.thanksgiving.oracle import SOLVER, WORKERS, default_limit, solve_from
from crab_gym.envs.realm.thanksgiving.sim import Kitchen, plan_entries

#: What plays the adaptive oracle.
ADAPTIVE_SOLVER = SOLVER + ", re-solved at each announcement"


def _chain(statuses: list[str], resolves: int, limit: float, plan: dict[str, Any] | None = None,
           verdict: Any = None) -> OracleResult:
    """The adaptive oracle's afternoon: ``status`` ADAPTIVE(OPTIMAL) when every solve was
    proved optimal, else ADAPTIVE(FEASIBLE), or the status of a solve that found nothing;
    ``detail``: ``statuses`` (one per solve) and ``resolves`` (solves after the first)."""
    if verdict is None:
        return OracleResult(None, statuses[-1], None, time_limit_s=limit, workers=WORKERS, solver=ADAPTIVE_SOLVER,
                            detail={"statuses": statuses, "resolves": resolves}, feasible=False)
    proved = all(s == "OPTIMAL" for s in statuses)
    return OracleResult(verdict.cost, f"ADAPTIVE({'OPTIMAL' if proved else 'FEASIBLE'})", plan,
                        time_limit_s=limit, workers=WORKERS, solver=ADAPTIVE_SOLVER,
                        detail={"statuses": statuses, "resolves": resolves}, feasible=verdict.feasible)


def replan_from(state: Kitchen, limit: float | None = None, first: dict[str, Any] | None = None) -> OracleResult:
    """Play the adaptive oracle from ``state`` (a copy is played) to the end: ``first`` (a
    plan, e.g. the shipped P6-style one) or a fresh solve from ``state``, then a re-solve at
    every announcement that interrupts it. ``cost`` and ``feasible`` are the checker's verdict
    on the afternoon as played (see :func:`_chain` for ``status`` and ``detail``)."""
    budget = float(default_limit(state.inst) if limit is None else limit)
    k = state.copy()
    statuses: list[str] = []
    plan = first
    resolves = 0
    while True:
        if plan is None:
            res = solve_from(k, limit)
            statuses.append(res.status)
            if res.cost is None:
                return _chain(statuses, resolves, budget)
            plan = res.plan
        reason, entries = plan_entries(k, plan)
        if reason is not None:
            raise RuntimeError(f"the oracle's plan cannot be carried out: {reason}")
        remaining, _ = k.run_plan(entries)
        if not remaining:
            break
        plan, resolves = None, resolves + 1
    final = k.plan()
    verdict = check_plan(k.inst, final, landings_of(k.inst, k.true_delays))
    return _chain(statuses, resolves, budget, final, verdict)


def best_continuation(state: Kitchen, limit: float | None = None) -> float | None:
    """The cost of the better of the adaptive oracle and the greedy policy taking over from
    ``state`` (None: neither finishes within the rules): the P9 yardstick from any state."""
    chain = replan_from(state, limit)
    greedy = greedy_play(state.copy())
    verdict = check_plan(state.inst, greedy.plan(), landings_of(state.inst, state.true_delays))
    costs = [c.cost for c in (chain, verdict) if c.feasible and c.cost is not None]
    return min(costs) if costs else None
