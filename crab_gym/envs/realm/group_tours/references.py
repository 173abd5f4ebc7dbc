"""P2 references: the CP-SAT oracle's plan for each instance, and its cost.

Every shipped instance has its proven optimum stored in ``instances/references.json``; an
instance of your own is solved on first use (default budget), and the record is cached on
disk by fingerprint (``realm/p2/``) for the episodes after.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_reference
from crab_gym.envs.realm.common.references import Reference, shipped_records
from crab_gym.envs.realm.group_tours import oracle
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR, P2Instance


def shipped_p2_references() -> dict[str, dict[str, Any]]:
    """The shipped P2 records by instance name, as ``references.json`` stores them."""
    return shipped_records(INSTANCE_DIR)


def reference_p2(instance: P2Instance) -> Reference:
    """The reference of a P2 instance (``source``: shipped, cache or solved); its ``plan`` is
    the oracle's plan as ``submit_plan`` arguments."""
    # the solver is looked up when called, so a patched ``oracle.solve_p2`` is the one run
    return oracle_reference("p2", instance, INSTANCE_DIR, lambda inst: oracle.solve_p2(inst))
