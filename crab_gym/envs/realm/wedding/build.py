"""Regenerate the shipped P5/P8 instances and their references.

    python -m crab_gym.envs.realm.wedding.build            # both problems
    python -m crab_gym.envs.realm.wedding.build --only p8  # one of them

``p5_<size>_<k>`` is ``generate_p5(size, seed=k)`` and ``p8_<size>_<k>`` is
``generate_p8(size, seed=k)`` (the same day plus disruptions), for 7 small, 7 medium and 6
large seeds. References (:mod:`crab_gym.envs.realm.wedding.references`): P5, the better of
the RoutingModel oracle (deterministic: solution limits) and CP-SAT (one worker, a
deterministic time limit), with CP-SAT's proven bound; P8, the P5 plan re-solved at each
disruption (deterministic), or the greedy policy when better. So a rebuild gives the same
files on any machine with the same OR-Tools release. P8 needs P5 built first.
"""

from __future__ import annotations

import argparse

from crab_gym.envs.realm.common.shipping import ShippedSet
from crab_gym.envs.realm.wedding.generator import generate_p5, generate_p8
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS, WeddingInstance
from crab_gym.envs.realm.wedding.references import p5_record, p8_record


def _p8(inst: WeddingInstance) -> dict:
    return {**p8_record(inst), "fingerprint": inst.fingerprint()}


P5_SET = ShippedSet(
    INSTANCE_DIRS["p5"], "p5", generate_p5, p5_record, units="minutes",
    value="total driving minutes (+ unserved_penalty per guest or errand left undone)",
    status="OPTIMAL: proven by CP-SAT; FEASIBLE: best of RoutingModel and CP-SAT, bound = CP-SAT's proven bound",
)
P8_SET = ShippedSet(
    INSTANCE_DIRS["p8"], "p8", generate_p8, _p8, units="minutes",
    value="total driving minutes facing the instance's disruptions",
    status="ADAPTIVE(<P5 status>): the P5 reference plan re-solved at each disruption, or the greedy policy if better",
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["p5", "p8"], default=None)
    parser.add_argument("--quiet", action="store_true", help="print nothing per instance")
    args = parser.parse_args(argv)
    for key, shipped in (("p5", P5_SET), ("p8", P8_SET)):
        if args.only in (None, key):
            shipped.build(not args.quiet)


if __name__ == "__main__":
    main()
