"""P10 references: the best plan known of each instance facing a disruption schedule, which
is the optimum with foresight of that schedule.

The reference of an episode is the plan CP-SAT proves optimal when it knows every disruption
of the schedule from day 0 (:func:`~.oracle.solve_p10`): no plan facing that schedule costs
less, so it is the yardstick of optimality (``value``,
``status``, ``bound``) and the plan ``OraclePolicy`` submits (it pauses when a disruption
strikes and resumes when submitted again, so the oracle scores 1). The adaptive oracle, which
never sees a disruption coming (it solves, follows its plan until a disruption strikes,
re-solves from that day knowing it, and so on: :func:`~.oracle.adaptive`), is recorded beside
it in ``extra`` (``adaptive_value``, ``adaptive_status``, ``adaptive_solves``): the
adaptation metric's ``adaptation_reference="oracle"`` yardstick, and the price of not knowing.

Shipped instances carry the record for their own schedule in ``instances/references.json``;
any other instance or schedule (disruptions injected) is solved once and cached on disk
under ``realm/p10-foresight/`` (the adaptive records of the earlier ``realm/p10/`` are not
read), keyed by the fingerprint of the instance with that schedule.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_record
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
    """The reference record of ``inst`` facing its own disruptions (JSON): the foresight
    optimum and its plan (:func:`~.oracle.solve_p10`), with the adaptive oracle's episode
    beside it."""
    limit = oracle.budget_for(inst)
    res = oracle.solve_p10(inst, limit)
    run = oracle.adaptive(SupplySim(inst), limit).result()
    return {
        **oracle_record(res, inst.fingerprint()),
        "bound": res.bound,
        "solver": res.solver + "; one solve from day 0 knowing every disruption of the schedule (foresight)",
        "time_limit_kind": "CP-SAT max_deterministic_time per solve",
        "wall_cap_s": oracle.WALL_CAP_S,
        "shortfall": res.detail["shortfall"],
        "adaptive_value": run.cost,
        "adaptive_status": run.status,
        "adaptive_solves": len(run.detail["statuses"]),
    }


def reference_p10(inst: P10Instance, schedule: list[Any] | None = None) -> Reference:
    """The reference of ``inst`` facing ``schedule`` (default: its own disruptions):
    shipped, cached or solved now (``source`` says which)."""
    return stored_reference("p10-foresight", with_schedule(inst, schedule), INSTANCE_DIR, reference_record)
