"""Regenerate the shipped P10 instances and their reference records.

    python -m crab_gym.envs.realm.supply_chain.build

Instance ``p10_<size>_<k>`` is ``generate_p10(size, seed=k)``; 7 small, 7 medium, 6 large and
3 late (no supplier delivers ``gpu_chips`` by its soft deadline; lateness is part of the cost).
Each reference is the optimum with foresight of the instance's own disruptions: one CP-SAT
solve from day 0 that knows them all (one worker, a deterministic time limit, so a rebuild
gives the same records on any machine), proven optimal (``status``, ``bound``), and its
plan. The adaptive oracle's episode (it learns of each disruption when it strikes) is
recorded beside it (``adaptive_value``, ``adaptive_status``, ``adaptive_solves``). The
oracle is checked against exhaustive search on tiny generated instances in ``tests/supply_chain``
(the shipped small ones are too large for it).
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
    "of the optimal plan with foresight of the instance's disruptions (the best plan known)",
    status="OPTIMAL: CP-SAT proved the plan optimal knowing every disruption from day 0 (no plan facing them "
    "costs less; bound = value). adaptive_status ADAPTIVE_OPTIMAL: every re-solve of the adaptive oracle, "
    "which learns of a disruption when it strikes, was proved optimal (adaptive_value: its episode's cost)",
    counts={**SHIPPED_COUNTS, "late": 3},
)

if __name__ == "__main__":
    SHIPPED.main(__doc__)
