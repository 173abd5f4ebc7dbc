"""P10 references: the adaptive oracle's plan of each instance facing a disruption schedule.

The reference of an episode is what the oracle achieves without foresight: it solves the
plan (:func:`~.oracle.solve_from`), follows it until a disruption strikes, re-solves from
that day knowing it, and so on (:func:`~.oracle.adaptive`). Its ``bound`` is the proven
optimum *with* foresight of the whole schedule, a lower bound on any plan facing it; its
``extra`` holds that value (``hindsight_value``) and the reference's ``shortfall``.

Shipped instances carry the record for their own schedule in ``instances/references.json``;
any other instance or schedule (disruptions injected) is solved once and cached on disk
under ``realm/p10/``, keyed by the fingerprint of the instance with that schedule.
"""

from __future__ import annotations

from typing import Any

import ortools

from crab_gym.envs.realm.common.references import Reference, stored_reference
from crab_gym.envs.realm.supply_chain import oracle
from crab_gym.envs.realm.supply_chain.model import INSTANCE_DIR, P10Instance
from crab_gym.envs.realm.supply_chain.sim import SupplySim


def with_schedule(inst: P10Instance, schedule: list[Any] | None) -> P10Instance:
    """``inst`` facing ``schedule`` (None: its own disruptions)."""
    if schedule is None or list(schedule) == list(inst.disruptions):
        return inst
    return inst.model_copy(update={"disruptions": list(schedule)})


def reference_record(inst: P10Instance) -> dict[str, Any]:
    """The adaptive oracle's record for ``inst`` facing its own disruptions (JSON)."""
    run = oracle.adaptive(SupplySim(inst))
    hindsight = oracle.solve_from(SupplySim(inst, []), known=list(inst.disruptions), limit=run.limit)
    return {
        "fingerprint": inst.fingerprint(),
        "value": run.sim.cost(),
        "status": run.status,
        "bound": hindsight.bound,
        "solver": oracle.SOLVER + "; re-solved when a disruption strikes",
        "time_limit_s": run.limit,
        "time_limit_kind": "CP-SAT max_deterministic_time per solve",
        "wall_cap_s": oracle.WALL_CAP_S,
        "workers": oracle.WORKERS,
        "ortools": ortools.__version__,
        "solves": len(run.statuses),
        "shortfall": run.sim.shortfall(),
        "hindsight_value": hindsight.cost,
        "hindsight_status": hindsight.status,
        "plan": oracle.plan_arguments(run.sim),
    }


def reference_p10(inst: P10Instance, schedule: list[Any] | None = None) -> Reference:
    """The reference of ``inst`` facing ``schedule`` (default: its own disruptions):
    shipped, cached or solved now (``source`` says which)."""
    return stored_reference("p10", with_schedule(inst, schedule), INSTANCE_DIR, reference_record)
