"""P7 references: the CP-SAT oracle's full-information plan for an instance facing a
disruption schedule, and its cost.

Shipped instances carry theirs (facing their own schedule) in ``instances/references.json``,
so no solver runs for them. An episode facing other disruptions (injected ones), or another
instance, is solved once when its reference is first needed and cached on disk under
``realm/p7/``, keyed by the fingerprint of the instance *with* the schedule it faced.

The coordination baseline (the best one-vehicle plans, :mod:`.coordination`) is kept the
same way: under ``solo`` in a shipped record, else solved once and cached under ``realm/p7_solo/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_reference
from crab_gym.envs.realm.common.references import Reference, shipped_records, stored_reference
from crab_gym.envs.realm.disaster_relief import oracle
from crab_gym.envs.realm.disaster_relief.coordination import solo_record
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


def solo_reference(instance: P7Instance, schedule: Sequence[Any] | None = None) -> Reference:
    """The solo baseline of ``instance`` facing ``schedule`` (:func:`~.coordination.solo_record`):
    its ``bound`` is the baseline. Shipped (under ``solo`` of the instance's record), else
    cached or solved now."""
    inst = facing(instance, schedule)
    shipped = shipped_p7_references().get(inst.name)
    if shipped is not None and shipped.get("fingerprint") == inst.fingerprint() and "solo" in shipped:
        return Reference.from_record(shipped["solo"], "shipped")
    # a folder without references.json: only the cache or a solve can answer
    return stored_reference("p7_solo", inst, INSTANCE_DIR / "solo", solo_record)
