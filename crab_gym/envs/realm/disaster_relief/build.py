"""Regenerate the shipped P7 instances and their reference values.

    python -m crab_gym.envs.realm.disaster_relief.build

Instance ``p7_<size>_<k>`` is ``generate_p7(size, seed=k)``; 7 small, 7 medium and 6 large.
Each reference is the CP-SAT oracle's full-information plan (it knows the instance's
disruptions) with its status, proven bound, budget and worker count. The budget is CP-SAT's
*deterministic* time (``max_deterministic_time``, one worker, seed 0), so a rebuild finds the
same plans on any machine and under any load (a wall-clock guard of 40x only stops a
runaway solve; ``stopped_by`` records what ended each search). Runs take a few minutes on one core.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.shipping import ShippedSet
from crab_gym.envs.realm.disaster_relief.generator import generate_p7
from crab_gym.envs.realm.disaster_relief.model import INSTANCE_DIR, P7Instance
from crab_gym.envs.realm.disaster_relief.oracle import WALL_GUARD, solve_p7


def shipped_record(inst: P7Instance) -> dict[str, Any]:
    """The oracle's record, with its proven bound and the kind of its time limit."""
    result = solve_p7(inst)
    stopped = ("proof" if result.status == "OPTIMAL" else
               "deterministic limit" if result.deterministic_time >= result.time_limit_s else "wall-clock guard")
    return {**oracle_record(result, inst.fingerprint()), "bound": result.bound,
            "time_limit_kind": "deterministic", "wall_clock_guard_s": result.time_limit_s * WALL_GUARD,
            "stopped_by": stopped}


#: The shipped P7 instances: the build writes them and their references.
SHIPPED = ShippedSet(
    INSTANCE_DIR, "p7", generate_p7, shipped_record,
    units="cost points (K x severity-weighted shortfall + transport minutes; see docs/p7.md)",
    value="cost of the CP-SAT oracle's plan knowing every disruption of the instance",
    status="OPTIMAL: proved by CP-SAT; FEASIBLE: best found within the deterministic budget (bound: proven)",
)

if __name__ == "__main__":
    SHIPPED.main(__doc__)
