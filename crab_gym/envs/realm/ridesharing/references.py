"""P3/P4 references as :class:`~crab_gym.envs.realm.common.references.Reference` records.

``reset()`` never waits on a solver: a shipped instance's reference is read from its
``instances/p3|p4/references.json``; any other instance is solved the first time its
reference is needed (at the end of an episode) and cached on disk by the common store
(:func:`~crab_gym.envs.realm.common.references.stored_reference`: ``realm/p3/`` and
``realm/p4/`` under the cache root of :mod:`crab_gym.envs.realm.common.cache`), keyed by the
instance data's fingerprint (P4: and the disruptions the episode faced).

The stored records keep REALM's assignments mapping under ``plan``; a :class:`Reference`'s
``plan`` is the ``submit_plan`` arguments, ``{"assignments": {...}}``, so that
``OraclePolicy`` submits it as it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.common.references import Reference, shipped_records, stored_reference
from crab_gym.envs.realm.ridesharing.adaptation import portfolio_yardstick, trivial_cost, yardstick_start
from crab_gym.envs.realm.ridesharing.best_known import SEARCH, best_known, solo_plan
from crab_gym.envs.realm.ridesharing.model import INSTANCE_DIRS, P3Instance
from crab_gym.envs.realm.ridesharing.oracle import p3_record, solve_p3
from crab_gym.envs.realm.ridesharing.oracle_disruptions import RESOLVE_TIME_GUARD

#: Deterministic search settings for on-demand references (solutions, wall-clock guard in s).
ON_DEMAND_SOLUTION_LIMIT = 300
ON_DEMAND_TIME_GUARD = 30.0

#: The keys of a P3 record that a P4 record keeps as its ``initial`` plan (on demand).
INITIAL_KEYS = ("value", "plan", "status", "time_limit_s", "workers")

_ADAPTATIONS: dict[str, dict[str, Any]] = {}


def shipped_references(problem: str) -> dict[str, dict[str, Any]]:
    """The records of ``references.json`` of ``"p3"`` or ``"p4"`` by instance name ({} when
    absent), as stored (``plan``: REALM's assignments)."""
    return shipped_records(INSTANCE_DIRS[problem])


def _submittable(ref: Reference) -> Reference:
    """``ref`` with its plan as ``submit_plan`` arguments."""
    return ref if ref.plan is None else dataclasses.replace(ref, plan={"assignments": ref.plan})


def _plain(instance: P3Instance) -> P3Instance:
    """The P3 problem of an instance (a P4 instance without its disruptions)."""
    if type(instance) is P3Instance:
        return instance
    return P3Instance.model_validate(instance.model_dump(include=set(P3Instance.model_fields)))


def _solve_p3(instance: P3Instance) -> dict[str, Any]:
    return p3_record(solve_p3(instance, time_limit=ON_DEMAND_TIME_GUARD, solution_limit=ON_DEMAND_SOLUTION_LIMIT))


def p3_reference(instance: P3Instance) -> Reference:
    """The P3 oracle's reference for ``instance`` (disruptions ignored): shipped, cached or
    solved now with the deterministic on-demand settings."""
    return _submittable(stored_reference("p3", _plain(instance), INSTANCE_DIRS["p3"], _solve_p3))


def schedule_key(schedule: Sequence[Any]) -> str:
    """A short hash of a disruption schedule."""
    text = json.dumps([json.loads(d.model_dump_json()) for d in schedule], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class FacedSchedule:
    """A P4 instance and the disruptions an episode on it faces: what a P4 reference belongs to.

    Its fingerprint is the instance's when the schedule is the instance's own (so a shipped
    record applies), else the instance's and the schedule's together.
    """

    instance: P3Instance
    schedule: tuple[Any, ...]

    @property
    def name(self) -> str:
        return self.instance.name

    @property
    def own(self) -> bool:
        return list(self.schedule) == list(getattr(self.instance, "disruptions", []))

    def fingerprint(self) -> str:
        fp = self.instance.fingerprint()
        return fp if self.own else f"{fp}-{schedule_key(self.schedule)}"


def p4_initial(instance: P3Instance) -> dict[str, Any]:
    """The undisrupted P3 plan a P4 reference starts from: the deterministic on-demand P3
    solve of the instance without its disruptions (the same settings offline and on demand)."""
    p3 = p3_reference(instance).to_dict()
    return {**{k: p3[k] for k in INITIAL_KEYS if k in p3}, "plan": p3["plan"]["assignments"]}


def p4_record(
    instance: P3Instance, initial: dict[str, Any], schedule: Sequence[Any] | None = None
) -> dict[str, Any]:
    """The P4 reference record facing ``schedule`` (default: the instance's own): the best
    plan known (:func:`~crab_gym.envs.realm.ridesharing.best_known.best_known`), starting from
    the ``initial`` P3 record's plan; the adaptive oracle's own value and plan stay in
    ``adaptive_oracle_value`` / ``adaptive_oracle_plan``."""
    if schedule is None:
        schedule = list(getattr(instance, "disruptions", []))
    solo = solo_reference(instance, schedule)
    found = best_known(instance, initial["plan"], schedule, solo.get("plan"))
    return {
        **found,
        "status": ("OPTIMAL" if found["proven_optimal"] else "FEASIBLE") if found["feasible"] else "INFEASIBLE",
        "bound": found["value"] if found["proven_optimal"] else None,
        "time_limit_s": None,
        "workers": 1,
        "solver": SEARCH,
        "resolve_time_guard_s": RESOLVE_TIME_GUARD,
        "initial": initial,
        "solo_value": solo["value"],
    }


def _solve_p4(faced: FacedSchedule) -> dict[str, Any]:
    inst = faced.instance
    shipped = shipped_references("p4").get(inst.name)
    if shipped is not None and shipped.get("fingerprint") == inst.fingerprint():
        initial = {k: shipped["initial"][k] for k in INITIAL_KEYS if k in shipped["initial"]}
    else:
        initial = p4_initial(inst)
    return p4_record(inst, initial, faced.schedule)


def p4_reference(instance: P3Instance, schedule: Sequence[Any] | None = None) -> Reference:
    """The P4 reference facing ``schedule`` (default: the instance's own disruptions): the best
    plan known (see :func:`p4_record`). Shipped for a shipped instance facing its own
    schedule, else cached or solved now (at the end of an episode)."""
    own = list(getattr(instance, "disruptions", []))
    faced = FacedSchedule(instance, tuple(own if schedule is None else schedule))
    return _submittable(stored_reference("p4", faced, INSTANCE_DIRS["p4"], _solve_p4))


def adaptation_reference(
    snapshot: Any, schedule: Sequence[Any], keep: dict[int, list[int]] | None = None
) -> dict[str, Any]:
    """The adaptation yardstick from an episode's state at its first disruption, with its
    parked vehicles back on the road (:func:`~crab_gym.envs.realm.ridesharing.adaptation.yardstick_start`):
    the best continuation of a portfolio that never foresees a disruption -- keeping ``keep``,
    the rest of the plan the episode was following then (a submitted plan), the adaptive
    oracle, the greedy rule, seeded random continuations
    (:func:`~crab_gym.envs.realm.ridesharing.adaptation.portfolio_yardstick`) -- and
    ``trivial``, the cost of serving nobody new from that state (the score's 0).

    ``snapshot`` is a :class:`~crab_gym.envs.realm.ridesharing.sim.RideSim` copy; ``schedule``
    the disruptions still to come after it (as scheduled or injected). Kept in memory (it
    depends on the episode's own state, so it is rarely met again).
    """
    sim = yardstick_start(snapshot, schedule)
    state = json.dumps(
        {
            "routes": [[(x.stop, x.depart, x.service) for x in v.route] for v in sim.vehicles],
            "free": [v.free for v in sim.vehicles],
            "applied": [json.loads(d.model_dump_json()) for d in sim.applied],
            "pending": [json.loads(d.model_dump_json()) for d in sim.pending],
            "keep": None if keep is None else sorted((int(k), list(v)) for k, v in keep.items()),
        },
        sort_keys=True,
    )
    key = "adapt-" + sim.inst.fingerprint() + "-" + hashlib.sha256(state.encode()).hexdigest()[:16]
    if key in _ADAPTATIONS:
        return _ADAPTATIONS[key]
    res, which = portfolio_yardstick(sim, keep)
    out = {"value": res.cost, "plan": res.plan["assignments"], "feasible": res.feasible,
           "resolves": res.detail.get("resolves", []), "policy": which, "trivial": trivial_cost(sim)}
    if len(_ADAPTATIONS) > 10_000:
        _ADAPTATIONS.clear()
    _ADAPTATIONS[key] = out
    return out


def _solo_shipped(problem: str) -> dict[str, dict[str, Any]]:
    """The shipped one-vehicle records (``instances/<problem>/solo.json``) by instance name."""
    path = INSTANCE_DIRS[problem] / "solo.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


#: A folder with no ``references.json``: :func:`stored_reference` then only caches (the
#: shipped one-vehicle records are read from ``solo.json`` by :func:`solo_reference`).
_NO_SHIPPED = INSTANCE_DIRS["p3"] / "no-shipped-records"


def solo_reference(instance: P3Instance, schedule: Sequence[Any] | None = None) -> dict[str, Any]:
    """The best plan known in which one vehicle does all the work, facing ``schedule`` (None
    or empty: undisrupted, the P3 problem): the coordination metric's no-teamwork baseline.
    Shipped (``solo.json``, same name and fingerprint), else cached on disk, else solved now
    (:func:`~crab_gym.envs.realm.ridesharing.best_known.solo_plan`)."""
    schedule = tuple(schedule or ())
    if schedule:
        key: Any = FacedSchedule(instance, schedule)
        problem = "p4"
    else:
        key, problem = _plain(instance), "p3"
    fp = key.fingerprint()
    shipped = _solo_shipped(problem).get(instance.name)
    if shipped is not None and shipped.get("fingerprint") == fp:
        return dict(shipped)
    ref = stored_reference(f"{problem}-solo", key, _NO_SHIPPED, lambda k: solo_plan(k.instance if schedule else k, schedule))
    return {**ref.to_dict(), **dict(ref.extra)}
