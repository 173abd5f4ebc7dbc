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

from crab_gym.envs.realm.common.references import Reference, shipped_records, stored_reference
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS, WeddingInstance
from crab_gym.envs.realm.wedding.oracle import SOLUTION_LIMIT, SOLVER, TIME_GUARD, routes_by_id, solo_value, solve_p5
from crab_gym.envs.realm.wedding.oracle_cpsat import SOLVER as CPSAT_SOLVER
from crab_gym.envs.realm.wedding.oracle_cpsat import solve_cpsat
from crab_gym.envs.realm.wedding.oracle_disruptions import (
    RESOLVE_SOLUTION_LIMIT,
    RESOLVE_TIME_GUARD,
    adaptive_from_state,
    best_reference,
)

#: CP-SAT's deterministic time for a reference solved on demand (generated instances, files).
ON_DEMAND_DETERMINISTIC_TIME = 10.0


def p5_record(inst: WeddingInstance, deterministic_limit: float | None = None) -> dict[str, Any]:
    """The P5 reference record of ``inst``: the better of the routing and CP-SAT plans."""
    inst = inst.plain()
    routing = solve_p5(inst)
    cp = solve_cpsat(inst, deterministic_limit)
    best = (not routing.feasible, routing.cost, routing.routes, "routing")
    if cp.routes is not None:
        routes = routes_by_id(inst, cp.routes)
        verdict = check_plan(inst, routes)
        best = min(best, (not verdict.feasible, int(verdict.cost), routes, "cpsat"), key=lambda c: c[:2])
    infeasible, value, routes, which = best
    proven = cp.status == "OPTIMAL" and cp.value == value and not infeasible
    return {
        "value": value,
        "status": "OPTIMAL" if proven else ("INFEASIBLE" if infeasible else "FEASIBLE"),
        "bound": max(0.0, cp.bound),  # driving minutes are never negative
        "solver": f"{SOLVER} + {CPSAT_SOLVER}",
        "time_limit_s": TIME_GUARD,
        "workers": 1,
        "plan": {"routes": routes},
        "best_of": which,
        "routing_value": routing.cost,
        "routing_status": routing.status,
        "solution_limit": SOLUTION_LIMIT,
        "cpsat_value": cp.value,
        "cpsat_status": cp.status,
        "deterministic_time_limit": cp.deterministic_limit,
        "solo_value": solo_value(inst),
        "fingerprint": inst.fingerprint(),
    }


def p5_reference(instance: WeddingInstance) -> Reference:
    """The P5 reference of ``instance`` (P8: of its plain problem): shipped, cached or solved now."""
    return stored_reference(
        "p5", instance.plain(), INSTANCE_DIRS["p5"], lambda i: p5_record(i, ON_DEMAND_DETERMINISTIC_TIME)
    )


def _initial(inst: WeddingInstance) -> dict[str, Any]:
    """The P5 record of a P8 instance's plain problem: the shipped P5 twin (same seed), else
    :func:`p5_reference`."""
    twin = shipped_records(INSTANCE_DIRS["p5"]).get(inst.name.replace("p8_", "p5_", 1))
    if twin is not None and twin.get("fingerprint") == inst.fingerprint():
        return twin
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


def p8_record(inst: WeddingInstance, schedule: Sequence[Any] | None = None) -> dict[str, Any]:
    """The P8 reference record facing ``schedule`` (default: the instance's own)."""
    schedule = list(getattr(inst, "disruptions", [])) if schedule is None else list(schedule)
    initial = _initial(inst)
    res, policy = best_reference(inst, initial["plan"]["routes"], schedule)
    return {
        "value": res.cost,
        "status": f"ADAPTIVE({initial['status']})",
        "bound": None,
        "solver": f"{SOLVER} + deterministic re-solve at each disruption",
        "time_limit_s": initial.get("time_limit_s", TIME_GUARD),
        "workers": 1,
        "plan": {"routes": res.routes},
        "policy": policy,
        "feasible": res.feasible,
        "resolves": res.resolves,
        "resolve_solution_limit": RESOLVE_SOLUTION_LIMIT,
        "resolve_time_guard_s": RESOLVE_TIME_GUARD,
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


_ADAPTATIONS: dict[str, int] = {}


def adaptation_value(snapshot: Any, schedule: Sequence[Any], keep: dict[int, list[int]] | None) -> int:
    """The cost of the adaptive oracle taking over from an episode's state at its first
    disruption (``schedule``: what is still to come; ``keep``: the plan being followed then).
    Kept in memory (it depends on the episode's own state)."""
    sim = snapshot.copy()
    sim.pending = sorted(schedule, key=lambda d: d.start)
    state = json.dumps({
        "routes": [[(x.stop, x.depart) for x in v.route] for v in sim.vehicles],
        "free": [v.free for v in sim.vehicles], "finished": [v.finished for v in sim.vehicles],
        "applied": [json.loads(d.model_dump_json()) for d in sim.applied],
        "pending": [json.loads(d.model_dump_json()) for d in sim.pending],
        "keep": None if keep is None else sorted((int(k), list(v)) for k, v in keep.items()),
    }, sort_keys=True)
    key = sim.inst.fingerprint() + hashlib.sha256(state.encode()).hexdigest()[:16]
    if key not in _ADAPTATIONS:
        if len(_ADAPTATIONS) > 10_000:
            _ADAPTATIONS.clear()
        _ADAPTATIONS[key] = adaptive_from_state(sim, keep).cost
    return _ADAPTATIONS[key]
