"""Regenerate the shipped P6 and P9 instances and their references.

    python -m crab_gym.envs.realm.thanksgiving.build            # both problems
    python -m crab_gym.envs.realm.thanksgiving.build --only p9  # one of them

Instance ``p6_<size>_<k>`` is ``generate_p6(size, seed=k)`` (P9: ``generate_p9``); 7 small,
7 medium and 6 large each. P6 references are CP-SAT's plans (one worker, a deterministic time
limit, so a rebuild anywhere gives the same records); small P6 instances also carry the
exhaustive search's optimum (``brute_force_value``) as a cross-check. P9 references are the
hindsight optimum (every delay known from the start), with the best afternoon without
foresight (the adaptive oracle's, :mod:`.replan`, or the greedy policy's) as
``adaptive_value``. Every record holds the one-at-a-time afternoon (``solo_*``).
"""

from __future__ import annotations

import argparse

from crab_gym.envs.realm.common.shipping import ShippedSet
from crab_gym.envs.realm.thanksgiving.exhaustive import brute_force
from crab_gym.envs.realm.thanksgiving.generator import generate_p6, generate_p9
from crab_gym.envs.realm.thanksgiving.model import INSTANCE_DIRS
from crab_gym.envs.realm.thanksgiving.references import p6_record, p9_record

UNITS = ("minutes: (dinner ready - start_time) + 0.01 x driving minutes when served by the deadline; late: "
         "(served - start_time) + 10 x minutes late + 0.01 x driving minutes")

SHIPPED = {
    "p6": ShippedSet(
        INSTANCE_DIRS["p6"], "p6", generate_p6, p6_record, exact=brute_force, units=UNITS,
        value="the CP-SAT plan's cost", status="OPTIMAL: proved by CP-SAT; FEASIBLE: best found within the limit",
    ),
    "p9": ShippedSet(
        INSTANCE_DIRS["p9"], "p9", generate_p9, p9_record, units=UNITS,
        value="the best plan known: CP-SAT with every delay known from the start (hindsight)",
        status="OPTIMAL: the hindsight plan, proved by CP-SAT; adaptive_status of the best afternoon without "
               "foresight: ADAPTIVE(OPTIMAL), the adaptive oracle's (every solve proved optimal), or "
               "ADAPTIVE(GREEDY), the greedy policy's",
    ),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SHIPPED), default=None)
    parser.add_argument("--quiet", action="store_true", help="print nothing per instance")
    args = parser.parse_args(argv)
    for prefix, shipped in SHIPPED.items():
        if args.only in (None, prefix):
            shipped.build(not args.quiet)


if __name__ == "__main__":
    main()
