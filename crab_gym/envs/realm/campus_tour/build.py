"""Regenerate the shipped P1 instances and their reference values.

    python -m crab_gym.envs.realm.campus_tour.build

Instance ``p1_<size>_<k>`` is ``generate_p1(size, seed=k)``; 7 small, 7 medium and 6 large.
Each reference is the routing oracle's tour with its status, time budget (``BUILD_LIMITS``,
longer than the oracle's default for unshipped instances) and worker count;
small instances also carry the exhaustive-search optimum as a cross-check. The routing solver
proves nothing, so each record also carries a CP-SAT lower bound (``certificate``), and its
status is ``OPTIMAL`` when that bound meets the value. Routing stops on a wall-clock budget,
so a rebuild on another machine may find a different value for an instance not proved
optimal; the instances themselves are identical.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.campus_tour.generator import generate_p1
from crab_gym.envs.realm.campus_tour.model import INSTANCE_DIR, P1Instance
from crab_gym.envs.realm.campus_tour.oracle import CERTIFY_LIMITS, brute_force_p1, certify_p1, solve_p1
from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.shipping import ShippedSet

#: Routing budget of the shipped references per size class (seconds, one worker).
BUILD_LIMITS: dict[str, float] = {"small": 0.5, "medium": 5.0, "large": 15.0}


def shipped_record(inst: P1Instance) -> dict[str, Any]:
    """The routing oracle's record, certified by CP-SAT's lower bound (``certificate``)."""
    result = solve_p1(inst, time_limit=BUILD_LIMITS[inst.size])
    rec = oracle_record(result, inst.fingerprint())
    cert = certify_p1(inst, CERTIFY_LIMITS[inst.size], hint=result.plan["route"])
    rec["certificate"] = cert
    rec["bound"] = cert["bound"]  # the proven lower bound, where the Reference record keeps it
    if result.feasible and cert["bound"] is not None and cert["bound"] >= result.cost:
        rec["status"] = "OPTIMAL"
    return rec


#: The shipped P1 instances: the build writes them and their references.
SHIPPED = ShippedSet(
    INSTANCE_DIR, "p1", generate_p1, shipped_record, exact=brute_force_p1,
    units="minutes", value="total travel minutes of the oracle's tour",
    status="OPTIMAL: proved (P1: the CP-SAT certificate's lower bound meets the routing value); "
    "FEASIBLE: best found within the budget",
)

if __name__ == "__main__":
    SHIPPED.main(__doc__)
