"""Stored reference plans of the shipped instances: what ``OraclePolicy`` submits.

Every shipped instance comes with a plan found offline by the project's CP-SAT oracle
(``python -m crab_gym.envs.realm.jobshop.build``) and kept in ``reference_plans.json.gz``:
per machine the job order (REALM's ``sequence`` shape that ``submit_plan`` takes), the
makespan of that plan's semi-active schedule, the solver's status and proven bound, and the
budget that produced it. The plan is a schedule that exists and that the oracle policy
reproduces without a solver. The env does **not** measure agents against it: the yardstick of a shipped instance is the literature's
best known makespan (:func:`instance_reference`), so the oracle scores below 1 where its
stored plan is longer than the best known.

Plans are looked up by the instance *data* (:meth:`JSSPInstance.fingerprint`), so a file
holding a shipped instance's data gets its plan too, and a renamed or edited instance does
not get a wrong one.

:func:`instance_reference` gives any instance's reference as the suite's one record type,
:class:`~crab_gym.envs.realm.common.references.Reference`: the best known makespan with the
stored plan where there is one, else the instance's own bounds (no solver runs).
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from crab_gym.envs.realm.common.references import Reference, SolvePending, solves_deferred
from crab_gym.envs.realm.jobshop.bounds import best_known
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.oracle import solve_jssp

PLANS_FILE = "reference_plans.json.gz"
PLANS_FORMAT = "crab_gym.jssp.plans/1"

PlanKind = Literal["optimum", "best_known", "plan"]

#: The status of a reference taken from the instance's own values (no stored plan), by kind:
#: a proven optimum, a makespan some schedule is known to reach, or only a bound.
_STATUS_OF_KIND = {"optimum": "OPTIMAL", "upper_bound": "FEASIBLE", "lower_bound": "LOWER_BOUND"}


@dataclass(frozen=True)
class ReferencePlan:
    """A stored plan and how it was found.

    ``makespan`` is the makespan of the plan's semi-active schedule (each operation as early
    as its job and machine predecessors allow: what ``submit_plan`` builds). ``status`` is
    CP-SAT's (``"OPTIMAL"`` means proven optimal); ``solver_bound`` the lower bound it proved.
    ``time_limit``, ``num_workers`` and ``solver`` describe the last solve; ``seeded_with``,
    when set, is the earlier plan that solve started from (its hint): ``makespan``,
    ``status``, ``time_limit`` and ``solver``, so the whole budget spent stays on record.
    """

    instance: str
    fingerprint: str
    sequence: tuple[tuple[int, ...], ...]
    makespan: int
    status: str
    solver_bound: int
    time_limit: float
    num_workers: int
    solver: str
    seeded_with: dict[str, Any] | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL"

    def kind(self, instance: JSSPInstance) -> PlanKind:
        """``"optimum"`` if the plan is proven optimal (by CP-SAT or by equalling the
        literature optimum), ``"best_known"`` if it equals the literature's best known upper
        bound, else ``"plan"`` (a good schedule, above the best known)."""
        if self.optimal or (instance.optimum is not None and self.makespan == instance.optimum):
            return "optimum"
        if instance.upper_bound is not None and self.makespan <= instance.upper_bound:
            return "best_known"
        return "plan"

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "fingerprint": self.fingerprint,
            "sequence": [list(r) for r in self.sequence],
            "makespan": self.makespan,
            "status": self.status,
            "solver_bound": self.solver_bound,
            "time_limit": self.time_limit,
            "num_workers": self.num_workers,
            "solver": self.solver,
            "seeded_with": self.seeded_with,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReferencePlan:
        data = dict(data)
        data["sequence"] = tuple(tuple(int(j) for j in r) for r in data["sequence"])
        return cls(**data)


@functools.cache
def _stored() -> dict[str, Any]:
    try:
        blob = resources.files("crab_gym.envs.realm.jobshop").joinpath("instances", PLANS_FILE).read_bytes()
    except FileNotFoundError:
        return {"plans": {}}
    return json.loads(gzip.decompress(blob))


@functools.cache
def _by_fingerprint() -> dict[str, ReferencePlan]:
    out = {}
    for entry in _stored()["plans"].values():
        plan = ReferencePlan.from_dict(entry)
        out[plan.fingerprint] = plan
    return out


def stored_plans() -> dict[str, ReferencePlan]:
    """Every stored plan, by instance name."""
    return {p.instance: p for p in _by_fingerprint().values()}


def reference_plan(instance: JSSPInstance) -> ReferencePlan | None:
    """The stored plan of an instance with a shipped instance's data, else ``None``."""
    if not _stored()["plans"]:
        return None
    return _by_fingerprint().get(instance.fingerprint())


def literature(instance: JSSPInstance) -> dict[str, Any]:
    """The published values of an instance (None where unknown): ``best_known`` (the proven
    optimum, else the best known upper bound), ``best_known_kind`` (``"optimum"`` or
    ``"upper_bound"``) and the ``literature_optimum`` / ``_upper_bound`` / ``_lower_bound``."""
    if instance.optimum is not None:
        best, kind = instance.optimum, "optimum"
    elif instance.upper_bound is not None:
        best, kind = instance.upper_bound, "upper_bound"
    else:
        best, kind = None, None
    return {
        "best_known": best,
        "best_known_kind": kind,
        "literature_optimum": instance.optimum,
        "literature_upper_bound": instance.upper_bound,
        "literature_lower_bound": instance.lower_bound,
    }


#: Who the literature values of the shipped instances come from (``solver`` of their reference);
#: each value's own source and date are in ``extra`` (:func:`provenance`).
LITERATURE = "literature (best known values with their sources: instances/bounds.json)"


def provenance(name: str, plan_makespan: int | None) -> dict[str, Any]:
    """Where a shipped instance's best known value comes from, for ``Reference.extra``:
    ``best_known_source``, ``best_known_date`` (when it was reported),
    ``best_known_compiled`` (the date of the compilation it was read in),
    ``best_known_checked`` (when we compared it) and ``best_known_certified`` (a stored plan,
    replayed by the checker, reaches it; else the value is taken on its source's word)."""
    rec = best_known(name)
    if rec is None:
        return {}
    return {
        "best_known_source": rec.source,
        "best_known_date": rec.date,
        "best_known_compiled": rec.compiled,
        "best_known_checked": rec.checked,
        "best_known_certified": rec.certified_by(plan_makespan),
    }


def instance_reference(instance: JSSPInstance) -> Reference:
    """The yardstick of ``instance`` and how it is known, without running a solver.

    * Data of a shipped instance: the literature's **best known makespan** (proven optimum,
      status ``OPTIMAL``; else best known upper bound, ``FEASIBLE``), with ``bound`` the best
      proven lower bound (the literature's or CP-SAT's); ``plan`` is the stored plan
      (``OraclePolicy`` submits it), whose own makespan, status and budget are in ``extra``
      (``plan_makespan``, ``plan_status``, ...): the oracle scores ``value / plan_makespan``,
      below 1 where the stored plan is not the best known. ``source="shipped"``.
    * Any other instance: its own values (``source="instance"``, no plan): the proven optimum
      (status ``OPTIMAL``), else the best known upper bound (``FEASIBLE``), else a lower bound
      (``LOWER_BOUND``: the literature's or the trivial one, whichever is larger).

    ``extra["reference_kind"]`` is ``"optimum"``, ``"upper_bound"`` or ``"lower_bound"``;
    ``extra`` also holds the :func:`literature` values.
    """
    published = literature(instance)
    plan = reference_plan(instance)
    if plan is not None:
        return _shipped_reference(instance, plan, published)
    value, kind = instance.reference
    known = instance.optimum if instance.optimum is not None else instance.lower_bound
    return Reference(
        value=value,
        status=_STATUS_OF_KIND[kind],
        bound=max(known or 0, instance.trivial_lower_bound()),
        source="instance",
        fingerprint=instance.fingerprint(),
        extra={"reference_kind": kind, **published},
    )


def _shipped_reference(instance: JSSPInstance, plan: ReferencePlan, published: dict[str, Any]) -> Reference:
    """A shipped instance's yardstick: the best known makespan, never the stored plan's when
    the literature knows a shorter one (1 must mean the best plan known)."""
    best = published["best_known"]
    from_plan = best is None or plan.makespan < best  # a stored plan beating the literature
    value = plan.makespan if from_plan else best
    proven = instance.optimum is not None or (plan.optimal and plan.makespan == value)
    bound = max(published["literature_lower_bound"] or 0, plan.solver_bound, instance.trivial_lower_bound())
    return Reference(
        value=value,
        status="OPTIMAL" if proven else "FEASIBLE",
        bound=value if proven else bound,
        solver=plan.solver if from_plan else LITERATURE,
        time_limit_s=plan.time_limit if from_plan else None,
        workers=plan.num_workers if from_plan else None,
        plan={"sequence": [list(row) for row in plan.sequence]},
        source="shipped",
        fingerprint=plan.fingerprint,
        extra={
            "reference_kind": "optimum" if proven else "upper_bound",
            **published,
            **provenance(plan.instance, plan.makespan),
            "plan_makespan": plan.makespan,
            "plan_kind": plan.kind(instance),
            "plan_status": plan.status,
            "plan_bound": plan.solver_bound,
            "plan_solver": plan.solver,
            "plan_time_limit_s": plan.time_limit,
            "plan_workers": plan.num_workers,
            "plan_seeded_with": plan.seeded_with,
        },
    )


#: Budget of the solver's yardstick of an instance with no best known value (generated ones):
#: one worker, CP-SAT's interleaved portfolio, stopped by a *deterministic* limit, so the value
#: is the same on every machine with the same OR-Tools; the wall-clock cap only guards a very
#: slow machine. 6x6 and 10x10 instances are proven optimal well within it.
SOLVED_DETERMINISTIC_LIMIT = 1.0
SOLVED_TIME_CAP_S = 120.0


def yardstick(instance: JSSPInstance, solve: bool = True) -> Reference:
    """What the env measures ``instance`` against: :func:`instance_reference` where a best
    known value exists (stored plan, literature, the instance's own optimum or upper bound);
    else, with ``solve``, the solver's value (:func:`solved_reference`), else the lower bound."""
    ref = instance_reference(instance)
    if solve and ref.status == "LOWER_BOUND":
        return solved_reference(instance)
    return ref


@functools.lru_cache(maxsize=4096)
def _solved(fingerprint: str, instance: JSSPInstance) -> Reference:
    bound_only = instance_reference(instance)
    result = solve_jssp(
        instance, time_limit=SOLVED_TIME_CAP_S, num_workers=1, interleave=True,
        deterministic_limit=SOLVED_DETERMINISTIC_LIMIT, cache=True,
    )
    if result.plan is None:  # nothing found within the budget: keep the lower bound
        return bound_only
    value = int(result.cost)  # the plan's makespan (its semi-active schedule)
    bound = max(int(result.bound), int(bound_only.bound or 0))
    proven = value <= bound
    return Reference(
        value=value,
        status="OPTIMAL" if proven else "FEASIBLE",
        bound=value if proven else bound,
        solver=result.solver,
        time_limit_s=result.time_limit_s,
        workers=result.workers,
        plan=dict(result.plan),
        source="solved",
        fingerprint=fingerprint,
        extra={
            **bound_only.extra,
            "reference_kind": "optimum" if proven else "upper_bound",
            "deterministic_limit": SOLVED_DETERMINISTIC_LIMIT,
        },
    )


def solved_reference(instance: JSSPInstance) -> Reference:
    """The solver's yardstick of an instance with no best known value: CP-SAT's best schedule
    within :data:`SOLVED_DETERMINISTIC_LIMIT` on one worker (status ``OPTIMAL`` when proven,
    else ``FEASIBLE`` with its proven ``bound``), its plan in ``plan`` (what ``OraclePolicy``
    submits, so the oracle scores 1). Solved once per instance data: kept in memory and on
    disk (:func:`~crab_gym.envs.realm.jobshop.oracle.solve_jssp`'s cache). While solves are
    deferred (``deferring_solves``) it raises ``SolvePending``."""
    fingerprint = instance.fingerprint()
    if solves_deferred():  # solved before or not: a deferred env reports the same
        raise SolvePending(f"P11 {fingerprint[:12]}")
    return _solved(fingerprint, instance)

