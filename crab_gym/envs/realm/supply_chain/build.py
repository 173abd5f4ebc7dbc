"""Regenerate the shipped P10 instances and their reference records.

    python -m crab_gym.envs.realm.supply_chain.build

Instance ``p10_<size>_<k>`` is ``generate_p10(size, seed=k)``; 7 small, 7 medium, 6 large and
3 late (no supplier delivers ``gpu_chips`` by its soft deadline; lateness is part of the cost).
Each reference is the adaptive CP-SAT oracle's episode facing the instance's own
disruptions (one worker, a deterministic time limit, so a rebuild gives the same records on
any machine). Each record also holds the optimum with foresight of the disruptions
(``hindsight_value``, also the ``bound``). The oracle is checked against exhaustive search
on tiny generated instances in ``tests/p10`` (the shipped small ones are too large for it).
"""

from __future__ import annotations

from crab_gym.envs.realm.common.shipping import SHIPPED_COUNTS, ShippedSet
from crab_gym.envs.realm.supply_chain.generator import generate_p10
from crab_gym.envs.realm.supply_chain.model import INSTANCE_DIR
from crab_gym.envs.realm.supply_chain.references import reference_record

#: The shipped P10 instances: the build writes them and their references.
SHIPPED = ShippedSet(
    INSTANCE_DIR, "p10", generate_p10, reference_record,
    units="currency units", value="total cost (purchases + production + holding + lateness + shortfall penalty) "
    "of the adaptive oracle's episode facing the instance's disruptions",
    status="OPTIMAL: no disruption struck and CP-SAT proved the plan optimal; ADAPTIVE_OPTIMAL: every re-solve "
    "after a disruption was proved optimal (the episode's cost is then optimal without foresight of the "
    "disruptions, not with it: bound and hindsight_value are the optimum with foresight)",
    counts={**SHIPPED_COUNTS, "late": 3},
)

if __name__ == "__main__":
    SHIPPED.main(__doc__)
