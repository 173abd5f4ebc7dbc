"""P7 references: the CP-SAT oracle's full-information plan for an instance facing a
disruption schedule, and its cost.

Shipped instances carry theirs (facing their own schedule) in ``instances/references.json``,
so no solver runs for them. An episode facing other disruptions (injected ones), or another
instance, is solved once when its reference is first needed and cached on disk under
``realm/p7/``, keyed by the fingerprint of the instance *with* the schedule it faced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_reference
from crab_gym.envs.realm.common.references import Reference, shipped_records
from crab_gym.envs.realm.disaster_relief import oracle
from crab_gym.envs.realm.disaster_relief.model import INSTANCE_DIR, P7Instance


def shipped_p7_references() -> dict[str, dict[str, Any]]:
    """The shipped P7 records by instance name, as ``references.json`` stores them."""
    return shipped_records(INSTANCE_DIR)


def facing(instance: P7Instance, schedule: Sequence[Any] | None) -> P7Instance:
    """``instance`` with the disruptions an episode faces instead of its own."""
    if schedule is None or list(schedule) == list(instance.disruptions):
        return instance
    return instance.model_copy(update={"disruptions": sorted(schedule, key=lambda d: (d.start, d.type))})


def reference_p7(instance: P7Instance, schedule: Sequence[Any] | None = None) -> Reference:
    """The reference of ``instance`` facing ``schedule`` (default: its own disruptions):
    shipped, cached or solved now; its ``plan`` is the ``submit_plan`` arguments."""
    return oracle_reference("p7", facing(instance, schedule), INSTANCE_DIR, lambda inst: oracle.solve_p7(inst))
