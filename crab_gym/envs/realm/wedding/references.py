"""P5/P8 references as :class:`~crab_gym.envs.realm.common.references.Reference` records.

``reset()`` never waits on a solver: a shipped instance's reference is read from
``instances/p5|p8/references.json``; any other instance is solved the first time its
reference is needed (at the end of an episode) and cached on disk by the common store,
keyed by the instance's fingerprint (P8: and the disruptions the episode faced).

* **P5**: the better of the RoutingModel oracle (deterministic search) and the CP-SAT model
  (one worker, deterministic time limit); ``OPTIMAL`` when CP-SAT proved it, ``bound`` is
  CP-SAT's proven lower bound. ``solo_value`` is the vehicles acting alone (the
  coordination baseline: one vehicle does everything, the others drive to the venue).
* **P8**: the P5 plan made before any disruption, then the adaptive oracle re-solving at
  each disruption, or the greedy policy when that does better (``policy`` says which).

A record's ``plan`` is the ``submit_plan`` arguments, ``{"routes": {...}}``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.common.cache import JsonCache, code_version
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.common.references import Reference, shipped_records, stored_reference
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.heuristics import run_greedy
from crab_gym.envs.realm.wedding.local_search import improve
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS, WeddingInstance
from crab_gym.envs.realm.wedding.oracle import SOLUTION_LIMIT, SOLVER, TIME_GUARD, routes_by_id, solo_value, solve_p5
from crab_gym.envs.realm.wedding.oracle_cpsat import SOLVER as CPSAT_SOLVER
from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat
from crab_gym.envs.realm.wedding.oracle_disruptions import (
    RESOLVE_SEARCH_TRIES,
    RESOLVE_SOLUTION_LIMIT,
    RESOLVE_TIME_GUARD,
    adaptive_from_state,
    adaptive_oracle,
    better,
    kept_from_state,
    routes_result,
)
from crab_gym.envs.realm.wedding.sim import WeddingSim, plan_codes

#: CP-SAT's deterministic time for a reference solved on demand (generated instances, files).
ON_DEMAND_DETERMINISTIC_TIME = 10.0


#: Candidates of the local search that checks every reference plan.
SEARCH_TRIES = 5000
#: Seeded runs of the local search, one after the other.
SEARCH_SEEDS = 4
#: Candidates of the local search from a P5 solver plan (the audit found plans it beats).
P5_SEARCH_TRIES = 20000
LOCAL_SEARCH = "local search (seeded candidates: relocate, swap, venue drop, reverse)"


def _search(inst: WeddingInstance, routes: dict[str, list[str]], schedule: Sequence[Any] = (),
            tries: int = SEARCH_TRIES, seeds: int = SEARCH_SEEDS) -> tuple[bool, int, dict]:
    """(infeasible, cost, routes) of the best plan the local search finds from ``routes``,
    judged by the checker facing ``schedule``."""
    def judge(plan: dict[int, list[int]]) -> tuple[bool, int]:
        verdict = check_plan(inst, routes_by_id(inst, plan), disruptions=schedule)
        return not verdict.feasible, int(verdict.cost)

    plan = plan_codes(inst, routes)
    for seed in range(seeds):  # each run starts from the best so far
        plan, (infeasible, cost) = improve(plan, judge, list(range(len(inst.vehicles))), inst.venue_code,
                                           tries=tries, seed=seed)
    return infeasible, cost, routes_by_id(inst, plan)


def _cpsat_candidate(inst: WeddingInstance, cp: OracleResult, label: str) -> tuple[bool, int, dict, str] | None:
    if cp.plan is None:
        return None
    routes = cp.plan["routes"]
    verdict = check_plan(inst, routes)
    return not verdict.feasible, int(verdict.cost), routes, label


def p5_record(inst: WeddingInstance, deterministic_limit: float | None = None) -> dict[str, Any]:
    """The P5 reference record of ``inst``: the better of the routing and CP-SAT plans,
    improved by the local search; when the search beat CP-SAT's unproven value, CP-SAT
    again, seeded with that plan (never worse than its seed; its bound may prove it)."""
    inst = inst.plain()
    routing = solve_p5(inst)
    cp = solve_cpsat(inst, deterministic_limit)
    cands = [(not routing.feasible, routing.cost, routing.plan["routes"], "routing"), _cpsat_candidate(inst, cp, "cpsat")]
    best = min((c for c in cands if c is not None), key=lambda c: c[:2])
    searched = _search(inst, best[2], tries=P5_SEARCH_TRIES, seeds=1)
    if searched[:2] < best[:2]:
        best = (*searched, f"{best[3]} + local search")
    seeded = None
    if cp.status != "OPTIMAL" and (cp.cost is None or best[1] < cp.cost):
        seeded = solve_cpsat(inst, deterministic_limit, hint=plan_codes(inst, best[2]))
        again = _cpsat_candidate(inst, seeded, f"cpsat seeded with {best[3]}")
        best = min(best, again, key=lambda c: c[:2]) if again is not None else best
    proof = seeded if seeded is not None and seeded.status == "OPTIMAL" else cp
    infeasible, value, routes, which = best
    proven = proof.status == "OPTIMAL" and proof.cost == value and not infeasible
    return {
        "value": value,
        "status": "OPTIMAL" if proven else ("INFEASIBLE" if infeasible else "FEASIBLE"),
        "bound": max(0.0, cp.bound, seeded.bound if seeded is not None else 0.0),  # minutes are never negative
        "solver": f"{SOLVER} + {CPSAT_SOLVER} + {LOCAL_SEARCH} (+ CP-SAT seeded with the searched plan)",
        "time_limit_s": TIME_GUARD,
        "workers": 1,
        "plan": {"routes": routes},
        "best_of": which,
        "routing_value": routing.cost,
        "routing_status": routing.status,
        "solution_limit": SOLUTION_LIMIT,
        "cpsat_value": cp.cost,
        "cpsat_status": cp.status,
        "search_tries": P5_SEARCH_TRIES,
        "seeded_cpsat_value": None if seeded is None else seeded.cost,
        "seeded_cpsat_status": None if seeded is None else seeded.status,
        "deterministic_time_limit": cp.time_limit_s,
        "solo_value": solo_value(inst),
        "fingerprint": inst.fingerprint(),
    }


def p5_reference(instance: WeddingInstance) -> Reference:
    """The P5 reference of ``instance`` (P8: of its plain problem, the shipped P5 twin of the
    same seed when it is one): shipped, cached or solved now."""
    plain = instance.plain()
    twin = shipped_records(INSTANCE_DIRS["p5"]).get(plain.name.replace("p8_", "p5_", 1))
    if twin is not None and twin.get("fingerprint") == plain.fingerprint():
        return Reference.from_record(twin, "shipped")
    return stored_reference(
        "p5", plain, INSTANCE_DIRS["p5"], lambda i: p5_record(i, ON_DEMAND_DETERMINISTIC_TIME)
    )


def _initial(inst: WeddingInstance) -> dict[str, Any]:
    """The P5 record of a P8 instance's plain problem (:func:`p5_reference`)."""
    return p5_reference(inst).to_dict()


def schedule_key(schedule: Sequence[Any]) -> str:
    text = json.dumps([json.loads(d.model_dump_json()) for d in schedule], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class FacedSchedule:
    """A P8 instance and the disruptions an episode faces: what a P8 reference belongs to."""

    instance: WeddingInstance
    schedule: tuple[Any, ...]

    @property
    def name(self) -> str:
        return self.instance.name

    def fingerprint(self) -> str:
        fp = self.instance.fingerprint()
        own = list(self.schedule) == list(getattr(self.instance, "disruptions", []))
        return fp if own else f"{fp}-{schedule_key(self.schedule)}"


def _p8_candidates(inst: WeddingInstance, initial: dict[str, list[str]], schedule: list[Any]) -> dict[str, OracleResult]:
    """The plans a P8 reference is the best of, facing ``schedule``: the adaptive oracle, the
    P5 plan kept unchanged, the greedy policy."""
    kept = check_plan(inst, initial, disruptions=schedule)
    greedy = run_greedy(WeddingSim(inst, schedule))
    verdict = greedy.check()
    return {
        "adaptive_oracle": adaptive_oracle(inst, initial, schedule),
        "kept_p5_plan": routes_result(initial, kept.cost, kept.feasible, status="PLAN"),
        "greedy": routes_result(greedy.routes(), verdict.cost, verdict.feasible, status="PLAN"),
    }


def p8_record(inst: WeddingInstance, schedule: Sequence[Any] | None = None) -> dict[str, Any]:
    """The P8 reference record facing ``schedule`` (default: the instance's own): the best of
    :func:`_p8_candidates`, then the local search from it, judged facing the schedule."""
    schedule = list(getattr(inst, "disruptions", [])) if schedule is None else list(schedule)
    initial = _initial(inst)
    found = _p8_candidates(inst, initial["plan"]["routes"], schedule)
    policy = min(found, key=lambda k: (not found[k].feasible, found[k].cost))
    best = found[policy]
    infeasible, cost, routes = _search(inst, best.plan["routes"], schedule)
    if (infeasible, cost) < (not best.feasible, best.cost):
        best, policy = routes_result(routes, cost, not infeasible, status="PLAN"), f"{policy} + local search"
    adaptive, kept = found["adaptive_oracle"], found["kept_p5_plan"]
    return {
        "value": best.cost,
        "status": f"ADAPTIVE({initial['status']})" if policy == "adaptive_oracle" else "FEASIBLE",
        "bound": None,
        "solver": f"{SOLVER} + deterministic re-solve at each disruption; best of it, the P5 plan kept, "
                  f"greedy; then {LOCAL_SEARCH} facing the disruptions ({SEARCH_SEEDS} x {SEARCH_TRIES} candidates)",
        "time_limit_s": initial.get("time_limit_s", TIME_GUARD),
        "workers": 1,
        "plan": {"routes": best.plan["routes"]},
        "policy": policy,
        "feasible": best.feasible,
        "resolves": adaptive.detail["resolves"],
        "adaptive_value": adaptive.cost,
        "kept_value": kept.cost if kept.feasible else None,
        "greedy_value": found["greedy"].cost if found["greedy"].feasible else None,
        "disruption_matters": (not kept.feasible or kept.cost > initial["value"])
                              and (adaptive.feasible and (not kept.feasible or adaptive.cost < kept.cost)),
        "resolve_solution_limit": RESOLVE_SOLUTION_LIMIT,
        "resolve_time_guard_s": RESOLVE_TIME_GUARD,
        "resolve_search_tries": RESOLVE_SEARCH_TRIES,
        "search_tries": SEARCH_TRIES,
        "search_seeds": SEARCH_SEEDS,
        "initial_value": initial["value"],
        "initial_status": initial["status"],
        "solo_value": initial.get("solo_value"),
    }


def p8_reference(instance: WeddingInstance, schedule: Sequence[Any] | None = None) -> Reference:
    """The P8 reference facing ``schedule``: shipped for a shipped instance facing its own
    disruptions, else cached or solved now."""
    own = list(getattr(instance, "disruptions", []))
    faced = FacedSchedule(instance, tuple(own if schedule is None else schedule))
    return stored_reference("p8", faced, INSTANCE_DIRS["p8"], lambda f: p8_record(f.instance, f.schedule))


#: The adaptation yardsticks solved, by :func:`adaptation_key`: in memory and under
#: ``cache_dir("realm/p8_adaptation")``, as P7's are. The search is deterministic (solution and
#: candidate limits) but cut by a wall-clock guard, so only the same code on the same
#: OR-Tools gives the same value: both are in the key.
ADAPTATION_CACHE = JsonCache("realm/p8_adaptation", max_memory=10_000)

#: The modules whose code decides the yardstick (the key hashes their source).
_YARDSTICK_MODULES = (
    __name__, "crab_gym.envs.realm.wedding.oracle_disruptions", "crab_gym.envs.realm.wedding.oracle",
    "crab_gym.envs.realm.wedding.local_search", "crab_gym.envs.realm.wedding.heuristics",
    "crab_gym.envs.realm.wedding.sim", "crab_gym.envs.realm.wedding.model", "crab_gym.envs.realm.wedding.network",
    "crab_gym.envs.realm.wedding.checker", "crab_gym.envs.realm.common.fleet.routing",
    "crab_gym.envs.realm.common.fleet.sim",
)


def adaptation_key(sim: WeddingSim, keep: dict[int, list[int]] | None) -> str:
    """The whole input of :func:`adaptation_value` (``sim`` with its schedule still to come
    set): the instance, every vehicle's state, every stop's, the disruptions applied and to
    come, the plan kept, and the code and OR-Tools version that search from it."""
    doc = {
        "code": code_version(_YARDSTICK_MODULES), "instance": sim.inst.model_dump(mode="json"),
        "vehicles": [dataclasses.asdict(v) for v in sim.vehicles],
        "stops": [sim.status, sim.assigned, sim.delivered_at, sim.served_at],
        "applied": [json.loads(d.model_dump_json()) for d in sim.applied],
        "pending": [json.loads(d.model_dump_json()) for d in sim.pending],
        "keep": None if keep is None else sorted((int(k), list(v)) for k, v in keep.items()),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def adaptation_value(snapshot: Any, schedule: Sequence[Any], keep: dict[int, list[int]] | None,
                     *, cache: bool = True) -> int:
    """The cost of the better of the adaptive oracle taking over from an episode's state at
    its first disruption and keeping the plan followed then (``schedule``: what is still to
    come; ``keep``: that plan), so that ignoring a disruption never beats the reference.
    Cached (:data:`ADAPTATION_CACHE`, in memory and on disk) unless ``cache`` is False: every
    evaluation run paid 0.3-0.4 CPU-s per episode for it before."""
    sim = snapshot.copy()
    sim.pending = sorted(schedule, key=lambda d: d.start)
    key = adaptation_key(sim, keep) if cache else ""
    if cache and (hit := ADAPTATION_CACHE.get(key)) is not None:
        return int(hit["value"])
    res = adaptive_from_state(sim, keep)
    if keep is not None:
        res = better(res, kept_from_state(sim, keep))
    if cache:
        ADAPTATION_CACHE.put(key, {"value": int(res.cost), "feasible": bool(res.feasible)})
    return int(res.cost)
