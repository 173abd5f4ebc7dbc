"""P1 references: the routing oracle's tour of each instance, and its travel minutes.

Shipped instances carry theirs in ``instances/references.json``, so no solver runs for them.
Any other instance is solved once with the oracle's default budget and kept in the on-disk
cache under ``realm/p1/``, keyed by the instance's fingerprint.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.campus_tour import oracle
from crab_gym.envs.realm.campus_tour.model import INSTANCE_DIR, P1Instance
from crab_gym.envs.realm.common.oracle_record import oracle_reference
from crab_gym.envs.realm.common.references import Reference, shipped_records


def shipped_p1_references() -> dict[str, dict[str, Any]]:
    """The shipped P1 records by instance name, as ``references.json`` stores them."""
    return shipped_records(INSTANCE_DIR)


def reference_p1(instance: P1Instance) -> Reference:
    """The reference of a P1 instance (``source``: shipped, cache or solved); its ``plan`` is
    the oracle's plan as ``submit_plan`` arguments."""
    # the solver is looked up when called, so a patched ``oracle.solve_p1`` is the one run
    return oracle_reference("p1", instance, INSTANCE_DIR, lambda inst: oracle.solve_p1(inst))
