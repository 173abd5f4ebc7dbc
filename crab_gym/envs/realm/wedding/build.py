"""Regenerate the shipped P5/P8 instances and their references.

    python -m crab_gym.envs.realm.wedding.build            # both problems
    python -m crab_gym.envs.realm.wedding.build --only p8  # one of them

``p5_<size>_<k>`` is ``generate_p5(size, seed=k)`` and ``p8_<size>_<k>`` is
``generate_p8(size, seed=k, draw=d)`` (the same day plus disruptions), for 7 small, 7 medium
and 6 large seeds; ``d`` is the first of ``0 .. MAX_DRAWS - 1`` (12) whose disruptions matter
(keeping the P5 reference plan costs more or breaks a constraint, and the adaptive oracle
does better than keeping it), else 0, recorded as ``disruption_draw``. References
(:mod:`crab_gym.envs.realm.wedding.references`): P5, the routing plan improved by a local
search seeds CP-SAT (one worker, a deterministic time limit), whose plan the local search
checks, with CP-SAT's proven bound; P8, the best of the adaptive oracle, the P5 plan kept and
the greedy policy, then the local search facing the disruptions. Every search is
deterministic (solution, time and candidate limits that do not depend on the clock but for
guards), so a rebuild gives the same files on a machine with the same OR-Tools release. P8
needs P5 built first.
"""

from __future__ import annotations

import argparse
from typing import Any

from crab_gym.envs.realm.common.shipping import ShippedSet
from crab_gym.envs.realm.wedding.generator import generate_p5, generate_p8
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS, WeddingInstance
from crab_gym.envs.realm.wedding.references import p5_record, p8_record

#: Disruption schedules tried per shipped P8 day.
MAX_DRAWS = 12
_P8_RECORDS: dict[str, dict[str, Any]] = {}


def _p8(inst: WeddingInstance) -> dict:
    fp = inst.fingerprint()
    if fp not in _P8_RECORDS:
        _P8_RECORDS[fp] = {**p8_record(inst), "fingerprint": fp}
    return _P8_RECORDS[fp]


def generate_shipped_p8(size: str, seed: int, name: str | None = None) -> WeddingInstance:
    """The shipped P8 instance of a size and seed: the first draw whose disruptions matter."""
    first = None
    for draw in range(MAX_DRAWS):
        inst = generate_p8(size, seed, name=name, draw=draw)
        record = _p8(inst)
        record["disruption_draw"] = draw
        if record["disruption_matters"]:
            return inst
        first = first or inst
    return first


P5_SET = ShippedSet(
    INSTANCE_DIRS["p5"], "p5", generate_p5, p5_record, units="minutes",
    value="total driving minutes (+ unserved_penalty per guest or errand left undone)",
    status="OPTIMAL: proven by CP-SAT; FEASIBLE: best of RoutingModel, local search and CP-SAT, bound = CP-SAT's proven bound",
)
P8_SET = ShippedSet(
    INSTANCE_DIRS["p8"], "p8", generate_shipped_p8, _p8, units="minutes",
    value="total driving minutes facing the instance's disruptions",
    status="ADAPTIVE(<P5 status>): the adaptive oracle's plan (the P5 reference re-solved at each disruption) "
           "is the best found; FEASIBLE: the P5 plan kept, the greedy policy or the local search facing the "
           "disruptions did better (policy says which)",
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
