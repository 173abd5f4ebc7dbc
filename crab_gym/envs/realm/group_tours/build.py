"""Regenerate the shipped P2 instances and their reference values.

    python -m crab_gym.envs.realm.group_tours.build

Instance ``p2_<size>_<k>`` is ``generate_p2(size, seed=k)``; 7 small, 7 medium and 6 large.
Each reference is the CP-SAT oracle's plan with its status, proven bound, time budget and
worker count; small instances also carry the exhaustive-search optimum as a cross-check.
CP-SAT stops on a wall-clock budget, so a rebuild on another machine may find a different
(never worse-proved) value for an instance not solved to optimality; the instances
themselves are identical.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.shipping import ShippedSet
from crab_gym.envs.realm.group_tours.generator import generate_p2
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR, P2Instance
from crab_gym.envs.realm.group_tours.oracle import brute_force_p2, solve_p2


def shipped_record(inst: P2Instance) -> dict[str, Any]:
    """The CP-SAT oracle's record with its default budget (its status says if it is proved)."""
    return oracle_record(solve_p2(inst), inst.fingerprint())


#: The shipped P2 instances: the build writes them and their references.
SHIPPED = ShippedSet(
    INSTANCE_DIR, "p2", generate_p2, shipped_record, exact=brute_force_p2,
    units="cost minutes (waiting + balance_weight x imbalance)",
    value="total waiting beyond preferred starts + balance_weight x (max - min tours per guide)",
    status="OPTIMAL: proved by CP-SAT; FEASIBLE: best found within the budget",
)

if __name__ == "__main__":
    SHIPPED.main(__doc__)
